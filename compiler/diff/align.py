"""Match the operations of two versions of a project.

Operations are first aligned as sequences of their definition prints (:class:`difflib.SequenceMatcher`,
without its junk heuristic, which would treat the repeated steps of a long project as noise): runs of
identical operations anchor the match whatever their seq, so an operation inserted in the middle (and
the later ones renumbered) is one added operation, not every later one modified. Between two anchors,
what is left is paired by name, then by seq, then — one left on each side, of the same kind — with each
other; the rest is added or removed.
"""
from __future__ import annotations

import difflib
from typing import Optional, Sequence

from .prints import OperationPrint

Pair = tuple[Optional[OperationPrint], Optional[OperationPrint]]


def align(base: Sequence[OperationPrint], head: Sequence[OperationPrint]) -> list[Pair]:
    """(base, head) pairs in head order; (op, None) for a removed operation, (None, op) for an added one."""
    matcher = difflib.SequenceMatcher(None, [o.local for o in base], [o.local for o in head], autojunk=False)
    pairs: list[Pair] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            pairs += list(zip(base[i1:i2], head[j1:j2]))
        else:
            pairs += _pair_region(list(base[i1:i2]), list(head[j1:j2]))
    return pairs


def _pair_region(base: list[OperationPrint], head: list[OperationPrint]) -> list[Pair]:
    matched: dict[int, OperationPrint] = {}  # head index -> base operation

    def match_by(key) -> None:
        free_base = [b for b in base if not any(b is m for m in matched.values())]
        for j, h in enumerate(head):
            if j in matched:
                continue
            candidates = [b for b in free_base if b.kind == h.kind and key(b) == key(h)]
            if len(candidates) == 1:
                matched[j] = candidates[0]
                free_base.remove(candidates[0])

    match_by(lambda o: o.name)
    match_by(lambda o: o.seq)
    left_base = [b for b in base if not any(b is m for m in matched.values())]
    left_head = [j for j in range(len(head)) if j not in matched]
    if len(left_base) == 1 and len(left_head) == 1 and left_base[0].kind == head[left_head[0]].kind:
        matched[left_head[0]] = left_base[0]
        left_base = []
    pairs: list[Pair] = [(b, None) for b in base if not any(b is m for m in matched.values())]
    pairs += [(matched.get(j), h) for j, h in enumerate(head)]
    return pairs

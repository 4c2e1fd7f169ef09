"""The registry of kinds: every operation kind's and check kind's entry, collected from its module. The stages
that used to switch on a kind's name ask here; a kind without an entry is an error, never a default."""
from __future__ import annotations

from typing import Iterable

from ..model import OperationKind
from .entry import IncompleteKind, OperationKindEntry
from .operations import aggregate, append, delete, output, update


def register(entries: Iterable[OperationKindEntry], kinds: Iterable) -> dict:
    """``entries`` by kind, refusing an entry that is not a complete entry, two entries of one kind and a kind of
    ``kinds`` (every member of the kind's enum) without its entry."""
    out: dict = {}
    for e in entries:
        if not isinstance(e, (OperationKindEntry,)):
            raise IncompleteKind(f"{e!r} is not a kind's entry")
        if e.kind in out:
            raise IncompleteKind(f"two entries for the kind {e.kind}")
        out[e.kind] = e
    missing = [str(k) for k in kinds if k not in out]
    if missing:
        raise IncompleteKind(f"no entry for the kind(s) {', '.join(missing)}")
    return out


OPERATIONS: dict[OperationKind, OperationKindEntry] = register(
    (m.ENTRY for m in (update, aggregate, append, delete, output)), OperationKind)


def operation_kind(kind: OperationKind) -> OperationKindEntry:
    """The entry of operation kind ``kind`` (:class:`IncompleteKind` for a kind without one)."""
    entry = OPERATIONS.get(kind)
    if entry is None:
        raise IncompleteKind(f"no entry for the operation kind {getattr(kind, 'value', kind)}")
    return entry

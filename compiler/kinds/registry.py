"""The registry of kinds: every operation kind's and check kind's entry, collected from its module. The stages
that used to switch on a kind's name ask here; a kind without an entry is an error, never a default."""
from __future__ import annotations

from typing import Iterable

from ..checks.plan import CheckKind
from ..model import OperationKind
from .checks import accepted_values, balanced, expect, not_null, reconcile, row_count, unique
from .entry import CheckKindEntry, IncompleteKind, OperationKindEntry
from .operations import aggregate, append, delete, output, update


def register(entries: Iterable, kinds: Iterable) -> dict:
    """``entries`` by kind, refusing an entry that is not a complete entry, two entries of one kind and a kind of
    ``kinds`` (every member of the kind's enum) without its entry."""
    out: dict = {}
    for e in entries:
        if not isinstance(e, (OperationKindEntry, CheckKindEntry)):
            raise IncompleteKind(f"{e!r} is not a kind's entry")
        if e.kind in out:
            raise IncompleteKind(f"two entries for the kind {e.name}")
        out[e.kind] = e
    missing = [k.value for k in kinds if k not in out]
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


CHECKS: dict[CheckKind, CheckKindEntry] = register(
    (m.ENTRY for m in (balanced, unique, expect, row_count, not_null, accepted_values, reconcile)), CheckKind)
CHECK_NAMES = tuple(k.value for k in CHECKS)  # the keys naming a check's kind in YAML, in the order of CheckKind


def check_kind(kind) -> CheckKindEntry:
    """The entry of check kind ``kind`` (a :class:`CheckKind` or its name; :class:`IncompleteKind` without one)."""
    entry = CHECKS.get(kind) if isinstance(kind, CheckKind) else next(
        (e for k, e in CHECKS.items() if k.value == kind), None)
    if entry is None:
        raise IncompleteKind(f"no entry for the check kind {getattr(kind, 'value', kind)}")
    return entry

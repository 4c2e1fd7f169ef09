"""A run records the fingerprints of what its Spark work read (docs/guarantees.md "Replay checks its inputs").

The fingerprints are taken before the read: when a period's run resolves its inputs, or, for the periods of a
fused range, once for the whole range just before the fused statements read every period's files
(:func:`fingerprint_range`). Spark reads lazily, so the files may change between the fingerprint and the read,
or while the read goes on, or (a fused range) after the range read them and before a later period's run
publishes the rows computed then. So, once a run's rows are computed and staged and before anything is swapped
in, its inputs are fingerprinted again and compared with the fingerprints it records (:func:`refuse_changed`):
any change fails the run with ``INPUT-004`` and nothing is published for its period. A run that completes has
read exactly what it recorded, so ``status`` judges it by those files and ``replay`` reads them again or refuses.
"""
from __future__ import annotations

from typing import Callable, Optional

from ...compiler.errors import ResolutionError
from ...compiler.resolver import Resolution
from .fingerprint import HashBudget, check_replay, describe_change, fingerprint_location


class InputChanged(ResolutionError):
    """An input location changed between the fingerprint a run records and the end of its read (INPUT-004)."""


def fingerprint_range(resolutions: dict[str, dict[str, Resolution]],
                      session: Optional[Callable[[], object]] = None) -> dict[str, list[dict]]:
    """Per period identifier, the fingerprints of its inputs (``resolutions``: period -> view -> Resolution),
    exactly as :func:`.fingerprint.fingerprint_inputs` gives them for that period's own run: each period has its
    own hash budget, as its run would (one budget for the range left a long range's later periods without
    hashes, and their replay refused). A location several periods read (a flat file, a rate table) is walked
    once for all of those that reach it with the same budget left, and charges each of them alike."""
    taken: dict[tuple, tuple[dict, int]] = {}  # (kind, target, budget left) -> (fingerprint, budget left after)
    out: dict[str, list[dict]] = {}
    for period, views in resolutions.items():
        budget = HashBudget()
        prints = []
        for view, res in views.items():
            for loc in res.locations:
                key = (loc.kind, loc.target, budget.remaining)
                if key not in taken:
                    taken[key] = (fingerprint_location(loc, session, budget), budget.remaining)
                budget.remaining = taken[key][1]
                prints.append({"view": view, "dataset": res.dataset_name, "dataset_version": res.version,
                               "location": loc.target, **taken[key][0]})
        out[period] = prints
    return out


def refuse_changed(recorded: Optional[list[dict]], resolutions: dict[str, Resolution], period: str, run_id: str,
                   session: Optional[Callable[[], object]] = None) -> None:
    """Raise :class:`InputChanged` when an input location of ``resolutions`` differs now from ``recorded`` (the
    fingerprints the run records, taken before its read): the run's rows may lack what changed, or hold part
    of it. Locations recorded as not checked (remote URIs, in-memory frames) are not compared."""
    if recorded is None:
        return
    changed = check_replay(recorded, resolutions, session).changed
    if not changed:
        return
    raise InputChanged(
        f"INPUT-004 run {run_id} (period {period}): an input changed between its fingerprint, taken before the run "
        "read it, and the run's publication: " + "; ".join(describe_change(c) for c in changed)
        + ". The rows were computed from the input as it was then (a period of a fused range: as the range read it, "
        "with its first period's run) and may lack the change or hold part of it; nothing was published for period "
        f"{period}. Run the period again once the input is final.")

"""Closed project-periods inside a batch (``run --select``, ``run --all``, a range, ``retry``, ``run --stale``):
listed as ``closed`` in the summary and not run, while the others run.

A closed project-period's published outputs stand (docs/commands.md "Closed periods"), so a project
downstream of it is its own project-period and runs normally (reading what the closed one published),
unless it is closed itself. Closed ones do not fail the batch: a batch whose other project-periods
completed exits 0.
"""
from __future__ import annotations

from ...compiler.periods import Period
from ..store.closure_table import describe


class ClosedReason(str):
    """The reason a project-period of a batch is not run because it is closed (its outcome's status is
    ``closed``, not ``skipped``)."""


def closed_blocks(store, names: list[str], periods: list[Period], ws=None) -> dict[str, dict[str, ClosedReason]]:
    """Period identifier -> project -> why it is not run, for every closed project-period among ``names`` x
    ``periods`` (one query of the run store); ``ws``: the workspace, whose projects' closes are found by id
    (under an earlier name of theirs too)."""
    if getattr(store, "env", "prod") != "prod":
        return {}  # a close protects what prod publishes; another environment runs every period
    current = None if ws is None else {p.id: p.name for p in ws.projects}
    found = store.closures(names, [p.identifier for p in periods], current=current)
    out: dict[str, dict[str, ClosedReason]] = {}
    for (project, period), closure in found.items():
        if closure["action"] == "close":
            out.setdefault(period, {})[project] = ClosedReason(
                f"{describe(closure)}; `ledgerflow restate {project} --period {period} --reason TEXT` changes it")
    return out

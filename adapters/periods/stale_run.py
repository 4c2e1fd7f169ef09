"""``ledgerflow run --stale --period P|RANGE [--select SEL | PROJECT]`` (docs/commands.md "Stale periods"): run
the stale open project-periods (:mod:`.stale`) of the selection, upstream first, as one batch.

The batch runs as ``run --period RANGE`` does (:class:`..run.scheduler.Scheduler`, handed which project-periods
are stale): a project stale for two periods or more is fused over those periods where it can be (``--mode``:
``auto``, the default, or ``fused``; ``each`` runs period by period), the projects in dependency order, so a
downstream project reads the version its upstream registered moments ago for that period. Only the stale
project-periods run (the batch's plan names them: ``retry`` re-runs only those); a stale closed one is listed
``closed``, not run (it needs ``restate``). Nothing stale, or only closed ones: a line saying so, no batch, exit 0.
"""
from __future__ import annotations

from typing import Callable

from ...compiler.periods import Period
from ...compiler.visible_text import visible
from ..run.scheduler import STALE, Request
from .stale import render_status, stale_report

Echo = Callable[[str], None]


def stale_request(request: Request, store, echo: Echo) -> Request:
    """``request`` (its periods and selection) as a ``run --stale`` request: the scheduler calls its ``narrow``
    with the planned graph and selection, which prints the stale report and names the stale project-periods
    (none when every one is closed)."""
    periods: list[Period] = list(request.periods)

    def narrow(graph, names: list[str]) -> list[tuple[str, str]]:
        asked = ",".join(p.identifier for p in periods) if len(periods) <= 4 else \
            f"{periods[0].identifier}..{periods[-1].identifier}"
        report = stale_report(store, graph.workspace, [p.identifier for p in periods], names, graph=graph)
        for line in render_status(report, asked, hint=False):
            echo(visible(line))  # names, paths and close notes from the store: the one rule for hidden characters
        pairs = [(e.project, e.period) for e in report.entries]
        if all(e.closure is not None for e in report.entries):
            if pairs:
                echo("Nothing to run: every stale project-period is closed (`ledgerflow restate` changes one).")
            return []
        return pairs

    return Request(STALE, request.root, request.periods, request.select, request.project, request.settings, narrow)

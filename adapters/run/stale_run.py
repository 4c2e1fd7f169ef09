"""``ledgerflow run --stale --period P|RANGE [--select SEL | PROJECT]`` (docs/commands.md "Stale periods"): run
the stale open project-periods (:mod:`..periods.stale`) of the selection, upstream first, as one batch.

The batch runs as ``run --period RANGE`` does (:func:`.batch.execute`): a project stale for two periods or
more is fused over those periods where it can be (``--mode``: ``auto``, the default, or ``fused``; ``each``
runs period by period), the projects in dependency order, so a downstream project reads the version its
upstream registered moments ago for that period. Only the stale project-periods run (the batch's plan names
them: ``retry`` re-runs only those); a stale closed one is listed ``closed``, not run (it needs ``restate``).
Nothing stale, or only closed ones: a line saying so, no batch, exit 0.
"""
from __future__ import annotations

from typing import Callable, Optional

from ...compiler.periods import Period
from ...compiler.visible_text import visible
from ..periods.stale import render_status, stale_report
from .batch import choose_modes, execute, start_batch
from .closed import closed_blocks
from .many import ProjectOutcome, plan_selection

Echo = Callable[[str], None]


def run_stale(runner, root: str, periods: list[Period], select: Optional[str] = None, project: Optional[str] = None,
              allow_draft: bool = False, echo: Echo = print, fail_fast: bool = False,
              mode: str = "auto") -> list[ProjectOutcome]:
    """Run the stale open project-periods of ``periods`` among the selected projects (every project when neither
    ``select`` nor ``project`` is given); returns their outcomes (see the module docstring)."""
    graph, names = plan_selection(root, select, project=project)
    asked = ",".join(p.identifier for p in periods) if len(periods) <= 4 else \
        f"{periods[0].identifier}..{periods[-1].identifier}"
    report = stale_report(runner.store, graph.workspace, [p.identifier for p in periods], names, graph=graph)
    for line in render_status(report, asked, hint=False):
        echo(visible(line))  # names, paths and close notes from the store: the one rule for hidden characters
    pairs = {(e.project, e.period) for e in report.entries}
    if all(e.closure is not None for e in report.entries):
        if pairs:
            echo("Nothing to run: every stale project-period is closed (`ledgerflow restate` changes one).")
        return []
    run_names = [n for n in names if any(n == name for name, _ in pairs)]
    run_periods_ = [p for p in periods if any(p.identifier == period for _, period in pairs)]
    ordered = [(n, p.identifier) for p in run_periods_ for n in run_names if (n, p.identifier) in pairs]
    echo("")
    closed = closed_blocks(runner.store, run_names, run_periods_, graph.workspace)
    answers = choose_modes(mode, graph, run_names, run_periods_, pairs, closed, echo)
    batch_id = start_batch(runner.store, run_names, run_periods_, allow_draft, pairs=ordered, mode=mode)
    return execute(runner, graph, run_names, run_periods_, answers, allow_draft, echo, batch_id, fail_fast, closed,
                   todo=pairs)

"""A batch with fused projects (``ledgerflow run --period RANGE --mode fused|auto``, docs/commands.md).

When :func:`.modes.choose_mode` fuses at least one selected project, the batch runs **project by project**
in dependency order: a fused project runs its statements once for its periods and commits each period as
its own run (:func:`.fused.run_range`, one step of the batch: :mod:`.fused_step`); a project that cannot be
fused runs its periods one by one, as in :func:`.many.run_periods`. Every project-period still has its own
outcome (status, rows, seconds, run id, the versions it registered, which the downstream project reads for
that period). A project-period whose upstream failed for that period is skipped, and the project's other
periods are fused without it; ``--fail-fast`` stops at the first failed project-period; Ctrl-C stops the
invocation as in period-by-period mode. The loop, summary and exit codes are :class:`.scheduler.Scheduler`'s.
"""
from __future__ import annotations

from typing import Callable

from ...compiler.graph import WorkspaceGraph
from ...compiler.periods import Period
from .many import batch_plan
from .outcomes import ProjectOutcome
from .scheduler import Scheduler

Echo = Callable[[str], None]


def run_by_project(runner, graph: WorkspaceGraph, names: list[str], periods: list[Period],
                   answers: dict[str, tuple[str, str]], echo: Echo = print, **options) -> list[ProjectOutcome]:
    """Run ``names`` (in run order) over ``periods`` (ascending) project by project, each fused or period by
    period as ``answers`` (project -> :func:`.modes.choose_mode`'s answer) says (see the module docstring);
    returns one outcome per project-period, period by period. ``options``: as :func:`.many.batch_plan` takes them."""
    return Scheduler(runner, echo).execute(batch_plan(graph, names, periods, answers, **options))

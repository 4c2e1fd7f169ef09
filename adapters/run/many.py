"""``ledgerflow run --select SEL | --all``: several projects in dependency order, in one SparkSession.

Before anything runs, the workspace graph orders the selected projects (:mod:`..compiler.graph`) and
every one of them is compiled: a definition error anywhere stops the invocation with exit 1, nothing
executed. Then each project runs with the one :class:`~.runner.Runner` (so the one session), reading
the version of a registered dataset that its upstream registered moments ago in this invocation,
not merely the newest one in the store (a concurrent run could have registered another), and its
run record names those versions and runs (``upstream_runs``).

A project that fails (on Spark, or while resolving its data) is recorded as failed; every selected
project downstream of it, directly or through unselected projects, is ``skipped`` with the failed
upstream named; the others go on. A draft project is skipped (with its downstream) unless
``--allow-draft``. The summary lists every project's status, rows written and duration (a project whose
checks failed names them); the invocation fails with exit 3 (:class:`MultiRunFailed`) when any project
failed, or exit 4 when every failure was a failed check (docs/checks.md: nothing of it was published).

Ctrl-C stops the invocation: a project interrupted before its commit point is rolled back and
recorded failed, one interrupted after it stands (completed), and in every case no further project
runs: they are ``skipped``, the summary is printed and the invocation ends with exit 3
(:class:`~.interrupts.RunInterrupted`).

Several periods (``--period 2026-01..2026-03``, :func:`run_periods`; every batch is run by
:class:`.scheduler.Scheduler`): each project-period is a run of
its own, period by period in ascending order and within a period the projects in dependency order.
A project failed for one period skips its downstream for that period only (each period has its own
registered versions, so its downstream reads what its upstream registered for that period);
``--fail-fast`` skips every project-period after the first failure. The batch (its id, its plan,
``ledgerflow retry``) is :mod:`.batch`'s.
"""
from __future__ import annotations

from typing import Callable, Optional

from ...compiler.graph import WorkspaceGraph
from ...compiler.periods import Period
from .batch_state import BatchPlan
from .modes import EACH
from .outcomes import MultiRunFailed, ProjectOutcome
from .scheduler import Scheduler
from .selection import plan_selection
from .unit import RunSettings

Echo = Callable[[str], None]

__all__ = ["MultiRunFailed", "ProjectOutcome", "plan_selection", "run_many", "run_periods", "batch_plan"]


def run_many(runner, root: str, period: Period, select: Optional[str], echo: Echo = print,
             **options) -> list[ProjectOutcome]:
    """Run the selection (see the module docstring) for ``period`` (as the command line parsed it, handed to
    every run); returns one outcome per project, in run order. ``options``: as :func:`batch_plan` takes them."""
    graph, names = plan_selection(root, select)
    return run_periods(runner, graph, names, [period], echo, **options)


def run_periods(runner, graph: WorkspaceGraph, names: list[str], periods: list[Period], echo: Echo = print,
                **options) -> list[ProjectOutcome]:
    """Run the projects ``names`` (in run order) for each of ``periods`` (ascending), period by period (see the
    module docstring); returns one outcome per project-period, in run order. ``options``: as
    :func:`batch_plan` takes them."""
    answers = {n: (EACH, "") for n in names}
    return Scheduler(runner, echo).execute(batch_plan(graph, names, periods, answers, **options))


def batch_plan(graph: WorkspaceGraph, names: list[str], periods: list[Period], answers: dict,
               **options) -> BatchPlan:
    """The :class:`.batch_state.BatchPlan` of a batch planned by hand (Python code, tests). ``options``:
    ``allow_draft``, ``fail_fast``, ``batch_id`` (recorded by each run), ``todo`` (only these ``(project, period
    identifier)`` run), ``upstream`` (period identifier -> registered dataset -> the version this batch
    registered for it earlier), ``closed`` (period identifier -> project -> :class:`.closed.ClosedReason`,
    listed ``closed``, not run); any other is a TypeError."""
    known = {"allow_draft", "fail_fast", "batch_id", "todo", "upstream", "closed"}
    if set(options) - known:
        raise TypeError(f"batch_plan() got unexpected options {sorted(set(options) - known)}")
    settings = RunSettings(bool(options.get("allow_draft")), bool(options.get("fail_fast")), None,
                           options.get("batch_id"))
    todo = options.get("todo")
    return BatchPlan(graph, list(names), list(periods), settings, answers, dict(options.get("closed") or {}),
                     None if todo is None else frozenset(todo), dict(options.get("upstream") or {}))

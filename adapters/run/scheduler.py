"""The one owner of a batch: every command that executes (``run`` for one period or several, ``run --stale``,
``retry``, ``restate``, ``replay``) hands the :class:`Scheduler` a typed :class:`Request` and it plans the
project-period units, runs them in order, skips what is downstream of a failure, prints the summary and ends
with the exit code (docs/commands.md "Many periods, and retry").

Order of a batch: period by period when no project is fused (within a period the projects in dependency order),
else project by project, a fused project's periods one step (:mod:`.fused_step`). A project-period whose
upstream failed for that period is skipped; ``--fail-fast`` skips everything after the first failure; Ctrl-C
stops the batch (:mod:`.many` describes the rules, :mod:`.outcomes` the end). The batch id and its plan are
:mod:`.batch`'s.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from ...compiler.periods import Period
from . import batch as batches
from .batch_state import BatchPlan, BatchState
from .closed import closed_blocks
from .evaluator import DryRun
from .fused_step import run_fused
from .selection import plan_selection
from .metrics import RunMetrics
from .modes import EACH, FUSED
from .outcomes import ProjectOutcome, conclude, span
from .unit import RunSettings, Unit

Echo = Callable[[str], None]

RUN, STALE, RETRY = "run", "stale", "retry"  # a Request's intents; restate, replay and a dry run have methods of their own


@dataclass(frozen=True)
class Request:
    """What an invocation asks the scheduler: the intent (:data:`RUN`, :data:`STALE`, :data:`RETRY`), the
    workspace ``root``, the selection (``select``, one ``project``, or ``names``), the ``periods`` and the
    settings. ``narrow`` (``run --stale``): given the graph and the selected names, the ``(project, period
    identifier)`` pairs to run, in order (empty: nothing to run); it is handed down by the command that knows
    them. ``batch`` (``retry``): the batch to re-run."""

    intent: str
    root: str
    periods: tuple = ()
    select: Optional[str] = None
    project: Optional[str] = None
    settings: RunSettings = RunSettings()
    narrow: Optional[Callable] = field(default=None, compare=False)
    batch: Optional[str] = None


class Scheduler:
    """Runs batches with ``runner`` (its one SparkSession), printing with ``echo``."""

    def __init__(self, runner, echo: Echo = print):
        self.runner, self.echo = runner, echo
        self.batch_ids: list[str] = []  # every batch this scheduler started or retried (``run --results``)

    # ------------------------------------------------------------ invocations
    def submit(self, request: Request) -> list[ProjectOutcome]:
        """Plan ``request`` and run its batch; returns one outcome per project-period (raises as
        :func:`.outcomes.conclude` does)."""
        if request.intent == RETRY:
            return self.retry(request)
        graph, names = plan_selection(request.root, request.select, project=request.project,
                                      env=self.runner.store.env)
        periods, todo, pairs = list(request.periods), None, None
        if request.intent == STALE:
            pairs = request.narrow(graph, names)
            if not pairs:
                return []
            todo = frozenset(pairs)
            names = [n for n in names if any(n == name for name, _ in pairs)]
            periods = [p for p in periods if any(p.identifier == period for _, period in pairs)]
            self.echo("")
        settings = request.settings
        closed = closed_blocks(self.runner.store, names, periods, graph.workspace)
        answers = batches.choose_modes(settings.mode, graph, names, periods, todo, closed, self.echo)
        if request.intent == RUN and len(periods) < 2 and settings.mode not in ("auto", EACH):
            self.echo("running period by period: one period")
        batch_id = batches.start_batch(self.runner.store, names, periods, settings,
                                       pairs=None if pairs is None else _ordered(pairs, names, periods))
        self.batch_ids.append(batch_id)
        settings = RunSettings(settings.allow_draft, settings.fail_fast, settings.mode, batch_id)
        return self.execute(BatchPlan(graph, names, periods, settings, answers, closed, todo))

    def retry(self, request: Request) -> list[ProjectOutcome]:
        """``ledgerflow retry BATCH``: the project-periods of the batch that did not complete, as new runs of it
        (:func:`.batch.retry_plan` says which, and what its completed runs registered)."""
        found = batches.retry_plan(self.runner.store, request.batch)
        self.batch_ids.append(found.batch_id)
        graph, names = plan_selection(request.root, None, names=found.names, env=self.runner.store.env)
        self.echo(found.announce)
        periods = found.periods
        mode = request.settings.mode or found.mode
        settings = RunSettings(found.allow_draft, request.settings.fail_fast, mode, found.batch_id)
        closed = closed_blocks(self.runner.store, names, periods, graph.workspace)
        answers = batches.choose_modes(mode, graph, names, periods, found.todo, closed, self.echo)
        return self.execute(BatchPlan(graph, names, periods, settings, answers, closed, found.todo, found.upstream))

    def run_one(self, request: Request, name: str, workspace=None) -> dict:
        """``run PROJECT --period P``: project ``name``'s one run, as it always was (its own lines, no summary), in
        a batch of its own; its run record (raises as the run does)."""
        settings = request.settings
        batch_id = batches.start_batch(self.runner.store, [name], list(request.periods),
                                       RunSettings(settings.allow_draft, mode=None))
        self.batch_ids.append(batch_id)
        unit = Unit(name, request.periods[0], RunSettings(settings.allow_draft, settings.fail_fast, None, batch_id))
        return self.run_unit(unit, workspace)

    def run_unit(self, unit: Unit, workspace=None, strategy=None) -> dict:
        """One unit on its own (``run PROJECT --period P``, a restatement): its run record (raises as the run
        does). ``strategy``: how it is evaluated (:mod:`.evaluator`; default a period's run)."""
        return self.runner.run(unit.project, unit.period, unit.settings.allow_draft, workspace=workspace,
                               upstream=unit.upstream, batch_id=unit.settings.batch_id, strategy=strategy)

    @staticmethod
    def dry_run(spark, ctx, load_inputs: Optional[Callable] = None) -> list:
        """A dry run of one project-period (``restate --dry-run``, a ``diff --data`` side):
        ``ctx``'s pending outputs by the :class:`.evaluator.DryRun` strategy, each frame uncomputed; no batch,
        no run record, nothing printed."""
        return DryRun(load_inputs).compute(spark, ctx, RunMetrics(spark, ctx.run_id), lambda _line: None)

    def replay(self, run_id: str, allow_changed_inputs: bool = False, workspace=None) -> dict:
        """``ledgerflow replay RUN_ID``: the recorded run re-executed (:meth:`.runner.Runner.replay`)."""
        return self.runner.replay(run_id, allow_changed_inputs, workspace=workspace)

    # ------------------------------------------------------------ the one loop
    def execute(self, plan: BatchPlan) -> list[ProjectOutcome]:
        """Run ``plan``'s units (see the module docstring) and conclude: one outcome per project-period, period
        by period."""
        state = BatchState(self.runner, plan, self.echo)
        by_period = all(chosen == EACH for chosen, _ in plan.answers.values())
        if not by_period:
            fused: dict[str, list[str]] = {}  # why -> the projects fused so (a stale batch: each over its own periods)
            for name, (chosen, why) in plan.answers.items():
                if chosen == FUSED:
                    fused.setdefault(why, []).append(name)
            self.echo("fused: " + "; ".join(f"{', '.join(names_)} ({why})" for why, names_ in fused.items()))
        self.echo(_headline(state, by_period))
        why_skipped = "not run: the invocation was stopped by Ctrl-C"
        try:
            for step in _steps(state, by_period):
                step()
                if state.stopped is not None:
                    break
                if plan.settings.fail_fast and state.failed:
                    failed = state.first_failed()
                    why_skipped = f"not run: --fail-fast, after {failed.project} {failed.period} failed"
                    break
        except KeyboardInterrupt:  # between two runs: none was under way
            state.stopped = "Ctrl-C between two projects"
        return conclude(state.ordered(), plan.periods, state.stopped, why_skipped, plan.settings.batch_id, self.echo)


def _steps(state: BatchState, by_period: bool) -> list[Callable[[], None]]:
    """The batch's steps in order: each unit (period by period), or project by project each fused project's
    periods as one step."""
    keys = state.plan.keys()
    if by_period:
        return [lambda n=n, p=p: state.run_one(state.unit(n, p)) for n, p in keys]
    steps: list[Callable[[], None]] = []
    for name in _running(state):
        mine = [p for p in state.plan.periods if (name, p.identifier) in state.outcomes]
        if state.plan.answers[name][0] == FUSED:
            steps.append(lambda name=name, mine=mine: run_fused(state, name, mine))
        else:
            steps += [lambda name=name, p=p: state.run_one(state.unit(name, p)) for p in mine]
    return steps


def _running(state: BatchState) -> list[str]:
    """The projects with a project-period to run, in run order (the plan's: upstream first), not in the order
    their first period comes (a retry's upstream may have only a later period left)."""
    pending = {n for n, _ in state.plan.keys()}
    return [n for n in state.plan.names if n in pending]


def _headline(state: BatchState, by_period: bool) -> str:
    """The line a batch starts with: how many project-periods, in which order."""
    keys = state.plan.keys()
    running = _running(state)
    when = [p for p in state.plan.periods if any(k[1] == p.identifier for k in state.outcomes)]
    plural, total = "s" if len(running) != 1 else "", len(keys)
    if state.single:
        return f"Running {len(running)} project{plural} for period {state.plan.periods[0].identifier}: " \
               f"{', '.join(running)}"
    order = "period by period" if by_period else "project by project"
    return (f"Running {total} project-period{'s' if total != 1 else ''}, {order}: {len(running)} project{plural} "
            f"({', '.join(running)}) for {len(when)} period{'s' if len(when) != 1 else ''} ({span(when)})")


def _ordered(pairs, names: list[str], periods: list[Period]) -> list[tuple[str, str]]:
    """``pairs`` period by period, the projects in run order (the batch's plan lists them so)."""
    return [(n, p.identifier) for p in periods for n in names if (n, p.identifier) in set(pairs)]

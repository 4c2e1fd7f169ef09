"""What a batch knows while it runs: each project-period's outcome, what blocks a project-period (a failed or
draft upstream, a closed period), what its completed runs registered (the downstream reads it), the step
counter and whether Ctrl-C or ``--fail-fast`` stopped it. :class:`BatchState` runs one unit (or skips it) and
files how a run ended; the order of the units is :mod:`.scheduler`'s.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from ...compiler.errors import ChecksFailed, LedgerflowError
from ...compiler.graph import PROJECT, WorkspaceGraph, node_id
from ...compiler.periods import Period
from .batch_workspace import KeptWorkspace
from .closed import ClosedReason
from .interrupts import RunInterrupted
from .outcomes import ProjectOutcome
from .unit import RunSettings, Unit

Echo = Callable[[str], None]


@dataclass(frozen=True)
class BatchPlan:
    """A batch ready to run: the graph, the projects (run order) and periods (ascending), the settings (with
    the batch id), each project's mode (:func:`.modes.choose_mode`'s answer), the closed project-periods
    (period identifier -> project -> reason), ``todo`` (only these ``(project, period identifier)``, None: all)
    and ``upstream`` (period identifier -> what the batch registered earlier: ``retry``)."""

    graph: WorkspaceGraph
    names: list
    periods: list
    settings: RunSettings
    answers: dict
    closed: dict = field(default_factory=dict)
    todo: Optional[frozenset] = None
    upstream: dict = field(default_factory=dict)

    def keys(self) -> list[tuple[str, Period]]:
        """The batch's ``(project, period)`` pairs, period by period, the projects in run order."""
        return [(n, p) for p in self.periods for n in self.names if self.todo is None or (n, p.identifier) in self.todo]


class BatchState:
    """The running batch of a :class:`BatchPlan` (see the module docstring)."""

    def __init__(self, runner, plan: BatchPlan, echo: Echo):
        self.runner, self.plan, self.echo = runner, plan, echo
        self.outcomes = {(n, p.identifier): ProjectOutcome(n, period=p.identifier) for n, p in plan.keys()}
        # period -> project -> why it cannot run (closed ones first: a failed upstream does not make them skipped)
        self.blocked = {p.identifier: dict(plan.closed.get(p.identifier) or {}) for p in plan.periods}
        self.registered = {p.identifier: dict(plan.upstream.get(p.identifier) or {}) for p in plan.periods}
        self.step = 0
        # the workspace each run reads: loaded once for the batch, what its runs register kept up to date
        self.workspace = KeptWorkspace(plan.graph.workspace.root, runner.store.registered_datasets)
        self.stopped: Optional[str] = None  # what Ctrl-C did, when it stopped the invocation
        self.failed = False  # the last unit run failed (--fail-fast)

    @property
    def single(self) -> bool:
        """One period: progress and summary name no period."""
        return len(self.plan.periods) == 1

    def unit(self, name: str, period: Period) -> Unit:
        """The unit of ``name`` for ``period``, reading what the batch registered for that period."""
        return Unit(name, period, self.plan.settings, self.registered[period.identifier])

    def outcome(self, unit: Unit) -> ProjectOutcome:
        """``unit``'s outcome."""
        return self.outcomes[unit.key]

    def heading(self, unit: Unit, suffix: str = "") -> str:
        """The next step's progress heading (``[k/N] PERIOD PROJECT``; one period: no period)."""
        self.step += 1
        where = "" if self.single else f"{unit.period.identifier} "
        return f"[{self.step}/{len(self.outcomes)}] {where}{unit.project}{suffix}"

    def why_not(self, unit: Unit) -> Optional[str]:
        """Why ``unit`` is not run (closed, a failed or draft upstream, a draft itself), or None."""
        settings = unit.settings
        if unit.project in self.blocked[unit.period.identifier]:
            return self.blocked[unit.period.identifier][unit.project]
        project = self.plan.graph.workspace.find_project(unit.project)
        if project.status == "draft" and not settings.allow_draft:
            return "draft project (pass --allow-draft to run it)"
        return None

    def skip(self, unit: Unit, heading: str) -> None:
        """File ``unit`` as not run (``closed`` or ``skipped``, with why); a draft blocks its downstream."""
        out = self.outcome(unit)
        self.echo(f"\n{heading}")
        reason = self.why_not(unit)
        out.status = "closed" if isinstance(reason, ClosedReason) else "skipped"
        out.reason = reason
        self.echo(f"  {out.status}: {out.reason}")
        if unit.project not in self.blocked[unit.period.identifier]:  # a draft
            self.block_downstream(unit, f"upstream project '{unit.project}' is a draft and was skipped")

    def run_one(self, unit: Unit) -> None:
        """Run (or skip) ``unit`` on its own, filling its outcome (and :attr:`stopped`, :attr:`failed`)."""
        heading = self.heading(unit)
        if self.why_not(unit) is not None:
            self.skip(unit, heading)
            self.failed = False
            return
        self.echo(f"\n{heading}")
        clock = time.monotonic()
        known = self.run_ids(unit)
        prefix = None if self.single else unit.period.identifier
        try:
            record = self.runner.run(unit.project, unit.period, unit.settings.allow_draft, upstream=unit.upstream,
                                     batch_id=unit.settings.batch_id, prefix=prefix,
                                     workspace=self.workspace.current())
        except (LedgerflowError, RunInterrupted) as err:
            self.ended_failed(unit, err, time.monotonic() - clock, known)
            return
        self.ended_completed(unit, record, time.monotonic() - clock)

    def ended_failed(self, unit: Unit, err: BaseException, seconds: float, known: set[str]) -> None:
        """File ``unit`` whose run raised ``err`` (``known``: the unit's run ids before it ran), its downstream
        blocked for the period; Ctrl-C stops the batch."""
        out = self.outcome(unit)
        out.seconds, out.status = seconds, "failed"
        if isinstance(err, RunInterrupted):
            out.reason = f"interrupted: {err}"
        else:
            out.reason = err.render() if isinstance(err, LedgerflowError) else f"{type(err).__name__}: {err}"
        out.run_id = next(iter(self.run_ids(unit) - known), None)
        out.failed_checks = err.failed if isinstance(err, ChecksFailed) else []
        self.echo(f"  failed: {out.reason}")
        self.block_downstream(unit, f"upstream project '{unit.project}' failed")
        self.failed = True
        if isinstance(err, RunInterrupted):
            self.stopped = f"{unit.project}: {str(err).rstrip('.')}"
        elif self.runner.stop_requested:  # Ctrl-C while its failure was being recorded
            self.stopped = f"{unit.project} failed, and Ctrl-C was pressed meanwhile"

    def ended_completed(self, unit: Unit, record: dict, seconds: float) -> None:
        """File ``unit`` whose run completed with ``record``; what it registered goes to the period's upstream
        (its downstream reads it). A Ctrl-C after its commit point stops the batch."""
        out = self.outcome(unit)
        out.status, out.run_id = "completed", record["run_id"]  # first: a Ctrl-C from here on finds it completed
        out.seconds = seconds
        out.rows = sum(o.get("rows") or 0 for o in record.get("outputs") or [])
        for o in record.get("outputs") or []:
            if o.get("registered_dataset"):
                entry = {"dataset": o["registered_dataset"], "version": o["registered_version"],
                         "run_id": record["run_id"], "project": unit.project}
                self.registered[unit.period.identifier][o["registered_dataset"]] = entry
                out.registered.append(entry)
        self.failed = False
        if self.runner.stop_requested:  # a Ctrl-C after its commit point: it stands, and nothing more runs
            self.stopped = f"Ctrl-C after the commit point of {unit.project} (run {record['run_id']}, completed)"

    def block_downstream(self, unit: Unit, reason: str) -> None:
        """Mark every selected project downstream of ``unit``'s (through any node) blocked for its period."""
        below = self.plan.graph.descendants(node_id(PROJECT, unit.project))
        blocked = self.blocked[unit.period.identifier]
        for other in self.plan.names:
            if node_id(PROJECT, other) in below:
                blocked.setdefault(other, reason)

    def run_ids(self, unit: Unit) -> set[str]:
        """The ids of the recorded runs of ``unit`` (of the batch, when it has one): a failed attempt's record is
        the new one."""
        store, batch_id = self.runner.store, unit.settings.batch_id
        if batch_id:
            return store.batch_run_ids(batch_id, unit.project, unit.period.identifier)
        return {rec["run_id"] for rec in store.list_runs() if rec["project"]["name"] == unit.project}

    def first_failed(self) -> Optional[ProjectOutcome]:
        """The first failed outcome, period by period."""
        return next((self.outcomes[(n, p.identifier)] for n, p in self.plan.keys()
                     if self.outcomes[(n, p.identifier)].status == "failed"), None)

    def ordered(self) -> list[ProjectOutcome]:
        """Every outcome, period by period, the projects in run order."""
        return [self.outcomes[(n, p.identifier)] for n, p in self.plan.keys()]

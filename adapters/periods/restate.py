"""``ledgerflow restate PROJECT --period P --reason TEXT [--by NAME] [--dry-run]`` (docs/commands.md
"Restating a closed period"): a closed project-period changed on purpose, with a reason, on someone's word,
and with the data diff of what it changes in its run record.

Before Spark: the reason is required, the project-period must be closed (an open one is simply run), every
output of the project, and of the run it supersedes (the project-period's last completed run), must be a
local folder (a catalog table or URI is replaced in place: the superseded rows could not stay readable),
and the superseded rows must still be where that run's record says.

The restatement is a run (:meth:`..run.scheduler.Scheduler.run_unit`) evaluated by its own strategy
(:class:`RestatementRun`, :mod:`..run.evaluator`), which publishes with
:class:`.restate_publish.RestatementPublishing`: its record carries ``restatement {reason, by,
supersedes_run_id, superseded_outputs, data_diff}``, which the run store's commit point lets through for a
closed period; the data diff is computed on the staged outputs before anything is swapped in; the version
folders the swaps replace are kept (:meth:`..commit.journal.CommitJournal.retire`), so the superseded rows
stay readable at the folders the record names.

``--dry-run`` computes the outputs as ``diff --data`` does (stopped before any write, checks not judged) and
compares them with the published rows: no staging folder, no run record, no version reserved.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from ...compiler.errors import ExecutionError, LedgerflowError
from ...compiler.model import Workspace
from ...compiler.periods import Period
from ..diff.data_result import DataDiff, ProjectDataDiff, Restated, WorkspaceDataDiff, output_labels
from ..store.closure_table import describe
from ..store.restatements import emptied_line
from ..run import interrupts
from ..run.checks import quarantine_destinations
from ..run.context import RunContext, compiled_to_run, utcnow, warm_parser
from ..run.destinations import destination
from ..run.evaluator import PeriodRun
from ..run.scheduler import Scheduler
from ..run.unit import RunSettings, Unit
from ..console.invocation import who
from .restate_publish import (RestatementPublishing, RestateError, Superseded, compare, emptied_outputs,
                              read_published, superseded_run)

Echo = Callable[[str], None]


@dataclass
class Restatement:
    """What a restatement did (or, ``dry_run``, would do): the run (None for a dry run), the run it supersedes
    and the data diff."""

    project: str
    period: str
    reason: str
    by: str
    superseded: Superseded
    diff: DataDiff
    record: Optional[dict] = None
    dry_run: bool = False
    would_empty: list = field(default_factory=list)  # a dry run: the superseded outputs it would publish empty
    from_env: Optional[str] = None  # restate --from-env: the environment whose published version is taken

    def report(self) -> WorkspaceDataDiff:
        """The data diff as ``diff --data`` reports one project (BASE: the published run, HEAD: the restatement),
        headed as the restatement it is (project, period, reason, by)."""
        base = f"published run {self.superseded.run_id}" if self.superseded.run_id else "nothing published"
        head = "restatement (dry run)" if self.dry_run else f"restatement run {self.record['run_id']}"
        restated = Restated(self.project, self.period, self.reason, self.by, self.superseded.run_id,
                            None if self.dry_run else self.record["run_id"])
        return WorkspaceDataDiff(base, head, self.period, [], [ProjectDataDiff(self.project, "compared", self.diff)],
                                 restatement=restated)


@dataclass(frozen=True)
class RestateAsk:
    """What ``ledgerflow restate`` was asked: the project (name, id or path), the closed period, the reason,
    who (None: ``$USER``), ``--dry-run`` and ``--allow-draft``."""

    project_ref: str
    period: Period
    reason: Optional[str]
    by: Optional[str] = None
    dry_run: bool = False
    allow_draft: bool = False


def check_reason(reason: Optional[str]) -> None:
    """RESTATE-001 unless ``reason`` holds some text."""
    if not (reason or "").strip():
        raise RestateError("RESTATE-001 a restatement needs a reason: `--reason TEXT` says why the closed period's "
                           "numbers change (it is recorded in the run record with who restated it). Nothing was run "
                           "or written.")


def check_closed(store, project, period: Period, instead: str) -> None:
    """RESTATE-002 unless ``project``'s ``period`` is closed (by id: under an earlier name too); ``instead``: the
    sentence saying what to do with an open one."""
    if store.closed(project.name, period.identifier, project.id) is None:
        history = store.history(project.name, period.identifier, project.id)
        when = f" (it was {describe(history[-1])})" if history else ""
        raise RestateError(
            f"RESTATE-002 period {period.identifier} of project '{project.name}' is open{when}: a restatement "
            f"changes a closed period. {instead}. Nothing was run or written.")


def plan(runner, ask: RestateAsk, workspace: Optional[Workspace] = None):
    """Everything checked before Spark: (workspace, project, compiled, superseded run). Raises
    :class:`.restate_publish.RestateError` (exit 1) for a missing reason, an open period, a project without
    outputs, an output that is not a local folder, superseded rows that are gone; an unknown project, or a draft
    one without ``allow_draft``, is the usual error."""
    period = ask.period
    check_reason(ask.reason)
    ws = workspace or runner.load_workspace()
    compiled = compiled_to_run(ws, ask.project_ref, ask.allow_draft, verb="restate")
    project = compiled.project
    check_closed(runner.store, project, period, f"Run it instead (`ledgerflow run {project.name} --period "
                                                f"{period.identifier}`), or see what a run would change first with "
                                                "`ledgerflow diff --data`")
    if not compiled.outputs:
        raise RestateError(
            f"RESTATE-006 project '{project.name}' writes no output any more: a restatement publishes its outputs, "
            f"and the partitions published for {period.identifier} would stay as they are. Nothing was run or "
            "written. Give the project its outputs back, or reopen the period to retire them by hand.")
    probe = RunContext(ws, project, compiled, period, utcnow(), "restate-plan")
    formats = {}
    for st in compiled.outputs:
        dest = destination(probe, st.operation, 1)
        if not dest.local:
            raise RestateError(
                f"RESTATE-003 output {st.operation.seq} '{st.operation.name}' of project '{project.name}' writes "
                f"{dest.target} (a catalog table or remote URI), which a run replaces in place: the rows published "
                f"for {period.identifier} could not stay readable after a restatement, so nothing was run or "
                "written. Restate only projects whose outputs are local folders; reopen the period and run it "
                f"instead (`ledgerflow periods reopen {period.identifier} --project {project.name} --note TEXT`).")
        formats[st.operation.seq] = dest.format
    return ws, project, compiled, superseded_run(runner.store, project.name, period.identifier, formats, project.id)


def restate(runner, ask: RestateAsk, workspace: Optional[Workspace] = None,
            planned: Optional[tuple] = None) -> Restatement:
    """Restate the closed period ``ask`` names with ``runner`` (see the module docstring); ``planned``: what
    :func:`plan` returned for the same ask, if the caller called it already. Returns the :class:`Restatement`;
    a failed run raises as ``run`` does."""
    ws, project, compiled, superseded = planned or plan(runner, ask, workspace)
    period, reason = ask.period, ask.reason
    person = who(ask.by)
    if ask.dry_run:
        diff = _dry_run(runner, ws, compiled, period, superseded)
        probe = RunContext(ws, project, compiled, period, utcnow(), "restate-plan")
        places = {st.operation.seq: destination(probe, st.operation, 1) for st in compiled.outputs
                  if not st.operation.register_as_dataset}
        places.update(quarantine_destinations(probe))
        empty = [o for o, _dest in emptied_outputs(superseded, places, period.identifier, ws.root).values()]
        return Restatement(project.name, period.identifier, reason.strip(), person, superseded, diff, dry_run=True,
                           would_empty=empty)
    block = {"reason": reason.strip(), "by": person, "supersedes_run_id": superseded.run_id,
             "superseded_outputs": [o.to_json() for o in superseded.outputs], "data_diff": None}
    strategy = RestatementRun(runner, block, superseded, period)
    record = Scheduler(runner, runner.echo).run_unit(Unit(project.name, period, RunSettings(ask.allow_draft)), ws,
                                                     strategy)
    return Restatement(project.name, period.identifier, block["reason"], person, superseded, strategy.made[-1].diff,
                       record)


class RestatementRun(PeriodRun):
    """A restatement's strategy (:mod:`..run.evaluator`): its :meth:`places` (before anything is claimed: the
    partitions of outputs the project no longer writes, published empty), then its :meth:`publishing`: the
    :class:`RestatementPublishing` the run publishes with. Its outputs are computed as a period's run computes
    them."""

    def __init__(self, runner, block: dict, superseded: Superseded, period: Period):
        self.runner, self.block, self.superseded, self.period = runner, block, superseded, period
        self.emptied: dict = {}
        self.made: list[RestatementPublishing] = []

    def places(self, ctx, destinations: dict, record: dict) -> dict:
        """:func:`.restate_publish.emptied_outputs`' destinations, by name (``destinations``: every place the run
        writes). The run's ``record`` holds the restatement block from here on, ``emptied_outputs`` included: a
        restatement that fails says what it was, and what it was to publish empty."""
        self.emptied = emptied_outputs(self.superseded, destinations, self.period.identifier, ctx.workspace.root)
        record["restatement"] = self.block
        if self.emptied:
            self.block["emptied_outputs"] = [{"operation_seq": o.seq, "name": o.name, "location": o.location}
                                             for o, _dest in self.emptied.values()]
        return {key: dest for key, (_o, dest) in self.emptied.items()}

    def publishing(self, record: dict, ctx, checks) -> RestatementPublishing:
        """The run's ``checks`` wrapped: the data diff computed on the staged outputs before the swaps."""
        self.made.append(RestatementPublishing(record, ctx, checks, self.block, self.superseded, self.runner.store,
                                               self.runner.echo, self.emptied))
        return self.made[-1]


def _dry_run(runner, ws: Workspace, compiled, period: Period, superseded: Superseded) -> DataDiff:
    """The outputs computed as ``diff --data`` computes a side (nothing written, nothing recorded) and compared
    with the published rows."""
    from ..commit.staging import without_period
    from ..diff.data_sides import unrecorded_context
    from ..inputs.resolution import resolve_inputs
    started = utcnow()
    ctx = unrecorded_context(ws, compiled, period, started)
    warm_parser(compiled)
    resolve_inputs(ctx, runner.store, runner.memory)
    # Ctrl-C as in a run (Spark's jobs cancelled), and the handler the process had before restored after: a
    # session the CLI started early installs ledgerflow's handler, which must not outlive the dry run
    with interrupts.watching():
        spark = runner.session()  # the runner's own session (its factory, or ledgerflow's local one)
        interrupts.set_cancel(interrupts.session_cancel(spark))
        try:
            # each output's frame handed back uncomputed, as `diff --data` computes a side; keyed by seq, not name
            # (names need not be unique: output_labels)
            pending = Scheduler.dry_run(spark, ctx)
            labels = output_labels((p.statement.operation.seq, p.statement.operation.name) for p in pending)
            # without _period, as the published rows are read
            head = {labels[p.statement.operation.seq]: without_period(p.frame) for p in pending}
            base = {o.label or o.name: read_published(spark, o.folder, o.format, head.get(o.label or o.name))
                    for o in superseded.outputs}
            return compare(base, head, {**{o.label or o.name: o.seq for o in superseded.outputs},
                                        **{label: seq for seq, label in labels.items()}}, compiled)
        except LedgerflowError:
            raise
        except Exception as exc:  # noqa: BLE001 - Spark/Py4J errors
            from ..run.compute import spark_error_message
            raise ExecutionError(f"restate --dry-run of project '{ctx.project.name}' failed on Spark for period "
                                 f"{period.identifier}: {spark_error_message(exc, ctx)}") from exc


def render(result: Restatement, fmt: str = "text") -> str:
    """What ``ledgerflow restate`` prints after the run's own lines: :func:`summary_lines`, then the data diff
    in ``fmt`` (text, markdown or json, as ``diff --data`` prints them)."""
    from ..diff.data_formats import render_data
    text = render_data(result.report(), fmt)
    if fmt == "json":
        return text
    return "\n".join(summary_lines(result) + ["", text])


def summary_lines(result: Restatement) -> list[str]:
    """What the command prints before the data diff: what was restated, why, by whom, and where the
    superseded rows stay readable."""
    sup = result.superseded
    if result.dry_run:
        lines = [f"Dry run: nothing was published or recorded. Restating period {result.period} of project "
                 f"'{result.project}' would supersede " + (f"run {sup.run_id}" if sup.run_id else "nothing published")
                 + f" (reason: {result.reason!r}, by {result.by})"
                 + (f" with what environment '{result.from_env}' published." if result.from_env else ".")]
        lines += [emptied_line(o.seq, o.name, o.location, would=True) for o in result.would_empty]
    else:
        lines = [f"Restated period {result.period} of project '{result.project}': run {result.record['run_id']} "
                 "supersedes " + (f"run {sup.run_id}" if sup.run_id else "nothing published")
                 + f" (reason: {result.reason!r}, by {result.by})."]
        promotion = result.record.get("promotion")
        if promotion:
            lines.append(f"  promoted from environment '{promotion['from']}' (its run {promotion['source_run_id']}; "
                         f"promotion {promotion['promotion_id']}): no rows recomputed, no data copied")
        lines += [f"  superseded output {o.seq} '{o.name}' stays readable at {o.folder}" for o in sup.outputs]
        lines += [emptied_line(e["operation_seq"], e["name"], e["location"])
                  for e in result.record["restatement"].get("emptied_outputs") or []]
    return lines

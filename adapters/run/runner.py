"""Execute a compiled project on Spark: resolve, load, run the stages, write the outputs, record.

Order of work, chosen so that bad input never leaves a partial output: everything the user
controls is checked first (compile, versions, resolvers, locations, declared columns); then every
stage and output query runs on Spark; only when all of them succeeded are the outputs written,
each period partition swapped in atomically.

:class:`Runner` is the run's sequence; each step is a module of its own: the context
(:mod:`.context`), the inputs' resolution (:mod:`..inputs.resolution`), the destinations
(:mod:`.destinations`), the record (:mod:`.record`), the Spark work (:mod:`.compute`), the writes and
the commit point (:mod:`..commit.publish`), how a run ends (:mod:`.run_end`), a replay's context
(:mod:`.replay`). What varies between runs (a period's own, a fused range's, a restatement) is the
strategy handed to :meth:`Runner.execute` (:mod:`.evaluator`); batches are :mod:`.scheduler`'s.
"""
from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass
from typing import Callable, Optional, Union

from ...compiler.errors import ExecutionError, LedgerflowError
from ...compiler.model import Workspace
from ...compiler.periods import Period, parse_period
from ...compiler.workspace import load_workspace
from ..commit import publish
from ..commit.journal import CommitJournal
from ..commit.signals import signals_deferred
from ..inputs import fingerprint, read_check
from ..inputs.resolution import resolve_inputs
from ..commit.open_store import open_store
from ..store import liveness
from . import bridge, interrupts, leases
from .checks import RunChecks, quarantine_destinations
from .closed_partitions import refuse_closed_partitions
from .compute import spark_error_message
from .context import RunContext, compiled_to_run, period_context, utcnow
from .destinations import resolve_destinations
from .evaluator import PeriodRun, Strategy
from .metrics import RunMetrics, run_timings
from .record import RunRecord, output_lineage
from .replay import replay_context
from ..events.emitter import emit_of_run
from .run_end import completed_lines, record_failed, settle_committed

Echo = Callable[[str], None]


@dataclass(frozen=True)
class _Planned:
    """What a run planned before Spark, handed to its Spark work: its strategy, destinations (output seq ->
    where), quarantines (check name -> where), lineage (output seq -> its columns' sources) and start clock."""

    strategy: Strategy
    destinations: dict
    quarantines: dict
    lineage: dict
    clock: float


def _may_publish(store, ctx: RunContext, data: dict, session: Callable[[], object]) -> None:
    """Raise when the run of ``ctx`` (its record ``data``), its outputs staged, may not publish them: its period
    was closed meanwhile, or an input changed since the fingerprints it records were taken
    (:mod:`..inputs.read_check`)."""
    store.refuse_closed_now(data)
    read_check.refuse_changed(ctx.fingerprints, ctx.resolutions, ctx.period.identifier, ctx.run_id, session)


def _interrupted(record: RunRecord, ctx: RunContext) -> interrupts.RunInterrupted:
    """What Ctrl-C before the commit point did to the run, as the exception the caller raises."""
    if record.get("status") != "failed":  # the run store could not tell whether it committed
        return interrupts.RunInterrupted(
            f"run {ctx.run_id} was stopped at its commit point, and the run store could not tell whether it "
            "committed; the next ledgerflow command (e.g. `ledgerflow runs clean`) settles it.")
    done = record.get("rolled_back")
    outputs = (f"; {publish.rollback_sentence(record.data)}" if done
               else "; nothing it wrote was made visible")
    return interrupts.RunInterrupted(f"run {ctx.run_id} was stopped before its commit point and is recorded "
                                     f"failed{outputs.rstrip('.')}.")


class Runner:
    """Runs one project (or replays one run) on a SparkSession."""

    def __init__(self, root: str, echo: Echo = print, session_factory: Optional[Callable[[], object]] = None,
                 spark_label: str = "local", memory: Optional[dict] = None, wait: bool = False, env: str = "prod"):
        self.root, self.echo, self.wait = os.path.abspath(root), echo, wait  # wait: for another run's partition
        self.store = open_store(self.root, env)  # checked, interrupted runs recovered; publishing to ``env``
        self.session_factory, self.spark_label = session_factory, spark_label
        self.memory = memory  # dataset id or name -> DataFrame read from memory (Python API)
        # Ctrl-C was pressed during the last run and did not stop it (it came after its commit point, or while
        # it was being recorded failed): a caller running several projects stops before the next one
        self.stop_requested = False

    # ---------------------------------------------------------------- entry points
    def run(self, project_ref: str, period: Union[Period, str], allow_draft: bool = False, workspace:
            Optional[Workspace] = None, upstream: Optional[dict] = None, batch_id: Optional[str] = None, *,
            strategy: Optional[Strategy] = None, prefix: Optional[str] = None) -> dict:
        """Run ``project_ref`` for ``period``; returns the completed run record. ``workspace``: the
        workspace at this runner's root as the caller loaded it (default: loaded here). ``period`` as the
        command line parsed it (a string, from Python code, is parsed here: :func:`parse_period`).
        ``upstream`` (``run --select``): registered dataset name -> the version registered earlier in this
        invocation for this period ({dataset, version, run_id, project}); read instead of the newest, recorded
        as ``upstream_runs``. ``batch_id``: the invocation's (:mod:`.batch`), recorded. ``strategy``: how its
        outputs are evaluated (:mod:`.evaluator`; default a period's run); ``prefix``: as :meth:`execute`."""
        if isinstance(period, str):
            period = parse_period(period)
        ws = workspace or self.load_workspace()
        ctx = period_context(ws, compiled_to_run(ws, project_ref, allow_draft), period, utcnow(), upstream, batch_id)
        return self.execute(ctx, strategy, prefix=prefix)

    def replay(self, run_id: str, allow_changed_inputs: bool = False, workspace: Optional[Workspace] = None) -> dict:
        """Re-execute a recorded run from its snapshots: same versions, locations, TODAY() and rows.

        The inputs are compared with the fingerprints the run recorded first: a changed input refuses
        the replay (ResolutionError naming the dataset, location and files) unless
        ``allow_changed_inputs``; a deleted one always does. ``workspace``: as in :meth:`run` (its
        configuration and registered datasets are used; projects and declared datasets come from the run)."""
        original = self.store.get_run(run_id)
        ctx = replay_context(original, self.root, workspace or self.load_workspace(), allow_changed_inputs,
                             self.session, self.echo)
        self.echo(f"Replaying run {original['run_id']} as {ctx.run_id}")
        return self.execute(ctx, resolve=False)

    def load_workspace(self) -> Workspace:
        """The workspace at this runner's root with the datasets earlier runs registered."""
        return load_workspace(self.root, extra_datasets=self.store.registered_datasets)

    def session(self):
        """The SparkSession of this runner (``getOrCreate``: the run later gets the same one)."""
        if self.session_factory:
            session = self.session_factory()
        else:
            from ..spark.session import session_factory
            session = session_factory()[0]()  # no workspace settings: ledgerflow's own, two local cores
        interrupts.reclaim()  # a SparkContext created here on the main thread installed PySpark's SIGINT handler
        return session

    # ---------------------------------------------------------------- execution
    def execute(self, ctx: RunContext, strategy: Optional[Strategy] = None, resolve: bool = True,
                prefix: Optional[str] = None) -> dict:
        """Run ``ctx`` (its inputs resolved here unless ``resolve`` is False: a replay's are) evaluated by
        ``strategy`` (default :class:`.evaluator.PeriodRun`), with Ctrl-C handled as :mod:`.interrupts` says
        (Spark's jobs cancelled, the run stopped at its next step): before the commit point the run is rolled
        back, recorded failed and :class:`~.interrupts.RunInterrupted` raised; after it the run stands and a
        note says so. ``prefix``: a period its indented progress lines name (``  2026-02: [1] update ...``)."""
        self.stop_requested = False
        echo = self.echo
        if prefix is not None:
            self.echo = lambda line: echo(f"  {prefix}: {line[2:]}" if line.startswith("  ") else line)
        try:
            with interrupts.watching():
                return self._execute_watched(ctx, strategy or PeriodRun(), resolve)
        finally:
            self.echo = echo

    def _execute_watched(self, ctx: RunContext, strategy: Strategy, resolve: bool) -> dict:
        clock = time.monotonic()
        p = ctx.project
        self.echo(f"Run {ctx.run_id}: project {p.name} v{p.version}, period {ctx.period.identifier}")
        record: Optional[RunRecord] = None
        ctx.env = self.store.env
        try:
            if resolve:
                resolve_inputs(ctx, self.store, self.memory)
                # what the inputs are now, before Spark reads them (a replay compares against it)
                ctx.fingerprints = fingerprint.fingerprint_inputs(ctx.resolutions, self.session)
            record = RunRecord.start(ctx)
            # held until the record is final, so a later command can tell this run's process died (recovery.py);
            # taken before the run claims anything (a registered version, a lease), which recovery releases then
            process = liveness.hold(self.store.runs_dir, ctx.run_id)
            destinations = resolve_destinations(ctx, self.store, process)
            quarantines = quarantine_destinations(ctx)  # check name -> where its quarantined rows are staged
            places = {**destinations, **quarantines}
            places.update(strategy.places(ctx, places, record.data))  # beside them, by name (a restatement's)
            lineage = output_lineage(ctx)  # pure, before Spark: a completed run always records it
            record.claimed(process, CommitJournal.staging_entries(places, ctx.period.identifier))
            needed = refuse_closed_partitions(self.store, record.data, leases.resources(places, ctx.period.identifier))
            leases.take(self.store, ctx.run_id, process, needed, self.wait, self.echo)  # one writer per partition
            self.store.save_run(record.data, ctx.compiled.script())
            emit_of_run(self.root, ctx, "START", record.data, self.echo)
        except LedgerflowError as err:
            record = record or RunRecord.start(ctx)
            self._fail(record, ctx, err)
            raise
        except BaseException as exc:  # a bug, an interrupt, a full disk: nothing this run claimed may outlive it
            if isinstance(exc, KeyboardInterrupt) and record is not None:
                self._fail(record, ctx, ExecutionError(f"interrupted: {type(exc).__name__} in the process that "
                                                       "ran it, before it started"))
                raise _interrupted(record, ctx) from exc
            self.store.release(ctx.run_id)
            liveness.release(ctx.run_id)
            if isinstance(exc, KeyboardInterrupt):
                raise interrupts.RunInterrupted(f"run {ctx.run_id} was stopped before it started; nothing was "
                                                "written or recorded.") from exc
            raise
        late: Optional[BaseException] = None
        arrived: list[int] = []  # signals that came from the commit transaction on (deferred until the end)
        with contextlib.ExitStack() as committing:
            try:
                outputs, journal, late = self._execute_spark(
                    ctx, record, _Planned(strategy, destinations, quarantines, lineage, clock),
                    lambda: committing.enter_context(signals_deferred(reraise_sigint=False, into=arrived)))
            finally:
                self.stop_requested = self.stop_requested or signal.SIGINT in arrived
            # Committed: from here on nothing rolls the run back or records it failed, and Ctrl-C only adds a note.
            settle_committed(self.store, record, ctx, journal, self.echo)
            emit_of_run(self.root, ctx, "COMPLETE", record.data, self.echo)
            if late is not None and not isinstance(late, KeyboardInterrupt):
                raise late
            self._report(ctx, record, outputs, time.monotonic() - clock)
            # a Ctrl-C after the commit point, or during a URI's or table's write that did not stop it (interrupts.hold)
            if late is not None or signal.SIGINT in arrived or interrupts.requested():
                self.stop_requested = True
                self.echo(f"Interrupted after the commit point: run {ctx.run_id} is committed (completed); nothing "
                          "was rolled back.")
        return record.data

    def _report(self, ctx: RunContext, record: RunRecord, outputs: list[dict], took: float) -> None:
        """The lines saying a run completed (:func:`.run_end.completed_lines`)."""
        for line in completed_lines(ctx, record, outputs, took):
            self.echo(line)

    def _execute_spark(self, ctx: RunContext, record: RunRecord, planned: "_Planned",
                       defer_signals: Callable[[], object]) -> tuple[list[dict], CommitJournal, Optional[BaseException]]:
        """The run's Spark work, writes and commit point (:func:`.publish.commit_point`, which calls
        ``defer_signals`` as its transaction begins); a failure before the commit point is recorded
        (:meth:`_fail`) and raised.
        Returns the record's outputs, the commit journal and an exception that came after the commit point."""
        late: Optional[BaseException] = None
        strategy, destinations, quarantines, clock = planned.strategy, planned.destinations, planned.quarantines, \
            planned.clock
        metrics: Optional[RunMetrics] = None  # the run's timings, from its first Spark statement
        try:
            spark = self.session()
            interrupts.set_cancel(interrupts.session_cancel(spark))
            record.on_spark(self.spark_label, spark)
            metrics = RunMetrics(spark, ctx.run_id)
            pending = strategy.compute(spark, ctx, metrics, self.echo, destinations)
            record.read(ctx.fingerprints)
            checks = RunChecks(spark, ctx, quarantines, self.echo) if ctx.compiled.plan and ctx.compiled.plan.checks \
                else None  # judged on the staged outputs, before anything is swapped in (run/checks.py)
            checks = strategy.publishing(record.data, ctx, checks)
            hooks = publish.PublishHooks(self.store.save_run, interrupts, self.echo, metrics, checks,
                                         refuse=lambda data: _may_publish(self.store, ctx, data, self.session),
                                         staged=lambda seq, folder: bridge.staged(ctx, seq, folder))
            written = publish.write_outputs(pending, destinations, record.data, period=ctx.period.identifier, hooks=hooks)
            bridge.collect(ctx, record.data)  # record["bridge"] (already there when checks were judged)
            completion = publish.Completion(
                ctx.started_at.isoformat(), lambda: utcnow().isoformat(timespec="milliseconds"),
                lambda: run_timings(metrics, clock))
            late = publish.commit_point(self.store, record.data, written, planned.lineage, completion=completion,
                                        stops=interrupts, defer_signals=defer_signals)
        except LedgerflowError as err:
            record.timed(run_timings(metrics, clock))
            self._fail(record, ctx, err)
            raise
        except Exception as exc:  # Spark/Py4J/Connect errors: the run failed on Spark
            if interrupts.requested():  # the failure of a job Ctrl-C cancelled
                self._fail(record, ctx, ExecutionError("interrupted: KeyboardInterrupt in the process that ran it"))
                raise _interrupted(record, ctx) from exc
            err = ExecutionError(f"run {ctx.run_id} failed on Spark: {spark_error_message(exc, ctx)}")
            err.__cause__ = exc
            record.timed(run_timings(metrics, clock))
            self._fail(record, ctx, err)
            raise err
        except BaseException as exc:  # KeyboardInterrupt, SystemExit: the outputs were rolled back
            if self.store.run_status(ctx.run_id) != "completed":
                self._fail(record, ctx, ExecutionError(f"interrupted: {type(exc).__name__} in the process that ran it"))
                if isinstance(exc, KeyboardInterrupt):
                    raise _interrupted(record, ctx) from exc
                raise
            late = exc  # it arrived just after the commit point, which went through: the run stands
        return written.outputs, written.journal, late

    def _fail(self, record: RunRecord, ctx: RunContext, err: LedgerflowError) -> None:
        """Record the run failed with ``err`` (:func:`.failure.record_failed`; a Ctrl-C meanwhile only sets
        :attr:`stop_requested`, the run is stopping anyway), and say so in an OpenLineage event."""
        if record_failed(self.store, record, ctx, err, self.echo):
            self.stop_requested = True
        emit_of_run(self.root, ctx, None, record.data, self.echo)  # FAIL or ABORT, when it is recorded failed

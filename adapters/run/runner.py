"""Execute a compiled project on Spark: resolve, load, run the stages, write the outputs, record.

Order of work, chosen so that bad input never leaves a partial output: everything the user
controls is checked first (compile, versions, resolvers, locations, declared columns); then every
stage and output query runs on Spark; only when all of them succeeded are the outputs written,
each period partition swapped in atomically.

:class:`Runner` is the run's sequence; each step is a module of its own: the context
(:mod:`.context`), the inputs' resolution (:mod:`..inputs.resolution`), the destinations
(:mod:`.destinations`), the record (:mod:`.record`), the Spark work (:mod:`.compute`), the writes and
the commit point (:mod:`..commit.publish`), a replay's context (:mod:`.replay`).
"""
from __future__ import annotations

import contextlib
import os
import signal
import time
from typing import Callable, Optional, Union

from ...compiler.compile import compile_project, require_project
from ...compiler.errors import ExecutionError, LedgerflowError
from ...compiler.model import Workspace
from ...compiler.periods import Period, parse_period
from ...compiler.workspace import load_workspace
from ..commit import publish
from ..commit.destinations import OutputDestination
from ..commit.journal import CommitJournal
from ..commit.signals import signals_deferred
from ..inputs import fingerprint, read_check
from ..inputs.resolution import resolve_inputs
from ..commit.open_store import open_store
from ..store import liveness
from . import bridge, interrupts, leases
from .checks import RunChecks, quarantine_destinations
from .closed_partitions import refuse_closed_partitions
from .compute import compute, spark_error_message
from .context import RunContext, new_run_id, utcnow, warm_parser
from .destinations import resolve_destinations
from .metrics import RunMetrics, run_timings, timing_summary
from .record import RunRecord, output_lineage
from .replay import replay_context

Echo = Callable[[str], None]


def _with_more_places(publishing, ctx: RunContext, places: dict, record: dict) -> dict:
    """``places`` (a run's outputs and quarantines) and the partitions its ``publishing`` hook publishes beside
    them, by name: its ``places(ctx, places, record)`` when it has one (a restatement's emptied outputs, which it
    notes in the run's ``record`` from the start, restate.py)."""
    more = getattr(publishing, "places", None)
    return {**places, **(more(ctx, places, record) if more is not None else {})}


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
                 spark_label: str = "local", memory: Optional[dict] = None, wait: bool = False):
        self.root, self.echo = os.path.abspath(root), echo
        self.wait = wait  # a destination partition another live run writes: wait for it (else fail at once)
        self.store = open_store(self.root)  # checked, interrupted runs recovered
        self.session_factory, self.spark_label = session_factory, spark_label
        self.memory = memory  # dataset id or name -> DataFrame read from memory (Python API)
        # Ctrl-C was pressed during the last run and did not stop it (it came after its commit point, or while
        # it was being recorded failed): a caller running several projects stops before the next one
        self.stop_requested = False
        self.computation: Optional[Callable] = None  # computes the outputs instead of compute (fused.py)
        self.publishing: Optional[Callable] = None  # (record, ctx, checks) -> the checks to publish with (restate.py)

    # ---------------------------------------------------------------- entry points
    def run(self, project_ref: str, period: Union[Period, str], allow_draft: bool = False, workspace:
            Optional[Workspace] = None, upstream: Optional[dict] = None, batch_id: Optional[str] = None) -> dict:
        """Run ``project_ref`` for ``period``; returns the completed run record. ``workspace``: the
        workspace at this runner's root as the caller loaded it (default: loaded here). ``period`` as the
        command line parsed it (a string, from Python code, is parsed here: :func:`parse_period`).
        ``upstream`` (``run --select``): registered dataset name -> the version registered earlier in this
        invocation for this period ({dataset, version, run_id, project}); read instead of the newest, recorded
        as ``upstream_runs``. ``batch_id``: the invocation's (:mod:`.batch`), recorded."""
        if isinstance(period, str):
            period = parse_period(period)
        ws = workspace or self.load_workspace()
        project = require_project(ws, project_ref)
        if project.status == "draft" and not allow_draft:
            raise LedgerflowError(f"project '{project.name}' is a draft; pass --allow-draft to run it anyway.")
        compiled = compile_project(ws, project)
        warm_parser(compiled)
        started = utcnow()
        ctx = RunContext(ws, project, compiled, period, started, new_run_id(started), upstream=dict(upstream or {}),
                         batch_id=batch_id)
        ctx.datasets_snapshot = [v.dataset.raw for v in compiled.inputs if v.dataset.raw is not None]
        return self._execute(ctx, resolve=True)

    def replay(self, run_id: str, allow_changed_inputs: bool = False, workspace: Optional[Workspace] = None) -> dict:
        """Re-execute a recorded run from its snapshots: same versions, locations, TODAY() and rows.

        The inputs are compared with the fingerprints the run recorded first: a changed input refuses
        the replay (ResolutionError naming the dataset, location and files) unless
        ``allow_changed_inputs``; a deleted one always does. ``workspace``: as in :meth:`run` (its
        configuration and registered datasets are used; projects and declared datasets come from the run)."""
        original = self.store.get_run(run_id)
        ctx = replay_context(original, self.root, workspace or self.load_workspace(), allow_changed_inputs,
                             self._session, self.echo)
        self.echo(f"Replaying run {original['run_id']} as {ctx.run_id}")
        return self._execute(ctx, resolve=False)

    def load_workspace(self) -> Workspace:
        """The workspace at this runner's root with the datasets earlier runs registered."""
        return load_workspace(self.root, extra_datasets=self.store.registered_datasets)

    def _session(self):
        """The SparkSession of this runner (``getOrCreate``: the run later gets the same one)."""
        if self.session_factory:
            session = self.session_factory()
        else:
            from ..spark.session import session_factory
            session = session_factory()[0]()  # no workspace settings: ledgerflow's own, two local cores
        interrupts.reclaim()  # a SparkContext created here on the main thread installed PySpark's SIGINT handler
        return session

    # ---------------------------------------------------------------- execution
    def _execute(self, ctx: RunContext, resolve: bool) -> dict:
        """Run ``ctx`` with Ctrl-C handled as :mod:`.interrupts` says (Spark's jobs cancelled, the run
        stopped at its next step): before the commit point the run is rolled back, recorded failed and
        :class:`~.interrupts.RunInterrupted` raised; after it the run stands and a note says so."""
        self.stop_requested = False
        with interrupts.watching():
            return self._execute_watched(ctx, resolve)

    def _execute_watched(self, ctx: RunContext, resolve: bool) -> dict:
        clock = time.monotonic()
        p = ctx.project
        self.echo(f"Run {ctx.run_id}: project {p.name} v{p.version}, period {ctx.period.identifier}")
        record: Optional[RunRecord] = None
        try:
            if resolve:
                resolve_inputs(ctx, self.store, self.memory)
                # what the inputs are now, before Spark reads them (a replay compares against it)
                ctx.fingerprints = fingerprint.fingerprint_inputs(ctx.resolutions, self._session)
            record = RunRecord.start(ctx)
            # held until the record is final, so a later command can tell this run's process died (recovery.py);
            # taken before the run claims anything (a registered version, a lease), which recovery releases then
            process = liveness.hold(self.store.runs_dir, ctx.run_id)
            destinations = resolve_destinations(ctx, self.store, process)
            quarantines = quarantine_destinations(ctx)  # check name -> where its quarantined rows are staged
            places = _with_more_places(self.publishing, ctx, {**destinations, **quarantines}, record.data)
            lineage = output_lineage(ctx)  # pure, before Spark: a completed run always records it
            record.claimed(process, CommitJournal.staging_entries(places, ctx.period.identifier))
            needed = refuse_closed_partitions(self.store, record.data, leases.resources(places, ctx.period.identifier))
            leases.take(self.store, ctx.run_id, process, needed, self.wait, self.echo)  # one writer per partition
            self.store.save_run(record.data, ctx.compiled.script())
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
                outputs, journal, late = self._execute_spark(ctx, record, destinations, quarantines, lineage, clock,
                                                             lambda: committing.enter_context(
                                                                 signals_deferred(reraise_sigint=False, into=arrived)))
            finally:
                self.stop_requested = self.stop_requested or signal.SIGINT in arrived
            # Committed: from here on nothing rolls the run back or records it failed, and Ctrl-C only adds a note.
            try:
                self.store.write_files(record.data, ctx.compiled.script())
            except Exception as exc:  # noqa: BLE001 - the registry holds the completed record
                self.echo(f"Warning: the run completed, but its run.json could not be written ({exc}); `ledgerflow "
                          f"runs show {ctx.run_id}` reads its record from {self.store.db_path}")
            try:
                journal.retire()  # the versions the run replaced
            except OSError:
                pass  # a version folder left behind is not live; `ledgerflow runs clean` deletes it
            liveness.release(ctx.run_id)
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
        """The lines saying a run completed: what each output wrote, and its timings."""
        timings = record["timings"]
        self.echo(f"Completed run {ctx.run_id} in {took:.1f} s")
        for out in outputs:
            reg = f" (registered {out['registered_dataset']} v{out['registered_version']})" \
                if out.get("registered_dataset") else ""
            self.echo(f"  output {out['operation_seq']}: {out['rows']} rows -> {out['location']}{reg}")
        if timings:
            self.echo(f"  {timing_summary(timings)}; details: ledgerflow runs show {ctx.run_id}")

    def _execute_spark(self, ctx: RunContext, record: RunRecord, destinations: dict[int, OutputDestination],
                       quarantines: dict[str, OutputDestination], lineage: dict[int, dict], clock: float,
                       defer_signals: Callable[[], object]) -> tuple[list[dict], CommitJournal, Optional[BaseException]]:
        """The run's Spark work, writes and commit point (:func:`.publish.commit_point`, which calls
        ``defer_signals`` as its transaction begins); a failure before the commit point is recorded
        (:meth:`_fail`) and raised.
        Returns the record's outputs, the commit journal and an exception that came after the commit point."""
        late: Optional[BaseException] = None
        metrics: Optional[RunMetrics] = None  # the run's timings, from its first Spark statement
        try:
            spark = self._session()
            interrupts.set_cancel(interrupts.session_cancel(spark))
            record.on_spark(self.spark_label, spark)
            metrics = RunMetrics(spark, ctx.run_id)
            pending = (self.computation or compute)(spark, ctx, metrics, self.echo, destinations)
            record.read(ctx.fingerprints)
            checks = RunChecks(spark, ctx, quarantines, self.echo) if ctx.compiled.plan and ctx.compiled.plan.checks \
                else None  # judged on the staged outputs, before anything is swapped in (run/checks.py)
            checks = self.publishing(record.data, ctx, checks) if self.publishing else checks
            hooks = publish.PublishHooks(self.store.save_run, interrupts, self.echo, metrics, checks,
                                         refuse=lambda data: _may_publish(self.store, ctx, data, self._session))
            written = publish.write_outputs(pending, destinations, record.data, period=ctx.period.identifier,
                                            hooks=hooks)
            bridge.collect(ctx, record.data)  # record["bridge"] (already there when checks were judged)
            completion = publish.Completion(
                ctx.started_at.isoformat(), lambda: utcnow().isoformat(timespec="milliseconds"),
                lambda: run_timings(metrics, clock))
            late = publish.commit_point(self.store, record.data, written, lineage, completion=completion,
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
        """Record the run failed with ``err`` (its local outputs rolled back first, when it got to its swaps)
        and let go of what it holds: its reserved versions and leases go with the failed record, then its
        lock. Ctrl-C and SIGTERM wait meanwhile (a second Ctrl-C here left the leases and the lock held, and
        the next run failed RUN-001); a Ctrl-C only sets :attr:`stop_requested`, the run is stopping anyway."""
        final = False
        with signals_deferred(reraise_sigint=False) as arrived:
            try:
                final = self._record_failure(record, ctx, err)
            finally:
                # a record that is not final (the store failed, or cannot tell whether the run committed) keeps
                # its lock file: the next command finds the lock free and its recovery settles the run
                liveness.release(ctx.run_id, keep_file=not final)
        self.stop_requested = self.stop_requested or signal.SIGINT in arrived

    def _record_failure(self, record: RunRecord, ctx: RunContext, err: LedgerflowError) -> bool:
        """The body of :meth:`_fail`; returns whether the run's record is final now."""
        if CommitJournal.begun(record.data):  # the run got to its swaps
            status = self.store.run_status(ctx.run_id)
            if status != "running":  # completed after all (an interrupt just after the commit point), or the
                return status is not None  # store cannot tell: the next command's recovery decides
            publish.finish_roll_back(record.data)  # when the rollback was cut short (or never began): from the journal
        error = str(err)
        done = record.get("rolled_back")
        if done and (done["kept"] or done["problems"]):
            sentence = publish.rollback_sentence(record.data)
            error += f" Then {sentence}"
            self.echo(f"Warning: {sentence}")
        record.failed(error)
        try:
            # its reserved versions (never visible) and its leases (its rollback is done) go with the final record
            self.store.save_run(record.data, ctx.compiled.script(), release=True)
        except BaseException:
            with contextlib.suppress(Exception):  # the rollback is done: the partitions are free for the next run
                self.store.release(ctx.run_id)
            raise
        return True

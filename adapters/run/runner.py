"""Execute a compiled project on Spark: resolve, load, run the stages, write the outputs, record.

Order of work, chosen so that bad input never leaves a partial output: everything the user
controls is checked first (compile, versions, resolvers, locations, declared columns); then every
stage and output query runs on Spark; only when all of them succeeded are the outputs written,
each period partition swapped in atomically.
"""
from __future__ import annotations

import contextlib
import datetime
import hashlib
import os
import signal
import time
import uuid
from dataclasses import dataclass, field
from typing import Callable, Optional

from ...compiler import parameters, resolver as resolver_engine, system_columns as sysc
from ...compiler.compile import CompiledProject, compile_project, require_project
from ...compiler.errors import ExecutionError, LedgerflowError, ResolutionError
from ...compiler.model import Dataset, Project, Workspace
from ...compiler.periods import Period, parse_period
from ...compiler.resolver import Resolution
from ...compiler.workspace import dataset_from_data, from_snapshot, load_workspace, project_from_data
from ..inputs import fingerprint, loaders
from . import interrupts, leases
from ..store import liveness
from ..spark import parser_warmup
from ..commit import partitions, publish
from ..commit.destinations import OutputDestination, refuse_shared_destinations
from ..commit.journal import CommitJournal
from ..commit.publish import PendingOutput
from ..commit.signals import signals_deferred
from ..spark.error_text import describe_locations, spark_error_text
from .metrics import RunMetrics
from ..inputs.registered_reads import pin_source, registered_resolution, versions_holding
from ..open_store import open_store
from ..store.runstore import RunStore, registered_id

Echo = Callable[[str], None]


def new_run_id(now: datetime.datetime) -> str:
    """A UUIDv7 run id (time-ordered)."""
    ms = int(now.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000)
    rand = uuid.uuid4().int & ((1 << 74) - 1)
    value = (ms << 80) | (0x7 << 76) | ((rand >> 62) << 64) | (0b10 << 62) | (rand & ((1 << 62) - 1))
    return str(uuid.UUID(int=value))


def utcnow() -> datetime.datetime:
    """Now in UTC, naive, millisecond precision (what the run records and binds)."""
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


@dataclass
class RunContext:
    """Everything a run needs besides Spark."""

    workspace: Workspace
    project: Project
    compiled: CompiledProject
    period: Period
    started_at: datetime.datetime  # the value bound to :run_started_at (a replay reuses the original's)
    run_id: str
    parent_run_id: Optional[str] = None
    actual_start: Optional[datetime.datetime] = None  # when this run really started, if not started_at
    resolutions: dict = field(default_factory=dict)  # view -> Resolution
    datasets_snapshot: list = field(default_factory=list)
    fingerprint: bool = False  # resolve_inputs fingerprints what it resolved (runs do; compile --resolved not)
    session_factory: Optional[Callable[[], object]] = None  # Spark for fingerprinting catalog tables
    fingerprints: Optional[list] = None  # resolver_snapshot.input_fingerprints
    input_check: Optional[dict] = None  # a replay's allow_changed_inputs, inputs_changed, inputs_unverified
    # `run --select/--all`: registered dataset name -> {dataset, version, run_id, project} registered earlier
    # in this invocation; an unpinned read of it takes exactly that version (adapters/run/many.py)
    upstream: dict = field(default_factory=dict)
    upstream_runs: list = field(default_factory=list)  # the entries of `upstream` this run read (its record)
    row_identity: int = sysc.ROW_IDENTITY  # how input rows without _row_id get one (a replay: its run's)


def choose_version(dataset: Dataset, pinned: Optional[int], period: Period, store: RunStore,
                   upstream: Optional[dict] = None) -> int:
    """The version a run reads: the pin, else the version an upstream project registered in this
    invocation (``upstream``), else the latest active (registered: newest holding the period)."""
    if pinned is not None:
        return pinned
    if dataset.registered and upstream and dataset.name in upstream:
        return upstream[dataset.name]["version"]
    if dataset.registered:
        holding = versions_holding(store.registrations(dataset.name), period)
        if not holding:
            raise ResolutionError(f"registered dataset '{dataset.name}' has no version holding period "
                                  f"{period.identifier}; pin a dataset_version or run the producing project first.")
        return max(holding)
    version = dataset.latest_active_version()
    if version is None:
        raise ResolutionError(f"dataset '{dataset.name}' has no active version.")
    return version


def resolve_inputs(ctx: RunContext, store: RunStore, memory: Optional[dict] = None) -> None:
    """Resolve the version and locations of every dataset the compiled SQL reads.

    ``memory`` (dataset id or name -> DataFrame, from the Python API) is read instead of resolving;
    such a location belongs to the run's period."""
    for view in ctx.compiled.inputs:
        ds = view.dataset
        version = choose_version(ds, view.pinned_version, ctx.period, store, ctx.upstream)
        if ds.registered and ds.name in ctx.upstream and version == ctx.upstream[ds.name]["version"] \
                and ctx.upstream[ds.name] not in ctx.upstream_runs:
            ctx.upstream_runs.append(ctx.upstream[ds.name])
        frame = next((memory[k] for k in (ds.id, ds.name) if memory and k in memory), None)
        if frame is not None:
            loc = loaders.register_memory(f"{ctx.run_id}/{view.view}", frame, ctx.period.identifier)
            res = Resolution(ds.id, ds.name, version, "memory", "in_memory", "", [loc])
        elif ds.registered:  # a version lacking the run's period is refused, pinned or not
            res = registered_resolution(ds, version, store.registrations(ds.name), ctx.period,
                                        pin=pin_source(ctx.project, view))
        else:
            res = resolver_engine.resolve(ctx.workspace, ctx.project, ds, version, ctx.period)
        for loc in res.locations:
            loaders.check_exists(loc, ds)
        ctx.resolutions[view.view] = res
    if ctx.fingerprint:  # what the inputs are now, before Spark reads them (a replay compares against it)
        ctx.fingerprints = fingerprint.fingerprint_inputs(ctx.resolutions, ctx.session_factory)


def resolver_snapshot(ctx: RunContext) -> dict:
    """The run record's resolver snapshot (docs/run-record.md)."""
    snap = {"input_dataset_id": None, "input_dataset_version": None, "input_resolver": None,
            "join_datasets": [], "append_datasets": []}
    for view in ctx.compiled.inputs:
        res = ctx.resolutions.get(view.view)
        if res is None:  # resolution stopped at an earlier dataset's error
            continue
        entry = {"dataset_id": res.dataset_id, "dataset_name": res.dataset_name, "dataset_version": res.version,
                 "resolver_id": res.resolver_id, "resolver_source": res.resolver_source, "rule": res.rule,
                 "locations": [loc["target"] for loc in res.to_json()["locations"]]}
        for seq, alias in view.uses:
            if view.role == "input" and seq == 0:
                snap.update(input_dataset_id=res.dataset_id, input_dataset_version=res.version,
                            input_resolver=res.resolver_id, input_resolver_source=res.resolver_source,
                            input_locations=entry["locations"])
            elif alias is not None:
                snap["join_datasets"].append({"operation_seq": seq, "alias": alias, **entry})
            else:
                snap["append_datasets"].append({"operation_seq": seq, **entry})
    snap["resolutions"] = {v: r.to_json() for v, r in ctx.resolutions.items()}
    if ctx.fingerprints is not None:
        snap["input_fingerprints"] = ctx.fingerprints
    return snap


def base_record(ctx: RunContext) -> dict:
    """The run record before execution."""
    p = ctx.project
    raw_path = os.path.join(ctx.workspace.root, p.file)
    digest = hashlib.sha256(open(raw_path, "rb").read()).hexdigest() if os.path.isfile(raw_path) else \
        hashlib.sha256(repr(p.raw).encode()).hexdigest()
    return {"run_id": ctx.run_id, "parent_run_id": ctx.parent_run_id,
            "project": {"id": p.id, "name": p.name, "version": p.version, "sha256": digest},
            "project_snapshot": p.raw, "datasets_snapshot": ctx.datasets_snapshot,
            "period": {"identifier": ctx.period.identifier, "start": ctx.period.start.isoformat(),
                       "end": ctx.period.end.isoformat()},
            "started_at": (ctx.actual_start or ctx.started_at).isoformat(timespec="milliseconds"),
            "run_started_at": ctx.started_at.isoformat(timespec="milliseconds"), "finished_at": None,
            "status": "running", "error": None, "spark": None, "sql_sha256": ctx.compiled.sha256(),
            "row_identity": ctx.row_identity,
            "resolver_snapshot": resolver_snapshot(ctx) if ctx.resolutions else None, "outputs": [],
            **({"upstream_runs": ctx.upstream_runs} if ctx.upstream_runs else {}),
            **(ctx.input_check or {})}  # a replay: allow_changed_inputs, inputs_changed, inputs_unverified


def output_lineage(ctx: RunContext) -> dict[int, dict]:
    """Per output seq, its column lineage as ``ledgerflow lineage --format json`` prints it (docs/lineage.md),
    followed across the workspace's projects through registered datasets."""
    from ...compiler.compile import plan_project
    from ...compiler.lineage import plan_lineage
    from ...compiler.lineage_formats import to_json
    plan = ctx.compiled.plan
    if plan is None:
        return {}
    columns = plan_lineage(plan, ctx.workspace, plan_project)
    return {seq: to_json([c for c in columns if c.output == seq]) for seq in dict.fromkeys(c.output for c in columns)}


def spark_error_message(exc: Exception, ctx: Optional[RunContext] = None) -> str:
    """The useful part of a Spark exception as one paragraph: our own raised messages verbatim, else the
    messages of the Java exception chain without stack traces (adapters/spark/error_text.py); an unreadable
    file is named with the dataset of ``ctx`` that reads it."""
    locations = None
    if ctx is not None:
        locations = describe_locations((ctx.resolutions[v.view].dataset_name, ctx.resolutions[v.view].locations)
                                       for v in ctx.compiled.inputs if v.view in ctx.resolutions)
    return spark_error_text(exc, locations)


def _offer_to_parser(compiled: CompiledProject) -> None:
    """Give the statements the run will parse to :mod:`.parser_warmup` (input views first, as the run goes)."""
    texts = []
    for view in compiled.inputs:
        try:
            texts.append(loaders.warmup_query(view.dataset, view.row_ids))
        except LedgerflowError:  # a dataset the loader will reject anyway: nothing to warm
            continue
    parser_warmup.offer([*texts, *(st.sql for st in compiled.statements)])


class Runner:
    """Runs one project (or replays one run) on a SparkSession."""

    metrics: Optional[RunMetrics] = None  # timings of the current run (set by _compute)

    def __init__(self, root: str, echo: Echo = print, session_factory: Optional[Callable[[], object]] = None,
                 spark_label: str = "local", memory: Optional[dict] = None, wait: bool = False):
        self.root = os.path.abspath(root)
        self.wait = wait  # a destination partition another live run writes: wait for it (else fail at once)
        self.echo = echo
        self.store = open_store(self.root)  # checked, interrupted runs recovered
        self.session_factory = session_factory
        self.spark_label = spark_label
        self.memory = memory  # dataset id or name -> DataFrame read from memory (Python API)
        # Ctrl-C was pressed during the last run and did not stop it (it came after its commit point, or while
        # it was being recorded failed): a caller running several projects stops before the next one
        self.stop_requested = False

    # ---------------------------------------------------------------- entry points
    def run(self, project_ref: str, period_text: str, allow_draft: bool = False,
            workspace: Optional[Workspace] = None, upstream: Optional[dict] = None) -> dict:
        """Run ``project_ref`` for ``period_text``; returns the completed run record. ``workspace``: the
        workspace at this runner's root as the caller loaded it (default: loaded here).

        ``upstream`` (``run --select``): registered dataset name -> the version registered earlier in this
        invocation ({dataset, version, run_id, project}); read instead of the newest, recorded as
        ``upstream_runs``."""
        period = parse_period(period_text)
        ws = workspace or self.load_workspace()
        project = require_project(ws, project_ref)
        if project.status == "draft" and not allow_draft:
            raise LedgerflowError(f"project '{project.name}' is a draft; pass --allow-draft to run it anyway.")
        compiled = compile_project(ws, project)
        _offer_to_parser(compiled)
        started = utcnow()
        ctx = RunContext(ws, project, compiled, period, started, new_run_id(started), upstream=dict(upstream or {}))
        ctx.datasets_snapshot = [v.dataset.raw for v in compiled.inputs if v.dataset.raw is not None]
        ctx.fingerprint, ctx.session_factory = True, self._session
        return self._execute(ctx, resolve=True)

    def replay(self, run_id: str, allow_changed_inputs: bool = False, workspace: Optional[Workspace] = None) -> dict:
        """Re-execute a recorded run from its snapshots: same versions, locations, TODAY() and rows.

        The inputs are compared with the fingerprints the run recorded first: a changed input refuses
        the replay (ResolutionError naming the dataset, location and files) unless
        ``allow_changed_inputs``; a deleted one always does. ``workspace``: as in :meth:`run` (its
        configuration and registered datasets are used; projects and declared datasets come from the run)."""
        original = self.store.get_run(run_id)
        ws_now = workspace or self.load_workspace()
        project = from_snapshot(original["project_snapshot"], f"run {original['run_id']} project snapshot",
                                project_from_data)
        project.file = ""
        datasets = [from_snapshot(raw, f"run {original['run_id']} dataset snapshot", dataset_from_data)
                    for raw in original.get("datasets_snapshot") or []]
        names = {d.name for d in datasets}
        datasets += [d for d in ws_now.datasets if d.name not in names and d.registered]
        ws = Workspace(self.root, ws_now.config, datasets, [project])
        compiled = compile_project(ws, project)
        _offer_to_parser(compiled)
        period = parse_period(original["period"]["identifier"])
        started = datetime.datetime.fromisoformat(original.get("run_started_at") or original["started_at"])
        now = utcnow()
        ctx = RunContext(ws, project, compiled, period, started, new_run_id(now), original["run_id"], actual_start=now)
        ctx.datasets_snapshot = original.get("datasets_snapshot") or []
        snap = (original.get("resolver_snapshot") or {}).get("resolutions") or {}
        missing = [v.view for v in compiled.inputs if v.view not in snap]
        if missing:
            raise ResolutionError(f"run {original['run_id']} has no recorded resolution for {', '.join(missing)}.")
        ctx.resolutions = {view: Resolution.from_json(data) for view, data in snap.items()}
        self._check_inputs(original, ctx, allow_changed_inputs)
        recorded = sysc.reproducible_row_identity(original.get("row_identity"))
        if recorded is not None:
            ctx.row_identity = recorded
        else:
            self.echo(f"Warning: run {original['run_id']} was recorded by an earlier ledgerflow, which derived the "
                      "_row_id of input rows arriving without one differently: those "
                      "rows get new _row_ids in this replay; every other value is reproduced.")
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

    def _check_inputs(self, original: dict, ctx: RunContext, allow_changed: bool) -> None:
        """Compare the replayed run's inputs with its recorded fingerprints (see :mod:`.fingerprint`):
        refuse a deleted or (unless ``allow_changed``) changed input; warn about what cannot be checked;
        record the outcome and the current fingerprints in the replay's record."""
        recorded = (original.get("resolver_snapshot") or {}).get("input_fingerprints")
        check = fingerprint.check_replay(recorded, ctx.resolutions, self._session)
        rid = original["run_id"]
        if check.deleted or (check.changed and not allow_changed):
            hint = ("Restore the deleted input; a replay cannot read it." if check.deleted else
                    "Restore the inputs, or pass --allow-changed-inputs to replay on the data as it is now "
                    "(the new run records what changed).")
            raise ResolutionError(f"run {rid} cannot be replayed as recorded: its inputs changed since it ran: "
                                  + "; ".join(fingerprint.describe_change(c) for c in check.changed) + f". {hint}")
        if not check.recorded:
            self.echo(f"Note: run {rid} was recorded without input fingerprints (by an older ledgerflow): "
                      "its inputs cannot be verified; replaying on the data as it is now.")
        elif check.unverified:
            self.echo(f"Warning: cannot verify that these inputs of run {rid} are unchanged: " + "; ".join(
                f"dataset '{u['dataset']}' v{u['dataset_version']} at {u['location']} ({u['reason']})"
                for u in check.unverified))
        if check.changed:
            self.echo(f"Warning: replaying run {rid} on changed inputs (--allow-changed-inputs): " + "; ".join(
                fingerprint.describe_change(c) for c in check.changed))
        ctx.fingerprints = check.current
        ctx.input_check = {"allow_changed_inputs": allow_changed, "inputs_changed": check.changed,
                           "inputs_unverified": check.unverified}

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
        record: dict = {}
        try:
            if resolve:
                resolve_inputs(ctx, self.store, self.memory)
            record = base_record(ctx)
            # held until the record is final, so a later command can tell this run's process died (recovery.py);
            # taken before the run claims anything (a registered version, a lease), which recovery releases then
            process = liveness.hold(self.store.runs_dir, ctx.run_id)
            destinations = self._destinations(ctx, process)
            lineage = output_lineage(ctx)  # pure, before Spark: a completed run always records it
            record.update(process=process, staging=CommitJournal.staging_entries(destinations, ctx.period.identifier))
            leases.take(self.store, ctx.run_id, process, leases.resources(destinations, ctx.period.identifier),
                        self.wait, self.echo)  # one writer per destination partition, before any Spark query
            self.store.save_run(record, ctx.compiled.script())
        except LedgerflowError as err:
            record = record or base_record(ctx)
            self._fail(record, ctx, err)
            raise
        except BaseException as exc:  # a bug, an interrupt, a full disk: nothing this run claimed may outlive it
            if isinstance(exc, KeyboardInterrupt) and record:
                self._fail(record, ctx, ExecutionError(f"interrupted: {type(exc).__name__} in the process that "
                                                       "ran it, before it started"))
                raise self._interrupted(record, ctx) from exc
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
                outputs, journal, late = self._execute_spark(ctx, record, destinations, lineage, clock,
                                                             lambda: committing.enter_context(
                                                                 signals_deferred(reraise_sigint=False, into=arrived)))
            finally:
                self.stop_requested = self.stop_requested or signal.SIGINT in arrived
            # Committed: from here on nothing rolls the run back or records it failed, and Ctrl-C only adds a note.
            try:
                self.store.write_files(record, ctx.compiled.script())
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
            timings = record["timings"]
            took = time.monotonic() - clock
            self.echo(f"Completed run {ctx.run_id} in {took:.1f} s")
            for out in outputs:
                reg = f" (registered {out['registered_dataset']} v{out['registered_version']})" \
                    if out.get("registered_dataset") else ""
                self.echo(f"  output {out['operation_seq']}: {out['rows']} rows -> {out['location']}{reg}")
            if timings:
                self.echo(f"  {timing_summary(timings)}; details: ledgerflow runs show {ctx.run_id}")
            # a Ctrl-C after the commit point, or during a URI's or table's write that did not stop it (interrupts.hold)
            if late is not None or signal.SIGINT in arrived or interrupts.requested():
                self.stop_requested = True
                self.echo(f"Interrupted after the commit point: run {ctx.run_id} is committed (completed); nothing "
                          "was rolled back.")
        return record

    def _execute_spark(self, ctx: RunContext, record: dict, destinations: dict[int, OutputDestination],
                       lineage: dict[int, dict], clock: float,
                       defer_signals: Callable[[], object]) -> tuple[list[dict], CommitJournal, Optional[BaseException]]:
        """The run's Spark work, writes and commit point (:func:`.publish.commit_point`, which calls
        ``defer_signals`` as its transaction begins); a failure before the commit point is recorded
        (:meth:`_fail`) and raised.
        Returns the record's outputs, the commit journal and an exception that came after the commit point."""
        late: Optional[BaseException] = None
        try:
            spark = self._session()
            interrupts.set_cancel(interrupts.session_cancel(spark))
            record["spark"] = {"master_or_remote": self.spark_label, "version": spark.version,
                               "app_id": _app_id(spark)}
            pending = self._compute(spark, ctx, destinations)
            outputs, registrations, journal = publish.write_outputs(
                pending, destinations, record, period=ctx.period.identifier, save_run=self.store.save_run,
                stops=interrupts, echo=self.echo, metrics=self.metrics)
            late = publish.commit_point(
                self.store, record, outputs, registrations, journal, lineage, started_at=ctx.started_at.isoformat(),
                finished_at=lambda: utcnow().isoformat(timespec="milliseconds"),
                timings=lambda: self._timings(ctx, clock), stops=interrupts, defer_signals=defer_signals)
        except LedgerflowError as err:
            record["timings"] = self._timings(ctx, clock)
            self._fail(record, ctx, err)
            raise
        except Exception as exc:  # Spark/Py4J/Connect errors: the run failed on Spark
            if interrupts.requested():  # the failure of a job Ctrl-C cancelled
                self._fail(record, ctx, ExecutionError("interrupted: KeyboardInterrupt in the process that ran it"))
                raise self._interrupted(record, ctx) from exc
            err = ExecutionError(f"run {ctx.run_id} failed on Spark: {spark_error_message(exc, ctx)}")
            err.__cause__ = exc
            record["timings"] = self._timings(ctx, clock)
            self._fail(record, ctx, err)
            raise err
        except BaseException as exc:  # KeyboardInterrupt, SystemExit: the outputs were rolled back
            if self.store.run_status(ctx.run_id) != "completed":
                self._fail(record, ctx, ExecutionError(f"interrupted: {type(exc).__name__} in the process that ran it"))
                if isinstance(exc, KeyboardInterrupt):
                    raise self._interrupted(record, ctx) from exc
                raise
            late = exc  # it arrived just after the commit point, which went through: the run stands
        return outputs, journal, late

    def _interrupted(self, record: dict, ctx: RunContext) -> interrupts.RunInterrupted:
        """What Ctrl-C before the commit point did to the run, as the exception the caller raises."""
        if record.get("status") != "failed":  # the run store could not tell whether it committed
            return interrupts.RunInterrupted(
                f"run {ctx.run_id} was stopped at its commit point, and the run store could not tell whether it "
                "committed; the next ledgerflow command (e.g. `ledgerflow runs clean`) settles it.")
        done = record.get("rolled_back")
        outputs = (f"; {publish.rollback_sentence(record)}" if done
                   else "; nothing it wrote was made visible")
        return interrupts.RunInterrupted(f"run {ctx.run_id} was stopped before its commit point and is recorded "
                                         f"failed{outputs.rstrip('.')}.")

    def _timings(self, ctx: RunContext, clock: float) -> Optional[dict]:
        """The record's ``timings`` of this run (None when it failed before Spark work began)."""
        metrics = self.metrics
        if metrics is None or metrics.run_id != ctx.run_id:
            return None
        metrics.setup_s = metrics.created - clock
        try:
            return metrics.to_json(time.monotonic() - clock)
        except Exception:  # e.g. the JVM is gone after a failure: the run's own error matters more
            return None

    def _fail(self, record: dict, ctx: RunContext, err: LedgerflowError) -> None:
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

    def _record_failure(self, record: dict, ctx: RunContext, err: LedgerflowError) -> bool:
        """The body of :meth:`_fail`; returns whether the run's record is final now."""
        if CommitJournal.begun(record):  # the run got to its swaps
            status = self.store.run_status(ctx.run_id)
            if status != "running":  # completed after all (an interrupt just after the commit point), or the
                return status is not None  # store cannot tell: the next command's recovery decides
            publish.finish_roll_back(record)  # when the rollback was cut short (or never began): from the journal
        error = str(err)
        done = record.get("rolled_back")
        if done and (done["kept"] or done["problems"]):
            sentence = publish.rollback_sentence(record)
            error += f" Then {sentence}"
            self.echo(f"Warning: {sentence}")
        record.update(status="failed", error=error, finished_at=utcnow().isoformat(timespec="milliseconds"))
        try:
            # its reserved versions (never visible) and its leases (its rollback is done) go with the final record
            self.store.save_run(record, ctx.compiled.script(), release=True)
        except BaseException:
            with contextlib.suppress(Exception):  # the rollback is done: the partitions are free for the next run
                self.store.release(ctx.run_id)
            raise
        return True

    def _compute(self, spark, ctx: RunContext,
                 destinations: Optional[dict[int, OutputDestination]] = None) -> list[PendingOutput]:
        """Run the stages; returns the outputs still to write.

        A stage is materialised (``localCheckpoint``) to cut the plan, unless its only reader is one
        output: then the output's query computes it once. An output to a local folder is not
        materialised either: its write goes to a hidden staging folder that becomes visible only when
        every output succeeded, so it is computed once, by the write (rows counted from the staged
        files). Outputs elsewhere are computed here, before anything is written.
        """
        destinations = destinations or {}
        metrics = self.metrics = RunMetrics(spark, ctx.run_id)
        args = parameters.values(ctx.period, ctx.started_at)
        inputs = [loaders.InputLoad(v.view, v.dataset, ctx.resolutions[v.view].version,
                                    ctx.resolutions[v.view].locations, v.row_ids, ctx.row_identity)
                  for v in ctx.compiled.inputs]
        for item in inputs:  # again at load: a replay reads recorded locations
            for loc in item.locations:
                loaders.check_exists(loc, item.dataset)
        with metrics.measure(metrics.statement("load_inputs", "load", [])):
            counts = loaders.load_inputs(spark, inputs, args)
        for view, n in zip(ctx.compiled.inputs, counts):
            res = ctx.resolutions[view.view]
            self.echo(f"  loaded {view.dataset.name} v{res.version} ({n} location{'s' if n != 1 else ''}, "
                      f"resolver {res.resolver_id}) as {view.view}")
        statements = ctx.compiled.statements
        last_output = max((i for i, s in enumerate(statements) if s.kind == "output"), default=-1)
        ops = {op.seq: op for op in ctx.project.operations}
        pending: list[PendingOutput] = []
        for i, st in enumerate(statements):
            interrupts.check()  # a Ctrl-C that came during the last Spark call stops the run here
            if st.kind == "stage":
                if i > last_output:
                    self.echo(f"  {st.name}: skipped, no output reads it")
                    metrics.skipped(st.name, st.kind, st.operations)
                    continue
                for seq in st.operations:
                    if seq:
                        self.echo(f"  [{seq}] {ops[seq].kind.value} '{ops[seq].name}'")
                readers = [s for s in statements[i + 1:] if st.name in s.reads]
                materialise = not (len(readers) == 1 and readers[0].kind == "output")
                with metrics.measure(metrics.statement(st.name, st.kind, st.operations)) as entry:
                    entry["materialised"] = materialise  # else its one output's query computes it
                    df = spark.sql(st.sql, args=parameters.arguments(st.sql, args))
                    if materialise:
                        df = df.localCheckpoint()
                    df.createOrReplaceTempView(st.name)
            else:
                op = st.operation
                dest = destinations.get(op.seq)
                deferred = bool(dest and dest.local)
                with metrics.measure(metrics.statement(st.name, st.kind, st.operations)) as entry:
                    entry["materialised"] = not deferred  # else computed once, by its staged write
                    df = spark.sql(st.sql, args=parameters.arguments(st.sql, args))
                    if not deferred:
                        df = df.localCheckpoint()
                        rows = df.count()
                if deferred:
                    pending.append(PendingOutput(st, df, None))
                    continue
                self.echo(f"  [{op.seq}] output '{op.name}': {rows} rows")
                pending.append(PendingOutput(st, df, rows))
        return pending

    def _destinations(self, ctx: RunContext, process: Optional[dict] = None) -> dict[int, OutputDestination]:
        """Where each output writes (resolved before anything runs, so a bad destination costs nothing).

        An output registering a dataset reserves its version here (see :meth:`RunStore.reserve`), so
        concurrent runs never share one; the run's reservations (held by ``process``) are released when it
        fails. Every local
        partition is checked here to be absent or ledgerflow's own (``partitions.check_partition``), and
        no output may write into a registered version's location."""
        out: dict[int, OutputDestination] = {}
        period = ctx.period.identifier
        try:
            for st in ctx.compiled.outputs:
                op = st.operation
                if op.register_as_dataset:
                    found: dict = {}

                    def locate(version: int, op=op, found=found) -> tuple:
                        dest = found["dest"] = self._destination(ctx, op, version)
                        return (dest.target if dest.kind == "path" else None), dest.format
                    self.store.reserve(op.register_as_dataset, ctx.run_id, [period], locate, process)
                    out[op.seq] = found["dest"]
                else:
                    out[op.seq] = self._destination(ctx, op, 1)
                    target = out[op.seq].target
                    taken = self.store.live_registrations_at(target) if out[op.seq].kind == "path" else []
                    if taken:
                        reg = taken[0]
                        raise ResolutionError(
                            f"output {op.seq}: the destination {target} overlaps the location {reg['location']} of "
                            f"registered dataset '{reg['name']}' version {reg['version']}, which is immutable; write "
                            "this output somewhere else.")
                if out[op.seq].local:
                    partitions.check_partition(out[op.seq].target, period, create_only=bool(op.register_as_dataset),
                                            where=f"output {op.seq}")
            refuse_shared_destinations(out, period)
        except BaseException:
            self.store.release(ctx.run_id)
            raise
        return out

    def _destination(self, ctx: RunContext, op, version: int) -> OutputDestination:
        """Where one output writes at ``version``."""
        d = op.destination
        if d.kind == "catalog_table":
            return OutputDestination("table", d.catalog_table, "table", version)
        if d.kind == "path":
            # tokens as in a resolver path ({{version}} makes a registered version's folder its own)
            pseudo = Dataset(id=registered_id(op.register_as_dataset or ""), name=op.register_as_dataset or "",
                             status="active", table_name=op.register_as_dataset or "", temporal_mode="period",
                             columns=[], versions=[])
            text = resolver_engine.substitute(d.path, pseudo, version, ctx.period, f"output {op.seq}") \
                if "{{" in d.path else d.path
            place = getattr(d.path, "location", lambda: d.location)()  # the path's place in the project file
            where = f"output {op.seq} ({place})" if place else f"output {op.seq}"
            return OutputDestination("path", resolver_engine.destination_path(ctx.workspace.root, d.path, text, where),
                                     d.format, version, ctx.workspace.root)
        return self._table_destination(ctx, op, version)

    def _table_destination(self, ctx: RunContext, op, version: int) -> OutputDestination:
        d = op.destination
        name = op.register_as_dataset or d.table
        resolver_id = d.resolver or ctx.workspace.config.default_resolver
        if not resolver_id or resolver_id not in ctx.workspace.config.resolvers:
            raise ResolutionError(f"output {op.seq}: resolver '{resolver_id}' for destination table '{d.table}' is not "
                                  "defined in ledgerflow.yml.")
        pseudo = Dataset(id=registered_id(name), name=d.table, status="active", table_name=d.table,
                         temporal_mode="period", columns=[], versions=[])
        rule = resolver_engine.match_rule(ctx.workspace.config.resolvers[resolver_id], pseudo, ctx.period)
        st = rule.strategy
        text = resolver_engine.substitute((st.path if st.type == "path" else st.table) or "", pseudo, version,
                                          ctx.period, rule.name)
        if st.type == "table":
            return OutputDestination("table", resolver_engine.table_name(text, resolver_engine.rule_where(rule)), "table",
                                     version)
        within = None if resolver_engine.is_absolute_or_uri(st.path) else ctx.workspace.root
        return OutputDestination("path", resolver_engine.destination_path(ctx.workspace.root, st.path, text,
                                                                          resolver_engine.rule_where(rule)), st.format,
                                 version, within)



def timing_summary(timings: dict) -> str:
    """One line of a run's timings: load, statements, writes, Spark jobs."""
    stmts = [s for s in timings["statements"] if s["kind"] != "load" and not s.get("skipped")]
    parts = [f"load inputs {timings['load_inputs_s'] or 0:.1f} s",
             f"{len(stmts)} statement{'s' if len(stmts) != 1 else ''} {sum(s['seconds'] or 0 for s in stmts):.1f} s",
             f"writes {sum(o['seconds'] or 0 for o in timings['outputs']):.1f} s"]
    jobs = timings.get("spark_jobs")
    parts.append(f"{jobs} Spark job{'s' if jobs != 1 else ''}" if jobs is not None else "Spark jobs not counted")
    return "timings: " + ", ".join(parts)


def _app_id(spark) -> Optional[str]:
    try:
        return spark.sparkContext.applicationId
    except Exception:  # Spark Connect has no SparkContext
        return None

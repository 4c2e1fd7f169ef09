"""Fused execution of a range of periods (issue 30): the project's statements run once for every period
(:mod:`ledgerflow.compiler.fused`), then each period is written, committed and recorded as its own run
by the ordinary run sequence (:class:`.runner.Runner`), which takes that period's rows instead of
computing them (:meth:`FusedRange.compute`: the runs' strategy, :mod:`.evaluator`).

Every period's run resolves its inputs as usual. The fused statements read what the periods resolve
to beforehand (:func:`resolve_range`); a period whose own resolution differs (a file appeared in
between) computes its rows itself. A period given the fused rows records the fingerprints of its inputs
taken just before the fused statements read them (not those of its own start), which its run compares with
its inputs again before publishing (:mod:`..inputs.read_check`): a file changed since fails the period.
When a fused statement fails, every period of the range computes its own rows (the ordinary
:func:`.compute.compute`): the failing period fails by name and the others commit.
"""
from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

from ...compiler import parameters
from ...compiler.bridge import bridge_plan, recorded
from ...compiler.bridge_written import stamped
from ...compiler.compile import compile_project
from ...compiler.errors import LedgerflowError
from ...compiler.fused import PERIOD_COLUMNS, PERIOD_KEY, PERIODS_VIEW, FusedProject, fuse, refusal
from ...compiler.fused_inputs import location_query
from ...compiler.model import Workspace
from ...compiler.periods import Period
from ..commit.destinations import OutputDestination
from ..commit.publish import PendingOutput
from ..inputs import loaders
from ..inputs.read_check import fingerprint_range
from ..inputs.resolution import resolve_inputs
from . import fused_writes, interrupts
from .fused_bridge import FusedBridge
from .fused_plan import broadcast_views, uniform_views
from .lazy_frame import LazyFrame
from .observations import runnable
from .context import RunContext, compiled_to_run, period_context, utcnow
from .evaluator import PeriodRun

Echo = Callable[[str], None]


def _key(resolution) -> tuple:
    return resolution.version, tuple(resolution.locations)


def resolve_range(contexts: Sequence[RunContext], store, memory: Optional[dict] = None) -> list[Optional[dict]]:
    """Per context, its inputs' resolutions (view -> Resolution), resolved on a copy (the run resolves and
    records its own); None for a period whose resolution fails (its run fails by itself)."""
    out: list[Optional[dict]] = []
    for ctx in contexts:
        probe = RunContext(ctx.workspace, ctx.project, ctx.compiled, ctx.period, ctx.started_at,
                           ctx.run_id + "-fused", upstream=dict(ctx.upstream))
        try:
            resolve_inputs(probe, store, memory)
        except LedgerflowError:
            out.append(None)
            continue
        out.append(dict(probe.resolutions))
    return out


@dataclass
class FusedResult:
    """What the fused statements computed: per output seq its rows of every period (materialised), and
    per output seq and period identifier its row count."""

    frames: dict = field(default_factory=dict)
    counts: dict = field(default_factory=dict)
    prestaged: fused_writes.Prestaged = field(default_factory=dict)  # outputs written once for every period
    resolutions: dict = field(default_factory=dict)  # period identifier -> view -> Resolution it read
    bridge: Optional[FusedBridge] = None  # every period's bridge, taken for the range


def load_fused_inputs(spark, fused: FusedProject, resolutions: dict[str, dict], started: datetime.datetime,
                      row_identity: int) -> None:
    """Create every input view of ``fused`` for its periods: each distinct (version, locations) read once,
    with a pushed filter covering the periods that resolve to it, each row once per period it belongs to."""
    args = parameters.values(fused.periods[0], started)
    for view in fused.compiled.inputs:
        groups: dict[tuple, list[Period]] = {}
        for p in fused.periods:
            groups.setdefault(_key(resolutions[p.identifier][view.view]), []).append(p)
        names = []
        if view.view in fused.invariant:  # read as one period's run reads it: no period filter, no periods
            (version, locations), = groups
            loaders.load_input(spark, loaders.InputLoad(view.view, view.dataset, version, list(locations), view.row_ids,
                                                        row_identity), args)
            continue
        for n, ((version, locations), members) in enumerate(groups.items()):
            name = view.view if len(groups) == 1 else f"{view.view}__lf_part_{n}"
            subset = len(groups) > 1

            def rewrite(sql: str, members=members, subset=subset) -> str:
                return location_query(sql, view.dataset.temporal_mode, members, subset)
            loaders.load_input(spark, loaders.InputLoad(name, view.dataset, version, list(locations), view.row_ids,
                                                        row_identity), args, rewrite=rewrite)
            names.append(name)
        if len(names) > 1:
            frame = spark.table(names[0])
            for other in names[1:]:
                frame = frame.unionByName(spark.table(other))
            frame.createOrReplaceTempView(view.view)


def compute_fused(spark, fused: FusedProject, resolutions: dict[str, dict], started: datetime.datetime,
                  echo: Echo, row_identity: int, destinations: Optional[dict[int, OutputDestination]] = None,
                  ctx: Optional[RunContext] = None) -> FusedResult:
    """Run ``fused``'s statements once (inputs read for every period). An output to a local folder of
    ``destinations`` is written once for every period (:func:`.fused_writes.prestage_outputs`, named after the
    run id of ``ctx``, the first period's run), as a period's run computes such an output by its write; every
    other output is materialised, and so is a stage unless its only reader is one output. Each period's bridge (by
    ``bridge:`` in the configuration of ``ctx``'s workspace) is then taken for every period at once, grouped by
    period (:class:`.fused_bridge.FusedBridge`: each stage an output reads, each output's rows)."""
    run_id, config = (ctx.run_id, ctx.workspace.config) if ctx is not None else ("", None)
    spark.sql(fused.periods_sql).createOrReplaceTempView(PERIODS_VIEW)
    load_fused_inputs(spark, fused, resolutions, started, row_identity)
    args = {"run_started_at": started}
    statements = fused.statements
    last_output = max((i for i, s in enumerate(statements) if s.kind == "output"), default=-1)
    plan = fused.compiled.plan
    # recorded as a period's own run records it (compute.compute), by `bridge:` (``config``)
    observer = FusedBridge(bridge_plan(plan), fused.periods, stamped(plan)) if recorded(plan, config) else None
    result = FusedResult(resolutions=resolutions, bridge=observer)
    local = {seq for seq, d in (destinations or {}).items() if d.local}
    deferred: dict = {}
    for i, st in enumerate(statements):
        interrupts.check()
        if st.kind == "stage" and i > last_output:
            continue
        df = spark.sql(st.sql, args=parameters.arguments(st.sql, args))
        if st.kind == "stage":
            echo(f"  {st.name} (fused, {len(fused.periods)} periods)")
            readers = [s for s in statements[i + 1:] if st.name in s.reads]
            df = runnable(df)
            if not (len(readers) == 1 and readers[0].kind == "output"):
                df = df.localCheckpoint()
            if observer is not None:
                observer.stage(df, st.name, [s.operation.seq for s in readers if s.kind == "output"])
            df.createOrReplaceTempView(st.name)
            continue
        seq = st.operation.seq
        if seq in local:  # computed by its one write, below
            deferred[seq] = result.frames[seq] = runnable(df)
        else:
            df = runnable(df).localCheckpoint()
            result.frames[seq] = df
            result.counts[seq] = {r[0]: r[1] for r in df.groupBy(PERIOD_KEY).count().collect()}
        if observer is not None:
            observer.output(result.frames[seq], seq)
    result.prestaged = fused_writes.prestage_outputs(deferred, destinations or {}, run_id)
    if observer is not None:
        observer.measure(result.prestaged)
    return result


def period_outputs(fused: FusedProject, result: FusedResult, period: Period,
                   destinations: dict[int, OutputDestination]) -> list[PendingOutput]:
    """``period``'s outputs as its run writes them: the fused rows of the period, the period columns
    dropped (an output to a local folder is counted by its staged write, as :func:`.compute.compute` leaves it)."""
    from pyspark.sql import functions as F
    pending = []
    for st in fused.compiled.outputs:
        seq = st.operation.seq
        frame = LazyFrame(lambda f=result.frames[seq]: f.where(F.col(PERIOD_KEY) == F.lit(period.identifier))
                          .drop(*PERIOD_COLUMNS.values()))
        dest = destinations.get(seq)
        written = fused_writes.pending_output(st, frame, result.prestaged, period.identifier, dest)
        if written is not None:
            pending.append(written)
            continue
        frame = frame.frame()  # written by the period's run: a DataFrame itself
        if dest is not None and dest.local:
            rows = None
        elif seq in result.counts:
            rows = result.counts[seq].get(period.identifier, 0)
        else:  # left to the range's one write (another period's folder): a table's or URI's write needs its count
            frame = runnable(frame).localCheckpoint()
            rows = frame.count()
        pending.append(PendingOutput(st, frame, rows))
    return pending


class FusedRange(PeriodRun):
    """The strategy of each period's run of a fused range (:mod:`.evaluator`): its :meth:`compute`'s first call
    runs the fused statements; a period gets its rows from them, or computes its own when the fused statements
    failed or it resolved differently."""

    def __init__(self, fused: FusedProject, resolutions: dict[str, dict], started: datetime.datetime,
                 row_identity: int):
        self.fused = fused
        self.resolutions = resolutions
        self.started = started
        self.row_identity = row_identity
        self.result: Optional[FusedResult] = None
        self.read: dict[str, list[dict]] = {}  # period identifier -> its inputs' fingerprints, taken before the read
        self.failure: Optional[BaseException] = None  # the fused statements' error: the range runs period by period

    def compute(self, spark, ctx: RunContext, metrics, echo: Echo,
                destinations: Optional[dict[int, OutputDestination]] = None) -> list[PendingOutput]:
        """``ctx``'s pending outputs (see the class docstring)."""
        ours = self.resolutions.get(ctx.period.identifier)
        same = ours is not None and ctx.started_at == self.started and all(_key(ours[v]) == _key(r) for v, r in ctx.resolutions.items() if v in ours)
        if self.result is None and self.failure is None and same:
            broadcast = broadcast_views(self.fused.compiled, self.resolutions, broadcast_threshold(spark))
            if broadcast:
                self.fused = fuse(self.fused.compiled, self.fused.periods, uniform=uniform_views(self.resolutions),
                                  broadcast=broadcast)
            self.read = fingerprint_range(self.resolutions, lambda: spark)
            try:
                with metrics.measure(metrics.statement("fused", "stage", [])):
                    self.result = compute_fused(spark, self.fused, self.resolutions, self.started, echo,
                                                self.row_identity, destinations, ctx)
            except Exception as exc:  # noqa: BLE001 - every period then computes its own rows, and fails by name
                self.failure = exc
                echo(f"  fused statements failed ({type(exc).__name__}): running the periods one by one")
        if self.result is None or not same:
            return super().compute(spark, ctx, metrics, echo, destinations)
        ctx.fingerprints = self.read[ctx.period.identifier]  # what its rows were computed from
        pending = period_outputs(self.fused, self.result, ctx.period, destinations or {})
        if self.result.bridge is not None:  # the period's bridge, as its own run records it (run/bridge.py)
            ctx.bridge = self.result.bridge.for_period(ctx.period, {p.statement.operation.seq: p.frame
                                                                    for p in pending})
        return pending

    def close(self) -> None:
        """Remove the rows written for every period that no period's run adopted (see :mod:`.fused_writes`)."""
        if self.result is not None:
            fused_writes.discard(self.result.prestaged)


def broadcast_threshold(spark) -> int:
    """Spark's ``spark.sql.autoBroadcastJoinThreshold`` in bytes (its default, 10 MiB, when unreadable)."""
    text = str(spark.conf.get("spark.sql.autoBroadcastJoinThreshold", "10485760b")).strip().lower()
    m = re.fullmatch(r"(-?\d+)\s*([kmgt]?)i?b?", text)
    if not m:
        return 10 << 20
    return int(m.group(1)) << (10 * "_kmgt".index(m.group(2) or "_"))


def decide(mode: str, project_names: list[str], periods: Sequence[Period], workspace: Workspace) -> tuple[str, str]:
    """``modes.choose_mode``'s answer with fused execution: ``("fused", why)`` when ``mode`` is fused or auto
    and every project is proven (:func:`ledgerflow.compiler.fused.refusal`), else ``("each", why not)``
    naming the first project refused and its reason."""
    if mode == "each":
        return "each", "--mode each"
    if len(periods) < 2:
        return "each", "one period"
    for name in project_names:
        why = refusal(compile_project(workspace, workspace.find_project(name)), periods)
        if why is not None:
            return "each", f"project {name} cannot be fused: {why}"
    return "fused", f"{len(periods)} periods in one Spark job per statement"


@dataclass(frozen=True)
class RangeOptions:
    """How :func:`run_range` runs: ``workspace`` (default: loaded by the runner), ``upstream`` (period identifier
    -> that period's upstream versions, as :meth:`.runner.Runner.run` takes them), ``allow_draft``, the
    ``batch_id`` each run records, ``started_at`` (default now), ``on_start(period)`` called as a period's run
    begins, ``on_done(period, record or exception)`` as it ends (True: the periods after it are not run,
    ``--fail-fast``), and ``progress``: each period's indented progress lines name it."""

    workspace: Optional[Workspace] = None
    upstream: Optional[dict] = None
    allow_draft: bool = False
    batch_id: Optional[str] = None
    started_at: Optional[datetime.datetime] = None
    on_start: Optional[Callable[[Period], None]] = None
    on_done: Optional[Callable[[Period, object], bool]] = None
    progress: bool = False


def run_range(runner, project_ref: str, periods: Sequence[Period], **options) -> list[tuple[Period, object]]:
    """Run ``project_ref`` for every period of ``periods`` fused (the caller checked
    :func:`ledgerflow.compiler.fused.refusal`): each period its own run (own run id, record, commit), all
    started at one time, evaluated by one :class:`FusedRange`. ``options``: a :class:`RangeOptions`' fields.
    Returns per period its completed record or the exception its run raised (a failed period does not stop
    the others; Ctrl-C does)."""
    opts = RangeOptions(**options)
    ws = opts.workspace or runner.load_workspace()
    compiled = compiled_to_run(ws, project_ref, opts.allow_draft)
    started = opts.started_at or utcnow()
    contexts = [period_context(ws, compiled, p, started, (opts.upstream or {}).get(p.identifier), opts.batch_id)
                for p in periods]
    resolved = resolve_range(contexts, runner.store, runner.memory)
    usable = {c.period.identifier: r for c, r in zip(contexts, resolved) if r is not None}
    fused = fuse(compiled, [c.period for c in contexts if c.period.identifier in usable], uniform=uniform_views(usable))
    strategy = FusedRange(fused, usable, started, contexts[0].row_identity)
    results: list[tuple[Period, object]] = []
    try:
        for ctx in contexts:
            if opts.on_start is not None:
                opts.on_start(ctx.period)
            try:
                prefix = ctx.period.identifier if opts.progress else None
                results.append((ctx.period, runner.execute(ctx, strategy, prefix=prefix)))
            except interrupts.RunInterrupted:
                raise
            except Exception as exc:  # noqa: BLE001 - recorded failed by the runner; the next period goes on
                results.append((ctx.period, exc))
            if opts.on_done is not None and opts.on_done(*results[-1]):
                break
            if runner.stop_requested:
                break
    finally:
        strategy.close()
    return results

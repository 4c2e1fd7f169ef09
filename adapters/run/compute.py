"""A run's Spark work before anything is written: load the inputs, run the stages and the output queries."""
from __future__ import annotations

from typing import Callable, Optional

from ...compiler import parameters
from ...compiler.bridge import bridge_plan, recorded
from ...compiler.bridge_written import OPERATION_SEQ, stamped
from ..commit.destinations import OutputDestination
from ..commit.publish import PendingOutput
from ..inputs import loaders
from ..spark.error_text import describe_locations, spark_error_text
from . import interrupts
from .bridge import BridgeObserver
from .context import RunContext
from .metrics import RunMetrics
from .observations import runnable


def input_loads(ctx: RunContext) -> list[loaders.InputLoad]:
    """The input views ``ctx``'s run creates: each with its dataset, resolved version and locations."""
    return [loaders.InputLoad(v.view, v.dataset, ctx.resolutions[v.view].version, ctx.resolutions[v.view].locations,
                              v.row_ids, ctx.row_identity) for v in ctx.compiled.inputs]


def compute(spark, ctx: RunContext, metrics: RunMetrics, echo: Callable[[str], None],
            destinations: Optional[dict[int, OutputDestination]] = None,
            load_inputs: Optional[Callable] = None) -> list[PendingOutput]:
    """Run the stages, each statement timed in ``metrics``; returns the outputs still to write.
    ``load_inputs``: creates the input views (default :func:`..inputs.loaders.load_inputs`; ``diff --data``
    gives one that loads an input both sides read once: ``adapters/diff/data_inputs.py``).

    A stage is materialised (``localCheckpoint``) to cut the plan, unless its only reader is one
    output: then the output's query computes it once. An output to a local folder is not
    materialised either: its write goes to a hidden staging folder that becomes visible only when
    every output succeeded, so it is computed once, by the write (rows counted from the staged
    files). Outputs elsewhere are computed here, before anything is written.

    The run's bridge is observed on the way (``ctx.bridge``, :mod:`.bridge`): each stage an output reads
    carries one observation of its rows at the end, each output's frame one of its own rows. Every frame an
    action runs on is :func:`.observations.runnable`: Spark delivers an observation only to an action whose
    plan names it, and the frame of ``spark.sql`` over a view names the view, not its observation.
    """
    destinations = destinations or {}
    plan = ctx.compiled.plan
    # the bridge is observed for a project that declares checks, or any with `bridge: always` in ledgerflow.yml:
    # at 10M rows it costs a run of pipeline P about an eighth of its time (BENCHMARKS.md section 4); without it
    # Spark prunes the bridge's columns, so such a run costs exactly what it did before checks
    parquet = frozenset(seq for seq, d in destinations.items() if d.local and d.format == "parquet")
    observer = ctx.bridge = BridgeObserver(bridge_plan(plan), plan.checks, stamped(plan), parquet) \
        if ctx.observe_bridge and recorded(plan, ctx.workspace.config) else None
    args = parameters.values(ctx.period, ctx.started_at)
    inputs = input_loads(ctx)
    for item in inputs:  # again at load: a replay reads recorded locations
        for loc in item.locations:
            loaders.check_exists(loc, item.dataset)
    with metrics.measure(metrics.statement("load_inputs", "load", [])):
        counts = (load_inputs or loaders.load_inputs)(spark, inputs, args)
    if observer is not None and observer.stamps.creates:  # does a loaded row carry an _operation_seq of its own?
        observer.carried = any(OPERATION_SEQ in (loaders.raw_columns(spark, v.view, n) or {OPERATION_SEQ})
                               for v, n in zip(ctx.compiled.inputs, counts))
    for view, n in zip(ctx.compiled.inputs, counts):
        res = ctx.resolutions[view.view]
        echo(f"  loaded {view.dataset.name} v{res.version} ({n} location{'s' if n != 1 else ''}, "
             f"resolver {res.resolver_id}) as {view.view}")
    statements = ctx.compiled.statements
    last_output = max((i for i, s in enumerate(statements) if s.kind == "output"), default=-1)
    ops = {op.seq: op for op in ctx.project.operations}
    pending: list[PendingOutput] = []
    for i, st in enumerate(statements):
        interrupts.check()  # a Ctrl-C that came during the last Spark call stops the run here
        if st.kind == "stage":
            if i > last_output:
                echo(f"  {st.name}: skipped, no output reads it")
                metrics.skipped(st.name, st.kind, st.operations)
                continue
            for seq in st.operations:
                if seq:
                    echo(f"  [{seq}] {ops[seq].kind.value} '{ops[seq].name}'")
            readers = [s for s in statements[i + 1:] if st.name in s.reads]
            materialise = not (len(readers) == 1 and readers[0].kind == "output")
            with metrics.measure(metrics.statement(st.name, st.kind, st.operations)) as entry:
                entry["materialised"] = materialise  # else its one output's query computes it
                df = spark.sql(st.sql, args=parameters.arguments(st.sql, args))
                if observer is not None:
                    df = observer.observe_stage(df, st.name, [s.operation.seq for s in readers if s.kind == "output"])
                df = runnable(df)  # a checkpoint of it delivers the observations of the views it reads
                if materialise:
                    df = df.localCheckpoint()
                df.createOrReplaceTempView(st.name)
        else:
            op = st.operation
            dest = destinations.get(op.seq)
            deferred = bool(dest and dest.local)
            with metrics.measure(metrics.statement(st.name, st.kind, st.operations)) as entry:
                entry["materialised"] = not deferred  # else computed once, by its staged write
                df = runnable(spark.sql(st.sql, args=parameters.arguments(st.sql, args)))
                if observer is not None:
                    df = observer.observe_output(df, op.seq)
                if not deferred:
                    df = df.localCheckpoint()
                    rows = df.count()
            if deferred:
                pending.append(PendingOutput(st, df, None))
                continue
            echo(f"  [{op.seq}] output '{op.name}': {rows} rows")
            pending.append(PendingOutput(st, df, rows))
    return pending


def spark_error_message(exc: Exception, ctx: Optional[RunContext] = None) -> str:
    """The useful part of a Spark exception as one paragraph: our own raised messages verbatim, else the
    messages of the Java exception chain without stack traces (adapters/spark/error_text.py); an unreadable
    file is named with the dataset of ``ctx`` that reads it."""
    locations = None
    if ctx is not None:
        locations = describe_locations((ctx.resolutions[v.view].dataset_name, ctx.resolutions[v.view].locations)
                                       for v in ctx.compiled.inputs if v.view in ctx.resolutions)
    return spark_error_text(exc, locations)

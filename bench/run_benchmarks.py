"""ledgerflow benchmarks (issue 4): generated SQL against hand-written PySpark, growth with the
number of operations, and the marginal cost of an append.

    python -m bench.run_benchmarks                 # full: 1M rows (+10M with --rows 10000000), growth to 500
    python -m bench.run_benchmarks --quick         # small sizes, < 2 minutes; asserts identical results only
    python -m bench.run_benchmarks --only pipeline --rows 10000000

One SparkSession (bench/session.py) serves every measurement; session start is excluded. Data is
generated once into ``$LEDGERFLOW_BENCH_DATA`` (default /tmp/ledgerflow-bench), never into the repo.
A full run writes its report to bench/results/benchmarks_<date>.txt, the figures to
bench/results/benchmarks_<date>.json and the growth plot to bench/results/growth_<date>.png. Times are printed,
never asserted: this machine is shared, so every time is a median and still noisy.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import gc
import io
import json
import os
import statistics
import sys
import time
import uuid

import yaml

from bench import baseline, datagen
from bench.pairing import machine as describe_machine
from ledgerflow.adapters.inputs import loaders
from ledgerflow.adapters.inputs.resolution import resolve_inputs
from ledgerflow.adapters.run.context import RunContext, utcnow
from ledgerflow.adapters.run.runner import Runner
from ledgerflow.compiler.parameters import arguments as used_args, values as parameters
from ledgerflow.adapters.store.runstore import RunStore
from ledgerflow.compiler.compile import compile_project
from ledgerflow.compiler.periods import parse_period
from ledgerflow.compiler.workspace import load_workspace

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
PERIOD = "2026"                     # a year run: every GL row of the data goes through the pipeline
PERIOD_START = datetime.date(2026, 1, 1)
FULL = {"pipeline_rows": [1_000_000], "repeats": 3, "growth_rows": 1_000_000, "growth_sizes": [10, 50, 100, 200, 500],
        "marginal_rows": 100_000, "marginal_counts": [0, 1, 2, 4, 8], "marginal_repeats": 3}
QUICK = {"pipeline_rows": [20_000], "repeats": 1, "growth_rows": 20_000, "growth_sizes": [10, 50],
         "marginal_rows": 10_000, "marginal_counts": [0, 1, 2], "marginal_repeats": 1}


def log(text: str = "") -> None:
    print(text, flush=True)


def settle(spark) -> None:
    """Let the JVM drop the previous run's checkpoints and shuffle files before timing the next one."""
    gc.collect()
    spark._jvm.System.gc()
    time.sleep(0.5)


# ------------------------------------------------------------------ 1-3: pipeline P vs hand-written
def compare_outputs(spark, left: str, right: str) -> dict:
    """Row-for-row comparison of two Parquet folders (every column, _row_id and _updated_at included)."""
    a, b = spark.read.parquet(left), spark.read.parquet(right)
    schema_a = [(f.name, f.dataType.simpleString()) for f in a.schema.fields]
    schema_b = [(f.name, f.dataType.simpleString()) for f in b.schema.fields]
    if schema_a != schema_b:
        return {"identical": False, "reason": f"schemas differ: {schema_a} != {schema_b}"}
    only_a, only_b = a.exceptAll(b).count(), b.exceptAll(a).count()
    rows = a.count()
    return {"identical": only_a == 0 and only_b == 0, "rows": rows, "only_ledgerflow": only_a,
            "only_baseline": only_b, "columns": len(schema_a)}


def bench_pipeline(spark, rows: int, repeats: int) -> dict:
    """Median wall time of ``ledgerflow run`` (in process) and of the hand-written job; identical rows."""
    ws = datagen.pipeline_workspace(spark, rows, log)
    data = os.path.join(ws, "data")
    runner = Runner(ws, echo=lambda _s: None, session_factory=lambda: spark)
    lf_out = os.path.join(ws, "target", "out", "pipeline_p", f"_period={PERIOD}")
    bl_root = os.path.join(ws, "target", "out", "baseline")
    lf_times, bl_times = [], []
    record = None

    def run_ledgerflow() -> float:
        nonlocal record
        settle(spark)
        t = time.perf_counter()
        record = runner.run("pipeline_p", PERIOD)
        return time.perf_counter() - t

    def run_baseline() -> float:
        settle(spark)
        started = datetime.datetime.fromisoformat(record["started_at"])  # ledgerflow's _row_id/_updated_at
        t = time.perf_counter()
        baseline.run(spark, data, bl_root, PERIOD, PERIOD_START, started)
        return time.perf_counter() - t

    run_ledgerflow()  # the baseline reproduces a ledgerflow run's start time
    for i in range(repeats + 1):  # the first round warms the JVM and the page cache, not timed
        # Who goes first alternates, so neither always runs right after the other's garbage.
        if i % 2 == 0:
            lf, bl = run_ledgerflow(), run_baseline()
        else:
            bl, lf = run_baseline(), run_ledgerflow()
        tag = "warm-up" if i == 0 else f"run {i}"
        log(f"  {rows:>10,} rows {tag:>8}: ledgerflow {lf:6.2f} s   hand-written {bl:6.2f} s   ratio {lf / bl:5.2f}")
        if i:
            lf_times.append(lf)
            bl_times.append(bl)
    run_baseline()  # untimed: the same start time as the last ledgerflow run, for the row comparison
    check = compare_outputs(spark, lf_out, os.path.join(bl_root, f"_period={PERIOD}"))
    lf_med, bl_med = statistics.median(lf_times), statistics.median(bl_times)
    return {"rows": rows, "ledgerflow_s": lf_times, "baseline_s": bl_times, "ledgerflow_median_s": lf_med,
            "baseline_median_s": bl_med, "ratio": lf_med / bl_med, "output_rows": record["outputs"][0]["rows"],
            "check": check}


def _explain(df) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        df.explain("formatted")
    return buf.getvalue() + "\n"


def explain_pipeline(spark, rows: int, path: str) -> None:
    """Write the physical plans of ledgerflow's stage and output and of the hand-written job."""
    ws = datagen.pipeline_workspace(spark, rows, log)
    workspace = load_workspace(ws)
    compiled = compile_project(workspace, workspace.find_project("pipeline_p"))
    started = utcnow()
    args = parameters(parse_period(PERIOD), started)
    with open(path, "w") as fh:
        for st in compiled.statements:
            df = spark.sql(st.sql, args=used_args(st.sql, args))
            fh.write(f"==== ledgerflow {st.name if st.kind == 'stage' else 'output'}\n")
            fh.write(_explain(df))
        bl = baseline.run(spark, os.path.join(ws, "data"), os.path.join(ws, "target", "out", "baseline"), PERIOD,
                          PERIOD_START, started)
        fh.write("==== hand-written\n")
        fh.write(_explain(bl))


# ------------------------------------------------------------------ 4: growth
def instrumented_run(spark, root: str, project_name: str) -> dict:
    """Run a project stage by stage like the runner, timing analysis, optimisation+planning and execution."""
    ws = load_workspace(root)
    project = ws.find_project(project_name)
    compile_times = []
    for _ in range(3):
        t = time.perf_counter()
        compiled = compile_project(ws, project)
        compile_times.append((time.perf_counter() - t) * 1000)
    started = utcnow()
    period = parse_period(PERIOD)
    ctx = RunContext(ws, project, compiled, period, started, str(uuid.uuid4()))
    resolve_inputs(ctx, RunStore(root))
    args = parameters(period, started)
    t = time.perf_counter()
    for view in compiled.inputs:
        res = ctx.resolutions[view.view]
        loaders.load_input(spark, loaders.InputLoad(view.view, view.dataset, res.version, res.locations), args)
    load_ms = (time.perf_counter() - t) * 1000
    analysis = optimise = execute = 0.0
    out = os.path.join(root, "target", "instrumented", project_name)
    statements = compiled.statements
    for i, st in enumerate(statements):
        t0 = time.perf_counter()
        df = spark.sql(st.sql, args=used_args(st.sql, args))          # parse + analysis (eager)
        t1 = time.perf_counter()
        qe = df._jdf.queryExecution()
        qe.optimizedPlan()
        qe.executedPlan()                                              # optimisation + physical planning
        t2 = time.perf_counter()
        if st.kind == "stage":  # materialised like the runner does (adapters/run/runner.py, Runner._compute)
            readers = [s for s in statements[i + 1:] if f"`{st.name}`" in s.sql]
            if not (len(readers) == 1 and readers[0].kind == "output"):
                df = df.localCheckpoint()
            df.createOrReplaceTempView(st.name)
        else:
            df.write.mode("overwrite").parquet(out)
        t3 = time.perf_counter()
        analysis += (t1 - t0) * 1000
        optimise += (t2 - t1) * 1000
        execute += (t3 - t2) * 1000
    return {"compile_ms": statistics.median(compile_times), "stages": len(compiled.stages), "load_ms": load_ms,
            "analysis_ms": analysis, "optimise_ms": optimise, "execute_ms": execute}


def bench_growth(spark, rows: int, sizes: list[int]) -> list[dict]:
    root = datagen.chain_workspace(spark, rows, sizes, log)
    runner = Runner(root, echo=lambda _s: None, session_factory=lambda: spark)
    runner.run("chain_10", PERIOD)  # warm-up
    results = []
    for n in sizes:
        settle(spark)
        parts = instrumented_run(spark, root, f"chain_{n}")
        settle(spark)
        t = time.perf_counter()
        record = runner.run(f"chain_{n}", PERIOD)
        wall = (time.perf_counter() - t) * 1000
        entry = {"operations": n, **parts, "run_ms": wall, "rows": record["outputs"][0]["rows"]}
        log(f"  {n:>4} ops {parts['stages']:>3} stages: compile {parts['compile_ms']:7.0f} ms  analysis "
            f"{parts['analysis_ms']:7.0f} ms  optimise {parts['optimise_ms']:7.0f} ms  execute "
            f"{parts['execute_ms']:7.0f} ms  | ledgerflow run {wall:7.0f} ms")
        results.append(entry)
    return results


def growth_plot(results: list[dict], path: str, rows: int) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ops = [r["operations"] for r in results]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for key, label in (("run_ms", "ledgerflow run (wall)"), ("execute_ms", "execution"),
                       ("analysis_ms", "Spark analysis"), ("optimise_ms", "Spark optimisation + planning"),
                       ("compile_ms", "compile (ledgerflow)")):
        ax.plot(ops, [r[key] / 1000 for r in results], marker="o", label=label)
    base = next((r for r in results if r["operations"] == 100), None)
    if base:
        ax.plot(ops, [base["run_ms"] / 1000 * n / 100 for n in ops], linestyle=":", color="grey",
                label="linear from 100 ops")
    ax.set_xlabel("chained update operations")
    ax.set_ylabel("seconds")
    ax.set_title(f"ledgerflow: time against pipeline length ({rows:,} rows, local[2])")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ------------------------------------------------------------------ 5: marginal cost of an append
def marginal_workspace(spark, rows: int, counts: list[int]) -> str:
    """Projects of k plain appends (a second GL-shaped dataset over the same files) and of k
    aggregated appends (budgets summed per account, cost center and currency), each + an output."""
    root = datagen.marginal_data(spark, rows, log)
    template = datagen.WORKSPACE_TEMPLATE
    os.makedirs(os.path.join(root, "datasets"), exist_ok=True)
    os.makedirs(os.path.join(root, "projects"), exist_ok=True)
    with open(os.path.join(template, "ledgerflow.yml")) as src, open(os.path.join(root, "ledgerflow.yml"), "w") as dst:
        dst.write(src.read())
    datasets = {}
    for name in ("gl", "budgets"):
        with open(os.path.join(template, "datasets", f"{name}.yml")) as fh:
            datasets[name] = yaml.safe_load(fh)
    datasets["gl_extra"] = {**datasets["gl"], "id": "0c000000-0000-4000-8000-0000000000e1", "name": "gl_extra",
                            "description": "The same journal lines, appended again (marginal-cost benchmark)."}
    for name, ds in datasets.items():
        with open(os.path.join(root, "datasets", f"{name}.yml"), "w") as fh:
            yaml.safe_dump(ds, fh, sort_keys=False)
    link = os.path.join(root, "data", "gl_extra", "v1")
    if not os.path.lexists(link):
        os.makedirs(os.path.dirname(link), exist_ok=True)
        os.symlink(os.path.join(root, "data", "gl", "v1"), link)
    for kind in ("append", "aggappend"):
        for k in counts:
            ops = []
            for seq in range(1, k + 1):
                if kind == "append":
                    args = {"source": {"dataset_id": "gl_extra"}}
                else:
                    args = {"source": {"dataset_id": "budgets"},
                            "aggregation": {"group_by": ["account_code", "cost_center_code", "currency"],
                                            "aggregations": [{"column": "amount_local", "expression": "SUM(amount)"}]}}
                ops.append({"seq": seq, "name": f"{kind} {seq}", "type": "append", "arguments": args})
            ops.append({"seq": k + 1, "name": "write", "type": "output",
                        "arguments": {"destination": {"path": f"target/out/{kind}_{k}", "format": "parquet"}}})
            name = f"{kind}_{k}"
            project = {"id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"lf-bench-{name}")), "name": name, "version": 1,
                       "status": "active", "input_dataset_id": "gl", "operations": ops}
            with open(os.path.join(root, "projects", f"{name}.yml"), "w") as fh:
                yaml.safe_dump(project, fh, sort_keys=False)
    return root


def _slope(xs: list[float], ys: list[float]) -> float:
    mx, my = statistics.mean(xs), statistics.mean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def bench_marginal(spark, rows: int, counts: list[int], repeats: int) -> dict:
    root = marginal_workspace(spark, rows, counts)
    runner = Runner(root, echo=lambda _s: None, session_factory=lambda: spark)
    period = "2026-01"
    runner.run("append_1", period)  # warm-up
    result = {}
    for kind in ("append", "aggappend"):
        medians = []
        for k in counts:
            times = []
            for _ in range(repeats):
                settle(spark)
                t = time.perf_counter()
                record = runner.run(f"{kind}_{k}", period)
                times.append((time.perf_counter() - t) * 1000)
            medians.append(statistics.median(times))
            log(f"  {kind:>9} x{k}: run {medians[-1]:7.0f} ms ({record['outputs'][0]['rows']:,} rows written)")
        result[kind] = {"counts": counts, "run_ms": medians, "marginal_ms": _slope(counts, medians)}
    return result


# ------------------------------------------------------------------ report
def machine() -> str:
    """The machine line of this in-process benchmark (one session, ``local[2]``)."""
    return describe_machine(f"Spark local[2], driver memory {os.environ.get('LEDGERFLOW_BENCH_DRIVER_MEMORY', '8g')}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (< 2 minutes); prints, checks results")
    parser.add_argument("--rows", type=int, action="append", help="GL rows of pipeline P (repeatable)")
    parser.add_argument("--only", choices=["pipeline", "growth", "marginal"], action="append")
    parser.add_argument("--explain", action="store_true", help="also write the physical plans of pipeline P")
    parser.add_argument("--repeats", type=int, help="timed rounds of pipeline P (default 3; the median is reported)")
    args = parser.parse_args(argv)
    cfg = dict(QUICK if args.quick else FULL)
    if args.rows:
        cfg["pipeline_rows"] = args.rows
    if args.repeats:
        cfg["repeats"] = args.repeats
    sections = args.only or ["pipeline", "growth", "marginal"]
    wall = time.perf_counter()
    from bench.session import bench_session
    spark = bench_session()
    log(f"# ledgerflow benchmarks{' (--quick)' if args.quick else ''}, {datetime.date.today()}")
    log(f"# {machine()}")
    log(f"# data cache: {datagen.cache_root()}; session start excluded from every figure")
    report: dict = {"machine": machine(), "quick": args.quick, "date": str(datetime.date.today())}
    ok = True
    if "pipeline" in sections:
        log(f"\n## Pipeline P: ledgerflow run vs hand-written PySpark (median wall time of {cfg['repeats']})")
        report["pipeline"] = []
        for rows in cfg["pipeline_rows"]:
            r = bench_pipeline(spark, rows, cfg["repeats"])
            report["pipeline"].append(r)
            c = r["check"]
            log(f"  {rows:>10,} rows: ledgerflow {r['ledgerflow_median_s']:.2f} s, hand-written "
                f"{r['baseline_median_s']:.2f} s, ratio {r['ratio']:.2f} (target <= 1.10); output "
                f"{r['output_rows']:,} rows; identical: {c['identical']} {'' if c['identical'] else c}")
            ok = ok and c["identical"]
            if args.explain:
                path = os.path.join(RESULTS if not args.quick else datagen.cache_root(),
                                    f"pipeline_p_explain_{rows}_{report['date']}.txt")
                explain_pipeline(spark, rows, path)
                log(f"  plans written to {path}")
    if "growth" in sections:
        log(f"\n## Growth: chained updates on {cfg['growth_rows']:,} rows")
        g = bench_growth(spark, cfg["growth_rows"], cfg["growth_sizes"])
        report["growth"] = {"rows": cfg["growth_rows"], "sizes": g}
        by = {r["operations"]: r for r in g}
        if 100 in by and 500 in by:
            ratio = by[500]["run_ms"] / by[100]["run_ms"]
            report["growth"]["ratio_500_100"] = ratio
            log(f"  time(500)/time(100) = {ratio:.2f} (target <= 6)")
        png = os.path.join(RESULTS if not args.quick else datagen.cache_root(), f"growth_{report['date']}.png")
        growth_plot(g, png, cfg["growth_rows"])
        log(f"  plot: {png}")
    if "marginal" in sections:
        log(f"\n## Marginal cost of one more append on {cfg['marginal_rows']:,} rows "
            "(slope of run time against the number of appends)")
        m = bench_marginal(spark, cfg["marginal_rows"], cfg["marginal_counts"], cfg["marginal_repeats"])
        report["marginal"] = {"rows": cfg["marginal_rows"], **m}
        log(f"  one more append:            {m['append']['marginal_ms']:6.0f} ms  (spec target, in-memory engine: < 10 ms)")
        log(f"  one more aggregated append: {m['aggappend']['marginal_ms']:6.0f} ms  (spec target, in-memory engine: < 50 ms)")
    took = time.perf_counter() - wall
    log(f"\n# total {took:.0f} s; results identical: {ok}")
    report["total_s"] = took
    if not args.quick and not args.only:
        with open(os.path.join(RESULTS, f"benchmarks_{report['date']}.json"), "w") as fh:
            json.dump(report, fh, indent=2, default=str)
    if args.quick:
        assert ok, "ledgerflow and the hand-written pipeline wrote different rows"
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""Fused execution (issue 30 point 2): the fused statements give every period exactly the rows, every
column included (``_row_id``, ``_updated_at``), that the period's own run computes with the same run start.

Compiler-level tests need no Spark; the exactness tests compute both ways in this process
(tests/fused_support.py) on the finance sample over 2026-01..03 (TS-01..TS-08 and the close chain's
first step) and on random data and random periods (tests/fixtures/fused_prop)."""
from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from fused_support import STARTED, assert_identical, extend_finance, fused_only, outputs_both_ways
from conftest import PROJECTS, REPO
from ledgerflow.compiler import fused as fz
from ledgerflow.compiler.fused_inputs import location_query
from ledgerflow.compiler.compile import compile_project
from ledgerflow.compiler.loading import RowRules, normalised_select
from ledgerflow.compiler.periods import parse_period
from ledgerflow.compiler.workspace import load_workspace

MONTHS = ["2026-01", "2026-02", "2026-03"]
TS = [f"ts0{i}_{n}" for i, n in enumerate(["output_only", "asof_rates", "fx_conversion", "delete_inactive",
                                           "aggregate_by_type", "append_budgets", "output_columns",
                                           "named_selector"], start=1)]
PROP = REPO / "tests" / "fixtures" / "fused_prop"
GOLDEN = REPO / "tests" / "golden" / "fused"


def _periods(ids):
    return [parse_period(p) for p in ids]


def _compiled(root, name):
    ws = load_workspace(str(root))
    return compile_project(ws, ws.find_project(name))


# ----------------------------------------------------------------------------- compiler level
@pytest.mark.parametrize("name", TS + ["close_conversion", "close_consolidation", "close_reporting"])
def test_every_period_parameter_becomes_the_rows_period_column(name):
    fused = fz.fuse(_compiled(PROJECTS / "finance", name), _periods(MONTHS))
    for st in fused.statements:
        tree = sqlglot.parse_one(st.sql, read="spark")
        assert {p.name for p in tree.find_all(exp.Placeholder)} <= {"run_started_at"}, st.name
        if st.kind == "output":
            names = [e.alias_or_name for e in tree.expressions]
            assert names[-3:] == list(fz.PERIOD_COLUMNS.values())


def test_auto_fuses_what_it_proves_and_names_what_it_refuses():
    ws = load_workspace(str(PROJECTS / "finance"))
    months = _periods(MONTHS)
    reasons = {p.name: fz.refusal(compile_project(ws, p), months) for p in ws.projects}
    assert {n for n, r in reasons.items() if r is None} == {
        "ts01_output_only", "ts02_asof_rates", "ts03_fx_conversion", "ts05_aggregate_by_type",
        "ts07_output_columns", "ts08_named_selector", "close_conversion", "close_consolidation", "close_reporting"}
    assert reasons["ts04_delete_inactive"].startswith("the project declares checks (lines_accounted_for)")
    ts01 = compile_project(ws, ws.find_project("ts01_output_only"))
    assert fz.refusal(ts01, months[:1]) == "a single period has nothing to fuse"
    assert fz.refusal(ts01, [months[0], months[0]]) == "the list of periods names a period twice"


def test_the_mode_decision_fuses_a_selection_only_when_every_project_is_proven():
    from ledgerflow.adapters.run.fused import decide
    ws = load_workspace(str(PROJECTS / "finance"))
    months = _periods(MONTHS)
    chain = ["close_conversion", "close_consolidation", "close_reporting"]
    assert decide("auto", chain, months, ws) == ("fused", "3 periods in one Spark job per statement")
    assert decide("fused", ["ts01_output_only", "ts06_append_budgets"], months, ws) == (
        "each", "project ts06_append_budgets cannot be fused: the project declares checks (budgets_accounted_for): "
        "each period's bridge and checks are observed on its own run, which fused execution does not do yet")
    assert decide("each", chain, months, ws) == ("each", "--mode each")
    assert decide("auto", chain, months[:1], ws) == ("each", "one period")


def test_a_snapshot_joined_alike_in_every_period_is_read_once_and_joined_on_its_key_alone():
    """A snapshot every period resolves alike, read only by a join without period parameters: not copied per
    period; the join matches on its key and counts its fan-out once (the count each period's run makes)."""
    ws = load_workspace(str(PROP))
    compiled = compile_project(ws, ws.find_project("p_snap_join"))
    views = [v.view for v in compiled.inputs]
    fused = fz.fuse(compiled, _periods(["2026-01", "2026-02"]), uniform=views)
    assert fused.invariant == {"ds_snap"}
    tree = sqlglot.parse_one(fused.statements[0].sql, read="spark")
    join = next(c for c in tree.find_all(exp.CTE) if c.alias == "op_001_join_s")
    assert fz.PERIOD_KEY not in join.sql("spark")  # no period column, the window over the key alone
    assert fz.PERIOD_KEY in next(c for c in tree.find_all(exp.CTE) if c.alias == "op_001_update").sql("spark")
    generic = fz.fuse(compiled, _periods(["2026-01", "2026-02"]), uniform=[v for v in views if v != "ds_snap"])
    assert generic.invariant == frozenset()  # resolved differently by some period: copied per period
    tree = sqlglot.parse_one(generic.statements[0].sql, read="spark")
    assert fz.PERIOD_KEY in next(c for c in tree.find_all(exp.CTE) if c.alias == "op_001_join_s").sql("spark")


def test_fused_with_a_snapshot_join_writes_what_each_period_writes(spark, tmp_path):
    root = tmp_path / "ws"
    _random_workspace(random.Random(3), root)
    (root / "data/snap/v1/snap.csv").write_text("grp,amt\na,1.50\nb,2.25\n")  # one row per group
    each, fused = outputs_both_ways(spark, root, "p_snap_join", ["2026-01", "2026-02", "2026-03", "2026-Q1"])
    assert sum(assert_identical(each, fused, by_rows=True).values()) > 0


def test_a_global_aggregate_gives_every_period_its_row():
    """No GROUP BY: the periods joined to the selected rows, each aggregate FILTERed to real rows."""
    fused = fz.fuse(_compiled(PROP, "p_global"), _periods(MONTHS))
    tree = sqlglot.parse_one(fused.statements[0].sql, read="spark")
    summary = next(c for c in tree.find_all(exp.CTE) if c.alias == "op_002_summary").this
    assert summary.args["from_"].this.name == fz.PERIODS_VIEW
    assert [j.side for j in summary.args["joins"]] == ["LEFT"]
    assert len(list(summary.find_all(exp.Filter))) == 3


def test_a_location_is_read_for_the_range_with_each_period_assigned_by_its_own_filter():
    ws = load_workspace(str(PROJECTS / "finance"))
    gl = next(d for d in ws.datasets if d.name == "gl")
    text = normalised_select(gl, 1, "raw", {c.name: "string" for c in gl.columns} | {"_period": "string"}, "here",
                             None, rows=RowRules(period_rows=True))
    query = location_query(text, "period", _periods(["2026-01", "2026-02"]), subset=True)
    tree = sqlglot.parse_one(query, read="spark")
    assert {p.name for p in tree.find_all(exp.Placeholder)} == {"run_started_at"}  # in the generated ids
    inner = next(s for s in tree.find_all(exp.Select) if (s.args.get("from_") and s.args["from_"].this.alias
                                                          == "normalised"))
    # consecutive months: one range of strings, from the first to the last's '.' (a superset the join narrows)
    assert inner.args["where"].sql("spark") == "WHERE `_period` >= '2026-01' AND `_period` < '2026-02.'"
    assert "RLIKE" not in inner.args["where"].sql("spark")  # only the pushable part before the ids
    join = tree.args["joins"][0]
    assert join.this.name == fz.PERIODS_VIEW and "IN ('2026-01', '2026-02')" in join.args["on"].sql("spark")


def test_golden_fused_sql(request):
    """The fused script of TS-05 over 2026-01..03 (review a change as a diff; --update-golden rewrites it)."""
    script = fz.fuse(_compiled(PROJECTS / "finance", "ts05_aggregate_by_type"), _periods(MONTHS)).script() + "\n"
    path = GOLDEN / "ts05_aggregate_by_type.sql"
    if request.config.getoption("--update-golden"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(script)
    assert path.read_text() == script


# ----------------------------------------------------------------------------- exactness (Spark)
@pytest.fixture
def finance3(finance):
    return extend_finance(finance)


@pytest.mark.parametrize("name", TS + ["close_conversion"])
def test_fused_writes_exactly_what_each_period_writes_finance(spark, finance3, name):
    each, fused = outputs_both_ways(spark, finance3, name, MONTHS)
    counts = assert_identical(each, fused, by_rows=True)
    assert all(counts[(p, s)] >= 0 for p, s in counts)
    if name in ("ts01_output_only", "ts05_aggregate_by_type"):
        assert {p: counts[(p, s)] for p, s in counts} == (
            {"2026-01": 10, "2026-02": 4, "2026-03": 3} if name == "ts01_output_only"
            else {"2026-01": 14, "2026-02": 4 + 4, "2026-03": 3 + 2})


def test_the_range_filter_pushed_to_a_scan_is_one_range_per_run_of_consecutive_months_or_days():
    from ledgerflow.compiler.fused_inputs import _range_prefilter
    cases = {("2026-01", "2026-02", "2026-03"): "`_period` >= '2026-01' AND `_period` < '2026-03.'",
             ("2026-11", "2026-12", "2027-01"): "`_period` >= '2026-11' AND `_period` < '2027-01.'",
             ("2026-01-30", "2026-01-31", "2026-02-01"): "`_period` >= '2026-01-30' AND `_period` < '2026-02-01.'"}
    for periods, want in cases.items():
        assert _range_prefilter("period", _periods(list(periods))).sql("spark") == want
    gap = _range_prefilter("period", _periods(["2026-01", "2026-02", "2026-05"])).sql("spark")
    assert gap.startswith("(`_period` >= '2026-01' AND `_period` < '2026-02.') OR ((`_period` = '2026-05' OR"), gap
    quarter = _range_prefilter("period", _periods(["2026-Q1", "2026-Q2"])).sql("spark")
    assert quarter.startswith("((`_period` = '2026-Q1' OR") and " OR ((`_period` = '2026-Q2' OR" in quarter  # each its own


def test_join_sides_small_in_every_period_are_broadcast_for_the_range(finance3):
    """A join side each period's run would broadcast (its files below Spark's threshold) is broadcast by hint
    for the range; Spark cannot estimate it behind the join to the periods and would shuffle the input."""
    from ledgerflow.adapters.inputs.resolution import resolve_inputs
    from ledgerflow.adapters.run.fused import period_context
    from ledgerflow.adapters.run.fused_plan import broadcast_views
    from ledgerflow.adapters.store.runstore import RunStore
    ws = load_workspace(str(finance3))
    compiled = compile_project(ws, ws.find_project("ts03_fx_conversion"))
    resolutions = {}
    for p in _periods(MONTHS):
        ctx = period_context(ws, compiled, p, STARTED)
        resolve_inputs(ctx, RunStore(str(finance3)))
        resolutions[p.identifier] = dict(ctx.resolutions)
    assert broadcast_views(compiled, resolutions, 10 << 20) == {"ds_exchange_rates"}
    assert broadcast_views(compiled, resolutions, 100) == set()  # above the threshold in a period: Spark decides
    assert broadcast_views(compiled, resolutions, -1) == set()  # broadcasts switched off
    fused = fz.fuse(compiled, _periods(MONTHS), broadcast={"ds_exchange_rates"})
    update = next(c for c in sqlglot.parse_one(fused.statements[0].sql, read="spark").find_all(exp.CTE)
                  if c.alias == "op_001_update")
    assert update.this.args["hint"].sql("spark") == "/*+ BROADCAST(`fx`) */"
    assert "BROADCAST" not in fz.fuse(compiled, _periods(MONTHS)).statements[0].sql


def test_fused_over_overlapping_periods_of_two_levels(spark, finance3):
    """A quarter and its month: January's rows belong to both, each computed as its own run would (the
    quarter's as-of rate is the one valid on 2026-01-01, March's lines are converted at it too)."""
    each, fused = outputs_both_ways(spark, finance3, "ts03_fx_conversion", ["2026-01", "2026-Q1"])
    counts = assert_identical(each, fused, by_rows=True)
    assert (counts[("2026-01", 2)], counts[("2026-Q1", 2)]) == (10, 17)


# ----------------------------------------------------------------------------- property test
_PERIOD_VALUES = ["2026-01", "2026-02", "2026-03", "2026-04", "2026-02-10", "2026-03-31", "2026-Q1", "2026",
                  "2026-13", "2026-1-5"]


def _random_workspace(rng: random.Random, root: Path) -> None:
    shutil.copytree(PROP, root)
    groups = ["a", "b", "c"]
    lines = ["id,grp,amt,_period"]
    for i in range(rng.randint(0, 14)):
        line = f"L{i},{rng.choice(groups + [''])},{rng.randint(-500, 2000) / 100:.2f},{rng.choice(_PERIOD_VALUES)}"
        lines += [line] * (2 if rng.random() < 0.15 else 1)  # identical rows: ids from their ordinal
    dim = ["grp,label,_period"]
    for month in ("2026-01", "2026-02", "2026-03", "2026-Q1"):
        for g in groups:
            if rng.random() < 0.7:
                dim.append(f"{g},{rng.choice(['x', 'y', 'z'])},{month}")
    snap = ["grp,amt"] + [f"{rng.choice(groups)},{rng.randint(0, 900) / 10:.2f}" for _ in range(rng.randint(0, 3))]
    rates = ["grp,rate,_period_from,_period_to"]
    for g in groups:
        cut = f"2026-{rng.randint(1, 4):02d}-{rng.choice([1, 15]):02d}"
        rates += [f"{g},{rng.randint(50, 150) / 100:.4f},2025-06-01,{cut}", f"{g},{rng.randint(50, 150) / 100:.4f},{cut},"]
    for name, rows in (("lines", lines), ("dim", dim), ("snap", snap), ("rates", rates)):
        folder = root / "data" / name / "v1"
        folder.mkdir(parents=True)
        (folder / f"{name}.csv").write_text("\n".join(rows) + "\n")


# Seven seeds: each of the five projects, and both special shapes (days only, a year with a quarter), at least
# once (16 seeds ran each shape twice, then 8 ran p_join_agg twice; the CI minutes went over their 15).
@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 6, 7])
def test_property_fused_equals_each_on_random_data_and_periods(spark, tmp_path, seed):
    rng = random.Random(seed)
    root = tmp_path / "ws"
    _random_workspace(rng, root)
    project = ["p_join_agg", "p_global", "p_append", "p_asof", "p_snap_join"][seed % 5]
    periods = sorted(rng.sample(["2026-01", "2026-02", "2026-03", "2026-04"], rng.randint(2, 3)))
    if rng.random() < 0.25:
        periods.append("2026-Q1")
    if seed % 8 == 6:  # days only: rows pair with periods on 10 characters of the identifier
        periods = ["2026-02-10", "2026-03-31"]
    elif seed % 8 == 7:  # a year and a quarter: on 4
        periods = ["2026", "2026-Q1"]
    try:
        each, fused = outputs_both_ways(spark, root, project, periods)
    except Exception as exc:  # noqa: BLE001 - a period's own run fails (a quarter's join side has every month's
        # rows; a snapshot holding a group twice): so does the fused statement
        alias = "s" if project == "p_snap_join" else "d"
        assert f"runtime join '{alias}' of operation 1 matched" in str(exc) and (alias == "s" or "2026-Q1" in periods), exc
        with pytest.raises(Exception, match=f"runtime join '{alias}' of operation 1 matched"):
            fused_only(spark, root, project, periods)
        return
    assert_identical(each, fused, by_rows=True)


def _gl_as_parquet(spark, root: Path) -> None:
    """The workspace's gl read from a Parquet folder (ids from file and row index, filters pushed to the scan)."""
    src = root / "data/gl/v1/transactions.csv"
    spark.read.option("header", "true").csv(str(src)).coalesce(1).write.parquet(str(root / "data/gl/pq"))
    config = root / "ledgerflow.yml"
    config.write_text(config.read_text().replace("resolvers:\n", "resolvers:\n  pq:\n    rules:\n      - name: pq\n"
                                                 "        data_level: any\n        strategy: {type: path, path: "
                                                 "\"data/{{dataset}}/pq\", format: parquet}\n", 1))
    ds = root / "datasets/gl.yml"
    ds.write_text(ds.read_text().replace("status: active\n", "status: active\nresolver_id: pq\n", 1))


def test_parquet_input_read_once_for_the_range_with_the_filter_pushed(spark, finance3):
    _gl_as_parquet(spark, finance3)
    each, fused = outputs_both_ways(spark, finance3, "ts01_output_only", MONTHS)
    counts = assert_identical(each, fused, by_rows=True)
    assert {k[0]: n for k, n in counts.items()} == {"2026-01": 10, "2026-02": 4, "2026-03": 3}
    plan = spark.table("ds_gl")._jdf.queryExecution().executedPlan().toString()  # the fused view, created last
    scans = [line for line in plan.splitlines() if "FileScan parquet" in line]
    assert len(scans) == 1, plan
    # rows pair with their periods by hash on the identifier's prefix, not by a nested loop over every period
    assert "BroadcastHashJoin [substring(_period#" in plan and "NestedLoopJoin" not in plan, plan
    pushed = scans[0][scans[0].index("PushedFilters:"):]
    assert pushed.startswith("PushedFilters: [IsNotNull(_period), GreaterThanOrEqual(_period,2026-01), "
                             "LessThan(_period,2026-03.)]"), scans[0]  # one scan, the range's filter pushed


# ----------------------------------------------------------------------------- through the runner
def _run_each(spark, root: Path, project: str, periods: list[str]) -> dict:
    """Period-by-period runs started at STARTED (what `--mode each` runs, with the fused range's run start)."""
    from ledgerflow.adapters.run.fused import period_context
    from ledgerflow.adapters.run.runner import Runner
    runner = Runner(str(root), echo=lambda _line: None, session_factory=lambda: spark)
    ws = runner.load_workspace()
    compiled = compile_project(ws, ws.find_project(project))
    return {p: runner.execute(period_context(ws, compiled, parse_period(p), STARTED), resolve=True) for p in periods}


def test_run_range_commits_each_period_as_its_own_run_writing_what_each_run_writes(spark, finance3, tmp_path):
    from cli_support import read_output
    from ledgerflow.adapters.run.fused import run_range
    from ledgerflow.adapters.run.runner import Runner
    from ledgerflow.adapters.store.runstore import RunStore
    spec = finance3 / "projects/ts05_aggregate_by_type.yml"  # to a folder: written once for the range, adopted
    spec.write_text(spec.read_text().replace("{table: ts05_by_account_type}", '{path: "out/ts05", format: csv}'))
    twin = shutil.copytree(finance3, tmp_path / "twin")
    lines: list[str] = []
    runner = Runner(str(finance3), echo=lines.append, session_factory=lambda: spark)
    periods = MONTHS + ["2026-04"]  # April has no rows: its run writes an empty partition, as its own run does
    results = run_range(runner, "ts05_aggregate_by_type", _periods(periods), started_at=STARTED, batch_id="b-1")
    assert [p.identifier for p, _ in results] == periods
    records = {p.identifier: r for p, r in results}
    assert all(isinstance(r, dict) and r["status"] == "completed" for r in records.values()), records
    assert len({r["run_id"] for r in records.values()}) == 4
    # the output is written once for every period (one Spark job, in the first run's fused statement); the
    # other runs adopt their folder of it, their writes run no Spark job, and nothing written is left over
    assert [o["spark_jobs"] for p in MONTHS[1:] for o in records[p]["timings"]["outputs"]] == [0, 0], records
    destination = finance3 / "out/ts05"
    assert sorted(x.name for x in destination.iterdir()) == [".lf_versions"] + [f"_period={p}" for p in periods]
    assert not list((destination / ".lf_versions").glob(".fused-*"))
    assert {r["run_started_at"] for r in records.values()} == {STARTED.isoformat(timespec="milliseconds")}
    assert {r["batch_id"] for r in records.values()} == {"b-1"}
    assert sum("lf_stage_1 (fused, 4 periods)" in line for line in lines) == 1, lines  # computed once
    stored = {r["run_id"]: r for r in RunStore(str(finance3)).list_runs()}
    assert all(stored[r["run_id"]]["status"] == "completed" for r in records.values())
    each = _run_each(spark, twin, "ts05_aggregate_by_type", periods)
    assert each["2026-04"]["outputs"][0]["rows"] == 0
    for p in periods:
        _, got = read_output(spark, records[p], 3)
        _, want = read_output(spark, each[p], 3)
        assert sorted(map(repr, got)) == sorted(map(repr, want)), p
        assert records[p]["outputs"][0]["rows"] == each[p]["outputs"][0]["rows"]


def test_a_failing_fused_statement_runs_the_range_period_by_period(spark, finance3):
    """A second CC-300 cost center in February only: the fused statement fails on its fan-out guard, the
    periods then compute their own rows, February fails by name, January and March commit."""
    from ledgerflow.adapters.run.fused import run_range
    from ledgerflow.adapters.run.runner import Runner
    csv = finance3 / "data/cost_centers/v1/cost_centers.csv"
    csv.write_text(csv.read_text() + "CC-300,Consulting UK (copy),Consulting,EMEA,true,2026-02\n")
    lines: list[str] = []
    runner = Runner(str(finance3), echo=lines.append, session_factory=lambda: spark)
    results = dict((p.identifier, r) for p, r in run_range(runner, "ts08_named_selector", _periods(MONTHS),
                                                           started_at=STARTED))
    assert any("fused statements failed" in line for line in lines), lines
    assert results["2026-01"]["status"] == "completed" and results["2026-03"]["status"] == "completed"
    assert isinstance(results["2026-02"], Exception)
    assert "runtime join 'cc' of operation 1 matched 2 rows" in str(results["2026-02"])

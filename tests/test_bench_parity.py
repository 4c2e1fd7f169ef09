"""Pipeline P run by ledgerflow writes the rows of the hand-written PySpark job, on every source layout.

``bench/cold_process.py`` times the two as whole processes on source-shaped data (no system columns).
This test checks, in the test session, that they agree row for row and type for type on all three
layouts: flat Parquet with a ``_period`` column, Parquet in ``_period=`` folders, and CSV. Every column but ``_row_id`` (which the hand-written job does not write)
is compared. The range benchmark's claim (a fused quarter writes what each month's run writes) is checked
here too, on the same generated data.
"""
from __future__ import annotations

import datetime
import json
import os
from decimal import Decimal

import pytest

from bench import datagen, handwritten_source
from cli_support import cli, describe, run_ok, started

ROWS = 3_000
PERIOD = "2026-02"


@pytest.fixture(scope="module")
def bench_data(tmp_path_factory):
    """The benchmark's data cache, in a folder of this module's own."""
    folder = tmp_path_factory.mktemp("bench-data")
    before = os.environ.get("LEDGERFLOW_BENCH_DATA")
    os.environ["LEDGERFLOW_BENCH_DATA"] = str(folder)
    yield folder
    if before is None:
        del os.environ["LEDGERFLOW_BENCH_DATA"]
    else:
        os.environ["LEDGERFLOW_BENCH_DATA"] = before


@pytest.mark.parametrize("layout", ["flat", "folders", "csv"])
def test_pipeline_p_writes_the_hand_written_jobs_rows(spark, bench_data, layout):
    ws = datagen.source_workspace(spark, ROWS, layout, log=lambda _: None)
    assert str(ws).startswith(str(bench_data))
    rec = run_ok(ws, "pipeline_p", PERIOD)
    [output] = rec["outputs"]
    started = datetime.datetime.fromisoformat(rec["run_started_at"])
    hw_out = os.path.join(ws, "target", "handwritten")
    handwritten_source.run(spark, os.path.join(ws, "data"), layout, hw_out, PERIOD, started)

    lf = spark.read.parquet(output["location"])
    hw = spark.read.parquet(os.path.join(hw_out, f"_period={PERIOD}"))
    lf_types = {f.name: f.dataType.simpleString() for f in lf.schema.fields}
    hw_types = {f.name: f.dataType.simpleString() for f in hw.schema.fields}
    assert set(lf_types) - set(hw_types) == {"_row_id"}
    assert {c: lf_types[c] for c in hw_types} == hw_types
    columns = list(hw_types)
    a, b = lf.select(*columns), hw.select(*columns)
    assert a.exceptAll(b).count() == 0 and b.exceptAll(a).count() == 0
    # every kind of row is there: updated lines, the totals of the aggregate and the appended budgets
    kinds = {r["_operation_seq"]: r["n"] for r in a.groupBy("_operation_seq").count().withColumnRenamed("count", "n")
             .collect()}
    assert set(kinds) == {0, 4, 5} and kinds[0] > ROWS // 10 and a.count() == output["rows"]


def test_the_hand_written_checks_record_the_bridge_a_checked_run_records(spark, bench_data, tmp_path):
    """``bench.checks_floor`` compares a checked ledgerflow run with ``bench/handwritten_checks.py``: the
    hand-written checks pass as ledgerflow's do and their bridge holds ledgerflow's figures, figure for figure
    (so the floor does the work the checked run does, and no less)."""
    from bench import checks_cost, handwritten_checks
    src = datagen.source_workspace(spark, ROWS, "flat", log=lambda _: None)
    checked = checks_cost.make_workspace(str(src), str(tmp_path / "checked"), checks=True)
    rec = run_ok(checked, "pipeline_p", PERIOD)
    assert {c["name"]: c["status"] for c in rec["checks"]}["control_totals"] == "passed"
    failed, figures = handwritten_checks.checked_run(spark, os.path.join(checked, "data"), "flat",
                                                     str(tmp_path / "hw"), PERIOD, started(rec), bridge=True)
    assert failed == []
    recorded = {}
    for b in rec["bridge"]:
        if b["group"] is None:
            changes = {c["seq"]: Decimal(str(c["change"])) for c in b["changes"]}
            recorded[b["measure"]] = {"input": Decimal(str(b["input"])), **changes,
                                      "output": Decimal(str(b["output_value"]))}
    assert set(recorded) == set(figures) == {"count", "SUM(amount_local)", "SUM(amount_reporting)"}
    for measure, points in figures.items():  # an operation that cannot change a measure is 0 in the record
        assert {k: Decimal(str(v)) for k, v in points.items()} == {k: v for k, v in recorded[measure].items()
                                                                   if v or k in points}, measure
    assert recorded["count"]["output"] == rec["outputs"][0]["rows"] and recorded["count"][3] < 0


def test_the_hand_written_data_diff_finds_what_diff_data_finds(spark, bench_data, tmp_path):
    """``bench.diff_floor`` compares ``ledgerflow diff --data`` with ``bench/handwritten_diff.py``: on the
    benchmark's change (the FX rate joined) both give the same counts, changed rows per column and totals."""
    from bench import diff_data_cost, handwritten_diff
    src = datagen.source_workspace(spark, ROWS, "flat", log=lambda _: None)
    repo = str(tmp_path / "repo")
    base, head = diff_data_cost.make_repository(str(src), repo)
    result = cli(repo, "diff", "--data", "--period", "2026-01", base, head, "--format", "json")
    assert result.exit_code == 4, describe(result)
    [project] = json.loads(result.output)["projects"]
    [output] = project["outputs"]
    hand = handwritten_diff.data_diff(spark, os.path.join(repo, "data"), "flat", "2026-01",
                                      datetime.datetime(2026, 11, 26, 8))
    f = hand["figures"]
    assert (f["rows"] - f["added"], f["rows"] - f["removed"], f["added"], f["removed"], f["changed"]) == (
        output["rows"]["base"], output["rows"]["head"], output["rows"]["added"], output["rows"]["removed"],
        output["rows"]["changed"])
    assert output["rows"]["changed"] > ROWS // 20
    lf_changed = {c["column"]: c["changed_rows"] for c in output["columns"] if c["changed_rows"]}
    assert lf_changed == {k[len("changed_"):]: v for k, v in f.items() if k.startswith("changed_") and v}
    assert {t["column"]: (Decimal(t["base"]), Decimal(t["head"])) for t in output["totals"]} == {
        c: (f[f"sum_b_{c}"] or 0, f[f"sum_h_{c}"] or 0) for c in hand["decimals"]}
    assert {t["column"]: Decimal(t["gross"]) for t in output["totals"]} == {  # gross: the sum of |HEAD - BASE|
        c: f[f"gross_{c}"] or 0 for c in hand["decimals"]}
    assert len(hand["samples"]) == len(output["samples"]) == 10


def test_pipeline_p_fused_over_a_quarter_writes_what_each_month_writes(spark, bench_data, tmp_path):
    """The range benchmark's claim (``bench/range_cost.py``, whose ``--quick`` checks it as whole processes), in
    the test session: pipeline P over 2026-01..2026-03 of source-shaped data, fused (one pass for the range)
    and period by period, writes the same rows month by month (every column but ``_row_id`` and
    ``_updated_at``, which name the run), and some of every month."""
    data = os.path.join(datagen.source_workspace(spark, ROWS, "flat", log=lambda _: None), "data")
    outputs = {}
    for mode in ("fused", "each"):
        ws = tmp_path / mode
        ws.mkdir()
        datagen.write_source_yaml(str(ws), "flat")
        os.symlink(data, ws / "data")
        result = cli(ws, "run", "pipeline_p", "--period", "2026-01..2026-03", "--mode", mode)
        assert result.exit_code == 0, describe(result)
        assert ("fused: pipeline_p" in result.output) == (mode == "fused"), result.output
        outputs[mode] = ws / "target" / "out" / "pipeline_p"
    for month in ("2026-01", "2026-02", "2026-03"):
        fused = spark.read.parquet(str(outputs["fused"] / f"_period={month}"))
        each = spark.read.parquet(str(outputs["each"] / f"_period={month}"))
        assert sorted(fused.columns) == sorted(each.columns)
        columns = [c for c in each.columns if c not in ("_row_id", "_updated_at")]
        a, b = fused.select(*columns), each.select(*columns)
        assert a.count() > 0 and a.exceptAll(b).count() == 0 and b.exceptAll(a).count() == 0, month

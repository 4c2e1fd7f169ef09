"""Pipeline P run by ledgerflow writes the rows of the hand-written PySpark job, on every source layout.

``bench/cold_process.py`` times the two as whole processes on source-shaped data (no system columns);
``.ci/run`` runs its quick mode on one layout. This test checks, in the test session, that they agree
row for row and type for type on all three layouts: flat Parquet with a ``_period`` column, Parquet in
``_period=`` folders, and CSV. Every column but ``_row_id`` (which the hand-written job does not write)
is compared.
"""
from __future__ import annotations

import datetime
import os

import pytest

from bench import datagen, handwritten_source
from cli_support import run_ok

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

"""Period filters Spark pushes into the scan (issue 9, point 2).

The period rule of docs/workspace.md (datasets) (the run's period or a finer period inside it) and the bitemporal
as-of filter are written so that, once Spark folds the parameters into literals, the physical plan
of every input scan shows them: `PushedFilters` on Parquet/ORC files with a `_period` column,
`PartitionFilters` on `_period=` folders. The inputs go through the real loader and the compiled
SQL's own filter (the view is filtered again, as the input CTE does), with the normalising
projection and the row identity in between. The exact rows each run reads are checked on monthly,
daily, quarterly, yearly and junk `_period` values.
"""
from __future__ import annotations

import datetime
import itertools
import re

import pytest

from ledgerflow.adapters.inputs import loaders
from ledgerflow.compiler.parameters import values as parameters
from ledgerflow.compiler.model import ColumnDef, Dataset, DatasetVersion
from ledgerflow.compiler.periods import parse_period, period_filter
from ledgerflow.compiler.resolver import ResolvedLocation

_names = itertools.count()

# Every kind of _period value a period table may hold, plus junk that must never be read.
PERIODS = ["2025", "2025-12", "2025-12-31", "2026", "2026-Q1", "2026-Q2", "2026-Q4", "2026-Q5", "2026-01",
           "2026-01-01", "2026-01-31", "2026-02", "2026-02-28", "2026-02-30", "2026-03", "2026-03-31", "2026-04",
           "2026-10", "2026-10-05", "2026-12-31", "2026-1", "2026-1-5", "2026-01x", "2026-01-1", "2027-01"]
EXPECTED = {
    "2026-01": ["2026-01", "2026-01-01", "2026-01-31"],
    "2026-Q1": ["2026-Q1", "2026-01", "2026-01-01", "2026-01-31", "2026-02", "2026-02-28", "2026-03", "2026-03-31"],
    "2026": ["2026", "2026-Q1", "2026-Q2", "2026-Q4", "2026-01", "2026-01-01", "2026-01-31", "2026-02",
             "2026-02-28", "2026-03", "2026-03-31", "2026-04", "2026-10", "2026-10-05", "2026-12-31"],
    "2026-01-31": ["2026-01-31"],
    "2026-10": ["2026-10", "2026-10-05"],
}


def dataset(mode: str) -> Dataset:
    return Dataset(id="0e000000-0000-4000-8000-0000000000f1", name="lines", status="active", table_name="lines",
                   temporal_mode=mode, columns=[ColumnDef("k", "string"), ColumnDef("v", "decimal(18,2)")],
                   versions=[DatasetVersion(1)])


@pytest.fixture(scope="module")
def folders(spark, tmp_path_factory):
    """The same rows (one per PERIODS value, no system column but _period) as flat Parquet, flat ORC
    and Parquet in `_period=` folders."""
    base = tmp_path_factory.mktemp("pushed")
    rows = [(f"k{i:02d}", f"{i}.50", p) for i, p in enumerate(PERIODS)]
    frame = spark.createDataFrame(rows, "k string, v string, _period string").selectExpr(
        "k", "CAST(v AS DECIMAL(18,2)) AS v", "_period")
    out = {}
    for fmt in ("parquet", "orc"):
        out[fmt] = str(base / f"flat_{fmt}")
        frame.coalesce(1).write.format(fmt).save(out[fmt])
    out["folders"] = str(base / "folders")
    frame.write.partitionBy("_period").parquet(out["folders"])
    return out


def load(spark, target: str, fmt: str, period: str, mode: str = "period"):
    """The compiled SQL's input: the loader's view of ``target``, filtered again by the period filter."""
    args = parameters(parse_period(period), datetime.datetime(2026, 2, 1, 12))
    view = f"ds_pushed_{next(_names)}"
    loaders.load_input(spark, loaders.InputLoad(view, dataset(mode), 1, [ResolvedLocation("path", target, fmt)]), args)
    cond = period_filter(mode).sql("spark")
    used = {k: v for k, v in args.items() if f":{k}" in cond}
    return spark.sql(f"SELECT * FROM `{view}` WHERE {cond}", args=used)


@pytest.fixture(autouse=True)
def full_plan_strings(spark):
    """Plan strings cut scan metadata at 100 characters by default; show it whole."""
    key = "spark.sql.maxMetadataStringLength"
    before = spark.conf.get(key)
    spark.conf.set(key, "10000")
    yield
    spark.conf.set(key, before)


def scans(df) -> list[str]:
    plan = df._jdf.queryExecution().executedPlan().toString()
    return [line for line in plan.splitlines() if "FileScan" in line or "Scan " in line]


def filters(line: str, kind: str) -> str:
    m = re.search(kind + r": \[(.*?)\](?:, [A-Z]|$)", line)
    assert m, line
    return m.group(1)


@pytest.mark.parametrize("period", sorted(EXPECTED))
@pytest.mark.parametrize("layout", ["parquet", "orc", "folders"])
def test_period_filter_is_pushed_and_exact(spark, folders, layout, period):
    fmt = "parquet" if layout == "folders" else layout
    df = load(spark, folders[layout], fmt, period)
    [scan] = scans(df)
    quoted = re.escape(period)
    if layout == "folders":
        pushed = filters(scan, "PartitionFilters")
        assert re.search(rf"_period#\d+ = {quoted}\)", pushed), scan
        assert ">=" in pushed and "<" in pushed, scan
    else:
        pushed = filters(scan, "PushedFilters")
        assert f"EqualTo(_period,{period})" in pushed, scan
        assert "GreaterThanOrEqual(_period," in pushed and "LessThan(_period," in pushed, scan
    got = sorted(r["_period"] for r in df.collect())
    assert got == sorted(EXPECTED[period])
    # every row keeps a generated UUIDv7 _row_id, distinct
    ids = [r["_row_id"] for r in df.collect()]
    assert len(set(ids)) == len(ids)


def test_month_run_over_monthly_and_daily_rows_reads_exactly_its_rows(spark, folders, tmp_path):
    """A month run over monthly and daily rows of several months, in one flat Parquet folder."""
    rows = [("m1", "1.00", "2026-01"), ("d1", "2.00", "2026-01-15"), ("d2", "3.00", "2026-01-31"),
            ("m2", "4.00", "2026-02"), ("d3", "5.00", "2026-02-01"), ("d0", "6.00", "2025-12-31"),
            ("y", "7.00", "2026"), ("q", "8.00", "2026-Q1"), ("x", "9.00", "2026-01-32")]
    target = str(tmp_path / "mixed")
    spark.createDataFrame(rows, "k string, v string, _period string").write.parquet(target)
    df = load(spark, target, "parquet", "2026-01")
    pushed = filters(scans(df)[0], "PushedFilters")
    assert "Or(EqualTo(_period,2026-01),And(GreaterThanOrEqual(_period,2026-01-),LessThan(_period,2026-01.)))" \
        in pushed
    assert sorted((r["k"], str(r["v"])) for r in df.collect()) == [("d1", "2.00"), ("d2", "3.00"), ("m1", "1.00")]


def test_as_of_filter_is_pushed(spark, tmp_path):
    rows = [("a", "1.00", datetime.date(2025, 12, 1), datetime.date(2026, 1, 1)),
            ("b", "2.00", datetime.date(2026, 1, 1), None),
            ("c", "3.00", datetime.date(2025, 12, 1), datetime.date(2026, 2, 1)),
            ("d", "4.00", datetime.date(2026, 1, 2), None)]
    target = str(tmp_path / "rates")
    spark.createDataFrame(rows, "k string, v string, _period_from date, _period_to date").write.parquet(target)
    df = load(spark, target, "parquet", "2026-01", mode="bitemporal")
    pushed = filters(scans(df)[0], "PushedFilters")
    assert "LessThanOrEqual(_period_from,2026-01-01)" in pushed
    assert "Or(IsNull(_period_to),GreaterThan(_period_to,2026-01-01))" in pushed
    assert sorted(r["k"] for r in df.collect()) == ["b", "c"]

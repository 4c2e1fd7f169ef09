"""Times are the UTC wall clock whatever the Python process's local time zone: the run's start bound
as ``:run_started_at`` and the TIMESTAMP values a scenario test gives. PySpark reads a naive datetime
in the local zone, so on a machine set to New York both used to arrive five hours late."""
from __future__ import annotations

import datetime
import time

import pytest

from ledgerflow.adapters.scenarios.given import frame
from ledgerflow.adapters.scenarios.prepare import GivenTable
from ledgerflow.compiler import parameters
from ledgerflow.compiler.periods import parse_period

from cli_support import check_row_ids, read_output, run_ok, started


@pytest.fixture
def new_york(monkeypatch):
    """The Python process's local time zone is America/New_York for the test (the JVM's stays UTC)."""
    monkeypatch.setenv("TZ", "America/New_York")
    try:
        time.tzset()
        assert time.strftime("%Z", time.localtime(0)) in ("EST", "EDT"), "no America/New_York zone data (tzdata)"
        yield
    finally:
        monkeypatch.undo()
        time.tzset()


def _strings(df, column: str) -> set:
    return {r[0] for r in df.selectExpr(f"CAST(`{column}` AS STRING)").collect()}


def test_the_run_start_is_bound_as_utc(spark, new_york):
    started = datetime.datetime(2026, 1, 31, 8, 30, 0, 123000)
    args = parameters.values(parse_period("2026-01"), started)
    sql = "SELECT :run_started_at AS t"
    assert _strings(spark.sql(sql, args=parameters.arguments(sql, args)), "t") == {"2026-01-31 08:30:00.123"}


def test_a_run_stamps_updated_rows_with_its_utc_start(spark, finance, new_york):
    rec = run_ok(finance, "ts03_fx_conversion", "2026-01")
    _, rows = read_output(spark, rec, 2)
    assert rows and {r["_updated_at"] for r in rows} == {started(rec)}, rec["started_at"]
    check_row_ids(rows, rec)


def test_given_timestamps_are_the_utc_wall_clock(spark, new_york):
    noon = datetime.datetime(2026, 1, 15, 12, 0)
    given = GivenTable(dataset=None, columns=[("at", "timestamp"), ("wall", "timestamp_ntz")],
                       rows=[(noon, noon), (None, None)], source="tests/x.yml given t")
    df = frame(spark, given, parse_period("2026-01"))
    assert _strings(df, "at") == {"2026-01-15 12:00:00", None}
    assert _strings(df, "wall") == {"2026-01-15 12:00:00", None}


def test_collected_timestamps_are_the_utc_wall_clock(spark, new_york):
    """A test's outputs compare TIMESTAMP values as the UTC wall clock: exact to the microsecond in New
    York's repeated hour (01:30 EDT and 01:30 EST are 05:30 and 06:30 UTC), its skipped hour and before 1970."""
    from ledgerflow.adapters.scenarios.execute import collect
    instants = ["2026-11-01 05:30:00.123456", "2026-11-01 06:30:00.654321", "2026-03-08 07:00:00",
                "1969-12-31 23:59:59.999999", "2026-01-31 08:30:00.123"]
    sql = " UNION ALL ".join(f"SELECT {i} AS n, TIMESTAMP'{t}' AS at, TIMESTAMP_NTZ'{t}' AS wall"
                             for i, t in enumerate(instants)) + " UNION ALL SELECT 9, NULL, NULL"
    columns, types, rows = collect(spark.sql(sql))
    assert columns == ["n", "at", "wall"] and types["at"] == "timestamp"
    expected = [datetime.datetime.fromisoformat(t) for t in instants] + [None]
    assert [r[1] for r in sorted(rows)] == expected
    assert [r[2] for r in sorted(rows, key=lambda r: r[0])] == expected


@pytest.mark.parametrize("zone", ["America/New_York", "Asia/Tokyo", "UTC"])
def test_collected_timestamps_at_the_ends_of_the_range(spark, monkeypatch, zone):
    """Year 1 and the last instant of 9999 are beyond what Python's local time holds (in Tokyo, 9999-12-31
    12:00 UTC is already year 10000 locally): they are still collected as the UTC wall clock."""
    from ledgerflow.adapters.scenarios.execute import collect
    monkeypatch.setenv("TZ", zone)
    try:
        time.tzset()
        sql = ("SELECT 1 AS n, TIMESTAMP'0001-01-01 00:00:00' AS at UNION ALL "
               "SELECT 2, TIMESTAMP'9999-12-31 23:59:59.999999' UNION ALL SELECT 3, TIMESTAMP'2026-01-31 08:30:00'")
        _, _, rows = collect(spark.sql(sql))
    finally:
        monkeypatch.undo()
        time.tzset()
    assert sorted(rows) == [(1, datetime.datetime(1, 1, 1)), (2, datetime.datetime(9999, 12, 31, 23, 59, 59, 999999)),
                            (3, datetime.datetime(2026, 1, 31, 8, 30))]

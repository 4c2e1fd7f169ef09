"""Casts that lose digits are errors (issue 8, deliverable 7).

A declared column read from data of another type goes through ``_checked_cast``. Before, a value
that converted only by rounding (``15000.005`` into ``decimal(18,2)`` became ``15000.01``) loaded
silently; now it stops the run with the located error a failing cast gives, ending in "without
losing digits" (or "without losing its time of day" for dates). Values that keep every digit
(trailing zeros, the double 0.1, 2.0 into an integer, NULL) load exactly.

The inputs go through the real loader (``loaders.load_input``) on the session's Spark: CSV and
JSON files, Parquet with typed decimals, and in-memory DataFrames for the other source types.
"""
from __future__ import annotations

import datetime
import itertools
import json
from decimal import Decimal as D

import pytest

from cli_support import describe, edit, record, run, run_id_of

from ledgerflow.adapters.inputs import loaders
from ledgerflow.adapters.run.compute import spark_error_message
from ledgerflow.compiler.parameters import values as parameters
from ledgerflow.compiler.loading import normalised_select
from ledgerflow.compiler.model import ColumnDef, Dataset, DatasetVersion
from ledgerflow.compiler.periods import parse_period
from ledgerflow.compiler.resolver import ResolvedLocation

ARGS = parameters(parse_period("2026-01"), datetime.datetime(2026, 2, 1))
_names = itertools.count()


def amounts(target: str) -> Dataset:
    """A snapshot dataset ``amounts`` with a key ``k`` and one column ``v`` declared as ``target``."""
    return Dataset(id="0e000000-0000-4000-8000-0000000000c7", name="amounts", status="active", table_name="amounts",
                   temporal_mode="snapshot", columns=[ColumnDef("k", "string"), ColumnDef("v", target)],
                   versions=[DatasetVersion(1)])


def memory(frame) -> ResolvedLocation:
    return loaders.register_memory(f"casts_{next(_names)}", frame)


def values(spark, location: ResolvedLocation, target: str) -> list:
    """``v`` of every row (ordered by ``k``) as the loader reads ``location`` into a ``target`` column."""
    view = f"ds_casts_{next(_names)}"
    try:
        loaders.load_input(spark, loaders.InputLoad(view, amounts(target), 1, [location]), ARGS)
        return [r["v"] for r in spark.table(view).orderBy("k").collect()]
    finally:
        loaders.MEMORY.pop(location.target, None)


def error(spark, location: ResolvedLocation, target: str) -> str:
    """The ledgerflow message of the error that loading ``location`` into a ``target`` column raises."""
    with pytest.raises(Exception) as info:
        got = values(spark, location, target)
        print("loaded without error:", got)
    return spark_error_message(info.value)


def lost(where: str, value: str, target: str, what: str = "digits") -> str:
    return (f"ledgerflow: dataset 'amounts', column 'v' at {where}: value '{value}' cannot be read as {target} "
            f"without losing {what}")


def strings(spark, *vs):
    return spark.createDataFrame([(f"r{i:02d}", v) for i, v in enumerate(vs)], "k string, v string")


# ------------------------------------------------------------------------------------------ strings
def test_csv_amount_with_a_third_decimal_is_an_error_naming_the_file_and_value(spark, tmp_path):
    path = tmp_path / "amounts.csv"
    path.write_text("k,v\na,15000.00\nb,15000.005\n")
    location = ResolvedLocation("path", str(path), "csv")
    assert error(spark, location, "decimal(18,2)") == lost(str(path), "15000.005", "decimal(18,2)")


@pytest.mark.parametrize("text", [
    "-0.001", "+1.5E-3", "15E-3", " 12.345 ", ".125", "1500.0001e1",
    "1.0000000000000000000000000001",  # the lost digit lies beyond any decimal Spark could parse it into
    "1.99999999999999999999999999",  # rounds to 2.00 even in decimal(38,22)
])
def test_strings_with_digits_beyond_the_scale_are_errors(spark, text):
    location = memory(strings(spark, "1.00", text))
    assert error(spark, location, "decimal(18,2)") == lost(location.target, text, "decimal(18,2)")


def test_csv_strings_that_keep_their_digits_load_exactly(spark, tmp_path):
    texts = ["15000.50", "15000.5000", "  7 ", "-0.10", "+.5", "1.5E1", "1500E-3", "0E-10", "0.000000", "1.20E+1",
             "-1.000000000000000000000000000000", "12345678901234.56"]
    path = tmp_path / "kept.csv"
    path.write_text("k,v\n" + "".join(f"r{i:02d},{t}\n" for i, t in enumerate(texts)) + "r99,\n")
    got = values(spark, ResolvedLocation("path", str(path), "csv"), "decimal(18,2)")
    assert got == [D("15000.50"), D("15000.50"), D("7.00"), D("-0.10"), D("0.50"), D("15.00"), D("1.50"), D("0.00"),
                   D("0.00"), D("12.00"), D("-1.00"), D("12345678901234.56"), None]


def test_string_dates_with_a_time_of_day_and_timestamps_beyond_microseconds_are_errors(spark):
    location = memory(strings(spark, "2026-01-05", "2026-01-05 10:30:00"))
    assert error(spark, location, "date") == lost(location.target, "2026-01-05 10:30:00", "date", "its time of day")
    assert values(spark, memory(strings(spark, "2026-01-05", " 2026-01-06 ", "2026-01-07 00:00:00", None)),
                  "date") == [datetime.date(2026, 1, 5), datetime.date(2026, 1, 6), datetime.date(2026, 1, 7), None]
    location = memory(strings(spark, "2026-01-05 10:30:00.1234567"))
    assert error(spark, location, "timestamp") == lost(location.target, "2026-01-05 10:30:00.1234567", "timestamp")
    assert values(spark, memory(strings(spark, "2026-01-05 10:30:00.1234560")), "timestamp") == [
        datetime.datetime(2026, 1, 5, 10, 30, 0, 123456)]


def test_a_string_with_a_fraction_into_an_integer_already_fails_as_unreadable(spark):
    """Spark's string -> int cast refuses '1.5' (and '2.0'): no digits can be lost that way."""
    location = memory(strings(spark, "1.5"))
    assert error(spark, location, "int") == (
        f"ledgerflow: dataset 'amounts', column 'v' at {location.target}: value '1.5' cannot be read as int")


# ------------------------------------------------------------------------------------------ json
def test_json_doubles_with_a_third_decimal_are_errors_and_longs_and_exact_doubles_load(spark, tmp_path):
    lossy = tmp_path / "lossy.json"
    lossy.write_text("".join(json.dumps(r) + "\n" for r in [{"k": "a", "v": 0.1}, {"k": "b", "v": 15000.005}]))
    assert spark.read.json(str(lossy)).schema["v"].dataType.simpleString() == "double"
    location = ResolvedLocation("path", str(lossy), "json")
    assert error(spark, location, "decimal(18,2)") == lost(str(lossy), "15000.005", "decimal(18,2)")

    kept = tmp_path / "kept.json"
    kept.write_text("".join(json.dumps(r) + "\n" for r in [{"k": "a", "v": 0.1}, {"k": "b", "v": 15000.5},
                                                           {"k": "c", "v": -8500.25}, {"k": "d", "v": None}]))
    assert values(spark, ResolvedLocation("path", str(kept), "json"), "decimal(18,2)") == [
        D("0.10"), D("15000.50"), D("-8500.25"), None]

    longs = tmp_path / "longs.json"
    longs.write_text('{"k": "a", "v": 7}\n{"k": "b", "v": -2500000}\n')
    assert spark.read.json(str(longs)).schema["v"].dataType.simpleString() == "bigint"
    assert values(spark, ResolvedLocation("path", str(longs), "json"), "decimal(18,2)") == [D("7.00"), D("-2500000.00")]
    assert values(spark, ResolvedLocation("path", str(longs), "json"), "int") == [7, -2500000]


def test_json_doubles_into_an_integer_column(spark, tmp_path):
    path = tmp_path / "counts.json"
    path.write_text('{"k": "a", "v": 2.0}\n{"k": "b", "v": 1.5}\n')
    location = ResolvedLocation("path", str(path), "json")
    assert error(spark, location, "int") == lost(str(path), "1.5", "int")
    path.write_text('{"k": "a", "v": 2.0}\n{"k": "b", "v": -3.0}\n')
    assert values(spark, location, "int") == [2, -3]


# ------------------------------------------------------------------------------------------ typed columns
def test_parquet_decimal_18_3_into_decimal_18_2(spark, tmp_path):
    lossy = str(tmp_path / "lossy")
    spark.createDataFrame([("a", D("15000.050")), ("b", D("15000.005"))], "k string, v decimal(18,3)") \
        .write.parquet(lossy)
    assert error(spark, ResolvedLocation("path", lossy, "parquet"), "decimal(18,2)") == lost(
        lossy, "15000.005", "decimal(18,2)")
    kept = str(tmp_path / "kept")
    spark.createDataFrame([("a", D("15000.050")), ("b", D("-0.100")), ("c", None)], "k string, v decimal(18,3)") \
        .write.parquet(kept)
    assert values(spark, ResolvedLocation("path", kept, "parquet"), "decimal(18,2)") == [
        D("15000.05"), D("-0.10"), None]
    # more digits after the point is never a loss
    assert values(spark, ResolvedLocation("path", kept, "parquet"), "decimal(20,4)") == [
        D("15000.0500"), D("-0.1000"), None]


def test_wide_decimals_are_compared_exactly(spark):
    """Spark's common type of decimal(38,20) and decimal(38,2) keeps only 2 digits after the point,
    so a plain comparison of the value read with the value stored would see no difference."""
    stored = D("123456789012345678.12300000000000000000")
    location = memory(spark.createDataFrame([("a", stored)], "k string, v decimal(38,20)"))
    assert error(spark, location, "decimal(38,2)") == lost(location.target, str(stored), "decimal(38,2)")
    location = memory(spark.createDataFrame([("a", D("123456789012345678.5"))], "k string, v decimal(38,20)"))
    assert error(spark, location, "bigint") == lost(location.target, "123456789012345678.50000000000000000000", "bigint")
    kept = spark.createDataFrame([("a", D("123456789012345678.12")), ("b", D("-7"))], "k string, v decimal(38,20)")
    assert values(spark, memory(kept), "decimal(38,2)") == [D("123456789012345678.12"), D("-7.00")]


@pytest.mark.parametrize("source, value, shown", [
    ("double", 15000.005, "15000.005"), ("double", 0.001, "0.001"), ("double", -1.125, "-1.125"),
    ("float", 0.125, "0.125"),
])
def test_doubles_and_floats_with_more_digits_than_the_scale_are_errors(spark, source, value, shown):
    location = memory(spark.createDataFrame([("a", value)], f"k string, v {source}"))
    assert error(spark, location, "decimal(18,2)") == lost(location.target, shown, "decimal(18,2)")


def test_doubles_and_floats_whose_shortest_form_fits_load_exactly(spark):
    """The double 0.1 is 0.1000000000000000055...: binary noise, not data, so it is 0.10."""
    doubles = [0.1, -0.07, 15000.5, 123456789012.25, 1e15, None]
    frame = spark.createDataFrame([(f"r{i}", v) for i, v in enumerate(doubles)], "k string, v double")
    assert values(spark, memory(frame), "decimal(18,2)") == [
        D("0.10"), D("-0.07"), D("15000.50"), D("123456789012.25"), D("1000000000000000.00"), None]
    floats = spark.createDataFrame([("a", 0.1), ("b", 2.5)], "k string, v float")
    assert values(spark, memory(floats), "decimal(18,2)") == [D("0.10"), D("2.50")]


@pytest.mark.parametrize("source, value, target, shown", [
    ("double", 1.5, "int", "1.5"), ("double", -0.5, "bigint", "-0.5"), ("decimal(5,1)", D("2.5"), "bigint", "2.5"),
    ("decimal(18,2)", D("7.01"), "int", "7.01"), ("float", 3.25, "int", "3.25"),
])
def test_fractions_into_integer_columns_are_errors(spark, source, value, target, shown):
    location = memory(spark.createDataFrame([("a", value)], f"k string, v {source}"))
    assert error(spark, location, target) == lost(location.target, shown, target)


def test_whole_numbers_of_any_type_load_into_integer_columns(spark):
    assert values(spark, memory(spark.createDataFrame([("a", 2.0), ("b", -3.0), ("c", None)], "k string, v double")),
                  "int") == [2, -3, None]
    assert values(spark, memory(spark.createDataFrame([("a", D("2.0")), ("b", D("-40.00"))], "k string, v decimal(6,2)")),
                  "bigint") == [2, -40]
    assert values(spark, memory(spark.createDataFrame([("a", 5)], "k string, v bigint")), "int") == [5]


@pytest.mark.parametrize("source", ["timestamp", "timestamp_ntz"])
def test_timestamps_with_a_time_of_day_into_a_date_column(spark, source):
    location = memory(spark.createDataFrame([("a", datetime.datetime(2026, 1, 5)),
                                             ("b", datetime.datetime(2026, 1, 5, 10, 30))], f"k string, v {source}"))
    assert error(spark, location, "date") == lost(location.target, "2026-01-05 10:30:00", "date", "its time of day")
    midnight = memory(spark.createDataFrame([("a", datetime.datetime(2026, 1, 5)), ("b", None)], f"k string, v {source}"))
    assert values(spark, midnight, "date") == [datetime.date(2026, 1, 5), None]


# ------------------------------------------------------------------------------- unknown source types
def test_a_column_of_unknown_type_is_checked_through_its_text(spark):
    """``compile --resolved`` does not know a catalog table's types (present type ""): the check reads
    the value's text, so it holds for whatever type the column turns out to have."""
    def query(frame, target):
        name = f"casts_unknown_{next(_names)}"
        frame.createOrReplaceTempView(name)
        sql = normalised_select(amounts(target), 1, name, {"k": "string", "v": ""}, "the table", None)
        return spark.sql(sql, args={k: v for k, v in ARGS.items() if f":{k}" in sql}).orderBy("k")

    for source, value, target, shown in [("double", 15000.005, "decimal(18,2)", "15000.005"),
                                         ("string", "1.5E-3", "decimal(18,2)", "1.5E-3"),
                                         ("decimal(18,3)", D("0.005"), "decimal(18,2)", "0.005"),
                                         ("double", 1.5, "int", "1.5"),
                                         ("timestamp", datetime.datetime(2026, 1, 5, 9), "date", "2026-01-05 09:00:00")]:
        with pytest.raises(Exception) as info:
            query(spark.createDataFrame([("a", value)], f"k string, v {source}"), target).collect()
        what = "its time of day" if target == "date" else "digits"
        assert spark_error_message(info.value) == lost("the table", shown, target, what), (source, value)
    got = query(spark.createDataFrame([("a", 0.1), ("b", 2.0), ("c", None)], "k string, v double"), "decimal(18,2)")
    assert [r["v"] for r in got.collect()] == [D("0.10"), D("2.00"), None]
    got = query(spark.createDataFrame([("a", datetime.datetime(2026, 1, 5))], "k string, v timestamp"), "date")
    assert [r["v"] for r in got.collect()] == [datetime.date(2026, 1, 5)]


# ------------------------------------------------------------------------------- cost: no extra work
def test_types_that_match_stay_bare_columns_and_widening_casts_get_no_loss_check():
    """A Parquet input with the declared types (the common 1M-row case) reads its columns as they are."""
    ds = Dataset(id="0e000000-0000-4000-8000-0000000000c8", name="gl", status="active", table_name="gl",
                 temporal_mode="snapshot", versions=[DatasetVersion(1)],
                 columns=[ColumnDef("amount", "decimal(18,2)"), ColumnDef("n", "int"), ColumnDef("d", "date"),
                          ColumnDef("s", "string"), ColumnDef("wide", "decimal(20,4)"), ColumnDef("big", "bigint")])
    same = {"amount": "decimal(18,2)", "n": "int", "d": "date", "s": "string", "wide": "decimal(20,4)",
            "big": "bigint", "_row_id": "string"}
    sql = normalised_select(ds, 1, "raw", same, "/data/gl", None)
    assert "CAST" not in sql.split(" AS `_row_id`")[0].replace("CAST(NULL AS TIMESTAMP)", ""), sql
    assert sql.startswith("SELECT `amount` AS `amount`, `n` AS `n`, `d` AS `d`, `s` AS `s`, `wide` AS `wide`, "
                          "`big` AS `big`, `_row_id` AS `_row_id`"), sql
    # widening (more digits after the point, integral -> decimal, int -> bigint): overflow check only
    widening = {**same, "amount": "int", "wide": "decimal(18,2)", "big": "int"}
    sql = normalised_select(ds, 1, "raw", widening, "/data/gl", None)
    assert "without losing" not in sql and sql.count("TRY_CAST") == 6, sql


# ------------------------------------------------------------------------------------------ end to end
def test_finance_gl_amount_with_a_third_decimal_fails_the_run_and_writes_nothing(spark, finance):
    """The reported case: exit 3 (execution failed), the located message on stderr and in the run record."""
    csv = finance / "data" / "gl" / "v1" / "transactions.csv"
    edit(finance, "data/gl/v1/transactions.csv", "JE-001,1,2026-01-05,4100,CC-100,USD,15000.00,",
         "JE-001,1,2026-01-05,4100,CC-100,USD,15000.005,")
    result = run(finance, "ts01_output_only", expect=3)
    message = (f"ledgerflow: dataset 'gl', column 'amount_local' at {csv}: value '15000.005' cannot be read as "
               "decimal(18,2) without losing digits")
    run_id = run_id_of(result)
    assert result.stderr.strip() == f"Error: run {run_id} failed on Spark: {message}", describe(result)
    failed = record(finance, run_id)
    assert failed["status"] == "failed" and failed["outputs"] == [] and message in failed["error"]
    assert not (finance / "data" / "ts01_transactions").exists()

"""Loaders on real Spark, through the CLI and the Python API: the same data as parquet, json, orc, csv and a
catalog table normalises to the same rows; in-memory DataFrames; several locations unioned; system columns
kept when present and filled when absent; ``--conf`` reaches the session.

One workspace for the module (``ws``); each test writes to its own output folders.
"""
from __future__ import annotations

import datetime
import os
import shutil
from decimal import Decimal as D
from textwrap import dedent

import pytest

from cli_support import UUID7, add_project, check_row_ids, cli, describe, run_ok, started, write

from ledgerflow.adapters import api
from ledgerflow.adapters.inputs import loaders
from ledgerflow.adapters.store.runstore import RunStore
from ledgerflow.compiler.errors import LedgerflowError

ITEMS_ID = "0e000000-0000-4000-8000-000000000001"
SCHEMA = "item_id string, qty int, price decimal(18,2), sold_on date, in_stock boolean, note string"
COLUMNS = ["item_id", "qty", "price", "sold_on", "in_stock", "note"]
SYSTEM = ["_row_id", "_deleted", "_updated_at", "_labels", "_source_dataset", "_operation_seq"]
DAY = datetime.date
ROWS = [
    ("A-1", 2, D("10.50"), DAY(2026, 1, 3), True, "first"),
    ("B-2", 5, D("0.99"), DAY(2026, 1, 17), False, None),
    ("C-3", None, D("1234567.89"), DAY(2026, 1, 31), True, "third, with a comma"),
]
FORMATS = ["parquet", "json", "orc", "csv", "catalog"]
CATALOG_TABLE = "default.lf_items_202601"

LEDGERFLOW_YML = """
name: loaders
default_resolver: parquet
resolvers:
  parquet:
    rules: [{name: pq, strategy: {type: path, path: "data/{{dataset}}/parquet/{{identifier}}", format: parquet}}]
  json:
    rules: [{name: js, strategy: {type: path, path: "data/{{dataset}}/json/{{identifier}}", format: json}}]
  orc:
    rules: [{name: orc, strategy: {type: path, path: "data/{{dataset}}/orc/{{identifier}}", format: orc}}]
  csv:
    rules: [{name: csv, strategy: {type: path, path: "data/{{dataset}}/csv/{{identifier}}", format: csv}}]
  catalog:
    rules: [{name: cat, strategy: {type: table, table: "default.lf_{{table_name}}_{{YYYY}}{{MM}}"}}]
  monthly:
    rules:
      - name: months
        data_level: month
        strategy: {type: path, path: "data/{{dataset}}/monthly/{{YYYY}}-{{MM}}", format: parquet}
  flat:
    rules: [{name: flat, strategy: {type: path, path: "data/{{dataset}}/flat", format: parquet}}]
spark:
  master: "local[*]"
  conf: {spark.sql.shuffle.partitions: "4", spark.ledgerflow.test.origin: ledgerflow.yml}
"""

ITEMS_YML = f"""
id: {ITEMS_ID}
name: items
status: active
versions: [{{version: 1}}]
main_table:
  name: items
  temporal_mode: period
  columns:
    - {{name: item_id, type: string, nullable: false}}
    - {{name: qty, type: integer}}
    - {{name: price, type: "decimal(18,2)"}}
    - {{name: sold_on, type: date}}
    - {{name: in_stock, type: boolean}}
    - {{name: note, type: string}}
"""


def output_op(seq: int, folder: str, extra: str = "") -> str:
    return dedent(f"""
        - seq: {seq}
          name: Write {folder}
          type: output
          arguments:
            destination: {{path: out/{folder}, format: parquet}}
        """) + (f"    {extra}\n" if extra else "")


@pytest.fixture(scope="module")
def ws(spark, tmp_path_factory):
    """The loaders workspace: the items dataset stored in every format, plus monthly and flat variants."""
    root = tmp_path_factory.mktemp("loaders") / "ws"
    write(root, "ledgerflow.yml", LEDGERFLOW_YML)
    write(root, "datasets/items.yml", ITEMS_YML)
    data = root / "data" / "items"
    df = spark.createDataFrame(ROWS, SCHEMA)
    df.write.parquet(str(data / "parquet" / "2026-01"))
    df.write.json(str(data / "json" / "2026-01"))
    df.write.option("header", "true").csv(str(data / "csv" / "2026-01"))
    # orc with other physical types and an undeclared column: the declared schema is enforced
    df.selectExpr("item_id", "CAST(qty AS bigint) AS qty", "CAST(price AS string) AS price",
                  "CAST(sold_on AS string) AS sold_on", "in_stock", "note", "'x' AS undeclared") \
        .write.orc(str(data / "orc" / "2026-01"))
    spark.sql(f"DROP TABLE IF EXISTS {CATALOG_TABLE}")
    spark.sql(f"CREATE TABLE {CATALOG_TABLE} (item_id STRING, qty INT, price DECIMAL(18,2), sold_on DATE, "
              f"in_stock BOOLEAN, note STRING) USING parquet LOCATION '{root.parent / 'catalog' / 'lf_items_202601'}'")
    df.write.insertInto(CATALOG_TABLE)
    for fmt in FORMATS:
        add_project(root, f"copy_{fmt}", output_op(1, f"copy_{fmt}"), input_dataset="items",
                    extra=f"resolver_overrides: {{items: {fmt}}}\n")
    yield root
    spark.sql(f"DROP TABLE IF EXISTS {CATALOG_TABLE}")


def read_parquet(spark, location: str) -> tuple[list[str], list[dict]]:
    """A written partition: (columns, rows sorted by item_id); timestamps as UTC wall clock."""
    df = spark.read.parquet(location)
    exprs = [f"CAST(`{f.name}` AS timestamp_ntz) AS `{f.name}`" if f.dataType.simpleString() == "timestamp"
             else f"`{f.name}`" for f in df.schema.fields]
    df = df.selectExpr(*exprs)
    rows = [r.asDict() for r in df.collect()]
    return df.columns, sorted(rows, key=lambda r: (r["item_id"] is not None, r["item_id"] or "", repr(r)))


def expected_rows(**extra) -> list[dict]:
    """ROWS as a period input yields them, system columns filled, without _row_id."""
    return [{**dict(zip(COLUMNS, r)), "_deleted": False, "_updated_at": None, "_labels": "",
             "_source_dataset": ITEMS_ID, "_operation_seq": 0, **extra} for r in ROWS]


def strip(rows: list[dict], *cols: str) -> list[dict]:
    return [{k: v for k, v in r.items() if k not in cols} for r in rows]


# ------------------------------------------------------------------------------------------ every format
def test_every_format_and_a_catalog_table_normalise_to_the_same_rows(spark, ws):
    seen = {}
    for fmt in FORMATS:
        rec = run_ok(ws, f"copy_{fmt}", "2026-01")
        snap = rec["resolver_snapshot"]
        assert (snap["input_dataset_id"], snap["input_resolver"], snap["input_resolver_source"]) == (
            ITEMS_ID, fmt, "project_override")
        expected_location = CATALOG_TABLE if fmt == "catalog" else str(ws / "data" / "items" / fmt / "2026-01")
        assert snap["input_locations"] == [expected_location]
        [out] = rec["outputs"]
        assert (out["rows"], out["location"]) == (3, str(ws / "out" / f"copy_{fmt}" / "_period=2026-01"))
        cols, rows = read_parquet(spark, out["location"])
        assert cols == COLUMNS + SYSTEM, fmt
        check_row_ids(rows, rec)
        seen[fmt] = strip(rows, "_row_id")
        assert seen[fmt] == expected_rows(), fmt
    assert all(seen[f] == seen["parquet"] for f in FORMATS)


def test_a_missing_declared_column_is_a_resolution_error(spark, ws):
    spark.createDataFrame([("Z-9", 1)], "item_id string, qty int").write.parquet(str(ws / "data/items/parquet/2026-05"))
    result = cli(ws, "run", "copy_parquet", "--period", "2026-05")
    assert result.exit_code == 1, describe(result)
    part = min(p for p in os.listdir(ws / "data/items/parquet/2026-05") if p.startswith("part-"))  # named first
    assert result.stderr.strip() == (
        f"Error: INPUT-001 dataset 'items': {ws / 'data/items/parquet/2026-05' / part} lacks the declared "
        "column(s) price, sold_on, in_stock, note (it has: item_id, qty); every file of a location must have "
        "every declared column.")
    assert not (ws / "out" / "copy_parquet" / "_period=2026-05").exists()


def test_a_missing_catalog_table_is_a_resolution_error(spark, ws):
    result = cli(ws, "run", "copy_catalog", "--period", "2026-03")
    assert result.exit_code == 1, describe(result)
    assert result.stderr.strip() == ("Error: dataset 'items': no catalog table default.lf_items_202603 (period "
                                     "2026-03); check the resolver rule or create the table.")
    failed = [r for r in RunStore(str(ws)).list_runs() if r["period"]["identifier"] == "2026-03"]
    assert [(r["project"]["name"], r["status"], r["outputs"]) for r in failed] == [("copy_catalog", "failed", [])]
    assert not (ws / "out" / "copy_catalog" / "_period=2026-03").exists()


# ------------------------------------------------------------------------------------------- in memory
def test_in_memory_dataframes_through_the_python_api(spark, ws):
    add_project(ws, "from_memory", output_op(1, "memory"), input_dataset="items")
    # other physical types than declared, no system columns: normalised like a file
    frame = spark.createDataFrame([(r[0], r[1], float(r[2]), r[3].isoformat(), r[4], r[5]) for r in ROWS],
                                  "item_id string, qty bigint, price double, sold_on string, in_stock boolean, "
                                  "note string")
    lines: list[str] = []
    before = dict(loaders.MEMORY)
    rec = api.run(str(ws), "from_memory", "2026-01", data={"items": frame}, spark=spark, echo=lines.append)
    assert loaders.MEMORY == before  # the API leaves nothing registered behind
    assert rec["status"] == "completed"
    assert lines[0] == f"Run {rec['run_id']}: project from_memory v1, period 2026-01"
    assert "  loaded items v1 (1 location, resolver memory) as ds_items" in lines
    snap = rec["resolver_snapshot"]
    assert (snap["input_dataset_id"], snap["input_dataset_version"], snap["input_resolver"],
            snap["input_resolver_source"]) == (ITEMS_ID, 1, "memory", "in_memory")
    assert snap["resolutions"]["ds_items"]["locations"] == [
        {"kind": "memory", "target": f"{rec['run_id']}/ds_items", "format": "memory", "period": "2026-01"}]
    on_disk = cli(ws, "runs", "show", rec["run_id"], "--json")
    assert on_disk.exit_code == 0 and '"input_resolver_source": "in_memory"' in on_disk.stdout
    [out] = rec["outputs"]
    assert (out["rows"], out["location"]) == (3, str(ws / "out" / "memory" / "_period=2026-01"))
    cols, rows = read_parquet(spark, out["location"])
    assert cols == COLUMNS + SYSTEM
    check_row_ids(rows, rec)
    assert strip(rows, "_row_id") == expected_rows()

    # keyed by dataset id; a _period column in the frame is kept, so the February row is not in January's run
    frame2 = spark.createDataFrame([("M-1", 1, D("1.00"), DAY(2026, 2, 3), True, "feb", "2026-02"),
                                    ("M-2", 2, D("2.00"), DAY(2026, 1, 4), False, "jan", "2026-01")],
                                   SCHEMA + ", _period string")
    rec2 = api.run(str(ws), "from_memory", "2026-01", data={ITEMS_ID: frame2}, spark=spark, echo=lambda _: None)
    _, rows = read_parquet(spark, rec2["outputs"][0]["location"])
    assert [(r["item_id"], r["note"]) for r in rows] == [("M-2", "jan")]


def test_python_api_errors_and_compile(spark, ws):
    frame = spark.createDataFrame(ROWS, SCHEMA)
    with pytest.raises(LedgerflowError) as info:
        api.run(str(ws), "copy_parquet", "2026-01", data={"itemz": frame}, spark=spark, echo=lambda _: None)
    assert str(info.value) == "data names unknown dataset(s) itemz; datasets: items."
    with pytest.raises(LedgerflowError) as info:
        api.run(str(ws), "nope", "2026-01", spark=spark, echo=lambda _: None)
    assert str(info.value).startswith(f"no project 'nope' in {ws}; projects: copy_catalog, copy_csv, ")
    script = api.compile(str(ws), "copy_json")
    assert script.startswith("-- ledgerflow 0.1.0: project copy_json (id ")
    assert "--   ds_items <- dataset items (period, latest active version)" in script
    assert cli(ws, "compile", "copy_json").stdout == script + "\n"


# ---------------------------------------------------------------------------------- several locations
def test_quarter_run_unions_monthly_locations_with_their_period(spark, ws):
    months = {"2026-01": [("J-1", 1), ("J-2", 2)], "2026-02": [("F-1", 3)], "2026-03": [("M-1", 4), ("M-2", 5)]}
    for month, items in months.items():
        spark.createDataFrame([(i, q, D(q), DAY(2026, int(month[-2:]), q), True, month) for i, q in items], SCHEMA) \
            .write.parquet(str(ws / "data" / "items" / "monthly" / month))
    add_project(ws, "quarter_items", dedent("""
        - seq: 1
          name: Keep the row's period
          type: update
          arguments:
            assignments:
              - {column: src_period, expression: items._period}
        """) + output_op(2, "quarter"), input_dataset="items", extra="resolver_overrides: {items: monthly}\n")
    rec = run_ok(ws, "quarter_items", "2026-Q1")
    snap = rec["resolver_snapshot"]
    assert (snap["input_resolver"], snap["input_resolver_source"]) == ("monthly", "project_override")
    assert snap["input_locations"] == [str(ws / "data" / "items" / "monthly" / m) for m in months]
    assert [loc["period"] for loc in snap["resolutions"]["ds_items"]["locations"]] == list(months)
    [out] = rec["outputs"]
    assert (out["rows"], out["location"]) == (5, str(ws / "out" / "quarter" / "_period=2026-Q1"))
    cols, rows = read_parquet(spark, out["location"])
    assert cols == COLUMNS + SYSTEM + ["src_period"]
    check_row_ids(rows, rec)
    assert [(r["item_id"], r["qty"], r["note"], r["src_period"], r["_updated_at"]) for r in rows] == [
        ("F-1", 3, "2026-02", "2026-02", started(rec)), ("J-1", 1, "2026-01", "2026-01", started(rec)),
        ("J-2", 2, "2026-01", "2026-01", started(rec)), ("M-1", 4, "2026-03", "2026-03", started(rec)),
        ("M-2", 5, "2026-03", "2026-03", started(rec))]
    # one month of the same project reads one location
    feb = run_ok(ws, "quarter_items", "2026-02")
    assert feb["resolver_snapshot"]["input_locations"] == [str(ws / "data" / "items" / "monthly" / "2026-02")]
    _, rows = read_parquet(spark, feb["outputs"][0]["location"])
    assert [(r["item_id"], r["src_period"]) for r in rows] == [("F-1", "2026-02")]


# ------------------------------------------------------------------------------------------ system columns
KEPT_IDS = ["0190a1b2-c3d4-7e5f-8a6b-000000000001", "0190a1b2-c3d4-7e5f-8a6b-000000000002",
            "0190a1b2-c3d4-7e5f-8a6b-000000000003", "0190a1b2-c3d4-7e5f-8a6b-000000000004"]
TS = datetime.datetime


def test_system_columns_in_the_data_are_kept_and_deleted_rows_are_invisible(spark, ws):
    flat = [("K-1", 1, D("1.00"), DAY(2026, 1, 2), True, "keep", KEPT_IDS[0], False, TS(2025, 12, 31, 10), "vip",
             "2026-01"),
            ("K-2", 2, D("2.00"), DAY(2026, 1, 3), True, "gone", KEPT_IDS[1], True, TS(2025, 12, 30, 9), None,
             "2026-01"),
            ("K-3", 3, D("3.00"), DAY(2026, 1, 4), False, "keep", KEPT_IDS[2], None, None, None, "2026-01"),
            ("K-4", 4, D("4.00"), DAY(2026, 2, 1), True, "feb", KEPT_IDS[3], False, None, None, "2026-02")]
    spark.createDataFrame(flat, SCHEMA + ", _row_id string, _deleted boolean, _updated_at timestamp_ntz, "
                                         "_labels string, _period string") \
        .write.parquet(str(ws / "data" / "items" / "flat"))
    add_project(ws, "system_kept", dedent("""
        - seq: 1
          name: Touch every visible row
          type: update
          arguments:
            assignments:
              - {column: note, expression: '"seen"'}
        - seq: 2
          name: Count by stock
          type: aggregate
          arguments:
            group_by: [items.in_stock]
            aggregations:
              - {column: n, expression: COUNT_ALL()}
              - {column: total_qty, expression: SUM(items.qty)}
        """) + output_op(3, "sys_visible") + output_op(4, "sys_all", "include_deleted: true"),
        input_dataset="items", extra="resolver_overrides: {items: flat}\n")
    rec = run_ok(ws, "system_kept", "2026-01")
    assert rec["resolver_snapshot"]["input_locations"] == [str(ws / "data" / "items" / "flat")]
    at = started(rec)

    def view(rows):
        return [(r["item_id"], r["note"], r["in_stock"], r["n"], r["total_qty"], r["_row_id"], r["_deleted"],
                 r["_updated_at"], r["_labels"], r["_operation_seq"]) for r in rows]

    outputs = {o["operation_seq"]: o for o in rec["outputs"]}
    assert (outputs[3]["rows"], outputs[4]["rows"]) == (4, 5)
    cols, visible = read_parquet(spark, outputs[3]["location"])
    assert cols == COLUMNS + SYSTEM + ["n", "total_qty"]
    aggregated = sorted((r for r in visible if r["item_id"] is None), key=lambda r: r["in_stock"])
    check_row_ids(aggregated, rec)
    # K-2 (deleted) is neither counted nor summed
    assert view(aggregated) == [
        (None, None, False, 1, 3, aggregated[0]["_row_id"], False, at, "", 2),
        (None, None, True, 1, 1, aggregated[1]["_row_id"], False, at, "", 2)]
    kept = [
        ("K-1", "seen", True, None, None, KEPT_IDS[0], False, at, "vip", 0),
        ("K-3", "seen", False, None, None, KEPT_IDS[2], False, at, "", 0),
    ]
    assert view([r for r in visible if r["item_id"] is not None]) == kept
    _, everything = read_parquet(spark, outputs[4]["location"])
    # the deleted row is written only with include_deleted, untouched by the update (note, _updated_at, _row_id)
    assert view([r for r in everything if r["item_id"] is not None]) == [
        kept[0], ("K-2", "gone", True, None, None, KEPT_IDS[1], True, TS(2025, 12, 30, 9), "", 0), kept[1]]
    assert len([r for r in everything if r["item_id"] is None]) == 2
    assert {r["_source_dataset"] for r in everything if r["item_id"] is not None} == {ITEMS_ID}


def test_absent_system_columns_are_filled(spark, ws):
    """_deleted false, _row_id a UUIDv7 of the run, _updated_at NULL, _period the location's period."""
    rec = run_ok(ws, "copy_csv", "2026-01")
    _, rows = read_parquet(spark, rec["outputs"][0]["location"])
    assert [(r["_deleted"], r["_updated_at"], r["_labels"], r["_operation_seq"]) for r in rows] == [
        (False, None, "", 0)] * 3
    assert all(UUID7.match(r["_row_id"]) for r in rows)
    check_row_ids(rows, rec)
    # the csv has no _period column: the rows got the location's period, so January's filter kept all three
    assert rec["resolver_snapshot"]["resolutions"]["ds_items"]["locations"][0]["period"] == "2026-01"
    assert [r["item_id"] for r in rows] == ["A-1", "B-2", "C-3"]
    # a location that is not period-specific and data without _period cannot be assigned to a period
    shutil.copytree(ws / "data" / "items" / "parquet" / "2026-01", ws / "data" / "items" / "flat_no_period")
    add_project(ws, "no_period", output_op(1, "no_period"), input_dataset="items",
                extra="resolver_overrides: {items: bare}\n")
    yml = (ws / "ledgerflow.yml").read_text()
    write(ws, "ledgerflow.yml", yml.replace("spark:\n", "  bare:\n    rules: [{name: bare, strategy: {type: path, "
                                                        "path: \"data/{{dataset}}/flat_no_period\", format: parquet}}]\n"
                                                        "spark:\n"))
    try:
        result = cli(ws, "run", "no_period", "--period", "2026-01")
        assert result.exit_code == 1, describe(result)
        assert result.stderr.strip() == (
            f"Error: dataset 'items' (temporal_mode period): the data at {ws / 'data/items/flat_no_period'} has no "
            "_period column and its location is not period-specific, so its rows cannot be assigned to a period; "
            "add a _period column or use a resolver rule with period tokens or a data_level.")
    finally:
        write(ws, "ledgerflow.yml", yml)
        os.remove(ws / "projects" / "no_period.yml")


# ---------------------------------------------------------------------------------------------- --conf
def test_conf_flag_reaches_the_session(spark, ws):
    before = spark.conf.get("spark.sql.shuffle.partitions")
    try:
        rec = run_ok(ws, "copy_parquet", "2026-01", "--conf", "spark.sql.shuffle.partitions=3",
                     "--conf", "spark.ledgerflow.test.origin=flag")
        assert spark.conf.get("spark.sql.shuffle.partitions") == "3"
        assert spark.conf.get("spark.ledgerflow.test.origin") == "flag"
        assert rec["spark"]["master_or_remote"] == "local[*]"
        assert rec["spark"]["app_id"] == spark.sparkContext.applicationId
        assert rec["spark"]["version"] == spark.version
        # without the flags, ledgerflow.yml's spark.conf applies
        run_ok(ws, "copy_parquet", "2026-01")
        assert spark.conf.get("spark.sql.shuffle.partitions") == "4"
        assert spark.conf.get("spark.ledgerflow.test.origin") == "ledgerflow.yml"
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", before)


def test_inputs_load_concurrently_and_the_first_error_in_input_order_wins(spark, ws):
    """``load_inputs`` creates every view (concurrently); of several failing inputs, the error raised
    is the first one's in input order, whatever order the threads finish in."""
    from ledgerflow.compiler.parameters import values as parameters
    from ledgerflow.compiler.periods import parse_period
    from ledgerflow.compiler.workspace import load_workspace
    args = parameters(parse_period("2026-01"), datetime.datetime(2026, 2, 1))
    items = next(d for d in load_workspace(str(ws)).datasets if d.name == "items")
    good = spark.createDataFrame(ROWS, SCHEMA)
    inputs = []
    for i, frame in enumerate([good, good.drop("note"), good.drop("price"), good]):
        loc = loaders.register_memory(f"concurrent_{i}", frame, "2026-01")
        inputs.append(loaders.InputLoad(f"ds_concurrent_{i}", items, 1, [loc]))
    assert loaders.load_inputs(spark, [inputs[0], inputs[3]], args) == [1, 1]
    assert spark.table("ds_concurrent_3").count() == 3
    for _ in range(3):
        with pytest.raises(LedgerflowError, match="lacks the declared column\\(s\\) note "):
            loaders.load_inputs(spark, inputs, args)
    assert [r[0] for r in spark.table("ds_concurrent_0").orderBy("item_id").collect()] == ["A-1", "B-2", "C-3"]


def _memory_ids(spark, ws, frame, **load: dict) -> dict:
    """Load ``frame`` as the items dataset once per keyword set of ``load`` (name -> load_input keywords):
    name -> (the view's _row_ids, its analysed plan)."""
    from ledgerflow.compiler import parameters
    from ledgerflow.compiler.periods import parse_period
    from ledgerflow.compiler.workspace import load_workspace
    ds = load_workspace(str(ws)).find_dataset("items")
    args = parameters.values(parse_period("2026-01"), datetime.datetime(2026, 1, 31))
    location = loaders.register_memory("memory-ids-test", frame, "2026-01")
    try:
        out = {}
        for name, keywords in load.items():
            loaders.load_input(spark, loaders.InputLoad(f"lf_{name}", ds, 1, [location], **keywords), args)
            table = spark.table(f"lf_{name}")
            out[name] = ([r[0] for r in table.select("_row_id").collect()],
                         table._jdf.queryExecution().analyzed().toString())
        return out
    finally:
        loaders.MEMORY.pop("memory-ids-test", None)


def test_a_view_no_statement_reads_ids_of_gets_no_derived_ids(spark, ws):
    """A join side (``InputView.row_ids`` False) of rows without ``_row_id``: the view's ``_row_id`` is
    NULL and its plan has no content hash, ordinal window or id expression for every later analysis
    to walk; the same rows loaded for a statement that reads ids get distinct UUIDv7s."""
    got = _memory_ids(spark, ws, spark.createDataFrame(ROWS, SCHEMA), no_ids={"row_ids": False}, ids={"row_ids": True})
    for name, row_ids in (("no_ids", False), ("ids", True)):
        plan = got[name][1]
        assert ("row_number()" in plan and "xxhash64" in plan) is row_ids, plan
    assert got["no_ids"][0] == [None] * len(ROWS)
    assert len(set(got["ids"][0])) == len(ROWS) and all(UUID7.match(i) for i in got["ids"][0])


def test_only_given_data_is_identified_by_position(spark, ws):
    """Ids come from a position column only when the caller says the frame carries positions (a scenario
    test's given data): a user's DataFrame (``api.run(data=...)``) that happens to have a column of that
    name still gets content-based ids, distinct even where its values repeat."""
    from pyspark.sql import functions as F
    from ledgerflow.compiler.loading import POSITION_COLUMN
    frame = spark.createDataFrame(ROWS, SCHEMA).withColumn(POSITION_COLUMN, F.lit(0).cast("bigint"))
    got = _memory_ids(spark, ws, frame, by_content={}, by_position={"positioned": True})
    assert len(set(got["by_content"][0])) == len(ROWS)  # the repeated column is not a position
    assert len(set(got["by_position"][0])) == 1  # told it is one, the loader uses it (given data never repeats one)

"""Output destinations on real Spark (docs/workspace.md, output): ``{table: NAME}`` through the default resolver, through an
explicit ``resolver`` and its synonym ``datasource_id``, through a ``table`` strategy; inline ``{path, format}``
(parquet, json); ``{catalog_table: db.t}``; ``columns`` projection and ``include_deleted``; a second period
leaves the first one's partition intact.

One workspace for the module: the project ``destinations`` writes every kind at once, run for 2026-01 then
2026-02 (the ``runs`` fixture); each test checks one destination kind.
"""
from __future__ import annotations

import json
import os
import sqlite3
from decimal import Decimal as D
from pathlib import Path

import pytest

from cli_support import add_project, check_row_ids, cli, describe, edit, run_ok, write
from partition_support import shown

SALES_ID = "0e000000-0000-4000-8000-000000000002"
DB = "lf_outputs_test"
COLUMNS = ["item_id", "qty", "price", "note"]
SYSTEM = ["_row_id", "_deleted", "_updated_at", "_labels", "_source_dataset", "_operation_seq"]
SCHEMA = "item_id string, qty int, price decimal(18,2), note string, _period string, _deleted boolean"
DATA = [("S-1", 1, D("1.10"), "a", "2026-01", False),
        ("S-2", 2, D("2.20"), "b", "2026-01", True),
        ("S-3", 3, D("3.30"), None, "2026-01", False),
        ("F-1", 4, D("4.40"), "feb", "2026-02", False)]
VISIBLE = {"2026-01": ["S-1", "S-3"], "2026-02": ["F-1"]}
ALL = {"2026-01": ["S-1", "S-2", "S-3"], "2026-02": ["F-1"]}

LEDGERFLOW_YML = f"""
name: outputs
default_resolver: local
resolvers:
  local:
    rules:
      - name: files
        strategy: {{type: path, path: "data/{{{{dataset}}}}/v{{{{version}}}}/{{{{table_name}}}}", format: parquet}}
  archive:
    rules:
      - name: yearly-archive
        when: 'period.level = "month"'
        strategy: {{type: path, path: "archive/{{{{YYYY}}}}/{{{{table_name}}}}_v{{{{version}}}}", format: json}}
      - name: other
        strategy: {{type: path, path: "archive/other/{{{{table_name}}}}", format: csv}}
  warehouse:
    rules:
      - name: tables
        strategy: {{type: table, table: "{DB}.{{{{table_name}}}}_v{{{{version}}}}"}}
"""

SALES_YML = f"""
id: {SALES_ID}
name: sales
status: active
versions: [{{version: 1}}]
main_table:
  name: sales
  temporal_mode: period
  columns:
    - {{name: item_id, type: string}}
    - {{name: qty, type: integer}}
    - {{name: price, type: "decimal(18,2)"}}
    - {{name: note, type: string}}
"""

OPERATIONS = """
- {seq: 1, name: Default resolver, type: output, arguments: {destination: {table: report}}}
- {seq: 2, name: Explicit resolver, type: output, arguments: {destination: {table: report_r, resolver: archive}}}
- {seq: 3, name: Synonym, type: output, arguments: {destination: {table: report_d, datasource_id: archive}}}
- {seq: 4, name: Table strategy, type: output, arguments: {destination: {table: report_w, resolver: warehouse}}}
- {seq: 5, name: Inline parquet, type: output, arguments: {destination: {path: out/inline_pq, format: parquet}}}
- {seq: 6, name: Inline json, type: output, arguments: {destination: {path: out/inline_json, format: json}}}
- {seq: 7, name: Catalog, type: output, arguments: {destination: {catalog_table: %(db)s.sales_cat}}}
- seq: 8
  name: Projection
  type: output
  arguments:
    destination: {path: out/projected, format: parquet}
    columns: [note, _deleted, item_id, price]
- seq: 9
  name: With deleted
  type: output
  arguments:
    destination: {path: out/with_deleted, format: parquet}
    include_deleted: true
- seq: 10
  name: Catalog projection with deleted
  type: output
  arguments:
    destination: {catalog_table: %(db)s.sales_cat_slim}
    columns: [price, item_id, _deleted]
    include_deleted: true
"""


@pytest.fixture(scope="module")
def runs(spark, tmp_path_factory):
    """The workspace and the records of the ``destinations`` run for 2026-01, then for 2026-02."""
    base = tmp_path_factory.mktemp("outputs")
    root = base / "ws"
    write(root, "ledgerflow.yml", LEDGERFLOW_YML)
    write(root, "datasets/sales.yml", SALES_YML)
    spark.createDataFrame(DATA, SCHEMA).write.parquet(str(root / "data" / "sales" / "v1" / "sales"))
    add_project(root, "destinations", OPERATIONS % {"db": DB}, input_dataset="sales")
    spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")
    spark.sql(f"CREATE DATABASE {DB} LOCATION '{base / 'warehouse' / DB}'")
    try:
        jan = run_ok(root, "destinations", "2026-01")
        feb = run_ok(root, "destinations", "2026-02")
        yield root, jan, feb
    finally:
        spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")


def outputs(rec: dict) -> dict[int, dict]:
    """The record's output entries by seq, without their column lineage (tests/test_lineage.py checks it)."""
    out = {}
    for o in rec["outputs"]:
        o = dict(o)
        lineage = o.pop("lineage")
        assert {c["output"] for c in lineage["columns"]} == {o["operation_seq"]}
        out[o["operation_seq"]] = o
    return out


def ntz(df):
    """Timestamps as their UTC wall clock (naive), whatever the Python process' time zone."""
    return df.selectExpr(*[f"CAST(`{f.name}` AS timestamp_ntz) AS `{f.name}`"
                           if f.dataType.simpleString() == "timestamp" else f"`{f.name}`" for f in df.schema.fields])


def rows_of(df) -> list[dict]:
    return sorted((r.asDict() for r in ntz(df).collect()), key=lambda r: r["item_id"])


def expected(period: str, ids: list[str], **extra) -> list[dict]:
    """The input rows ``ids`` as written (without _row_id)."""
    by_id = {r[0]: r for r in DATA}
    return [{"item_id": i, "qty": by_id[i][1], "price": by_id[i][2], "note": by_id[i][3], "_deleted": by_id[i][5],
             "_updated_at": None, "_labels": "", "_source_dataset": SALES_ID, "_operation_seq": 0, **extra}
            for i in ids]


def without_row_id(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "_row_id"} for r in rows]


def check_folder(spark, rec: dict, seq: int, location: str, fmt: str = "parquet") -> None:
    """The partition at ``location`` holds the run's visible rows with every column, written by that run."""
    period = rec["period"]["identifier"]
    out = outputs(rec)[seq]
    assert (out["location"], out["rows"]) == (location, len(VISIBLE[period]))
    assert shown(location).endswith(os.path.join(".lf_versions", f"_period={period}", rec["run_id"]))
    if fmt == "json":
        schema = ("item_id string, qty int, price decimal(18,2), note string, _row_id string, _deleted boolean, "
                  "_updated_at timestamp, _labels string, _source_dataset string, _operation_seq int")
        df = spark.read.schema(schema).json(location)
    else:
        df = spark.read.format(fmt).load(location)
        assert df.columns == COLUMNS + SYSTEM
    rows = rows_of(df)
    check_row_ids(rows, rec)
    assert without_row_id(rows) == expected(period, VISIBLE[period])


# ---------------------------------------------------------------------------------------- {table: NAME}
def test_table_through_the_default_resolver(spark, runs):
    root, jan, feb = runs
    for rec in (jan, feb):
        p = rec["period"]["identifier"]
        check_folder(spark, rec, 1, str(root / "data" / "report" / "v1" / "report" / f"_period={p}"))
    snap = jan["resolver_snapshot"]
    assert (snap["input_resolver"], snap["input_resolver_source"], snap["input_locations"]) == (
        "local", "system_default", [str(root / "data" / "sales" / "v1" / "sales")])


def test_table_through_an_explicit_non_default_resolver_and_its_datasource_id_synonym(spark, runs):
    root, jan, feb = runs
    for seq, table in ((2, "report_r"), (3, "report_d")):
        for rec in (jan, feb):
            p = rec["period"]["identifier"]
            # archive's first rule (month runs): archive/{{YYYY}}/{{table_name}}_v{{version}}, json
            location = str(root / "archive" / "2026" / f"{table}_v1" / f"_period={p}")
            check_folder(spark, rec, seq, location, "json")
            lines = [json.loads(line) for f in sorted(Path(location).glob("part-*.json"))
                     for line in f.read_text().splitlines()]
            assert sorted((r["item_id"], r["qty"], r["price"], r["_deleted"]) for r in lines) == [
                (i, q, float(pr), False) for i, q, pr, *_ in DATA if i in VISIBLE[p]]


def test_table_through_a_table_strategy_is_a_catalog_table(spark, runs):
    root, jan, feb = runs
    table = f"{DB}.report_w_v1"
    assert outputs(jan)[4] == {"operation_seq": 4, "location": f"{table} (_period=2026-01)", "rows": 2,
                               "registered_dataset": None, "registered_version": None}
    assert outputs(feb)[4]["location"] == f"{table} (_period=2026-02)"
    df = spark.table(table)
    assert df.columns == COLUMNS + SYSTEM + ["_period"]
    rows = rows_of(df)
    assert [(r["item_id"], r["_period"]) for r in rows] == [("F-1", "2026-02"), ("S-1", "2026-01"), ("S-3", "2026-01")]


def test_unknown_destination_resolver_fails_before_anything_runs(spark, runs):
    root, _, _ = runs
    add_project(root, "bad_destination", """
        - {seq: 1, name: Out, type: output, arguments: {destination: {table: nowhere, datasource_id: lakehouse}}}
        """, input_dataset="sales")
    try:
        result = cli(root, "run", "bad_destination", "--period", "2026-01")
        assert result.exit_code == 1, describe(result)
        assert result.stderr.strip() == ("Error: output 1: resolver 'lakehouse' for destination table 'nowhere' is "
                                         "not defined in ledgerflow.yml.")
        assert not (root / "data" / "nowhere").exists()
    finally:
        os.remove(root / "projects" / "bad_destination.yml")


def test_resolver_and_datasource_id_together_are_an_error(spark, runs):
    root, _, _ = runs
    add_project(root, "both_keys", """
        - seq: 1
          name: Out
          type: output
          arguments: {destination: {table: t, resolver: archive, datasource_id: archive}}
        """, input_dataset="sales")
    try:
        result = cli(root, "validate", "both_keys")
        assert result.exit_code == 1, describe(result)
        assert "YAML-006 destination has both 'resolver' and 'datasource_id'" in result.stderr
        assert "projects/both_keys.yml:" in result.stderr
    finally:
        os.remove(root / "projects" / "both_keys.yml")


# ------------------------------------------------------------------------------------------ inline path
def test_inline_path_may_not_leave_the_workspace(spark, runs):
    root, _, _ = runs
    add_project(root, "escape", """
        - {seq: 1, name: Out, type: output, arguments: {destination: {path: ../escaped, format: parquet}}}
        """, input_dataset="sales")
    try:
        result = cli(root, "run", "escape", "--period", "2026-01")
        assert result.exit_code == 1, describe(result)
        assert "OUT-VR-002 output 1 writes to '../escaped', which leaves the workspace" in result.stderr, result.stderr
        assert not (root.parent / "escaped").exists()
    finally:
        os.remove(root / "projects" / "escape.yml")


def test_inline_path_parquet_and_json(spark, runs):
    root, jan, feb = runs
    for rec in (jan, feb):
        p = rec["period"]["identifier"]
        check_folder(spark, rec, 5, str(root / "out" / "inline_pq" / f"_period={p}"))
        check_folder(spark, rec, 6, str(root / "out" / "inline_json" / f"_period={p}"), "json")
    assert all(f.suffix == ".json" for f in (root / "out" / "inline_json" / "_period=2026-01").glob("part-*"))
    assert all(f.name.endswith(".parquet") for f in (root / "out" / "inline_pq" / "_period=2026-01").glob("part-*"))


def test_second_period_leaves_the_first_partition_intact(spark, runs):
    root, jan, feb = runs
    folder = root / "out" / "inline_pq"
    assert sorted(os.listdir(folder)) == [".lf_versions", "_period=2026-01", "_period=2026-02"]
    # January's partition is still January's run's version, with January's rows
    check_folder(spark, jan, 5, str(folder / "_period=2026-01"))
    assert sorted(os.listdir(folder / ".lf_versions" / "_period=2026-01")) == [jan["run_id"]]


# --------------------------------------------------------------------------------------------- catalog
def test_catalog_table_partitioned_by_period(spark, runs):
    root, jan, feb = runs
    table = f"{DB}.sales_cat"
    assert outputs(jan)[7]["location"] == f"{table} (_period=2026-01)"
    assert outputs(feb)[7]["location"] == f"{table} (_period=2026-02)"
    assert [r[0] for r in spark.sql(f"SHOW PARTITIONS {table}").collect()] == ["_period=2026-01", "_period=2026-02"]
    df = spark.table(table)
    assert df.columns == COLUMNS + SYSTEM + ["_period"]
    jan_rows = rows_of(df.where("_period = '2026-01'"))
    check_row_ids(jan_rows, jan)  # the second period did not rewrite the first
    assert without_row_id(jan_rows) == expected("2026-01", VISIBLE["2026-01"], _period="2026-01")
    feb_rows = rows_of(df.where("_period = '2026-02'"))
    check_row_ids(feb_rows, feb)
    assert without_row_id(feb_rows) == expected("2026-02", ["F-1"], _period="2026-02")


def test_catalog_table_rerun_replaces_only_its_period(spark, runs):
    root, _, _ = runs
    table = f"{DB}.sales_rerun"
    add_project(root, "rerun", f"""
        - {{seq: 1, name: Catalog, type: output, arguments: {{destination: {{catalog_table: {table}}}}}}}
        """, input_dataset="sales")
    run_ok(root, "rerun", "2026-01")
    feb = run_ok(root, "rerun", "2026-02")
    again = run_ok(root, "rerun", "2026-01")
    df = spark.table(table)
    assert df.count() == 3  # 2 January rows (replaced, not doubled) + 1 February row
    jan_rows = rows_of(df.where("_period = '2026-01'"))
    check_row_ids(jan_rows, again)
    assert without_row_id(jan_rows) == expected("2026-01", VISIBLE["2026-01"], _period="2026-01")
    feb_rows = rows_of(df.where("_period = '2026-02'"))
    check_row_ids(feb_rows, feb)  # untouched by January's second run
    assert without_row_id(feb_rows) == expected("2026-02", ["F-1"], _period="2026-02")


def test_catalog_table_rerun_with_no_rows_empties_its_period_and_matches_columns_by_name(spark, runs):
    root, _, _ = runs
    table = f"{DB}.sales_rerun_empty"
    add_project(root, "rerun_empty", f"""
        - {{seq: 1, name: Drop, type: delete, selector: 'qty > 100'}}
        - {{seq: 2, name: Catalog, type: output, arguments: {{destination: {{catalog_table: {table}}},
           columns: [item_id, note, qty, price]}}}}
        """, input_dataset="sales")
    project = "projects/rerun_empty.yml"
    run_ok(root, "rerun_empty", "2026-01")
    feb = run_ok(root, "rerun_empty", "2026-02")
    # the output lists its columns in another order: the rows still go into the table's columns by name
    edit(root, project, "columns: [item_id, note, qty, price]", "columns: [note, price, qty, item_id]")
    again = run_ok(root, "rerun_empty", "2026-01")
    df = spark.table(table)
    assert df.columns == ["item_id", "note", "qty", "price", "_period"]
    assert sorted(tuple(r) for r in df.where("_period = '2026-01'").collect()) == [
        ("S-1", "a", 1, D("1.10"), "2026-01"), ("S-3", None, 3, D("3.30"), "2026-01")]
    assert outputs(again)[2]["rows"] == 2
    # an output without one of the table's columns is refused before anything is written (not filled with NULL)
    edit(root, project, "columns: [note, price, qty, item_id]", "columns: [note, qty, item_id]")
    result = cli(root, "run", "rerun_empty", "--period", "2026-01")
    assert result.exit_code != 0 and "does not have the output's columns; the output lacks price" in result.stderr, \
        describe(result)
    assert sorted(tuple(r) for r in spark.table(table).where("_period = '2026-01'").collect()) == [
        ("S-1", "a", 1, D("1.10"), "2026-01"), ("S-3", None, 3, D("3.30"), "2026-01")]
    edit(root, project, "columns: [note, qty, item_id]", "columns: [note, price, qty, item_id]")
    # every January row deleted: the rerun leaves January empty (not the last run's rows); February untouched
    edit(root, project, "qty > 100", "qty > 0")
    empty = run_ok(root, "rerun_empty", "2026-01")
    assert outputs(empty)[2]["rows"] == 0
    assert spark.table(table).where("_period = '2026-01'").count() == 0
    assert [tuple(r) for r in spark.table(table).where("_period = '2026-02'").collect()] == [
        ("F-1", "feb", 4, D("4.40"), "2026-02")] and outputs(feb)[2]["rows"] == 1


def test_a_uri_partition_is_replaced_even_by_no_rows(spark, tmp_path):
    from ledgerflow.adapters.commit import spark_writes
    target = f"file://{tmp_path}/uri_out"
    rows = spark.createDataFrame([("S-1", 1), ("S-2", 2)], "item_id string, qty int")
    assert spark_writes.write_uri_partition(rows, target, "parquet", "2026-01", 2) == f"{target}/_period=2026-01"
    spark_writes.write_uri_partition(rows.limit(1), target, "parquet", "2026-02", 1)
    assert spark.read.parquet(target).where("_period = '2026-01'").count() == 2  # another period is untouched
    spark_writes.write_uri_partition(rows.where("qty > 5"), target, "parquet", "2026-01", 0)
    df = spark.read.parquet(target)
    assert sorted(tuple(r) for r in df.collect()) == [("S-1", 1, "2026-02")]
    assert df.columns == ["item_id", "qty", "_period"]


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
def test_rows_are_counted_in_a_folder_whose_name_has_glob_characters(spark, tmp_path, fmt):
    from ledgerflow.adapters.commit import staging
    rows = spark.createDataFrame([("S-1", 1), ("S-2", 2)], "item_id string, qty int")
    staged = staging.stage_partition(rows, str(tmp_path / "out[1]*?"), fmt, "2026-01", "run-1")
    assert staging.count_rows(rows, staged.staged, fmt) == 2


def test_two_outputs_of_a_run_may_not_write_the_same_destination(spark, runs):
    root, _, _ = runs
    add_project(root, "same_folder", """
        - {seq: 1, name: First, type: output, arguments: {destination: {path: out/same, format: parquet}}}
        - {seq: 2, name: Second, type: output, arguments: {destination: {path: out/./same/, format: parquet}}}
        """, input_dataset="sales")
    add_project(root, "same_table", f"""
        - {{seq: 3, name: Table, type: output, arguments: {{destination: {{catalog_table: {DB}.same_t}}}}}}
        - {{seq: 4, name: Table again, type: output, arguments: {{destination: {{catalog_table: {DB.upper()}.SAME_T}}}}}}
        """, input_dataset="sales")
    add_project(root, "same_table_qualified", f"""
        - {{seq: 5, name: Table, type: output, arguments: {{destination: {{catalog_table: {DB}.qualified_t}}}}}}
        - {{seq: 6, name: Catalog too, type: output,
            arguments: {{destination: {{catalog_table: spark_catalog.{DB}.qualified_t}}}}}}
        """, input_dataset="sales")
    # refused by validate (one writer per destination, docs/workspace.md), before the run's own check
    for project, (one, other) in [("same_folder", (1, 2)), ("same_table", (3, 4)), ("same_table_qualified", (5, 6))]:
        result = cli(root, "run", project, "--period", "2026-01")
        assert result.exit_code == 1, describe(result)
        assert f"OUT-VR-003 output {one} of project '{project}' writes to" in result.stderr, describe(result)
        assert f"where output {other} of project '{project}' may also write" in result.stderr, describe(result)
    assert not (root / "out" / "same").exists() and not spark.catalog.tableExists(f"{DB}.same_t")
    assert not spark.catalog.tableExists(f"{DB}.qualified_t")


def test_a_run_still_refuses_two_of_its_outputs_resolved_to_one_place(tmp_path):
    """The run's own check, behind validate's (OUT-VR-003): two destinations it resolved to one place."""
    from ledgerflow.adapters.commit.destinations import OutputDestination, refuse_shared_destinations
    from ledgerflow.compiler.errors import ResolutionError
    one = OutputDestination("path", str(tmp_path / "out" / "same"), "parquet", 1)
    same = OutputDestination("path", str(tmp_path / "out" / "." / "same") + "/", "parquet", 1)
    with pytest.raises(ResolutionError, match="outputs 1 and 2 both write"):
        refuse_shared_destinations({1: one, 2: same}, "2026-01")
    tables = {3: OutputDestination("table", "db.t", "table", 1), 4: OutputDestination("table", "DB.T", "table", 1)}
    with pytest.raises(ResolutionError, match="outputs 3 and 4 both write"):
        refuse_shared_destinations(tables, "2026-01")


@pytest.mark.parametrize("kind", ["catalog table", "uri"])
def test_a_write_that_fails_keeps_the_periods_old_rows(spark, tmp_path, kind):
    """The rows of a failing write job never replace the period's partition: it is replaced only when the
    job commits (here the job fails on its second row, after the first was written)."""
    from ledgerflow.adapters.commit import spark_writes
    good = spark.createDataFrame([("S-1", 1), ("S-2", 2)], "item_id string, qty int")
    source = str(tmp_path / "source")  # read from a file, so that the error is not folded away while planning
    spark.createDataFrame([("N-1", 1), ("N-2", 2)], "item_id string, qty int").coalesce(1).write.parquet(source)
    bad = spark.read.parquet(source).selectExpr("item_id", "IF(qty > 1, CAST(raise_error('boom') AS INT), qty) AS qty")
    if kind == "uri":
        target = f"file://{tmp_path}/uri_out"
        write = lambda df, period, rows: spark_writes.write_uri_partition(df, target, "parquet", period, rows)  # noqa: E731
        read = lambda: spark.read.parquet(target)  # noqa: E731
    else:
        table = f"{DB}.fails_midway"
        spark.sql(f"CREATE DATABASE IF NOT EXISTS {DB} LOCATION '{tmp_path / 'warehouse'}'")
        spark.sql(f"DROP TABLE IF EXISTS {table}")
        write = lambda df, period, rows: spark_writes.write_catalog_table(df, table, period, rows)  # noqa: E731
        read = lambda: spark.table(table)  # noqa: E731
    write(good, "2026-01", 2)
    write(good, "2026-01", 2)  # the second write of a period goes through the overwrite path
    with pytest.raises(Exception, match="boom"):
        write(bad, "2026-01", 2)
    assert sorted(tuple(r) for r in read().collect()) == [("S-1", 1, "2026-01"), ("S-2", 2, "2026-01")]
    if kind != "uri":
        spark.sql(f"DROP TABLE IF EXISTS {table}")


def test_a_registered_dataset_cannot_be_written_to_a_catalog_table(spark, runs):
    root, _, _ = runs
    for name, destination in [("reg_cat", f"{{catalog_table: {DB}.registered}}"),
                              ("reg_strategy", "{table: registered, resolver: warehouse}")]:
        add_project(root, name, f"""
            - seq: 1
              name: Register
              type: output
              arguments: {{destination: {destination}, register_as_dataset: {name}_ds}}
            """, input_dataset="sales")
        result = cli(root, "validate", name)
        assert result.exit_code == 1 and "OUT-VR-001" in result.stderr, describe(result)
        assert f"projects/{name}.yml:" in result.stderr and "a registered version is immutable" in result.stderr
        result = cli(root, "run", name, "--period", "2026-01")
        assert result.exit_code != 0 and "OUT-VR-001" in result.stderr, describe(result)
    assert not spark.catalog.tableExists(f"{DB}.registered") and not spark.catalog.tableExists(f"{DB}.registered_v1")
    with sqlite3.connect(root / ".ledgerflow" / "state.db") as conn:  # and the run store holds no version
        assert conn.execute("SELECT * FROM registered_datasets WHERE name LIKE 'reg_%'").fetchall() == []


# -------------------------------------------------------------------------------- columns, include_deleted
def test_columns_projection_keeps_the_listed_order(spark, runs):
    root, jan, _ = runs
    location = str(root / "out" / "projected" / "_period=2026-01")
    assert outputs(jan)[8] == {"operation_seq": 8, "location": location, "rows": 2, "registered_dataset": None,
                               "registered_version": None}
    df = spark.read.parquet(location)
    assert df.columns == ["note", "_deleted", "item_id", "price"]
    assert [tuple(r) for r in df.orderBy("item_id").collect()] == [("a", False, "S-1", D("1.10")),
                                                                  (None, False, "S-3", D("3.30"))]


def test_include_deleted_writes_deleted_rows_too(spark, runs):
    root, jan, feb = runs
    location = str(root / "out" / "with_deleted" / "_period=2026-01")
    assert (outputs(jan)[9]["location"], outputs(jan)[9]["rows"]) == (location, 3)
    df = spark.read.parquet(location)
    assert df.columns == COLUMNS + SYSTEM
    rows = rows_of(df)
    check_row_ids(rows, jan)
    assert without_row_id(rows) == expected("2026-01", ALL["2026-01"])
    assert [(r["item_id"], r["_deleted"]) for r in rows] == [("S-1", False), ("S-2", True), ("S-3", False)]
    # the same run's outputs without include_deleted left S-2 out
    assert outputs(jan)[5]["rows"] == 2 and outputs(feb)[9]["rows"] == 1


def test_catalog_table_with_columns_and_include_deleted(spark, runs):
    root, jan, feb = runs
    df = spark.table(f"{DB}.sales_cat_slim")
    assert df.columns == ["price", "item_id", "_deleted", "_period"]
    assert sorted(tuple(r) for r in df.collect()) == [
        (D("1.10"), "S-1", False, "2026-01"), (D("2.20"), "S-2", True, "2026-01"),
        (D("3.30"), "S-3", False, "2026-01"), (D("4.40"), "F-1", False, "2026-02")]
    assert (outputs(jan)[10]["rows"], outputs(feb)[10]["rows"]) == (3, 1)


def test_a_one_column_csv_with_a_null_is_refused_not_written_short(spark, finance):
    """Spark writes a one-column row holding NULL as an empty line, which every CSV reader skips: the partition held
    one line fewer than the output computed, and the run completed. It is refused before anything is written, for a
    period's run and for a fused range; two columns keep the row (an empty field)."""
    gl = finance / "data" / "gl" / "v1" / "transactions.csv"
    gl.write_text(gl.read_text() + "JE-101,1,2026-02-03,4100,CC-100,USD,1000.00,1000.00,Rev Feb,ERP,2026-02\n"
                  "JE-101,2,2026-02-03,,CC-100,USD,-1000.00,-1000.00,no account,ERP,2026-02\n")
    one = "\n        - {seq: 1, name: Accounts, type: output, arguments: {destination: {path: out/accounts, format: csv}, " \
          "columns: [account_code]}}\n"
    add_project(finance, "accounts", one)
    refused = cli(finance, "run", "accounts", "--period", "2026-02")
    assert refused.exit_code == 3, describe(refused)
    assert "OUT-CSV-001" in refused.stderr and "'account_code', and 1 of its rows hold NULL" in refused.stderr
    assert not (finance / "out" / "accounts" / "_period=2026-02").exists()
    ranged = cli(finance, "run", "accounts", "--period", "2026-01..2026-02")  # January has no NULL account
    assert ranged.exit_code == 3 and "1 of 2 project-periods failed (accounts 2026-02)" in ranged.stderr
    assert "OUT-CSV-001" in ranged.stdout, describe(ranged)
    assert (finance / "out" / "accounts" / "_period=2026-01").is_dir()
    assert not (finance / "out" / "accounts" / "_period=2026-02").exists()
    add_project(finance, "accounts", one.replace("columns: [account_code]", "columns: [account_code, journal_id]"))
    rec = run_ok(finance, "accounts", "2026-02")
    february = sum(1 for line in gl.read_text().splitlines() if line.endswith(",2026-02"))
    written = spark.read.option("header", "true").csv(rec["outputs"][0]["location"]).collect()
    assert rec["outputs"][0]["rows"] == len(written) == february

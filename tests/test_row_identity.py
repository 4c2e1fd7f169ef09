"""Row identity of source rows that arrive without `_row_id` (issue 9, point 1).

Parquet rows are identified by their file (relative to the location) and Spark's
`_metadata.row_index`: no window, no shuffle. CSV, JSON, ORC, catalog tables and in-memory
DataFrames by their content and an ordinal among identical rows, after the period filter. For every
format: a run and its `ledgerflow replay` write the same `_row_id`s, identical source rows get
distinct ids, the plan of a Parquet input has no shuffle or window, and the same data read from
another folder (a moved workspace) gets the same ids.
"""
from __future__ import annotations

import datetime
import itertools
import json
import os
import shutil

import pytest

from conftest import PROJECTS
from cli_support import UUID7, cli, describe, output_entry, record, run_id_of, run_ok, write

from ledgerflow.adapters.inputs import loaders
from ledgerflow.compiler.parameters import values as parameters
from ledgerflow.compiler.model import ColumnDef, Dataset, DatasetVersion
from ledgerflow.compiler.compile import compile_project
from ledgerflow.compiler.periods import parse_period
from ledgerflow.compiler.workspace import load_workspace
from ledgerflow.compiler.resolver import ResolvedLocation

_names = itertools.count()
FINANCE = load_workspace(str(PROJECTS / "finance"))
# Two identical January rows (k1), a third January row, rows of other periods and days.
ROWS = [("k1", "10.00", "2026-01"), ("k1", "10.00", "2026-01"), ("k2", "20.00", "2026-01"),
        ("k3", "30.00", "2026-01-15"), ("k3", "30.00", "2026-01-15"), ("k4", "40.00", "2026-02"),
        ("k1", "10.00", "2025-12")]
JANUARY = sorted([("k1", "10.00"), ("k1", "10.00"), ("k2", "20.00"), ("k3", "30.00"), ("k3", "30.00")])
LAYOUTS = ["parquet", "parquet_folders", "csv", "json", "orc"]


def write_data(spark, folder: str, layout: str) -> tuple[str, str]:
    """ROWS (no system column but `_period`) at ``folder`` in ``layout``; returns (target, format)."""
    frame = spark.createDataFrame(ROWS, "k string, v string, _period string")
    if layout == "parquet_folders":
        frame.repartition(2).write.partitionBy("_period").parquet(folder)
        return folder, "parquet"
    if layout == "json":
        os.makedirs(folder)
        with open(os.path.join(folder, "part-0.json"), "w") as fh:
            fh.writelines(json.dumps({"k": k, "v": float(v), "_period": p}) + "\n" for k, v, p in ROWS)
        return folder, "json"
    writer = frame.repartition(2).write.format(layout)
    if layout == "csv":
        writer = writer.option("header", "true")
    writer.save(folder)
    return folder, layout


def workspace(spark, root, layout: str):
    data = str(root / "data" / "lines")
    _, fmt = write_data(spark, data, layout)
    write(root, "ledgerflow.yml", f"""
        name: identity
        default_resolver: local
        resolvers:
          local:
            rules:
              - name: files
                data_level: any
                strategy: {{type: path, path: "data/{{{{dataset}}}}", format: {fmt}}}
        """)
    write(root, "datasets/lines.yml", """
        id: 0e000000-0000-4000-8000-0000000000a1
        name: lines
        versions: [{version: 1}]
        main_table:
          name: lines
          temporal_mode: period
          columns:
            - {name: k, type: string}
            - {name: v, type: "decimal(18,2)"}
        """)
    write(root, "projects/copy.yml", """
        id: 0e000000-0000-4000-8000-0000000000b1
        name: copy
        version: 1
        status: active
        input_dataset_id: lines
        operations:
          - {seq: 1, name: Write, type: output, arguments: {destination: {path: out/lines, format: parquet}}}
        """)
    return root


def written(spark, rec: dict) -> list[tuple]:
    rows = spark.read.parquet(output_entry(rec, 1)["location"]).collect()
    return sorted((r["k"], str(r["v"]), r["_row_id"]) for r in rows)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_replay_reproduces_generated_row_ids(spark, tmp_path, layout):
    ws = workspace(spark, tmp_path / "ws", layout)
    original = run_ok(ws, "copy", "2026-01")
    first = written(spark, original)
    assert sorted((k, v) for k, v, _ in first) == JANUARY
    ids = [i for _, _, i in first]
    assert all(UUID7.match(i) for i in ids) and len(set(ids)) == len(ids)  # identical rows: distinct ids
    replayed = cli(ws, "replay", original["run_id"])
    assert replayed.exit_code == 0, describe(replayed)
    again = record(ws, run_id_of(replayed))
    assert again["parent_run_id"] == original["run_id"]
    assert written(spark, again) == first


@pytest.mark.parametrize("layout", ["parquet", "csv"])
def test_a_replay_derives_ids_as_its_run_did(spark, tmp_path, layout):
    """A run recorded with another derivation ledgerflow still knows (``row_identity`` 3: a SHA-256 of
    the identity) is replayed with that derivation: the replay writes the ids that run wrote, not
    the ones a new run writes (derivation 4), and records the derivation it used."""
    from ledgerflow.adapters.store.runstore import RunStore
    from ledgerflow.compiler import system_columns as sysc
    ws = workspace(spark, tmp_path / "ws", layout)
    original = run_ok(ws, "copy", "2026-01")
    assert original["row_identity"] == sysc.ROW_IDENTITY == 4
    started = datetime.datetime.fromisoformat(original["run_started_at"])
    _, by_three = load_ids(spark, str(ws / "data" / "lines"), "csv" if layout == "csv" else "parquet",
                           started=started, row_identity=3)
    assert all(UUID7.match(i) for _, _, i in by_three)
    assert {i for _, _, i in by_three}.isdisjoint({i for _, _, i in written(spark, original)})
    older = json.loads(json.dumps(original))
    older["row_identity"] = 3  # as a run of the previous ledgerflow recorded it
    RunStore(str(ws)).save_run(older)
    replayed = cli(ws, "replay", original["run_id"])
    assert replayed.exit_code == 0, describe(replayed)
    assert "earlier ledgerflow" not in replayed.stdout
    again = record(ws, run_id_of(replayed))
    assert again["row_identity"] == 3
    assert written(spark, again) == by_three


def load_ids(spark, target: str, fmt: str, period: str = "2026-01", row_ids: bool = True,
             started: datetime.datetime = datetime.datetime(2026, 2, 1, 12), row_identity: int = 4) -> list[tuple]:
    ds = Dataset(id="0e000000-0000-4000-8000-0000000000a1", name="lines", status="active", table_name="lines",
                 temporal_mode="period", columns=[ColumnDef("k", "string"), ColumnDef("v", "decimal(18,2)")],
                 versions=[DatasetVersion(1)])
    view = f"ds_identity_{next(_names)}"
    args = parameters(parse_period(period), started)
    load = loaders.InputLoad(view, ds, 1, [ResolvedLocation("path", target, fmt)], row_ids, row_identity)
    loaders.load_input(spark, load, args)
    df = spark.table(view)
    return df, sorted((r["k"], str(r["v"]), r["_row_id"]) for r in df.collect())


@pytest.mark.parametrize("layout", LAYOUTS)
def test_ids_do_not_depend_on_where_the_workspace_is(spark, tmp_path, layout):
    target, fmt = write_data(spark, str(tmp_path / "here" / "lines"), layout)
    moved = str(tmp_path / "moved elsewhere" / "lines")
    shutil.copytree(target, moved)
    _, here = load_ids(spark, target, fmt)
    _, there = load_ids(spark, moved, fmt)
    assert here == there and len({i for _, _, i in here}) == len(here) == len(JANUARY)
    # a UUIDv7 whose time part is the run start (load_ids: 2026-02-01 12:00 UTC), version 7, variant 8
    millis = int(datetime.datetime(2026, 2, 1, 12, tzinfo=datetime.timezone.utc).timestamp() * 1000)
    stamp = f"{millis:012x}"
    assert all(UUID7.match(i) and i[:13] == f"{stamp[:8]}-{stamp[8:]}" for _, _, i in here)


def test_parquet_ids_need_no_shuffle_and_are_those_of_the_year_run(spark, tmp_path):
    target, fmt = write_data(spark, str(tmp_path / "lines"), "parquet")
    df, month = load_ids(spark, target, fmt)
    plan = df._jdf.queryExecution().executedPlan().toString()
    assert "Exchange" not in plan and "Window" not in plan and "Sort" not in plan, plan
    # the id of a row does not depend on which other periods the run reads
    _, year = load_ids(spark, target, fmt, "2026")
    assert set(month) <= set(year) and len(year) == 6


def test_a_view_only_joined_or_aggregated_reads_no_file_metadata(spark, tmp_path):
    """Spark materialises `_metadata` for every scan of a relation that has it, used or not: a view
    whose `_row_id` the SQL never reads (a join side, an aggregated append source) is loaded without it."""
    target, fmt = write_data(spark, str(tmp_path / "lines"), "parquet")
    for row_ids, reads_metadata in ((True, True), (False, False)):
        df, _ = load_ids(spark, target, fmt, row_ids=row_ids)
        plan = df.select("k", "v")._jdf.queryExecution().executedPlan().toString()
        assert ("_metadata" in plan or "file_path" in plan) == reads_metadata, plan
        assert "Window" not in plan and "Exchange" not in plan, plan  # unread content ids are pruned
    compiled = compile_project(FINANCE, FINANCE.find_project("ts03_fx_conversion"))
    assert {v.view: v.row_ids for v in compiled.inputs} == {"ds_gl": True, "ds_exchange_rates": False}
    compiled = compile_project(FINANCE, FINANCE.find_project("ts06_append_budgets"))
    assert {v.view: v.row_ids for v in compiled.inputs}["ds_budgets"] is False  # aggregated append


def test_content_ids_window_runs_after_the_period_filter(spark, tmp_path):
    target, fmt = write_data(spark, str(tmp_path / "lines"), "csv")
    df, month = load_ids(spark, target, fmt)
    plan = df._jdf.queryExecution().executedPlan().toString()
    window = plan.index("Window")
    assert "PushedFilters: [" in plan[window:] and "PushedFilters: []" not in plan[window:], plan
    _, year = load_ids(spark, target, fmt, "2026")
    assert set(month) <= set(year)  # each period's rows are their own identical groups


def test_in_memory_identical_rows_get_distinct_ids(spark):
    frame = spark.createDataFrame(ROWS, "k string, v string, _period string")
    loc = loaders.register_memory(f"identity_{next(_names)}", frame)
    ds = Dataset(id="0e000000-0000-4000-8000-0000000000a1", name="lines", status="active", table_name="lines",
                 temporal_mode="period", columns=[ColumnDef("k", "string"), ColumnDef("v", "decimal(18,2)")],
                 versions=[DatasetVersion(1)])
    args = parameters(parse_period("2026-01"), datetime.datetime(2026, 2, 1, 12))
    views = []
    for _ in range(2):
        view = f"ds_identity_{next(_names)}"
        loaders.load_input(spark, loaders.InputLoad(view, ds, 1, [loc]), args)
        views.append(sorted((r["k"], r["_row_id"]) for r in spark.table(view).collect()))
    loaders.MEMORY.pop(loc.target, None)
    assert views[0] == views[1] and len({i for _, i in views[0]}) == 5


def test_a_data_column_named_metadata_hides_no_row_index(spark, tmp_path):
    """Parquet data may itself have a column named `_metadata` (here also a look-alike struct `__METADATA`
    with wrong row indexes). Spark then offers its file-metadata struct under another name; the run, a
    scenario test's Parquet fixture and `compile --resolved` all take Spark's, so the rows get the ids
    the same files would get without those columns."""
    import glob as globbing
    import pyarrow as pa
    import pyarrow.parquet as pq
    from ledgerflow.adapters.compile_out.resolved_script import resolved_statements
    from ledgerflow.adapters.store.runstore import RunStore
    from ledgerflow.compiler.loading import spark_metadata_name
    ws = workspace(spark, tmp_path / "ws", "parquet")
    data = ws / "data" / "lines"
    plain = str(tmp_path / "plain")
    shutil.copytree(data, plain)
    for path in globbing.glob(str(data / "*.parquet")):
        table = pq.read_table(path).replace_schema_metadata(None)  # not Spark's schema of the old file
        n = table.num_rows
        fake = pa.array([{"row_index": 999, "file_path": "elsewhere"}] * n)
        pq.write_table(table.append_column("_metadata", pa.array(["x"] * n)).append_column("__METADATA", fake), path)
        os.remove(os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.crc"))  # Spark's checksum of the old file
    assert spark_metadata_name(["k", "_metadata", "__METADATA"]) == "___metadata"
    real = sorted(r.i for r in spark.sql(f"SELECT _metadata.row_index AS i FROM parquet.`{plain}`").collect())
    indexes = spark.sql(f"SELECT ___metadata.row_index AS i FROM parquet.`{data}`").collect()
    assert sorted(r.i for r in indexes) == real and 999 not in real  # Spark's name: the real row indexes

    rec = run_ok(ws, "copy", "2026-01")
    ran = written(spark, rec)
    started = datetime.datetime.fromisoformat(rec["run_started_at"])
    assert ran == load_ids(spark, plain, "parquet", started=started)[1]

    from ledgerflow.adapters.scenarios.given import frame
    from ledgerflow.adapters.scenarios.prepare import GivenFile
    from ledgerflow.compiler.loading import POSITION_COLUMN
    wsm = load_workspace(str(ws))
    lines = wsm.find_dataset("lines")
    wider = Dataset(id=lines.id, name="lines", status="active", table_name="lines", temporal_mode="period",
                    columns=[*lines.columns, ColumnDef("w", "string")], versions=[DatasetVersion(1)])
    for path in sorted(globbing.glob(str(data / "*.parquet"))):  # a fixture lacking a declared column (w)
        given = frame(spark, GivenFile(wider, path, "parquet", os.path.basename(path)), parse_period("2026-01"))
        positions = [r[0] for r in given.select(POSITION_COLUMN).collect()]
        assert positions == list(range(pq.read_metadata(path).num_rows)), positions

    project = wsm.find_project("copy")
    statements = resolved_statements(wsm, project, compile_project(wsm, project), parse_period("2026-01"),
                                     RunStore(str(ws)), started_at=started)
    views = [sql for _, sql in statements if sql.startswith("CREATE OR REPLACE TEMPORARY VIEW")][:2]
    assert "`___metadata` AS `__lf_file_metadata`" in views[0], views[0]
    for sql in views:
        spark.sql(sql)
    script = sorted((r["k"], str(r["v"]), r["_row_id"]) for r in spark.table("ds_lines").collect())
    assert script == ran


def test_compile_resolved_sees_nested_partition_folders(tmp_path):
    """`compile --resolved` works out the columns of a location without Spark: the schema of a file under
    `_period=` folders (which it found none under before) and the partition folders of every level, so that
    it names Spark's `_metadata` struct as Spark will (a partition column named `_metadata` renames it too)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from ledgerflow.adapters.compile_out.resolved_script import peek_columns
    from ledgerflow.compiler.loading import spark_metadata_name
    leaf = tmp_path / "lines" / "_period=2026-01" / "_metadata=x"
    leaf.mkdir(parents=True)
    pq.write_table(pa.table({"k": ["a"], "v": ["1.00"]}), leaf / "part-0.parquet")
    (tmp_path / "lines" / "_SUCCESS").write_text("")  # files Spark skips
    (tmp_path / "lines" / ".part-0.parquet.crc").write_text("")
    columns = peek_columns(str(tmp_path / "lines"), "parquet", ["k", "v"])
    assert columns == {"k": "string", "v": "string", "_period": "string", "_metadata": "string"}
    assert spark_metadata_name(columns) == "__metadata"

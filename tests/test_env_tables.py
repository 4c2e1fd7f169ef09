"""Catalog-table outputs in an environment other than prod (docs/environments.md, "Catalog tables and URIs"): the
environment's rows are kept in a folder of the workspace, never written into the table prod's readers read."""
from __future__ import annotations

import json
from decimal import Decimal

import pytest

from cli_support import add_project, cli, describe, record, run_id_of
from ledgerflow.adapters.store.runstore import RunStore

DB = "lf_env_tables_test"
TABLE = f"{DB}.lines"


def _operations(factor: str, register: str = "") -> str:
    return f"""
        - {{seq: 1, name: Scale, type: update, arguments: {{assignments: [{{column: amount_local,
            expression: "transactions.amount_local * {factor}"}}]}}}}
        - {{seq: 2, name: Lines, type: output, arguments: {{destination: {{catalog_table: {TABLE}}},
            columns: [journal_id, line_number, amount_local]{register}}}}}
        """


@pytest.fixture
def tables(spark, finance, tmp_path):
    spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")
    spark.sql(f"CREATE DATABASE {DB} LOCATION '{tmp_path / 'warehouse'}'")
    try:
        yield finance
    finally:
        spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")


def _ok(ws, *args) -> dict:
    result = cli(ws, *args)
    assert result.exit_code == 0, describe(result)
    return record(ws, run_id_of(result))


def _amounts(rows) -> dict:
    return {(r["journal_id"], r["line_number"]): r["amount_local"] for r in rows}


def test_a_run_in_dev_keeps_its_rows_of_a_catalog_table_in_a_folder_and_prod_reads_the_table_unchanged(spark, tables):
    ws = tables
    add_project(ws, "lines_to_table", _operations("1"))
    prod = _ok(ws, "run", "lines_to_table", "--period", "2026-01")
    prod_rows = _amounts(spark.table(TABLE).where("_period = '2026-01'").collect())
    assert len(prod_rows) == 10 and prod["outputs"][0].get("stands_for") is None

    add_project(ws, "lines_to_table", _operations("2"))  # the change tried in dev: amounts doubled
    dev = _ok(ws, "run", "lines_to_table", "--period", "2026-01", "--env", "dev")
    folder = ws / ".ledgerflow" / "tables" / TABLE
    partition = folder / ".lf_envs" / "dev" / "_period=2026-01"
    out = dev["outputs"][0]
    assert (out["location"], out["stands_for"], out["rows"]) == (str(partition), TABLE, 10), out
    assert _amounts(spark.table(TABLE).where("_period = '2026-01'").collect()) == prod_rows  # prod's table untouched
    dev_rows = _amounts(spark.read.parquet(str(partition)).collect())
    assert dev_rows == {k: v * 2 for k, v in prod_rows.items()} and all(isinstance(v, Decimal) for v in dev_rows.values())

    path = cli(ws, "envs", "path", "lines_to_table.2", "--env", "dev")
    assert path.exit_code == 0 and path.stdout.strip() == str(folder / ".lf_envs" / "dev"), describe(path)
    prod_path = cli(ws, "envs", "path", "lines_to_table.2", "--env", "prod")
    assert prod_path.exit_code == 1 and "ENV-006" in prod_path.stderr, describe(prod_path)


def _prod_rows(spark, period: str) -> dict:
    return _amounts(spark.table(TABLE).where(f"_period = '{period}'").collect())


def test_promoting_a_tables_rows_into_prod_copies_them_with_spark_and_a_failed_copy_puts_prod_back(
        spark, tables, monkeypatch):
    ws = tables
    gl = ws / "data" / "gl" / "v1" / "transactions.csv"  # a line in February too
    gl.write_text(gl.read_text() + "JE-101,1,2026-02-03,4100,CC-100,USD,1000.00,1000.00,Rev Feb,ERP,2026-02\n")
    add_project(ws, "lines_to_table", _operations("1"))
    for period in ("2026-01", "2026-02"):
        _ok(ws, "run", "lines_to_table", "--period", period)
    prod_jan, prod_feb = _prod_rows(spark, "2026-01"), _prod_rows(spark, "2026-02")
    assert len(prod_jan) == 10 and prod_feb == {("JE-101", 1): Decimal("1000.00")}
    add_project(ws, "lines_to_table", _operations("2"))
    dev = _ok(ws, "run", "lines_to_table", "--period", "2026-01", "--env", "dev")

    dry = cli(ws, "promote", "lines_to_table", "--from", "dev", "--period", "2026-01", "--dry-run")
    assert dry.exit_code == 0 and "10 added" in dry.stdout and "10 removed" in dry.stdout, describe(dry)
    assert _prod_rows(spark, "2026-01") == prod_jan

    done = cli(ws, "promote", "lines_to_table", "--from", "dev", "--period", "2026-01")
    assert done.exit_code == 0, describe(done)
    assert "0 partitions re-pointed; 1 partition of a catalog table or URI copied with Spark" in done.stdout, done.stdout
    assert _prod_rows(spark, "2026-01") == {k: v * 2 for k, v in prod_jan.items()}
    assert _prod_rows(spark, "2026-02") == prod_feb  # another period of the table untouched
    store = RunStore(str(ws))
    rec = store.get_run(store.last_completed(["2026-01"], ["lines_to_table"])[0]["run_id"])
    assert rec["outputs"][0]["location"] == f"{TABLE} (_period=2026-01)" and "stands_for" not in rec["outputs"][0]
    assert rec["commit"]["elsewhere"] == [TABLE] and rec["commit"]["partitions"] == []  # as a prod run records it
    assert rec["promotion"]["source_run_id"] == dev["run_id"]
    journals = ws / "target" / "promotions"
    assert [p.name for p in journals.iterdir() if p.is_dir()] == []  # the rows kept from before are gone

    # a dev version writing a column prod's table lacks: refused, as a prod run of it is, and nothing changes
    add_project(ws, "lines_to_table", _operations("5").replace("columns: [journal_id, line_number, amount_local]",
                                                                "columns: [journal_id, line_number, amount_local, "
                                                                "currency]"))
    _ok(ws, "run", "lines_to_table", "--period", "2026-02", "--env", "dev")
    wider = cli(ws, "promote", "lines_to_table", "--from", "dev", "--period", "2026-02")
    assert wider.exit_code == 1 and "the table lacks currency" in wider.stderr, describe(wider)
    assert _prod_rows(spark, "2026-02") == prod_feb and [c.name for c in spark.catalog.listColumns(TABLE)] == [
        "journal_id", "line_number", "amount_local", "_period"]
    add_project(ws, "lines_to_table", _operations("2"))

    # dev to uat: both keep the table's rows in the workspace's folder, re-pointed as any folder
    uat = cli(ws, "promote", "lines_to_table", "--from", "dev", "--to", "uat", "--period", "2026-01")
    assert uat.exit_code == 0 and "1 partition re-pointed, no data copied" in uat.stdout, describe(uat)
    folder = ws / ".ledgerflow" / "tables" / TABLE / ".lf_envs"
    inodes = [{f.name: f.stat().st_ino for f in (folder / env / "_period=2026-01").iterdir()
               if not f.name.startswith(".")} for env in ("dev", "uat")]
    assert inodes[0] == inodes[1] and inodes[0]

    # a copy that fails: every partition copied before it gets its rows back, nothing is recorded
    add_project(ws, "lines_to_table", _operations("3"))
    for period in ("2026-01", "2026-02"):
        _ok(ws, "run", "lines_to_table", "--period", period, "--env", "dev")
    before = {p: _prod_rows(spark, p) for p in ("2026-01", "2026-02")}
    from ledgerflow.adapters.envs import spark_copies
    real, calls = spark_copies.write_catalog_table, []

    def second_fails(df, table, period, rows):
        calls.append(period)
        if len(calls) == 2:
            raise RuntimeError("the cluster went away")
        return real(df, table, period, rows)
    monkeypatch.setattr(spark_copies, "write_catalog_table", second_fails)
    failed = cli(ws, "promote", "lines_to_table", "--from", "dev", "--period", "2026-01..2026-02")
    monkeypatch.undo()
    assert failed.exit_code != 0 and "the cluster went away" in failed.stderr, describe(failed)
    # then both written back from the rows kept, the last first (the failed write may have left anything)
    assert calls == ["2026-01", "2026-02", "2026-02", "2026-01"]
    assert {p: _prod_rows(spark, p) for p in before} == before
    last = store.last_completed(["2026-01", "2026-02"], ["lines_to_table"])
    assert sorted((r["period"], r["run_id"] == rec["run_id"]) for r in last) == [("2026-01", True), ("2026-02", False)]
    journal = max(journals.glob("*.json"), key=lambda p: p.stat().st_mtime)
    state = json.loads(journal.read_text())
    assert state["status"] == "failed" and [c["state"] for c in state["copies"]] == ["restored", "restored"], state


def test_where_an_environment_keeps_a_table_or_a_uri_and_what_it_refuses(tmp_path):
    """A table's rows go to a folder of the workspace, a parquet or orc URI's to <uri>/.lf_envs/<env>; a table or a
    URI an output registers (a resolver's table), or a CSV or JSON URI, is refused outside prod (ENV-002)."""
    from ledgerflow.adapters.commit.destinations import OutputDestination
    from ledgerflow.adapters.run.destinations import in_env
    from ledgerflow.compiler.errors import ResolutionError
    table = OutputDestination("table", "`Fin`.Lines", "table", 1)
    kept = in_env(table, "dev", 2, str(tmp_path))
    assert (kept.kind, kept.target, kept.format, kept.env, kept.stands_for, kept.local) == (
        "path", str(tmp_path / ".ledgerflow" / "tables" / "fin.lines"), "parquet", "dev", "`Fin`.Lines", True)
    assert in_env(table, "prod", 2, str(tmp_path)) is table
    uri = OutputDestination("path", "s3a://bucket/lines/", "parquet", 1)
    kept = in_env(uri, "dev", 2, str(tmp_path))
    assert (kept.kind, kept.target, kept.format, kept.env, kept.stands_for, kept.local) == (
        "path", "s3a://bucket/lines/.lf_envs/dev", "parquet", "dev", "s3a://bucket/lines/", False)
    for dest, registers, needle in ((table, True, "registers it as a dataset"), (uri, True, "registers it as a"),
                                    (OutputDestination("path", "s3a://bucket/lines", "csv", 1), False, "as csv")):
        with pytest.raises(ResolutionError, match="ENV-002") as refused:
            in_env(dest, "dev", 2, str(tmp_path), registers=registers)
        assert needle in str(refused.value)


def test_a_uris_rows_are_kept_beside_it_and_promoting_them_copies_them_into_its_partition(spark, finance, tmp_path):
    """A URI (a ViewFS mount of a temporary folder: a Hadoop file system ledgerflow does not write by staging and
    swaps) written by a run in dev lands in <uri>/.lf_envs/dev, hidden from readers of the URI; promoting it into
    prod copies it into <uri>/_period=P with Spark, and the summary says so."""
    import uuid
    mount = f"lfuri{uuid.uuid4().hex[:8]}"
    lake = tmp_path / "lake"
    lake.mkdir()
    spark.sparkContext._jsc.hadoopConfiguration().set(f"fs.viewfs.mounttable.{mount}.link./lake", f"file://{lake}")
    ws = finance
    config = ws / "ledgerflow.yml"
    config.write_text(config.read_text().replace("resolvers:\n", f"""resolvers:
  lake:
    rules:
      - name: lake
        data_level: any
        strategy: {{type: path, path: "viewfs://{mount}/lake/{{{{dataset}}}}", format: parquet}}
""", 1))

    def project(factor: str) -> str:
        return f"""
        - {{seq: 1, name: Scale, type: update, arguments: {{assignments: [{{column: amount_local,
            expression: "transactions.amount_local * {factor}"}}]}}}}
        - {{seq: 2, name: Lines, type: output, arguments: {{destination: {{table: lake_lines, resolver: lake}},
            columns: [journal_id, line_number, amount_local]}}}}
        """
    add_project(ws, "lines_to_uri", project("1"))
    _ok(ws, "run", "lines_to_uri", "--period", "2026-01")
    uri = f"viewfs://{mount}/lake/lake_lines"
    prod_rows = _amounts(spark.read.parquet(uri).where("_period = '2026-01'").collect())
    assert len(prod_rows) == 10

    add_project(ws, "lines_to_uri", project("2"))
    dev = _ok(ws, "run", "lines_to_uri", "--period", "2026-01", "--env", "dev")
    out = dev["outputs"][0]
    assert (out["location"], out["stands_for"], out["format"]) == (f"{uri}/.lf_envs/dev/_period=2026-01", uri,
                                                                    "parquet"), out
    assert _amounts(spark.read.parquet(uri).collect()) == prod_rows  # readers of the URI see prod's rows only
    assert sorted(p.name for p in (lake / "lake_lines" / ".lf_envs" / "dev").iterdir()
                  if p.name.startswith("_period=")) == ["_period=2026-01"]

    path = cli(ws, "envs", "path", "lines_to_uri.2", "--env", "dev")
    assert path.exit_code == 0 and path.stdout.strip() == f"{uri}/.lf_envs/dev", describe(path)

    done = cli(ws, "promote", "lines_to_uri", "--from", "dev", "--period", "2026-01")
    assert done.exit_code == 0 and "1 catalog-table partition copied with Spark" not in done.stdout, describe(done)
    assert "0 partitions re-pointed; 1 partition of a catalog table or URI copied with Spark" in done.stdout, done.stdout
    assert _amounts(spark.read.parquet(uri).collect()) == {k: v * 2 for k, v in prod_rows.items()}
    store = RunStore(str(ws))
    rec = store.get_run(store.last_completed(["2026-01"], ["lines_to_uri"])[0]["run_id"])
    assert rec["outputs"][0]["location"] == f"{uri}/_period=2026-01" and "stands_for" not in rec["outputs"][0]
    assert rec["commit"]["elsewhere"] == [uri] and rec["promotion"]["source_run_id"] == dev["run_id"]

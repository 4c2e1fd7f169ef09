"""Acceptance scenarios TS-01..TS-08 (projects/finance), end to end through the ``ledgerflow`` CLI on Spark.

One module-scoped copy of the finance workspace runs the eight scenario projects once (period 2026-01);
each test reads the written outputs back on the shared SparkSession and compares every row and value.
Further tests cover exit codes, ``runs``/``datasets`` commands and the run record (docs/commands.md, docs/run-record.md).
"""
from __future__ import annotations

import datetime
import hashlib
import json

import pytest
import yaml

from conftest import copy_workspace
from cli_support import (ACCOUNTS_ID, BUDGETS_ID, COST_CENTERS_ID, D, GL_COLUMNS, GL_ID, GL_ROWS, RATES_ID,
                         SYSTEM_COLUMNS, add_project, by_key, check_row_ids, cli, describe, edit, gl_expected,
                         read_output, read_partition, record, run, run_id_of, run_ok, started, without)

SCENARIOS = ["ts01_output_only", "ts02_asof_rates", "ts03_fx_conversion", "ts04_delete_inactive",
             "ts05_aggregate_by_type", "ts06_append_budgets", "ts07_output_columns", "ts08_named_selector"]


@pytest.fixture(scope="module")
def scenarios(spark, tmp_path_factory):
    """The finance workspace with every scenario project run once for 2026-01: (workspace, name -> record)."""
    ws = tmp_path_factory.mktemp("acceptance") / "finance"
    copy_workspace("finance", ws)
    records = {name: run_ok(ws, name, "2026-01") for name in SCENARIOS}
    return ws, records


def plain_yaml(text: str):
    """The YAML as data, ``on`` kept as a key (PyYAML's YAML 1.1 would read it as True)."""
    def fix(value):
        if isinstance(value, dict):
            return {("on" if k is True else k): fix(v) for k, v in value.items()}
        if isinstance(value, list):
            return [fix(v) for v in value]
        return value
    return fix(yaml.safe_load(text))


def keyed(rows):
    return by_key(rows, "journal_id", "line_number")


# ------------------------------------------------------------------------------------------- TS-01..TS-08
def test_ts01_output_only(spark, scenarios):
    ws, recs = scenarios
    rec = recs["ts01_output_only"]
    cols, rows = read_output(spark, rec, 1)
    assert cols == GL_COLUMNS + SYSTEM_COLUMNS + ["_period"]
    assert len(rows) == 10
    check_row_ids(rows, rec)
    assert keyed(without(rows, "_row_id")) == gl_expected(rec)
    assert rec["outputs"][0]["rows"] == 10


def test_ts02_asof_rates(spark, scenarios):
    ws, recs = scenarios
    rec = recs["ts02_asof_rates"]
    cols, rows = read_output(spark, rec, 1)
    assert cols == ["from_currency", "to_currency", "rate", "rate_type", "_row_id", "_deleted", "_updated_at",
                    "_period_from", "_period_to", "_labels", "_source_dataset", "_operation_seq", "_period"]
    check_row_ids(rows, rec)
    d = datetime.date
    got = sorted((r["from_currency"], r["to_currency"], r["rate"], r["rate_type"], r["_period_from"], r["_period_to"])
                 for r in rows)
    assert got == sorted([
        ("EUR", "USD", D("1.092000"), "closing", d(2026, 1, 1), None),
        ("GBP", "USD", D("1.271000"), "closing", d(2026, 1, 1), None),
        ("JPY", "USD", D("0.006720"), "closing", d(2026, 1, 1), None),
        ("USD", "USD", D("1.000000"), "closing", d(2020, 1, 1), None),
        ("EUR", "USD", D("1.090000"), "average", d(2026, 1, 1), None),
    ])
    for r in rows:
        assert (r["_deleted"], r["_updated_at"], r["_labels"], r["_source_dataset"], r["_operation_seq"],
                r["_period"]) == (False, None, "", RATES_ID, 0, "2026-01")


def test_ts03_fx_conversion(spark, scenarios):
    ws, recs = scenarios
    rec = recs["ts03_fx_conversion"]
    cols, rows = read_output(spark, rec, 2)
    assert cols == GL_COLUMNS + SYSTEM_COLUMNS + ["_period"]
    check_row_ids(rows, rec)
    expected = gl_expected(rec, updated_at=started(rec))  # every row matched the update (no selector)
    reporting = ["15000.00", "15000.00", "9282.00", "-9282.00", "27962.00", "27962.00", "3200.00", "-3200.00",
                 "16800.00", "16800.00"]
    for row, value in zip(expected, reporting):
        row["amount_reporting"] = D(value)
    assert keyed(without(rows, "_row_id")) == expected
    assert [str(r["amount_reporting"]) for r in keyed(rows)] == reporting


def test_ts04_delete_inactive(spark, scenarios):
    ws, recs = scenarios
    rec = recs["ts04_delete_inactive"]
    t0 = started(rec)
    expected_all = gl_expected(rec, updated_at=t0)
    for row in expected_all:
        inactive = row["account_code"] == "5200"
        row.update(_deleted=inactive, account_active=not inactive)
    cols, active = read_output(spark, rec, 3)
    assert cols == GL_COLUMNS + SYSTEM_COLUMNS + ["account_active", "_period"]
    assert len(active) == 9
    check_row_ids(active, rec)
    assert keyed(without(active, "_row_id")) == [r for r in expected_all if not r["_deleted"]]
    assert ("JE-004", 1) not in {(r["journal_id"], r["line_number"]) for r in active}

    cols, everything = read_output(spark, rec, 4)
    assert cols == GL_COLUMNS + SYSTEM_COLUMNS + ["account_active", "_period"]
    assert len(everything) == 10
    check_row_ids(everything, rec)
    assert keyed(without(everything, "_row_id")) == expected_all
    deleted = [r for r in everything if r["_deleted"]]
    assert [(r["journal_id"], r["line_number"], r["account_active"]) for r in deleted] == [("JE-004", 1, False)]
    # the same working rows: the two outputs agree on every row they share, _row_id included
    assert keyed(active) == [r for r in keyed(everything) if not r["_deleted"]]
    assert [(o["operation_seq"], o["rows"]) for o in rec["outputs"]] == [(3, 9), (4, 10)]


def test_ts05_aggregate_by_type(spark, scenarios):
    ws, recs = scenarios
    rec = recs["ts05_aggregate_by_type"]
    t0 = started(rec)
    cols, rows = read_output(spark, rec, 3)
    assert cols == GL_COLUMNS + SYSTEM_COLUMNS + ["account_type", "total_amount", "line_count", "_period"]
    assert len(rows) == 14
    check_row_ids(rows, rec)
    types = {"4100": "revenue", "4200": "revenue", "1200": "asset", "2100": "liability", "5100": "expense",
             "5200": "expense"}
    lines = [r for r in rows if r["journal_id"] is not None]
    expected_lines = gl_expected(rec, updated_at=t0)
    for row in expected_lines:
        row.update(account_type=types[row["account_code"]], total_amount=None, line_count=None)
    assert keyed(without(lines, "_row_id")) == expected_lines

    summary = sorted(without([r for r in rows if r["journal_id"] is None], "_row_id"), key=lambda r: r["account_type"])
    empty = {c: None for c in GL_COLUMNS}
    system = {"_deleted": False, "_updated_at": t0, "_labels": "", "_source_dataset": GL_ID, "_operation_seq": 2}
    assert summary == [
        {**empty, **system, "account_type": "asset", "total_amount": D("2537000.00"), "line_count": 3,
         "_period": "2026-01"},
        {**empty, **system, "account_type": "expense", "total_amount": D("11700.00"), "line_count": 2,
         "_period": "2026-01"},
        {**empty, **system, "account_type": "liability", "total_amount": D("-11700.00"), "line_count": 2,
         "_period": "2026-01"},
        {**empty, **system, "account_type": "revenue", "total_amount": D("2537000.00"), "line_count": 3,
         "_period": "2026-01"},
    ]


def test_ts06_append_budgets(spark, scenarios):
    ws, recs = scenarios
    rec = recs["ts06_append_budgets"]
    t0 = started(rec)
    cols, rows = read_output(spark, rec, 2)
    assert cols == GL_COLUMNS + SYSTEM_COLUMNS + ["_period"]
    assert len(rows) == 14
    check_row_ids(rows, rec)
    lines = [r for r in rows if r["journal_id"] is not None]
    assert keyed(without(lines, "_row_id")) == gl_expected(rec)
    appended = [r for r in rows if r["journal_id"] is None]
    assert len(appended) == 4
    empty = {c: None for c in GL_COLUMNS}
    system = {"_deleted": False, "_updated_at": t0, "_labels": "", "_source_dataset": BUDGETS_ID,
              "_operation_seq": 1, "_period": "2026-01"}

    def budget(acct, cc, cur, amount):
        return {**empty, "account_code": acct, "cost_center_code": cc, "currency": cur, "amount_local": D(amount),
                **system}
    assert by_key(without(appended, "_row_id"), "account_code") == [
        budget("4100", "CC-100", "USD", "20000.00"),
        budget("4200", "CC-300", "GBP", "25000.00"),
        budget("5100", "CC-200", "EUR", "10000.00"),
        budget("5200", "CC-100", "USD", "5000.00"),
    ]
    assert sum(r["amount_local"] for r in appended) == D("60000.00")
    assert sum(r["amount_local"] for r in rows) == D("5074000.00") + D("60000.00")
    assert rec["resolver_snapshot"]["append_datasets"][0]["dataset_id"] == BUDGETS_ID
    assert rec["resolver_snapshot"]["append_datasets"][0]["operation_seq"] == 1
    assert rec["resolver_snapshot"]["append_datasets"][0]["dataset_version"] == 1


def test_ts06_plain_append_is_a_validation_error(spark, finance):
    add_project(finance, "ts06_plain_append", """
        - seq: 1
          name: Append budgets as they are
          type: append
          arguments:
            source: {dataset_id: budgets}
        - seq: 2
          name: Write
          type: output
          arguments:
            destination: {table: plain_append}
        """)
    result = cli(finance, "validate", "ts06_plain_append")
    assert result.exit_code == 1, describe(result)
    err = result.stderr
    assert "APPEND_003" in err
    for column in ("budget_id", "amount", "budget_type"):
        assert f"column '{column}' of the appended rows is not a working column" in err, err
    assert "projects/ts06_plain_append.yml:" in err
    # running it is refused the same way, before Spark runs anything
    result = run(finance, "ts06_plain_append", expect=1)
    assert "APPEND_003" in result.stderr
    assert not (finance / "data" / "plain_append").exists()
    assert not (finance / "target" / "runs").exists()
    # the valid sample projects still validate
    ok = cli(finance, "validate", "ts06_append_budgets")
    assert ok.exit_code == 0, describe(ok)


def test_ts07_output_columns(spark, scenarios):
    ws, recs = scenarios
    rec = recs["ts07_output_columns"]
    out = rec["outputs"][0]
    # the written files hold exactly the four columns, in that order
    cols, rows = read_partition(spark, out["location"])
    assert cols == ["journal_id", "account_code", "amount_local", "amount_reporting"]
    assert len(rows) == 10
    expected = [{"journal_id": r[0], "account_code": r[3], "amount_local": D(r[6]),
                 "amount_reporting": D(r[7]) if r[7] is not None else None} for r in GL_ROWS]
    assert by_key(rows, "journal_id", "account_code") == by_key(expected, "journal_id", "account_code")
    cols, rows = read_output(spark, rec, 1)
    assert cols == ["journal_id", "account_code", "amount_local", "amount_reporting", "_period"]


def test_ts08_named_selector(spark, scenarios):
    ws, recs = scenarios
    rec = recs["ts08_named_selector"]
    t0 = started(rec)
    cols, rows = read_output(spark, rec, 2)
    assert cols == GL_COLUMNS + SYSTEM_COLUMNS + ["_period"]
    check_row_ids(rows, rec)
    uplifted = {("JE-002", 1): "8925.00", ("JE-002", 2): "-8925.00", ("JE-003", 1): "23100.00",
                ("JE-003", 2): "23100.00", ("JE-005", 1): "2625000.00", ("JE-005", 2): "2625000.00"}
    expected = gl_expected(rec)
    for row in expected:
        key = (row["journal_id"], row["line_number"])
        if key in uplifted:
            row["amount_local"] = D(uplifted[key])
            row["_updated_at"] = t0
    assert keyed(without(rows, "_row_id")) == expected
    assert [str(r["amount_local"]) for r in keyed(rows)] == [
        "15000.00", "15000.00", "8925.00", "-8925.00", "23100.00", "23100.00", "3200.00", "-3200.00",
        "2625000.00", "2625000.00"]


# ------------------------------------------------------------------------------------------- run record
def test_run_record_fields(spark, scenarios):
    ws, recs = scenarios
    rec = recs["ts03_fx_conversion"]
    assert set(rec) >= {"run_id", "parent_run_id", "project", "project_snapshot", "period", "started_at",
                        "finished_at", "status", "error", "spark", "sql_sha256", "resolver_snapshot", "outputs"}
    folder = ws / "target" / "runs" / rec["run_id"]
    project_file = ws / "projects" / "ts03_fx_conversion.yml"
    assert rec["parent_run_id"] is None
    assert rec["project"] == {"id": "0b000000-0000-4000-8000-000000000003", "name": "ts03_fx_conversion",
                              "version": 1, "sha256": hashlib.sha256(project_file.read_bytes()).hexdigest()}
    assert rec["project_snapshot"] == plain_yaml(project_file.read_text())
    assert rec["period"] == {"identifier": "2026-01", "start": "2026-01-01", "end": "2026-01-31"}
    assert rec["status"] == "completed" and rec["error"] is None
    t0 = datetime.datetime.fromisoformat(rec["started_at"])
    assert datetime.datetime.fromisoformat(rec["finished_at"]) >= t0
    assert rec["spark"]["version"] == spark.version
    assert rec["spark"]["app_id"] == spark.sparkContext.applicationId  # the CLI reused the one session
    assert rec["spark"]["master_or_remote"] == "local[*]"
    sql_text = (folder / "compiled.sql").read_text(encoding="utf-8")
    assert rec["sql_sha256"] == hashlib.sha256(sql_text.encode()).hexdigest()
    compiled = cli(ws, "compile", "ts03_fx_conversion")
    assert compiled.exit_code == 0, describe(compiled)
    assert compiled.stdout.rstrip("\n") == sql_text.rstrip("\n")

    snap = rec["resolver_snapshot"]
    assert snap["input_dataset_id"] == GL_ID
    assert snap["input_dataset_version"] == 1
    assert snap["input_resolver"] == "local"
    assert snap["append_datasets"] == []
    [join] = snap["join_datasets"]
    assert {k: join[k] for k in ("operation_seq", "alias", "dataset_id", "dataset_version", "resolver_id",
                                 "resolver_source", "locations")} == {
        "operation_seq": 1, "alias": "fx", "dataset_id": RATES_ID, "dataset_version": 1, "resolver_id": "local",
        "resolver_source": "system_default",
        "locations": [str(ws / "data" / "exchange_rates" / "v1" / "exchange_rates.csv")]}
    out = dict(rec["outputs"][0])
    assert len(rec["outputs"]) == 1
    lineage = out.pop("lineage")  # each output's column lineage (docs/lineage.md JSON; tests/test_lineage.py)
    assert [c["column"] for c in lineage["columns"]][:2] == ["journal_id", "line_number"]
    assert out == {"operation_seq": 2, "rows": 10, "registered_dataset": None, "registered_version": None,
                   "location": str(ws / "data" / "ts03_fx_converted" / "v1" / "ts03_fx_converted.csv" /
                                   "_period=2026-01")}
    # the registry row in .ledgerflow/state.db holds the same record
    shown = cli(ws, "runs", "show", rec["run_id"], "--json")
    assert shown.exit_code == 0, describe(shown)
    assert json.loads(shown.stdout) == rec


def test_run_record_pinned_join_and_two_outputs(spark, scenarios):
    ws, recs = scenarios
    rec = recs["ts04_delete_inactive"]
    [join] = rec["resolver_snapshot"]["join_datasets"]
    assert (join["operation_seq"], join["alias"], join["dataset_id"], join["dataset_version"], join["resolver_id"],
            join["resolver_source"]) == (1, "acct", ACCOUNTS_ID, 2, "local", "system_default")
    assert join["locations"] == [str(ws / "data" / "accounts" / "v2" / "accounts.csv")]
    # unpinned, TS-05 reads the latest active version of accounts (2)
    [join5] = recs["ts05_aggregate_by_type"]["resolver_snapshot"]["join_datasets"]
    assert (join5["alias"], join5["dataset_version"]) == ("acct", 2)
    [join8] = recs["ts08_named_selector"]["resolver_snapshot"]["join_datasets"]
    assert (join8["alias"], join8["dataset_id"], join8["dataset_version"]) == ("cc", COST_CENTERS_ID, 1)
    assert [o["operation_seq"] for o in rec["outputs"]] == [3, 4]
    for o in rec["outputs"]:
        assert o["registered_dataset"] is None and o["registered_version"] is None


# -------------------------------------------------------------------------------------- runs / datasets
def test_runs_list_and_show(spark, scenarios):
    ws, recs = scenarios
    listed = cli(ws, "runs", "list")
    assert listed.exit_code == 0, describe(listed)
    lines = listed.stdout.strip().splitlines()
    assert len(lines) == len(SCENARIOS)
    # newest first
    assert [line.split()[0] for line in lines] == [recs[n]["run_id"] for n in reversed(SCENARIOS)]
    rows_by_project = {"ts01_output_only": 10, "ts02_asof_rates": 5, "ts03_fx_conversion": 10,
                       "ts04_delete_inactive": 19, "ts05_aggregate_by_type": 14, "ts06_append_budgets": 14,
                       "ts07_output_columns": 10, "ts08_named_selector": 10}
    for line in lines:
        run_id, started_at, status, project, period = line.split()[:5]
        assert status == "completed" and period == "2026-01"
        assert recs[project]["run_id"] == run_id
        assert started_at == recs[project]["started_at"]
        assert f"rows={rows_by_project[project]}" in line
        assert f"outputs={2 if project == 'ts04_delete_inactive' else 1}" in line
    # `runs` alone lists too
    assert cli(ws, "runs").stdout == listed.stdout
    rec = recs["ts05_aggregate_by_type"]
    shown = cli(ws, "runs", "show", rec["run_id"][:13], "--json")  # a unique prefix is enough
    assert shown.exit_code == 0, describe(shown)
    assert json.loads(shown.stdout) == rec
    missing = cli(ws, "runs", "show", "ffffffff-0000")
    assert missing.exit_code == 1 and "no run 'ffffffff-0000'" in missing.stderr


def test_datasets_list_and_show(spark, scenarios):
    ws, recs = scenarios
    listed = cli(ws, "datasets", "list")
    assert listed.exit_code == 0, describe(listed)
    rows = [line.split() for line in listed.stdout.strip().splitlines()]
    assert rows == [
        ["accounts", "declared", "period", "active", "versions", "1,2"],
        ["budgets", "declared", "period", "active", "versions", "1"],
        # registered by the close chain's outputs: known from the producers' plans, not yet run here
        ["close_consolidated", "registered", "period", "active", "versions", "none", "yet"],
        ["close_converted", "registered", "period", "active", "versions", "none", "yet"],
        ["cost_centers", "declared", "period", "active", "versions", "1"],
        ["exchange_rates", "declared", "bitemporal", "active", "versions", "1"],
        ["gl", "declared", "period", "active", "versions", "1"],
    ]
    shown = cli(ws, "datasets", "show", "gl")
    assert shown.exit_code == 0, describe(shown)
    lines = [line.strip() for line in shown.stdout.strip().splitlines()]
    assert lines[0].split() == ["gl", f"id={GL_ID}", "status=active", "table=transactions", "temporal_mode=period",
                                "declared", "in", "datasets/gl.yml"]
    assert lines[1:] == ["version 1  active",
                         "column journal_id: string", "column line_number: int", "column posting_date: date",
                         "column account_code: string", "column cost_center_code: string",
                         "column currency: string", "column amount_local: decimal(18,2)",
                         "column amount_reporting: decimal(18,2)", "column description: string",
                         "column source_system: string"]
    by_id = cli(ws, "datasets", "show", GL_ID)
    assert by_id.exit_code == 0 and by_id.stdout == shown.stdout
    unknown = cli(ws, "datasets", "show", "ledger")
    assert unknown.exit_code == 1 and "no dataset 'ledger'" in unknown.stderr


# ------------------------------------------------------------------------------------------- exit codes
def test_exit_codes(spark, finance):
    # 0: success
    rec = run_ok(finance, "ts07_output_columns")
    assert rec["outputs"][0]["rows"] == 10
    # 2: a bad --period (command-line usage), nothing recorded
    for bad in ("2026-13", "2026-Q5", "26-01", "January"):
        result = run(finance, "ts07_output_columns", bad, expect=2)
        assert "--period" in result.stderr and "is not a period" in result.stderr, describe(result)
    missing_period = cli(finance, "run", "ts07_output_columns")
    assert missing_period.exit_code == 2
    # 1: an unknown project
    result = run(finance, "ts99_nothing", expect=1)
    assert "no project 'ts99_nothing'" in result.stderr and "ts07_output_columns" in result.stderr
    assert "Traceback" not in result.stderr
    # 1: a validation error (validate and run)
    edit(finance, "projects/ts03_fx_conversion.yml", "fx.rate\n", "fx.rates\n")
    result = cli(finance, "validate", "ts03_fx_conversion")
    assert result.exit_code == 1, describe(result)
    assert "JOIN-VR-008 unknown column 'fx.rates'" in result.stderr, result.stderr
    assert "projects/ts03_fx_conversion.yml:18:" in result.stderr, result.stderr
    assert cli(finance, "validate").exit_code == 1
    result = run(finance, "ts03_fx_conversion", expect=1)
    assert "fx.rates" in result.stderr and "Traceback" not in result.stderr
    assert not (finance / "data" / "ts03_fx_converted").exists()
    # 1: a missing data location: nothing executed or written, the run recorded as failed
    (finance / "data" / "budgets" / "v1" / "budgets.csv").unlink()
    result = run(finance, "ts06_append_budgets", expect=1)
    assert "dataset 'budgets'" in result.stderr
    assert str(finance / "data" / "budgets" / "v1" / "budgets.csv") in result.stderr
    failed = record(finance, run_id_of(result))
    assert failed["status"] == "failed" and "budgets.csv" in failed["error"]
    assert failed["outputs"] == []
    assert not (finance / "data" / "ts06_with_budgets").exists()
    # the earlier successful run is still the only completed one
    listed = cli(finance, "runs", "list").stdout.strip().splitlines()
    assert [line.split()[2] for line in listed] == ["failed", "completed"]
    # a workspace that is not one
    result = cli(finance / "data", "runs", "list")
    assert result.exit_code == 1 and "ledgerflow.yml" in result.stderr

"""The runner end to end through the ``ledgerflow`` CLI: append temporal rules, quarter runs over monthly files,
replay, atomic partition replacement, register_as_dataset, and data that does not match its declaration.
"""
from __future__ import annotations

import os
from pathlib import Path
from textwrap import dedent

from cli_support import (D, GL_COLUMNS, GL_FEB_MAR_ROWS, GL_ID, GL_ROWS, SYSTEM_COLUMNS, add_project, by_key,
                         check_row_ids, cli, describe, edit, gl_expected, in_gl_order, output_entry, read_output,
                         read_table, record, run, run_id_of, run_ok, started, versions_dir, without, write)

OUTPUT = """
- seq: 9
  name: Write
  type: output
  arguments:
    destination: {{table: {table}}}
"""

PERIOD_ADJ_ID = "0a000000-0000-4000-8000-0000000000a1"
BITEMPORAL_ADJ_ID = "0a000000-0000-4000-8000-0000000000a2"
SNAPSHOT_ADJ_ID = "0a000000-0000-4000-8000-0000000000a3"


def adjustments_dataset(ds_id: str, name: str, mode: str) -> str:
    return dedent(f"""\
        id: {ds_id}
        name: {name}
        status: active
        versions:
          - {{version: 1}}
        main_table:
          name: {name}
          temporal_mode: {mode}
          columns:
            - {{name: description, type: string}}
            - {{name: account_code, type: string}}
            - {{name: amount_local, type: "decimal(18,2)"}}
        """)


# ----------------------------------------------------------------------------------- append temporal rules
def test_append_temporal_rules_period_bitemporal_snapshot(spark, finance):
    """append filters each source by its own temporal mode: period exact, bitemporal as-of, snapshot none."""
    write(finance, "datasets/adj_period.yml", adjustments_dataset(PERIOD_ADJ_ID, "adj_period", "period"))
    write(finance, "datasets/adj_bitemporal.yml", adjustments_dataset(BITEMPORAL_ADJ_ID, "adj_bitemporal",
                                                                      "bitemporal"))
    write(finance, "datasets/adj_snapshot.yml", adjustments_dataset(SNAPSHOT_ADJ_ID, "adj_snapshot", "snapshot"))
    write(finance, "data/adj_period/v1/adj_period.csv", """\
        description,account_code,amount_local,_period
        P 2025-12,4100,1.00,2025-12
        P 2026-01 a,4100,2.00,2026-01
        P 2026-01 b,1200,3.00,2026-01
        P 2026-02,4100,4.00,2026-02
        P 2026-Q1,4100,5.00,2026-Q1
        P 2026,4100,6.00,2026
        """)
    write(finance, "data/adj_bitemporal/v1/adj_bitemporal.csv", """\
        description,account_code,amount_local,_period_from,_period_to
        B ended at start,4100,10.00,2025-12-01,2026-01-01
        B open from start,4100,20.00,2026-01-01,
        B starts 2026-01-02,4100,30.00,2026-01-02,
        B spans January,4100,40.00,2025-01-01,2026-02-01
        B from February,4100,50.00,2026-02-01,
        """)
    write(finance, "data/adj_snapshot/v1/adj_snapshot.csv", """\
        description,account_code,amount_local
        S one,4100,100.00
        S two,1200,200.00
        """)
    add_project(finance, "append_modes", dedent("""
        - seq: 1
          name: Period adjustments
          type: append
          arguments:
            source: {dataset_id: adj_period}
        - seq: 2
          name: Bitemporal adjustments
          type: append
          arguments:
            source: {dataset_id: adj_bitemporal}
        - seq: 3
          name: Snapshot adjustments
          type: append
          arguments:
            source: {dataset_id: adj_snapshot}
            source_selector: amount_local > 0
        """) + OUTPUT.format(table="append_modes"), extra="resolver_overrides: {gl: monthly}\n")

    sources = {1: PERIOD_ADJ_ID, 2: BITEMPORAL_ADJ_ID, 3: SNAPSHOT_ADJ_ID}

    def check(rec, gl_rows, added):
        """Every row of the output: the GL lines unchanged, then the appended rows (seq, description, account,
        amount) with every other working column NULL and the system columns of created rows."""
        _, rows = read_output(spark, rec, 9)
        check_row_ids(rows, rec)
        assert in_gl_order([r for r in rows if r["journal_id"] is not None], "_row_id") == gl_expected(
            rec, raw_rows=gl_rows)
        empty = {c: None for c in GL_COLUMNS}
        expected = [{**empty, "description": desc, "account_code": acct, "amount_local": D(amount),
                     "_deleted": False, "_updated_at": started(rec), "_labels": "", "_source_dataset": sources[seq],
                     "_operation_seq": seq, "_period": rec["period"]["identifier"]}
                    for seq, desc, acct, amount in added]
        got = [r for r in without(rows, "_row_id") if r["journal_id"] is None]
        assert sorted(got, key=lambda r: (r["_operation_seq"], r["description"])) == expected
        assert len(rows) == len(gl_rows) + len(added)

    jan = run_ok(finance, "append_modes", "2026-01")
    check(jan, GL_ROWS, [
        (1, "P 2026-01 a", "4100", "2.00"), (1, "P 2026-01 b", "1200", "3.00"),
        (2, "B open from start", "4100", "20.00"), (2, "B spans January", "4100", "40.00"),
        (3, "S one", "4100", "100.00"), (3, "S two", "1200", "200.00"),
    ])
    assert [(a["operation_seq"], a["dataset_id"], a["dataset_version"]) for a in
            jan["resolver_snapshot"]["append_datasets"]] == [(1, PERIOD_ADJ_ID, 1), (2, BITEMPORAL_ADJ_ID, 1),
                                                             (3, SNAPSHOT_ADJ_ID, 1)]

    feb = run_ok(finance, "append_modes", "2026-02")
    check(feb, GL_FEB_MAR_ROWS[:2], [
        (1, "P 2026-02", "4100", "4.00"),
        (2, "B from February", "4100", "50.00"), (2, "B open from start", "4100", "20.00"),
        (2, "B starts 2026-01-02", "4100", "30.00"),
        (3, "S one", "4100", "100.00"), (3, "S two", "1200", "200.00"),
    ])


# ------------------------------------------------------------------------------------------- quarter run
def test_quarter_run_reads_three_monthly_locations(spark, finance):
    add_project(finance, "quarter_gl", OUTPUT.format(table="quarter_gl"), extra="resolver_overrides: {gl: monthly}\n")
    rec = run_ok(finance, "quarter_gl", "2026-Q1")
    assert rec["period"] == {"identifier": "2026-Q1", "start": "2026-01-01", "end": "2026-03-31"}
    snap = rec["resolver_snapshot"]
    assert (snap["input_dataset_id"], snap["input_dataset_version"], snap["input_resolver"]) == (GL_ID, 1, "monthly")
    assert snap["input_resolver_source"] == "project_override"
    monthly = finance / "data" / "gl" / "monthly"
    assert snap["input_locations"] == [str(monthly / f"2026-0{m}.csv") for m in (1, 2, 3)]
    out = output_entry(rec, 9)
    assert out["rows"] == 14 and out["location"].endswith("/_period=2026-Q1")
    cols, rows = read_output(spark, rec, 9)
    assert cols == GL_COLUMNS + SYSTEM_COLUMNS + ["_period"]
    check_row_ids(rows, rec)
    assert in_gl_order(rows, "_row_id") == gl_expected(rec, raw_rows=GL_ROWS + GL_FEB_MAR_ROWS)
    assert {r["_period"] for r in rows} == {"2026-Q1"}
    # a month of the same project reads one location
    feb = run_ok(finance, "quarter_gl", "2026-02")
    assert feb["resolver_snapshot"]["input_locations"] == [str(monthly / "2026-02.csv")]
    _, rows = read_output(spark, feb, 9)
    assert sorted((r["journal_id"], r["line_number"]) for r in rows) == [("JE-101", 1), ("JE-101", 2)]


# ------------------------------------------------------------------------------------------------ replay
def test_replay_reproduces_rows_after_project_and_dataset_change(spark, finance):
    add_project(finance, "replay_fx", dedent("""
        - seq: 1
          name: Convert to USD
          type: update
          selector: transactions.currency <> "USD"
          arguments:
            joins:
              - alias: fx
                dataset_id: exchange_rates
                on: 'transactions.currency = fx.from_currency AND fx.rate_type = "closing"'
            assignments:
              - column: amount_reporting
                expression: transactions.amount_local * fx.rate
              - column: converted_on
                expression: TODAY()
        """) + OUTPUT.format(table="replay_fx"))
    original = run_ok(finance, "replay_fx")
    _, rows = read_output(spark, original, 9, {"converted_on": "date"})
    rows = by_key(rows, "journal_id", "line_number")
    assert [str(r["amount_reporting"]) for r in rows] == [
        "15000.00", "15000.00", "9282.00", "-9282.00", "27962.00", "27962.00", "3200.00", "-3200.00", "16800.00",
        "16800.00"]
    today = started(original).date()
    assert [r["converted_on"] for r in rows] == [None if g[5] == "USD" else today for g in GL_ROWS]
    closing = {"EUR": "1.092", "GBP": "1.271", "JPY": "0.00672"}
    assert in_gl_order(rows, "_row_id") == gl_expected(original, converted_on=None, change=lambda r: {} if
                                                        r["currency"] == "USD" else {
        "amount_reporting": r["amount_local"] * D(closing[r["currency"]]), "converted_on": today,
        "_updated_at": started(original)})

    # change the project and publish a newer exchange_rates version
    edit(finance, "projects/replay_fx.yml", "transactions.amount_local * fx.rate",
         "transactions.amount_local * fx.rate * 2")
    edit(finance, "datasets/exchange_rates.yml", "  - {version: 1}\n", "  - {version: 1}\n  - {version: 2}\n")
    write(finance, "data/exchange_rates/v2/exchange_rates.csv", """\
        from_currency,to_currency,rate,rate_type,_period_from,_period_to
        EUR,USD,9.0000,closing,2020-01-01,
        GBP,USD,9.0000,closing,2020-01-01,
        JPY,USD,9.0000,closing,2020-01-01,
        """)

    result = cli(finance, "replay", original["run_id"])
    assert result.exit_code == 0, describe(result)
    assert f"Replaying run {original['run_id']} as " in result.stdout
    replay = record(finance, run_id_of(result))
    assert replay["run_id"] != original["run_id"]
    assert replay["parent_run_id"] == original["run_id"]
    assert replay["status"] == "completed"
    assert replay["project_snapshot"] == original["project_snapshot"]
    assert replay["sql_sha256"] == original["sql_sha256"]
    assert replay["period"] == original["period"]
    # the replay binds the original run start (same TODAY(), _updated_at, _row_id) but records its own start
    assert replay["run_started_at"] == original["run_started_at"] == original["started_at"]
    assert replay["started_at"] > original["started_at"]
    [join] = replay["resolver_snapshot"]["join_datasets"]
    assert (join["alias"], join["dataset_version"]) == ("fx", 1)
    assert output_entry(replay, 9)["location"] == output_entry(original, 9)["location"]
    _, replayed = read_output(spark, replay, 9, {"converted_on": "date"})
    # identical rows, _row_id and _updated_at included
    assert by_key(replayed, "journal_id", "line_number") == rows
    listed = cli(finance, "runs", "list").stdout.splitlines()
    assert listed[0].split()[0] == replay["run_id"] and f"replay of {original['run_id']}" in listed[0]

    # the changed project and the new rates do apply to a new run
    fresh = run_ok(finance, "replay_fx")
    _, rows = read_output(spark, fresh, 9, {"converted_on": "date"})
    assert [str(r["amount_reporting"]) for r in by_key(rows, "journal_id", "line_number")][2:4] == [
        "153000.00", "-153000.00"]
    assert cli(finance, "replay", "0000").exit_code == 1


# ----------------------------------------------------------------------------- atomic partition replacement
def _fail_swap(monkeypatch, after: int = 0):
    """Make the writer's partition swap raise, after letting ``after`` swaps succeed."""
    from ledgerflow.adapters.commit import swaps
    real = swaps._swap
    calls = []

    def failing(link, new_target):
        calls.append(link)
        if len(calls) > after:
            raise OSError(f"simulated failure swapping {link}")
        return real(link, new_target)
    monkeypatch.setattr(swaps, "_swap", failing)
    return calls


def test_atomic_partition_replacement(spark, finance, monkeypatch):
    add_project(finance, "atomic_gl", OUTPUT.format(table="atomic_gl"), extra="resolver_overrides: {gl: monthly}\n")
    first = run_ok(finance, "atomic_gl", "2026-01")
    location = output_entry(first, 9)["location"]
    second = run_ok(finance, "atomic_gl", "2026-01")
    assert output_entry(second, 9)["location"] == location
    _, rows = read_output(spark, second, 9)
    assert len(rows) == 10  # replaced, not appended
    check_row_ids(rows, second)  # every row is the second run's
    assert sorted(os.listdir(versions_dir(location))) == [second["run_id"]]  # the old version was dropped
    jan_rows = by_key(rows, "_row_id")

    # a write that fails midway: the run fails (exit 3), the previous partition stays readable and intact
    calls = _fail_swap(monkeypatch)
    result = run(finance, "atomic_gl", "2026-01", expect=3)
    assert calls and "simulated failure" in result.stderr
    failed = record(finance, run_id_of(result))
    assert failed["status"] == "failed" and failed["outputs"] == []
    _, rows = read_table(spark, location, "2026-01")
    assert by_key(rows, "_row_id") == jan_rows
    assert sorted(os.listdir(versions_dir(location))) == [second["run_id"]]  # the staged files were dropped
    monkeypatch.undo()

    # another period is its own partition; the first stays untouched
    feb = run_ok(finance, "atomic_gl", "2026-02")
    feb_location = output_entry(feb, 9)["location"]
    assert Path(feb_location).parent == Path(location).parent
    _, rows = read_output(spark, feb, 9)
    assert sorted((r["journal_id"], r["line_number"], r["_period"]) for r in rows) == [
        ("JE-101", 1, "2026-02"), ("JE-101", 2, "2026-02")]
    _, rows = read_table(spark, location, "2026-01")
    assert by_key(rows, "_row_id") == jan_rows
    # the whole destination holds both periods
    df = spark.read.option("header", "true").csv(str(Path(location).parent))
    assert sorted((r["_period"], r["c"]) for r in df.groupBy("_period").count().withColumnRenamed("count", "c")
                  .collect()) == [("2026-01", 10), ("2026-02", 2)]


def test_failed_write_of_second_output_leaves_every_output_unchanged(spark, finance, monkeypatch):
    """Two outputs; the second one's write fails: neither destination shows anything of the failed run."""
    first = run_ok(finance, "ts04_delete_inactive")
    before = {seq: by_key(read_output(spark, first, seq)[1], "_row_id") for seq in (3, 4)}
    calls = _fail_swap(monkeypatch, after=1)
    result = run(finance, "ts04_delete_inactive", expect=3)
    assert len(calls) >= 2, calls
    failed = record(finance, run_id_of(result))
    assert failed["status"] == "failed" and failed["outputs"] == []
    for seq in (3, 4):
        _, rows = read_table(spark, output_entry(first, seq)["location"], "2026-01")
        assert by_key(rows, "_row_id") == before[seq], f"output {seq} changed by a failed run"
        assert sorted(os.listdir(versions_dir(output_entry(first, seq)["location"]))) == [first["run_id"]]
    monkeypatch.undo()
    again = run_ok(finance, "ts04_delete_inactive")
    for seq, n in ((3, 9), (4, 10)):
        _, rows = read_output(spark, again, seq)
        assert len(rows) == n
        check_row_ids(rows, again)


# ------------------------------------------------------------------------------------- register_as_dataset
def test_register_as_dataset_latest_holding_period_and_pinned(spark, finance):
    add_project(finance, "snap_gl", dedent("""
        - seq: 1
          name: Stamp
          type: update
          arguments:
            assignments:
              - column: source_system
                expression: '"first"'
        - seq: 2
          name: Register
          type: output
          arguments:
            destination: {table: gl_snapshot}
            register_as_dataset: gl_snapshot
        """))
    v1 = run_ok(finance, "snap_gl", "2026-01")
    out = output_entry(v1, 2)
    assert (out["registered_dataset"], out["registered_version"], out["rows"]) == ("gl_snapshot", 1, 10)
    v1_location = out["location"]
    assert "/gl_snapshot/v1/" in v1_location
    edit(finance, "projects/snap_gl.yml", '\'"first"\'', '\'"second"\'')
    v2 = run_ok(finance, "snap_gl", "2026-01")
    out = output_entry(v2, 2)
    assert (out["registered_dataset"], out["registered_version"]) == ("gl_snapshot", 2)
    assert "/gl_snapshot/v2/" in out["location"]
    # a version for another period only
    v3 = run_ok(finance, "snap_gl", "2026-02")
    assert output_entry(v3, 2)["registered_version"] == 3

    add_project(finance, "from_snap", OUTPUT.format(table="from_snap"), input_dataset="gl_snapshot")
    add_project(finance, "from_snap_v1", OUTPUT.format(table="from_snap_v1"), input_dataset="gl_snapshot",
                extra="input_dataset_version: 1\n")

    latest = run_ok(finance, "from_snap", "2026-01")
    assert latest["resolver_snapshot"]["input_dataset_version"] == 2  # v3 does not hold 2026-01
    _, rows = read_output(spark, latest, 9)
    _, produced = read_output(spark, v2, 2)
    assert len(rows) == 10
    assert {r["source_system"] for r in rows} == {"second"}
    # the registered rows are read back as they were written, lineage columns included
    assert by_key(without(rows, "_period"), "_row_id") == by_key(without(produced, "_period"), "_row_id")
    assert {r["_source_dataset"] for r in rows} == {GL_ID}

    pinned = run_ok(finance, "from_snap_v1", "2026-01")
    assert pinned["resolver_snapshot"]["input_dataset_version"] == 1
    _, rows = read_output(spark, pinned, 9)
    _, produced = read_output(spark, v1, 2)
    assert {r["source_system"] for r in rows} == {"first"}
    assert by_key(without(rows, "_period"), "_row_id") == by_key(without(produced, "_period"), "_row_id")
    assert os.path.isdir(v1_location)  # an immutable version stays readable

    result = run(finance, "from_snap", "2026-03", expect=1)
    assert "gl_snapshot" in result.stderr and "2026-03" in result.stderr

    listed = [line.split() for line in cli(finance, "datasets", "list").stdout.splitlines()]
    assert ["gl_snapshot", "registered", "period", "active", "versions", "1,2,3"] in listed
    shown = cli(finance, "datasets", "show", "gl_snapshot")
    assert shown.exit_code == 0, describe(shown)
    lines = [line.strip() for line in shown.stdout.splitlines()]
    assert lines[0].startswith("gl_snapshot  id=") and lines[0].endswith("registered")
    for version, period, rec in ((1, "2026-01", v1), (2, "2026-01", v2), (3, "2026-02", v3)):
        line = next(ln for ln in lines if ln.startswith(f"version {version} "))
        assert f"periods={period}" in line and f"run={rec['run_id']}" in line
        assert f"/gl_snapshot/v{version}/" in line
    assert "column source_system: string" in lines and "column amount_local: decimal(18,2)" in lines


# --------------------------------------------------------------------------------- data vs. declarations
def test_uncastable_csv_value_fails_naming_dataset_column_location(spark, finance):
    csv = finance / "data" / "gl" / "v1" / "transactions.csv"
    edit(finance, "data/gl/v1/transactions.csv", "JE-003,1,2026-01-15,4200,CC-300,GBP,22000.00,",
         "JE-003,1,2026-01-15,4200,CC-300,GBP,22k,")
    result = run(finance, "ts01_output_only", expect=3)
    err = result.stderr
    assert "dataset 'gl'" in err and "column 'amount_local'" in err and str(csv) in err, err
    assert "'22k'" in err and "decimal(18,2)" in err, err
    assert "Traceback" not in err
    failed = record(finance, run_id_of(result))
    assert failed["status"] == "failed" and "column 'amount_local'" in failed["error"]
    assert not (finance / "data" / "ts01_transactions").exists()


def test_missing_declared_column_fails_before_execution(spark, finance):
    csv = finance / "data" / "gl" / "v1" / "transactions.csv"
    lines = csv.read_text().splitlines()
    csv.write_text("\n".join(",".join(ln.split(",")[:9] + ln.split(",")[10:]) for ln in lines) + "\n")
    assert "source_system" not in csv.read_text()
    result = run(finance, "ts01_output_only", expect=1)
    err = result.stderr
    assert "dataset 'gl'" in err and "source_system" in err and str(csv) in err, err
    assert "Traceback" not in err
    assert "[1] output" not in result.stdout  # no statement ran
    failed = record(finance, run_id_of(result))
    assert failed["status"] == "failed" and failed["outputs"] == []
    assert not (finance / "data" / "ts01_transactions").exists()


def test_the_period_is_parsed_once_and_travels_as_a_period(spark, finance, monkeypatch):
    """`ledgerflow run --period` parses the period once; the runner, the resolution, the parameters and the
    writers get that Period (before: the runner parsed the text again), and a run given a Period parses nothing."""
    import sys

    from ledgerflow.adapters.run.runner import Runner
    from ledgerflow.compiler import periods
    real, calls = periods.parse_period, []

    def counted(text):
        calls.append(text)
        return real(text)
    monkeypatch.setattr(periods, "parse_period", counted)
    for name, module in list(sys.modules.items()):
        if name.startswith("ledgerflow.adapters.") and getattr(module, "parse_period", None) is real:
            monkeypatch.setattr(module, "parse_period", counted)
    rec = run_ok(finance, "ts01_output_only", "2026-01")
    assert calls == ["2026-01"] and rec["period"]["identifier"] == "2026-01"
    calls.clear()
    rec = Runner(str(finance), echo=lambda _line: None, session_factory=lambda: spark).run(
        "ts01_output_only", real("2026-01"))
    assert calls == [] and rec["status"] == "completed" and rec["period"]["identifier"] == "2026-01"

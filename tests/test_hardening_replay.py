"""Honest replay end to end (TS-03 of the finance sample through the CLI): a run records the fingerprint
of every input it read, and `ledgerflow replay` refuses (exit 1, nothing written) when an input changed
or was deleted, unless --allow-changed-inputs, which the new run's record then states."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from cli_support import add_project, by_key, cli, describe, edit, output_entry, read_output, record, run_id_of, run_ok
from partition_support import shown

PROJECT = "ts03_fx_conversion"
RATES = "data/exchange_rates/v1/exchange_rates.csv"


def _rows(spark, rec: dict) -> list[dict]:
    _, rows = read_output(spark, rec, 2)
    return by_key(rows, "journal_id", "line_number")


def _partition(rec: dict) -> tuple[str, dict]:
    """The output partition as readers see it: its link target and every file's bytes."""
    link = output_entry(rec, 2)["location"]
    files = {}
    for folder, _dirs, names in os.walk(link, followlinks=True):
        for name in names:
            path = os.path.join(folder, name)
            files[os.path.relpath(path, link)] = Path(path).read_bytes()
    return shown(link), files


def _run_count(ws) -> int:
    return len(cli(ws, "runs", "list").stdout.splitlines())


def test_run_records_input_fingerprints(spark, finance):
    rec = run_ok(finance, PROJECT)
    prints = rec["resolver_snapshot"]["input_fingerprints"]
    assert [(p["dataset"], p["kind"], p["checked"]) for p in prints] == [("gl", "path", True),
                                                                         ("exchange_rates", "path", True)]
    rates = prints[1]
    assert rates["location"] == str(finance / RATES) and rates["dataset_version"] == 1
    st = os.stat(finance / RATES)
    [entry] = rates["files"]
    assert (entry["path"], entry["size"], entry["mtime_ns"]) == ("exchange_rates.csv", st.st_size, st.st_mtime_ns)
    assert len(entry["sha256"]) == 64
    # the run record fields (docs/run-record.md) are still there
    assert rec["resolver_snapshot"]["join_datasets"][0]["locations"] == [str(finance / RATES)]


def test_replay_refuses_an_edited_input_unless_allowed(spark, finance):
    original = run_ok(finance, PROJECT)
    rows = _rows(spark, original)
    before = _partition(original)
    runs = _run_count(finance)
    edit(finance, RATES, "EUR,USD,1.0920,closing,2026-01-01,", "EUR,USD,1.5000,closing,2026-01-01,")

    refused = cli(finance, "replay", original["run_id"])
    assert refused.exit_code == 1, describe(refused)
    err = " ".join(refused.stderr.split())
    assert f"dataset 'exchange_rates' v1 at {finance / RATES}: changed exchange_rates.csv (" in err, err
    assert "sha256" in err and "--allow-changed-inputs" in err and "Traceback" not in refused.stderr
    assert "dataset 'gl'" not in err  # only what changed is named
    assert _partition(original) == before  # the live partition untouched
    assert _run_count(finance) == runs  # nothing recorded, nothing run

    allowed = cli(finance, "replay", original["run_id"], "--allow-changed-inputs")
    assert allowed.exit_code == 0, describe(allowed)
    assert "Warning: replaying run" in allowed.stdout and "changed exchange_rates.csv" in allowed.stdout
    replay = record(finance, run_id_of(allowed))
    assert replay["parent_run_id"] == original["run_id"] and replay["allow_changed_inputs"] is True
    [change] = replay["inputs_changed"]
    assert (change["dataset"], change["location"], change["change"]) == (
        "exchange_rates", str(finance / RATES), "files")
    assert [c["path"] for c in change["changed"]] == ["exchange_rates.csv"]
    assert change["changed"][0]["before"]["sha256"] != change["changed"][0]["after"]["sha256"]
    assert replay["inputs_unverified"] == []
    replayed = _rows(spark, replay)
    eur = [r["amount_reporting"] for r in replayed if r["currency"] == "EUR"]
    assert [str(v) for v in eur] == ["12750.00", "-12750.00"]  # the new rate: it really read the changed file
    assert replayed != rows

    # the replay recorded what it read: replaying it now checks against the edited file and passes
    again = cli(finance, "replay", replay["run_id"])
    assert again.exit_code == 0, describe(again)
    assert record(finance, run_id_of(again))["inputs_changed"] == []


def test_unchanged_or_touched_inputs_replay_identically_but_a_same_size_edit_does_not(spark, finance):
    original = run_ok(finance, PROJECT)
    rows = _rows(spark, original)

    same = cli(finance, "replay", original["run_id"])
    assert same.exit_code == 0, describe(same)
    replay = record(finance, run_id_of(same))
    assert _rows(spark, replay) == rows  # _row_id and _updated_at included
    assert (replay["allow_changed_inputs"], replay["inputs_changed"], replay["inputs_unverified"]) == (False, [], [])
    assert "Warning" not in same.stdout and "Note" not in same.stdout

    # touched: new mtime, same bytes -> the hash says it is the same input
    path = finance / RATES
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 60_000_000_000))
    touched = cli(finance, "replay", original["run_id"])
    assert touched.exit_code == 0, describe(touched)
    assert _rows(spark, record(finance, run_id_of(touched))) == rows

    # same size, mtime put back: size and mtime alone would miss it, the hash does not
    edit(finance, RATES, "GBP,USD,1.2710,", "GBP,USD,1.2719,")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(path).st_size == st.st_size
    before = _partition(record(finance, run_id_of(touched)))
    refused = cli(finance, "replay", original["run_id"])
    assert refused.exit_code == 1, describe(refused)
    err = " ".join(refused.stderr.split())
    assert f"{finance / RATES}: changed exchange_rates.csv (sha256 " in err, err
    assert _partition(record(finance, run_id_of(touched))) == before


def test_replay_of_a_deleted_input_folder_exits_1(spark, finance):
    original = run_ok(finance, PROJECT)
    before = _partition(original)
    shutil.rmtree(finance / "data" / "exchange_rates")
    for extra in ([], ["--allow-changed-inputs"]):  # a deleted input cannot be replayed at all
        result = cli(finance, "replay", original["run_id"], *extra)
        assert result.exit_code == 1, describe(result)
        err = " ".join(result.stderr.split())
        assert "dataset 'exchange_rates' v1 " in err and f"{finance / RATES}: the location no longer exists" in err, err
        assert "Traceback" not in result.stderr
    assert _partition(original) == before


def test_old_record_without_fingerprints_replays_with_a_note(spark, finance):
    from ledgerflow.adapters.store.runstore import RunStore
    original = run_ok(finance, PROJECT)
    rows = _rows(spark, original)
    old = json.loads(json.dumps(original))
    del old["resolver_snapshot"]["input_fingerprints"]
    RunStore(str(finance)).save_run(old)

    result = cli(finance, "replay", original["run_id"])
    assert result.exit_code == 0, describe(result)
    assert "recorded without input fingerprints" in result.stdout and "cannot be verified" in result.stdout
    replay = record(finance, run_id_of(result))
    assert _rows(spark, replay) == rows
    assert sorted(u["dataset"] for u in replay["inputs_unverified"]) == ["exchange_rates", "gl"]
    assert len(replay["resolver_snapshot"]["input_fingerprints"]) == 2  # the replay itself is checkable

    # without fingerprints a deleted input is still a data reference error, not a Spark failure
    (finance / "data" / "gl" / "v1" / "transactions.csv").unlink()
    result = cli(finance, "replay", original["run_id"])
    assert result.exit_code == 1, describe(result)
    assert "transactions.csv: the location no longer exists" in " ".join(result.stderr.split())


def test_catalog_table_fingerprint(spark, tmp_path):
    from ledgerflow.adapters.inputs import fingerprint as fp
    folder = tmp_path / "rates_table"
    spark.sql(f"CREATE TABLE lf_fp_rates (code STRING, rate DECIMAL(18,6)) USING csv LOCATION '{folder}'")
    try:
        spark.sql("INSERT INTO lf_fp_rates VALUES ('EUR', 1.092)")
        before = fp.fingerprint_table(spark, "lf_fp_rates")
        assert before["checked"] and before["exists"] and before["provider"] == "csv"
        assert fp.local_path(before["table_location"]) == str(folder) and before["file_count"] == 1
        assert fp.compare(before, fp.fingerprint_table(spark, "lf_fp_rates")) is None
        spark.sql("INSERT INTO lf_fp_rates VALUES ('GBP', 1.271)")
        diff = fp.compare(before, fp.fingerprint_table(spark, "lf_fp_rates"))
        assert diff["change"] == "files" and len(diff["added"]) == 1
    finally:
        spark.sql("DROP TABLE IF EXISTS lf_fp_rates")
    assert fp.compare(before, fp.fingerprint_table(spark, "lf_fp_rates")) == {"change": "deleted"}
    spark.range(1).createOrReplaceTempView("lf_fp_view")
    view = fp.fingerprint_table(spark, "lf_fp_view")
    assert view["checked"] is False and "not fingerprinted" in view["reason"]


def test_replay_refuses_a_changed_catalog_table(spark, finance, tmp_path):
    edit(finance, "ledgerflow.yml", "  monthly:", '  catalog:\n    rules:\n      - name: cat\n        data_level: any\n'
         '        strategy: {type: table, table: "default.lf_h3_{{table_name}}"}\n  monthly:')
    text = (finance / "projects" / f"{PROJECT}.yml").read_text()
    add_project(finance, "fx_from_catalog", text.split("operations:\n", 1)[1].replace(
        "{table: ts03_fx_converted}", "{table: fx_from_catalog}"),  # a table of its own: one writer per destination
                extra="resolver_overrides: {exchange_rates: catalog}\n")
    rates = spark.read.option("header", "true").csv(str(finance / RATES))
    spark.sql("DROP TABLE IF EXISTS default.lf_h3_exchange_rates")
    rates.write.option("path", str(tmp_path / "rates_table")).saveAsTable("default.lf_h3_exchange_rates")
    try:
        original = run_ok(finance, "fx_from_catalog")
        table = original["resolver_snapshot"]["input_fingerprints"][1]
        assert (table["kind"], table["checked"], table["location"]) == ("table", True, "default.lf_h3_exchange_rates")
        assert table["provider"] == "parquet" and table["file_count"] >= 1
        same = cli(finance, "replay", original["run_id"])
        assert same.exit_code == 0, describe(same)
        assert record(finance, run_id_of(same))["inputs_changed"] == []

        before = _partition(original)
        spark.sql("INSERT INTO default.lf_h3_exchange_rates "
                  "VALUES ('CHF', 'USD', '1.1', 'closing', '2026-01-01', NULL)")
        refused = cli(finance, "replay", original["run_id"])
        assert refused.exit_code == 1, describe(refused)
        err = " ".join(refused.stderr.split())
        assert "dataset 'exchange_rates' v1 at default.lf_h3_exchange_rates: added part-" in err, err
        assert _partition(original) == before
    finally:
        spark.sql("DROP TABLE IF EXISTS default.lf_h3_exchange_rates")


def test_replay_of_a_run_with_another_row_identity_says_its_row_ids_differ(spark, finance):
    """Runs record how input _row_ids were derived (``row_identity``); a replay of a run recorded by an
    earlier ledgerflow (no such field) warns that rows arriving without _row_id get new ids, and a
    replay of a current run does not."""
    from ledgerflow.adapters.store.runstore import RunStore
    original = run_ok(finance, PROJECT)
    assert original["row_identity"] == 4  # system_columns.ROW_IDENTITY
    same = cli(finance, "replay", original["run_id"])
    assert same.exit_code == 0, describe(same)
    assert "earlier ledgerflow" not in same.stdout
    for earlier in (None, 2):  # no field (before issue 9), 2 (JSON-hashed identity); 3 is replayed as it was
        old = json.loads(json.dumps(original))
        if earlier is None:
            del old["row_identity"]
        else:
            old["row_identity"] = earlier
        RunStore(str(finance)).save_run(old)
        result = cli(finance, "replay", original["run_id"])
        assert result.exit_code == 0, describe(result)
        assert "recorded by an earlier ledgerflow" in result.stdout and "new _row_ids" in result.stdout

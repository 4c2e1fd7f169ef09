"""`ledgerflow restate` (issue 31 point 2): a closed project-period run again on purpose, with its reason, who,
the run it supersedes and the data diff in its record; the superseded rows stay readable. In-process on the
shared SparkSession (the CLI through click's runner: its exit codes are the command's).

The scenario: TS-03 converts January's GL to USD at the closing rates; January is closed; then the GBP
closing rate is corrected in place (1.2710 -> 1.2800), which moves the two GBP lines (22,000.00 each). Every
figure of the data diff is computed here from the sample's CSV files in plain Python.
"""
from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import signal
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest

from cli_support import cli, describe, edit, read_output, read_partition, record, run_id_of
from partition_support import shown

PROJECT, PERIOD = "ts03_fx_conversion", "2026-01"
RATES = "data/exchange_rates/v1/exchange_rates.csv"
OLD_GBP, NEW_GBP = "GBP,USD,1.2710,closing,2026-01-01,", "GBP,USD,1.2800,closing,2026-01-01,"
CENT = Decimal("0.01")


# ------------------------------------------------------------------ the hand computation (plain Python)
def _rows(path: Path) -> list[dict]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def _converted(ws: Path) -> dict[tuple, Decimal]:
    """(journal_id, line_number) -> amount_local x the closing rate valid on 2026-01-01, to the cent."""
    rates = {r["from_currency"]: Decimal(r["rate"]) for r in _rows(ws / RATES)
             if r["to_currency"] == "USD" and r["rate_type"] == "closing" and r["_period_from"] <= "2026-01-01"
             and (not r["_period_to"] or r["_period_to"] > "2026-01-01")}
    return {(r["journal_id"], r["line_number"]): (Decimal(r["amount_local"]) * rates[r["currency"]]).quantize(
        CENT, ROUND_HALF_UP) for r in _rows(ws / "data/gl/v1/transactions.csv") if r["_period"] == PERIOD}


def _tree(ws: Path) -> dict[str, str]:
    """Every file and link under the workspace: path -> its content's sha256 (a link: where it points)."""
    out = {}
    for folder, dirs, files in os.walk(ws):
        for name in dirs + files:
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, ws)
            if os.path.islink(path):
                out[rel] = "-> " + os.readlink(path)
            elif os.path.isfile(path):
                out[rel] = hashlib.sha256(open(path, "rb").read()).hexdigest()
    return out


@pytest.fixture
def closed(spark, finance) -> dict:
    """TS-03 run for January and January closed by alice; then the GBP closing rate corrected in place."""
    first = cli(finance, "run", PROJECT, "--period", PERIOD)
    assert first.exit_code == 0, describe(first)
    before = _converted(finance)
    r = cli(finance, "periods", "close", PERIOD, "--project", PROJECT, "--by", "alice", "--note", "reported")
    assert r.exit_code == 0, describe(r)
    edit(finance, RATES, OLD_GBP, NEW_GBP)
    return {"ws": finance, "run": run_id_of(first), "before": before, "after": _converted(finance)}


def test_restate_publishes_the_new_rows_records_why_and_the_diff_and_keeps_the_superseded_rows(spark, closed):
    ws, old = closed["ws"], closed["run"]
    old_rec = record(ws, old)
    old_folder = old_rec["commit"]["partitions"][0]["staged"]
    assert shown(old_rec["outputs"][0]["location"]) == shown(old_folder)

    r = cli(ws, "restate", PROJECT, "--period", PERIOD, "--reason", "GBP closing rate corrected", "--by", "bob")
    assert r.exit_code == 0, describe(r)
    new = run_id_of(r)
    rec = record(ws, new)
    assert rec["status"] == "completed"

    # the new rows are published: the two GBP lines at the corrected rate, the rest as before
    _, rows = read_output(spark, rec, 2)
    got = {(row["journal_id"], str(row["line_number"])): row["amount_reporting"] for row in rows}
    assert got == closed["after"]
    assert got[("JE-003", "1")] == Decimal("28160.00") != closed["before"][("JE-003", "1")]

    # the record: reason, by, the run it supersedes, where its rows stay, and the data diff, by hand
    block = rec["restatement"]
    assert (block["reason"], block["by"], block["supersedes_run_id"]) == ("GBP closing rate corrected", "bob", old)
    assert [(o["operation_seq"], o["version_folder"], o["rows"]) for o in block["superseded_outputs"]] == \
        [(2, old_folder, 10)]
    [out] = block["data_diff"]["outputs"]
    moved = {k for k in closed["before"] if closed["before"][k] != closed["after"][k]}
    assert moved == {("JE-003", "1"), ("JE-003", "2")}
    assert (out["name"], out["seq"], out["status"]) == ("Write converted lines", 2, "compared")
    assert out["rows"] == {"base": 10, "head": 10, "added": 0, "removed": 0, "changed": len(moved)}
    changed_columns = {c["column"]: c["changed_rows"] for c in out["columns"] if c["changed_rows"]}
    assert changed_columns == {"amount_reporting": 2}
    total = next(t for t in out["totals"] if t["column"] == "amount_reporting")
    base, head = sum(closed["before"].values()), sum(closed["after"].values())
    assert (Decimal(total["base"]), Decimal(total["head"]), Decimal(total["change"])) == \
        (base, head, head - base) and head - base == Decimal("396.00")
    assert {s["status"] for s in out["samples"]} == {"changed"} and len(out["samples"]) == 2

    # the restatement records its bridge as any run does (bridge: always, the default), every figure by hand:
    # the input's reporting amounts, the update's change to the corrected values, the rows written
    bridge = {b["measure"]: b for b in rec["bridge"] if b["output"] == 2}
    lines = [r for r in _rows(ws / "data/gl/v1/transactions.csv") if r["_period"] == PERIOD]
    given = sum(Decimal(r["amount_reporting"] or 0) for r in lines)
    assert (bridge["count"]["input"], bridge["count"]["output_value"]) == (len(lines), 10)
    assert [c["change"] for c in bridge["count"]["changes"]] == [0]
    reporting = bridge["SUM(amount_reporting)"]
    assert (Decimal(reporting["input"]), Decimal(reporting["output_value"])) == (given, head)
    assert Decimal(reporting["changes"][0]["change"]) == head - given != 0
    assert Decimal(bridge["SUM(amount_local)"]["changes"][0]["change"]) == 0
    assert "'Write converted lines': 10 -> 10 rows: 0 added, 0 removed, 2 changed" in r.stdout
    assert "amount_reporting moves by +396.00 net (396.00 gross) in 2 rows" in r.stdout
    assert f"superseded output 2 'Write converted lines' stays readable at {old_folder}" in r.stdout

    # the superseded version folder is still there and readable, with the rows it published
    _, old_rows = read_partition(spark, old_folder)
    assert {(row["journal_id"], str(row["line_number"])): row["amount_reporting"] for row in old_rows} == \
        closed["before"]
    clean = cli(ws, "runs", "clean")  # nor does `runs clean` retire it
    assert clean.exit_code == 0 and os.path.isdir(old_folder), describe(clean)

    # listed by run id, both ways; periods list: still closed, the restatement is the published run
    shown_old = cli(ws, "runs", "show", old)
    assert f"Superseded by restatement run {new}" in shown_old.stdout and old_folder in shown_old.stdout
    shown_new = cli(ws, "runs", "show", new)
    assert f"Restatement (reason: 'GBP closing rate corrected', by bob) superseding run {old}" in shown_new.stdout
    assert old_folder in shown_new.stdout
    listed = [line.split() for line in cli(ws, "periods", "list", "--period", PERIOD).stdout.splitlines()
              if PROJECT in line]
    assert [(line[2], line[3]) for line in listed] == [("closed", new)]
    # and a plain run of the period is still refused
    assert cli(ws, "run", PROJECT, "--period", PERIOD).exit_code == 1


def test_a_dry_run_prints_the_diff_and_changes_nothing_on_disk(spark, closed):
    ws = closed["ws"]
    before, handler = _tree(ws), signal.getsignal(signal.SIGINT)
    r = cli(ws, "restate", PROJECT, "--period", PERIOD, "--reason", "GBP rate", "--dry-run", "--format", "json")
    assert r.exit_code == 0, describe(r)
    assert signal.getsignal(signal.SIGINT) is handler  # Ctrl-C handled as in a run, then as before (in-process)
    assert _tree(ws) == before  # no staging folder, no version, no run record, the store's file unchanged
    [project] = json.loads(r.stdout)["projects"]
    [out] = project["outputs"]
    assert out["rows"] == {"base": 10, "head": 10, "added": 0, "removed": 0, "changed": 2}
    assert Decimal(next(t for t in out["totals"] if t["column"] == "amount_reporting")["change"]) == Decimal("396.00")
    text = cli(ws, "restate", PROJECT, "--period", PERIOD, "--reason", "GBP rate", "--dry-run")
    assert text.exit_code == 0, describe(text)
    assert "Dry run: nothing was published or recorded" in text.stdout
    assert f"would supersede run {closed['run']}" in text.stdout
    assert "amount_reporting moves by +396.00 net (396.00 gross) in 2 rows" in text.stdout
    assert "only on HEAD" not in text.stdout  # the computed rows compared as the published ones are read
    assert _tree(ws) == before


def test_bad_input_is_one_paragraph_and_nothing_is_written(spark, closed):
    ws = closed["ws"]
    before = _tree(ws)
    missing = cli(ws, "restate", PROJECT, "--period", PERIOD)
    assert missing.exit_code == 2 and "Missing option '--reason'" in missing.stderr, describe(missing)
    blank = cli(ws, "restate", PROJECT, "--period", PERIOD, "--reason", "  ")
    assert blank.exit_code == 1 and "RESTATE-001 a restatement needs a reason" in blank.stderr, describe(blank)
    opened = cli(ws, "restate", "ts01_output_only", "--period", PERIOD, "--reason", "why")
    assert opened.exit_code == 1, describe(opened)
    assert "RESTATE-002 period 2026-01 of project 'ts01_output_only' is open" in opened.stderr
    assert "`ledgerflow run ts01_output_only --period 2026-01`" in opened.stderr
    unknown = cli(ws, "restate", "no_such_project", "--period", PERIOD, "--reason", "why")
    assert unknown.exit_code == 1 and "no project 'no_such_project'" in unknown.stderr, describe(unknown)
    period = cli(ws, "restate", PROJECT, "--period", "2026-13", "--reason", "why")
    assert period.exit_code == 2, describe(period)
    assert _tree(ws) == before
    # an output to a catalog table: its published rows could not stay readable (refused before Spark)
    edit(ws, "projects/ts01_output_only.yml", "{table: ts01_transactions}", "{catalog_table: ts01_transactions}")
    assert cli(ws, "periods", "close", PERIOD, "--project", "ts01_output_only").exit_code == 0
    table = cli(ws, "restate", "ts01_output_only", "--period", PERIOD, "--reason", "why")
    assert table.exit_code == 1 and "RESTATE-003 output 1 'Write transactions'" in table.stderr, describe(table)
    # the superseded rows gone from the folder the record names: nothing to compare with
    shutil.rmtree(record(ws, closed["run"])["commit"]["partitions"][0]["staged"])
    gone = cli(ws, "restate", PROJECT, "--period", PERIOD, "--reason", "why")
    assert gone.exit_code == 1 and "RESTATE-004 the rows run" in gone.stderr, describe(gone)
    assert not list((ws / "target" / "runs").iterdir())[1:]  # still the one run


def test_a_run_published_meanwhile_fails_the_restatement_before_its_swaps():
    """RESTATE-005: the hook compares the published run again once the outputs are staged (no Spark needed to
    refuse)."""
    from types import SimpleNamespace

    from ledgerflow.adapters.periods.restate_publish import RestatementPublishing, RestateError, Superseded
    store = SimpleNamespace(last_published=lambda project, period, project_id=None: {"run_id": "run-b"})
    ctx = SimpleNamespace(project=SimpleNamespace(name=PROJECT, id="p-1"), period=SimpleNamespace(identifier=PERIOD))
    record: dict = {}
    hook = RestatementPublishing(record, ctx, None, {"reason": "r"}, Superseded("run-a"), store, print)
    assert record["restatement"] == {"reason": "r"}  # in the record from the start of the writes
    with pytest.raises(RestateError, match="RESTATE-005 run run-b published period 2026-01 of project "
                                           "'ts03_fx_conversion' while this restatement ran"):
        hook.evaluate(record)


def test_a_registered_output_is_restated_as_a_new_version_and_datasets_show_lists_the_superseded_one(spark, finance):
    first = cli(finance, "run", "close_conversion", "--period", PERIOD)
    assert first.exit_code == 0, describe(first)
    old = run_id_of(first)
    assert cli(finance, "periods", "close", PERIOD, "--project", "close_conversion").exit_code == 0
    edit(finance, RATES, OLD_GBP, NEW_GBP)
    r = cli(finance, "restate", "close_conversion", "--period", PERIOD, "--reason", "GBP rate", "--by", "bob")
    assert r.exit_code == 0, describe(r)
    new = run_id_of(r)
    rec = record(finance, new)
    assert [(o["registered_dataset"], o["registered_version"]) for o in rec["outputs"]] == [("close_converted", 2)]
    [out] = rec["restatement"]["data_diff"]["outputs"]
    assert out["rows"] == {"base": 10, "head": 10, "added": 0, "removed": 0, "changed": 2}
    assert Decimal(next(t for t in out["totals"] if t["column"] == "amount_reporting")["change"]) == Decimal("396.00")
    old_folder = rec["restatement"]["superseded_outputs"][0]["version_folder"]
    assert "close_converted/v1/" in old_folder and os.path.isdir(old_folder)
    listed = cli(finance, "datasets", "show", "close_converted")
    assert listed.exit_code == 0, describe(listed)
    versions = [line for line in listed.stdout.splitlines() if line.startswith("  version")]
    assert len(versions) == 2 and f"run={old}  (superseded by restatement run {new}: stays readable)" in versions[0]
    assert versions[1].endswith(f"run={new}")


def test_a_period_closed_before_anything_was_published_is_restated_with_every_row_added(spark, finance):
    assert cli(finance, "periods", "close", PERIOD, "--project", "ts01_output_only").exit_code == 0
    r = cli(finance, "restate", "ts01_output_only", "--period", PERIOD, "--reason", "first publication")
    assert r.exit_code == 0, describe(r)
    block = record(finance, run_id_of(r))["restatement"]
    assert block["supersedes_run_id"] is None and block["superseded_outputs"] == []
    [out] = block["data_diff"]["outputs"]
    assert (out["status"], out["rows"]["added"], out["rows"]["head"]) == ("added", 10, 10)
    assert "supersedes nothing published" in r.stdout



def test_a_restatement_judges_the_checks_and_one_that_fails_publishes_nothing(spark, finance):
    """journal_controls (Parquet, checks before publish): a late journal that does not balance fails the
    restatement (exit 4, recorded failed, the published rows stand); balanced, it is restated: 2 rows added."""
    gl = finance / "data/gl/v1/transactions.csv"
    first = cli(finance, "run", "journal_controls", "--period", PERIOD)
    assert first.exit_code == 0, describe(first)
    old = run_id_of(first)
    published = shown(record(finance, old)["outputs"][0]["location"])
    assert cli(finance, "periods", "close", PERIOD, "--project", "journal_controls").exit_code == 0
    late = ("JE-006,1,2026-01-30,5100,CC-100,EUR,700.00,,Late supplies,EXPENSE,2026-01\n"
            "JE-006,2,2026-01-30,2100,CC-100,EUR,-650.00,,AP - late supplies,EXPENSE,2026-01\n")
    gl.write_text(gl.read_text() + late)
    failed = cli(finance, "restate", "journal_controls", "--period", PERIOD, "--reason", "late journal")
    assert failed.exit_code == 4, describe(failed)
    bad = record(finance, run_id_of(failed))
    assert bad["status"] == "failed" and bad["restatement"]["supersedes_run_id"] == old
    assert shown(record(finance, old)["outputs"][0]["location"]) == published  # the published rows stand
    listed = cli(finance, "periods", "list", "--period", PERIOD, "--project", "journal_controls").stdout
    assert f"closed  {old}" in listed
    gl.write_text(gl.read_text().replace("-650.00,,AP - late", "-700.00,,AP - late"))
    r = cli(finance, "restate", "journal_controls", "--period", PERIOD, "--reason", "late journal")
    assert r.exit_code == 0, describe(r)
    rec = record(finance, run_id_of(r))
    assert {c["name"]: c["status"] for c in rec["checks"]}["journals_balance"] == "passed"
    [out] = rec["restatement"]["data_diff"]["outputs"]
    assert out["rows"] == {"base": 10, "head": 12, "added": 2, "removed": 0, "changed": 0}
    assert {t["column"]: t["change"] for t in out["totals"]} == {"amount_local": "0.00", "amount_signed": "0.00"}
    assert sorted(s["values"]["amount_local"]["head"] for s in out["samples"]) == ["-700.00", "700.00"]
    assert os.path.isdir(published)  # the superseded version, still there


def test_two_outputs_of_one_name_are_each_in_the_restatements_data_diff(spark, finance):
    """Output names need not be unique: each output is compared with the rows the same output published
    (by its seq), not one of them dropped because the other has its name."""
    from cli_support import add_project
    add_project(finance, "dup_names", """
        - {seq: 1, name: Out, type: output, arguments: {destination: {path: out/dup_a, format: parquet}}}
        - {seq: 2, name: Drop revenue, type: delete, selector: "account_code = '4100'"}
        - {seq: 3, name: Out, type: output, arguments: {destination: {path: out/dup_b, format: csv}}}
        """)
    first = cli(finance, "run", "dup_names", "--period", PERIOD)
    assert first.exit_code == 0, describe(first)
    assert cli(finance, "periods", "close", PERIOD, "--project", "dup_names").exit_code == 0
    edit(finance, "data/gl/v1/transactions.csv", "JE-001,2,2026-01-05,1200,CC-100,USD,15000.00,15000.00,",
         "JE-001,2,2026-01-05,1200,CC-100,USD,15500.00,15500.00,")
    dry = cli(finance, "restate", "dup_names", "--period", PERIOD, "--reason", "x", "--dry-run", "--format", "json")
    assert dry.exit_code == 0, describe(dry)
    [project] = json.loads(dry.stdout[dry.stdout.index("{"):])["projects"]
    assert sorted((o["seq"], o["rows"]["added"], o["rows"]["removed"]) for o in project["outputs"]) == [
        (1, 1, 1), (3, 1, 1)], project
    r = cli(finance, "restate", "dup_names", "--period", PERIOD, "--reason", "JE-001 line 2 corrected")
    assert r.exit_code == 0, describe(r)
    outs = record(finance, run_id_of(r))["restatement"]["data_diff"]["outputs"]
    # the corrected line's content is its identity (a CSV row without _row_id): one row removed, one added
    assert sorted((o["seq"], o["rows"]["changed"], o["rows"]["added"], o["rows"]["removed"]) for o in outs) == [
        (1, 0, 1, 1), (3, 0, 1, 1)], outs
    for o in outs:
        assert Decimal(next(t for t in o["totals"] if t["column"] == "amount_local")["change"]) == Decimal("500.00")


def test_an_output_the_project_no_longer_writes_is_published_empty_and_its_rows_stay_readable(spark, finance):
    """The data diff reports a dropped output's rows removed: the published partition must say so too, not go on
    showing them beside the restated outputs."""
    from cli_support import add_project
    two = """
        - {seq: 1, name: Lines, type: output, arguments: {destination: {path: out/kept_lines, format: parquet}}}
        - {seq: 2, name: Copy, type: output, arguments: {destination: {path: out/dropped_copy, format: parquet}}}
        """
    add_project(finance, "drops_one", two)
    first = cli(finance, "run", "drops_one", "--period", PERIOD)
    assert first.exit_code == 0, describe(first)
    published = {o["operation_seq"]: o for o in record(finance, run_id_of(first))["outputs"]}
    assert cli(finance, "periods", "close", PERIOD, "--project", "drops_one").exit_code == 0
    dropped = published[2]["location"]
    old_folder = shown(dropped)
    add_project(finance, "drops_one", two.split("        - {seq: 2")[0])  # output 2 removed from the project
    dry = cli(finance, "restate", "drops_one", "--period", PERIOD, "--reason", "the copy is retired", "--dry-run")
    assert dry.exit_code == 0, describe(dry)
    assert (f"output 2 'Copy' is not written by the project any more: its partition {dropped} would be published "
            "empty") in dry.output
    assert shown(dropped) == old_folder  # a dry run changes nothing
    r = cli(finance, "restate", "drops_one", "--period", PERIOD, "--reason", "the copy is retired")
    assert r.exit_code == 0, describe(r)
    rec = record(finance, run_id_of(r))
    assert rec["restatement"]["emptied_outputs"] == [{"operation_seq": 2, "name": "Copy", "location": dropped}]
    assert "is published empty" in r.output
    listed = cli(finance, "runs", "show", rec["run_id"])
    assert f"output 2 'Copy' is not written by the project any more: its partition {dropped} is published empty" \
        in listed.stdout, describe(listed)
    outs = {o["seq"]: o for o in rec["restatement"]["data_diff"]["outputs"]}
    assert outs[2]["rows"]["removed"] == published[2]["rows"] > 0 and outs[2]["rows"]["added"] == 0
    assert (outs[2]["name"], outs[2]["status"]) == ("Copy", "removed")  # its seq, not in place of how rows match
    assert spark.read.parquet(dropped).count() == 0  # what readers of the partition see now
    assert shown(dropped) != old_folder
    assert spark.read.parquet(old_folder).count() == published[2]["rows"]  # the superseded rows, still readable
    assert spark.read.parquet(published[1]["location"]).count() == published[1]["rows"]


def _run_and_close(ws, name: str, operations: str, extra: str = "") -> dict:
    """Project ``name`` run for January and January closed: its outputs' record entries by seq."""
    from cli_support import add_project
    add_project(ws, name, operations, extra=extra)
    first = cli(ws, "run", name, "--period", PERIOD)
    assert first.exit_code == 0, describe(first)
    assert cli(ws, "periods", "close", PERIOD, "--project", name).exit_code == 0
    return {o["operation_seq"]: o for o in record(ws, run_id_of(first))["outputs"]}


def test_a_dropped_outputs_folder_a_quarantine_now_writes_keeps_the_quarantined_rows(spark, finance):
    from cli_support import add_project
    two = """
        - {seq: 1, name: Lines, type: output, arguments: {destination: {path: out/q_lines, format: parquet}}}
        - {seq: 2, name: Copy, type: output, arguments: {destination: {path: out/q_copy, format: parquet}}}
        """
    published = _run_and_close(finance, "requarantined", two)
    checks = ("checks:\n  - {name: positive, on: 1, expect: 'amount_local > 0', on_violation: quarantine, "
              "quarantine: {path: out/q_copy, format: parquet}}\n")
    add_project(finance, "requarantined", two.split("        - {seq: 2")[0], extra=checks)
    r = cli(finance, "restate", "requarantined", "--period", PERIOD, "--reason", "negative lines set aside")
    assert r.exit_code == 0, describe(r)
    rec = record(finance, run_id_of(r))
    assert "emptied_outputs" not in rec["restatement"]  # the quarantine writes that partition: not emptied
    [check] = rec["checks"]
    assert check["quarantined"] > 0
    assert spark.read.parquet(published[2]["location"]).count() == check["quarantined"]


def test_a_quarantine_the_restated_run_no_longer_fills_is_published_empty(spark, finance):
    """The superseded run quarantined two lines (a failing check set them aside); the restated project only warns
    on them, so they stay in the output. Left published, the quarantine partition would still show the same two
    lines: counted twice. It is published empty, its rows kept readable in their version folder."""
    from cli_support import add_project
    lines = "\n        - {seq: 1, name: Lines, type: output, arguments: {destination: {path: out/w_lines, format: parquet}}}\n"
    quarantine = ("checks:\n  - {name: positive, on: 1, expect: 'amount_local > 0', on_violation: quarantine, "
                  "quarantine: {path: out/w_held, format: parquet}}\n")
    published = _run_and_close(finance, "set_aside", lines, extra=quarantine)
    held = finance / "out" / "w_held" / f"_period={PERIOD}"
    before = spark.read.parquet(str(held)).count()
    assert before > 0
    add_project(finance, "set_aside", lines, extra=quarantine.replace("on_violation: quarantine, quarantine: "
                                                                       "{path: out/w_held, format: parquet}",
                                                                       "on_violation: warn"))
    r = cli(finance, "restate", "set_aside", "--period", PERIOD, "--reason", "negative lines kept, with a warning")
    assert r.exit_code == 0, describe(r)
    rec = record(finance, run_id_of(r))
    assert [(e["operation_seq"], e["location"]) for e in rec["restatement"]["emptied_outputs"]] == [(None, str(held))]
    assert "the restated run quarantines no row here: its partition" in r.stdout
    assert spark.read.parquet(str(held)).count() == 0
    out = spark.read.parquet(rec["outputs"][0]["location"])
    assert out.count() == published[1]["rows"] + before  # the lines set aside are in the output, once


def test_a_csv_outputs_decimal_places_the_restatement_rounds_away_are_a_change(spark, finance):
    """The superseded CSV held fees such as 10.365600 (8,400.00 x 0.001234); the restated project rounds them to the
    cent (10.37). Read at the restated output's scale, the superseded text was 10.37 too: no change reported."""
    fee = "{seq: 1, name: Fee, type: update, arguments: {assignments: [{column: fee, expression: '%s'}]}}"
    out = "{seq: 2, name: Lines, type: output, arguments: {destination: {path: out/fees, format: csv}}}"
    ops = lambda expression: f"\n        - {fee % expression}\n        - {out}\n"  # noqa: E731
    _run_and_close(finance, "fees", ops("ABS(transactions.amount_local) * 0.001234"))
    from cli_support import add_project
    add_project(finance, "fees", ops("ROUND(ABS(transactions.amount_local) * 0.001234, 2)"))
    r = cli(finance, "restate", "fees", "--period", PERIOD, "--reason", "fees rounded to the cent")
    assert r.exit_code == 0, describe(r)
    [diff] = record(finance, run_id_of(r))["restatement"]["data_diff"]["outputs"]
    changed = {c["column"]: c["changed_rows"] for c in diff["columns"]}
    assert changed["fee"] > 0 and diff["rows"]["changed"] == changed["fee"], diff
    total = next(t for t in diff["totals"] if t["column"] == "fee")
    assert Decimal(total["base"]) != Decimal(total["head"]) and Decimal(total["gross"]) > 0, total


def test_a_dropped_output_that_published_no_row_is_left_as_it_is(spark, finance):
    """A JSON partition of no row holds no schema to write an empty one with; it is empty already."""
    from cli_support import add_project
    ops = """
        - {seq: 1, name: Lines, type: output, arguments: {destination: {path: out/z_lines, format: parquet}}}
        - {seq: 2, name: Drop all, type: delete, selector: '1 = 1', arguments: {}}
        - {seq: 3, name: Copy, type: output, arguments: {destination: {path: out/z_copy, format: json}}}
        """
    published = _run_and_close(finance, "nothing_left", ops)
    assert published[3]["rows"] == 0
    add_project(finance, "nothing_left", ops.split("        - {seq: 2")[0])
    r = cli(finance, "restate", "nothing_left", "--period", PERIOD, "--reason", "the copy is retired")
    assert r.exit_code == 0, describe(r)
    assert "emptied_outputs" not in record(finance, run_id_of(r))["restatement"]


def test_a_dropped_output_at_an_absolute_resolver_path_is_published_empty(spark, finance, tmp_path):
    from cli_support import add_project
    far = tmp_path / "far"
    config = (finance / "ledgerflow.yml").read_text().replace("resolvers:\n", (
        "resolvers:\n  abs:\n    rules:\n      - name: far\n        data_level: any\n        strategy: {type: path, "
        f"path: \"{far}/{{{{table_name}}}}\", format: parquet}}\n"), 1)
    (finance / "ledgerflow.yml").write_text(config)
    two = """
        - {seq: 1, name: Lines, type: output, arguments: {destination: {path: out/a_lines, format: parquet}}}
        - {seq: 2, name: Copy, type: output, arguments: {destination: {table: far_copy, resolver: abs}}}
        """
    published = _run_and_close(finance, "far_copy_dropped", two)
    assert str(far) in published[2]["location"]
    add_project(finance, "far_copy_dropped", two.split("        - {seq: 2")[0])
    r = cli(finance, "restate", "far_copy_dropped", "--period", PERIOD, "--reason", "the copy is retired")
    assert r.exit_code == 0, describe(r)
    assert [e["operation_seq"] for e in record(finance, run_id_of(r))["restatement"]["emptied_outputs"]] == [2]
    assert spark.read.parquet(published[2]["location"]).count() == 0


def test_restating_a_project_left_without_outputs_is_refused(spark, finance):
    from cli_support import add_project
    published = _run_and_close(finance, "no_outputs", "- {seq: 1, name: Copy, type: output, arguments: "
                                "{destination: {path: out/zero_copy, format: parquet}}}")
    add_project(finance, "no_outputs", "[]")
    before = _tree(finance)
    r = cli(finance, "restate", "no_outputs", "--period", PERIOD, "--reason", "retired")
    assert r.exit_code == 1 and "RESTATE-006" in r.output and "writes no output any more" in r.output, describe(r)
    assert _tree(finance) == before
    assert spark.read.parquet(published[1]["location"]).count() == published[1]["rows"] > 0

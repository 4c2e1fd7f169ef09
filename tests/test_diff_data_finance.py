"""Data diffs a finance reviewer can read (issue 43 point 7): per decimal column the net and the gross change (a
+68.00 / -68.00 correction moves 0.00 net and 136.00 gross); an aggregate output (a trial balance) matched by
its group-by keys, or by ``--key``; a rate copied from a join compared row by row and never totalled; no blank
ids and a footer saying how rows were matched; a restatement's report headed as a restatement. In text,
markdown and JSON, in ``diff --data``, ``restate --dry-run`` and the run record.

The scenario (January 2026 of the finance sample): ``tb_lines`` converts each GL line at the closing rate and
copies the rate (``fx_rate = fx.rate``); ``tb`` does the same and writes the trial balance by account, without
``_row_id``. HEAD corrects JE-004 (+68.00 on its debit line, -68.00 on its credit line) and declares version 2
of the rates with the GBP closing rate corrected (1.2710 -> 1.2800, the two GBP lines of JE-003).
"""
from __future__ import annotations

import json
import shutil
from decimal import Decimal

import pytest

from cli_support import cli, describe, edit, record, run_id_of, write
from ledgerflow.adapters.diff.data_diff import data_diff

D = Decimal
CONVERT = """
  - seq: 1
    name: Convert at the closing rate
    type: update
    arguments:
      joins:
        - alias: fx
          dataset_id: exchange_rates
          on: 'transactions.currency = fx.from_currency AND fx.to_currency = "USD" AND fx.rate_type = "closing"'
      assignments:
        - column: fx_rate
          expression: fx.rate
        - column: amount_reporting
          expression: transactions.amount_local * fx.rate
"""
CORRECTION = """
  - seq: 2
    name: Correct JE-004
    type: update
    selector: 'transactions.journal_id = "JE-004"'
    arguments:
      assignments:
        - column: amount_local
          expression: 'IF(transactions.line_number = 1, transactions.amount_local + 68, transactions.amount_local - 68)'
"""
LINES = """
  - seq: 9
    name: Write converted lines
    type: output
    arguments:
      destination: {table: tb_lines}
"""
TB = """
  - seq: 5
    name: Trial balance by account
    type: aggregate
    arguments:
      group_by: [transactions.account_code]
      aggregations:
        - column: balance
          expression: SUM(transactions.amount_local)
        - column: line_count
          expression: COUNT(transactions.journal_id)
  - seq: 9
    name: Write the trial balance
    type: output
    selector: NOT ISNULL(transactions.line_count)
    arguments:
      destination: {table: tb}
      columns: [account_code, balance, line_count]
"""
OLD_GBP, NEW_GBP = "GBP,USD,1.2710,closing,2026-01-01,", "GBP,USD,1.2800,closing,2026-01-01,"


def project(pid: str, name: str, *operations: str) -> str:
    return (f"id: 0e000000-0000-4000-8000-{pid}\nname: {name}\nversion: 1\nstatus: active\ninput_dataset_id: gl\n"
            "operations:" + "".join(operations))


def write_projects(ws, correction: bool) -> None:
    extra = (CORRECTION,) if correction else ()
    write(ws, "projects/tb_lines.yml", project("000000000001", "tb_lines", CONVERT, *extra, LINES))
    write(ws, "projects/tb.yml", project("000000000002", "tb", CONVERT, *extra, TB))


@pytest.fixture(scope="module")
def sides(tmp_path_factory) -> dict:
    """Two workspace folders: BASE the sample with tb and tb_lines; HEAD with the correction and rates v2."""
    from conftest import copy_workspace
    root = tmp_path_factory.mktemp("finance-diff")
    base = copy_workspace("finance", root / "base")
    write_projects(base, correction=False)
    head = root / "head"
    shutil.copytree(base, head)
    write_projects(head, correction=True)
    edit(head, "datasets/exchange_rates.yml", "  - {version: 1}\n", "  - {version: 1}\n  - {version: 2}\n")
    text = (head / "data" / "exchange_rates" / "v1" / "exchange_rates.csv").read_text()
    write(head, "data/exchange_rates/v2/exchange_rates.csv", text.replace(OLD_GBP, NEW_GBP))
    return {"base": base, "head": head}


def diff(sides: dict, *args: str):
    return cli(sides["head"], "diff", "--data", "--period", "2026-01", str(sides["base"]), str(sides["head"]),
               "--project", "tb", "--project", "tb_lines", *args)


@pytest.fixture(scope="module")
def reports(spark, sides) -> dict:
    """The data diff in the three formats: computed once by the command (``--format json``), and the text and
    markdown rendered from that same report by the function the command prints with (each computed on its own,
    the three diffs took a minute of the suite)."""
    from ledgerflow.adapters.diff import data_command
    from ledgerflow.adapters.diff.data_formats import render_data
    computed = []

    def keep(report, fmt):
        computed.append(report)
        return render_data(report, fmt)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(data_command, "render_data", keep)
        r = diff(sides, "--format", "json")
    assert r.exit_code == 4, describe(r)
    (report,) = computed
    assert json.loads(r.stdout) == json.loads(render_data(report, "json"))
    return {"json": r.stdout, "text": render_data(report, "text"), "markdown": render_data(report, "markdown")}


def outputs(report: dict) -> dict:
    return {(p["name"], o["name"]): o for p in report["projects"] for o in p["outputs"]}


# ------------------------------------------------------------------------------------------ net and gross
def test_a_correction_that_nets_to_zero_shows_its_gross_change(reports):
    out = outputs(json.loads(reports["json"]))
    lines = out[("tb_lines", "Write converted lines")]
    totals = {t["column"]: t for t in lines["totals"]}
    # amount_local: +68.00 on JE-004/1, -68.00 on JE-004/2
    assert (totals["amount_local"]["change"], totals["amount_local"]["gross"]) == ("0.00", "136.00")
    # amount_reporting (converted before the correction): the two GBP lines, +198.00 each (22,000.00 x 0.009)
    assert (D(totals["amount_reporting"]["change"]), D(totals["amount_reporting"]["gross"])) == (D("396.00"),
                                                                                                 D("396.00"))
    assert "tb_lines 'Write converted lines' amount_local moves by +0.00 net (136.00 gross) in 2 rows" in reports["text"]
    assert "total amount_local: " in reports["text"] and "(net +0.00, gross 136.00)" in reports["text"]
    assert "`amount_local` moves by **+0.00** net (**136.00** gross) in 2 rows" in reports["markdown"]
    assert "| `amount_local` | 5,074,000.00 | 5,074,000.00 | +0.00 | 136.00 |" in reports["markdown"]


def test_gross_counts_added_and_removed_rows_whole_and_per_group(spark):
    schema = "_row_id string, grp string, amount decimal(10,2)"
    base = spark.createDataFrame([("a", "x", D("68.00")), ("b", "x", D("-68.00")), ("c", "y", D("5.00"))], schema)
    head = spark.createDataFrame([("a", "x", D("0.00")), ("b", "x", D("0.00")), ("d", "y", D("-7.00"))], schema)
    o = data_diff({"o": base}, {"o": head}, ["grp"]).outputs[0]
    [t] = o.totals
    assert (t.change, t.gross) == (D("-12.00"), D("148.00"))  # 68 + 68 + 5 (removed) + 7 (added)
    assert {g.key["grp"]: (g.changes["amount"], g.gross["amount"]) for g in o.groups} == {
        "x": (D("0.00"), D("136.00")), "y": (D("-12.00"), D("12.00"))}


# -------------------------------------------------------------------------------- an aggregate output's rows
def test_a_trial_balance_is_matched_by_its_group_by_keys(reports):
    tb = outputs(json.loads(reports["json"]))[("tb", "Write the trial balance")]
    assert (tb["match"], tb["key"]) == ("group_by", ["account_code"])
    # accounts 5200 (3,200.00 -> 3,268.00) and 2100 (-11,700.00 -> -11,768.00) changed; nothing added or removed
    assert tb["rows"] == {"base": 6, "head": 6, "added": 0, "removed": 0, "changed": 2}
    balance = next(t for t in tb["totals"] if t["column"] == "balance")
    assert (balance["change"], balance["gross"]) == ("0.00", "136.00")
    assert sorted((s["key"]["account_code"], s["status"], s["row_id"]) for s in tb["samples"]) == [
        ("2100", "changed", None), ("5200", "changed", None)]
    assert {s["key"]["account_code"]: s["values"]["balance"] for s in tb["samples"]}["5200"] == {
        "base": "3200.00", "head": "3268.00"}
    text = reports["text"]
    assert "output 'Write the trial balance': 6 -> 6 rows: 0 added, 0 removed, 2 changed; rows matched by the " \
           "group-by keys account_code" in text
    assert "changed account_code=5200: balance 3,200.00 -> 3,268.00" in text
    assert "output 'Write converted lines': 10 -> 10 rows: 0 added, 0 removed, 4 changed; rows matched by _row_id" \
        in text


def test_markdown_has_no_blank_ids_and_says_how_rows_were_matched(reports):
    md = reports["markdown"]
    tb_section = md[md.index("#### `tb` `Write the trial balance`"):]
    tb_section = tb_section[:tb_section.index("</details>")]
    assert "Rows matched by the group-by keys `account_code`." in tb_section
    assert "| `account_code` | status | column | BASE | HEAD |" in tb_section and "_row_id" not in tb_section
    assert "| `5200` | changed | `balance` | `3,200.00` | `3,268.00` |" in tb_section
    for line in md.splitlines():  # a sample row's first cell (its id or key) is never empty
        if line.startswith("| ") and ("| changed |" in line or "| added |" in line or "| removed |" in line):
            assert not line.startswith("| |"), line
    assert md.rstrip().splitlines()[-1] == (
        "_Rows matched by the group-by keys `account_code` in `tb` `Write the trial balance`; by `_row_id` in "
        "`tb_lines` `Write converted lines`; not compared: `_updated_at`, `_operation_seq`._")


def test_group_by_keys_that_repeat_fall_back_to_whole_rows_and_say_so(spark):
    from ledgerflow.compiler.diff.data_match import OutputMatch
    schema = "account string, balance decimal(10,2)"
    base = spark.createDataFrame([("1000", D("1.00")), ("1000", D("2.00"))], schema)
    head = spark.createDataFrame([("1000", D("1.00")), ("1000", D("2.50"))], schema)
    o = data_diff({"o": base}, {"o": head}, matches={"o": OutputMatch(("account",))}).outputs[0]
    assert (o.match, o.added, o.removed) == ("rows", 1, 1)
    assert "group-by keys account repeat (2 rows on the BASE side have account=1000)" in o.match_note


def test_null_group_keys_match_each_other(spark):
    from ledgerflow.compiler.diff.data_match import OutputMatch
    schema = "account string, balance decimal(10,2)"
    base = spark.createDataFrame([(None, D("1.00")), ("1000", D("2.00"))], schema)
    head = spark.createDataFrame([(None, D("1.50")), ("1000", D("2.00"))], schema)
    o = data_diff({"o": base}, {"o": head}, matches={"o": OutputMatch(("account",))}).outputs[0]
    assert (o.match, o.added, o.removed, o.changed) == ("group_by", 0, 0, 1)
    assert o.samples[0].key == {"account": None} and o.samples[0].row_id is None


# ------------------------------------------------------------------------------------------------- --key
def test_key_chooses_the_match_and_a_repeating_one_is_refused(spark, sides):
    r = diff(sides, "--key", "account_code", "--format", "json")  # tb_lines: account_code repeats
    assert r.exit_code == 1, describe(r)
    assert "--key account_code does not identify the rows of output 'Write converted lines'" in r.stderr
    assert "matching by it would multiply rows" in r.stderr
    r = cli(sides["head"], "diff", "--data", "--period", "2026-01", str(sides["base"]), str(sides["head"]),
            "--project", "tb", "--key", "account_code,line_count", "--format", "json")
    assert r.exit_code == 4, describe(r)
    [tb] = json.loads(r.stdout)["projects"][0]["outputs"]
    assert (tb["match"], tb["key"]) == ("key", ["account_code", "line_count"])
    assert json.loads(r.stdout)["key"] == ["account_code", "line_count"]
    assert tb["rows"]["changed"] == 2


def test_a_key_that_is_not_a_column_is_a_usage_error(sides):
    r = diff(sides, "--key", "account")
    assert r.exit_code == 2, describe(r)
    assert "--key account: output" in r.stderr and "has no such column" in r.stderr
    r = cli(sides["head"], "diff", "--key", "account_code")
    assert r.exit_code == 2 and "--key belongs to `ledgerflow diff --data`" in r.stderr, describe(r)


# ------------------------------------------------------------------------------------- copied from a join
def test_a_rate_copied_from_a_join_is_compared_per_row_and_never_totalled(reports):
    lines = outputs(json.loads(reports["json"]))[("tb_lines", "Write converted lines")]
    assert lines["copied_columns"] == ["fx_rate"]
    assert "fx_rate" not in {t["column"] for t in lines["totals"]}
    assert {c["column"]: c["changed_rows"] for c in lines["columns"]}["fx_rate"] == 2  # the two GBP lines
    assert "fx_rate changes in 2 rows (copied from a join: compared row by row, not totalled)" in reports["text"]
    assert "column fx_rate: 2 changed (copied from a join: not totalled)" in reports["text"]
    assert "fx_rate moves" not in reports["text"] and "`fx_rate` moves" not in reports["markdown"]


# ---------------------------------------------------------------------------------------------- restatement
def test_a_restatement_is_headed_as_one_with_the_same_figures_in_its_record(spark, tmp_path):
    from conftest import copy_workspace
    ws = copy_workspace("finance", tmp_path / "ws")
    write_projects(ws, correction=False)
    first = cli(ws, "run", "tb", "--period", "2026-01")
    assert first.exit_code == 0, describe(first)
    old = run_id_of(first)
    closed = cli(ws, "periods", "close", "2026-01", "--project", "tb", "--by", "alice", "--note", "reported")
    assert closed.exit_code == 0, describe(closed)
    write_projects(ws, correction=True)
    args = ("restate", "tb", "--period", "2026-01", "--reason", "JE-004 corrected", "--by", "bob")

    dry = cli(ws, *args, "--dry-run")
    assert dry.exit_code == 0, describe(dry)
    assert "ledgerflow diff --data" not in dry.stdout
    assert ("Restatement (dry run, nothing published) of project 'tb', period 2026-01 (reason: 'JE-004 corrected', "
            f"by bob): published run {old} -> restatement (dry run)") in dry.stdout
    assert "balance moves by +0.00 net (136.00 gross) in 2 rows" in dry.stdout
    md = cli(ws, *args, "--dry-run", "--format", "markdown")
    assert md.exit_code == 0, describe(md)
    assert "### Restatement (dry run, nothing published) of `tb`, January 2026:" in md.stdout
    assert f"Reason: `JE-004` corrected; by `bob`; supersedes run `{old}`." in md.stdout
    assert "ledgerflow diff --data" not in md.stdout
    js = cli(ws, *args, "--dry-run", "--format", "json")
    doc = json.loads(js.stdout)
    assert doc["restatement"] == {"project": "tb", "period": "2026-01", "reason": "JE-004 corrected", "by": "bob",
                                  "supersedes_run_id": old, "run_id": None, "dry_run": True}
    [dry_tb] = doc["projects"][0]["outputs"]
    assert (dry_tb["match"], dry_tb["rows"]["changed"]) == ("group_by", 2)

    done = cli(ws, *args)
    assert done.exit_code == 0, describe(done)
    new = run_id_of(done)
    assert (f"Restatement run {new} of project 'tb', period 2026-01 (reason: 'JE-004 corrected', by bob): "
            f"published run {old} -> restatement run {new}") in done.stdout
    [recorded] = record(ws, new)["restatement"]["data_diff"]["outputs"]
    assert (recorded["match"], recorded["key"]) == ("group_by", ["account_code"])
    assert recorded["rows"] == {"base": 6, "head": 6, "added": 0, "removed": 0, "changed": 2}
    balance = next(t for t in recorded["totals"] if t["column"] == "balance")
    assert (balance["change"], balance["gross"]) == ("0.00", "136.00")
    assert recorded == dry_tb | {"seq": recorded["seq"]}  # the record says what the dry run said


# ------------------------------------------------------------------------------- without Spark: the rules
def test_the_plan_says_which_outputs_are_keyed_by_group_by_and_which_columns_are_copied(tmp_path):
    from conftest import copy_workspace
    from ledgerflow.compiler.compile import compile_project
    from ledgerflow.compiler.diff.data_match import output_matches
    from ledgerflow.compiler.workspace import load_workspace
    ws_root = copy_workspace("finance", tmp_path / "ws")
    write_projects(ws_root, correction=True)
    ws = load_workspace(str(ws_root))

    def matches(name):
        return output_matches(compile_project(ws, ws.find_project(name)).plan)
    # the registered totals leave _row_id out and write both group-by columns
    assert matches("close_consolidation")[3].group_by == ("region", "account_type")
    assert matches("tb")[9].group_by == ("account_code",) and "fx_rate" not in matches("tb")[9].copied
    lines = matches("tb_lines")[9]
    assert lines.group_by == () and "fx_rate" in lines.copied  # copied as it is from the joined rates
    assert not {"amount_reporting", "amount_local"} & lines.copied  # computed from the rate, or not from a join
    assert matches("ts05_aggregate_by_type")[3].group_by == ()  # it writes _row_id: matched by it
    assert "amount_reporting" not in matches("ts03_fx_conversion")[2].copied


def test_a_row_compared_whole_shows_its_values_and_no_id():
    from ledgerflow.adapters.diff.data_formats import render_markdown, render_text
    from ledgerflow.adapters.diff.data_result import (DataDiff, OutputDataDiff, ProjectDataDiff, SampleRow,
                                                      WorkspaceDataDiff)
    o = OutputDataDiff("slim", match="rows", base_rows=1, head_rows=1, added=1, removed=1, samples=[
        SampleRow(None, "removed", {"account": ("1000", None), "amount": (D("5.00"), None)}),
        SampleRow(None, "added", {"account": (None, "1000"), "amount": (None, D("6.00"))})])
    report = WorkspaceDataDiff("a", "b", "2026-01", [], [ProjectDataDiff("p", "compared", DataDiff([o]))])
    text = render_text(report)
    assert "    removed row: account 1000, amount 5.00" in text and "    added row: account 1000, amount 6.00" in text
    assert "-> NULL" not in text and "rows matched as whole rows (no _row_id, no key)" in text
    md = render_markdown(report)
    assert "| status | column | BASE | HEAD |" in md and "_row_id |" not in md
    assert "| removed | `account` | `1000` | — |" in md and "| added | `amount` | — | `6.00` |" in md
    assert md.rstrip().endswith("_Rows matched as whole rows (no `_row_id`, no key); not compared: `_updated_at`, "
                                "`_operation_seq`._")


def test_runs_show_of_a_restatement_shows_a_correction_that_nets_to_zero_and_how_rows_were_matched():
    from ledgerflow.adapters.store.restatements import restatement_lines
    diff = {"outputs": [{"name": "Trial balance", "rows": {"base": 4, "head": 4, "added": 0, "removed": 0, "changed": 2},
                         "match": "group_by", "key": ["account"],
                         "totals": [{"column": "amount", "base": "0.00", "head": "0.00", "change": "0.00",
                                     "gross": "136.00"},
                                    {"column": "other", "base": "1.00", "head": "1.00", "change": "0.00",
                                     "gross": "0.00"}]}]}
    rec = {"status": "completed", "restatement": {"reason": "JE-7", "by": "ann", "supersedes_run_id": "r1",
                                                  "data_diff": diff}}
    line = [x for x in restatement_lines(rec, []) if "data diff" in x][0]
    assert line == ("  data diff, output 'Trial balance': 4 -> 4 rows: 0 added, 0 removed, 2 changed; "
                    "amount 0.00 -> 0.00 (gross 136.00); rows matched by the group-by keys account")

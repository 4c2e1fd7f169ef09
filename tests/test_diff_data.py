"""`ledgerflow diff --data` (issue 31 point 3): both sides run on the same inputs, nothing written, every figure
checked against a hand computation over the sample's CSV files (plain Python, not ledgerflow).

The repository holds the finance sample in `repo/ws`, committed as C0; C1 corrects the GBP closing rate of
January 2026 (a new version 2 of `exchange_rates`, as a data correction is declared); C2 narrows the named
selector of `ts08_named_selector` to the EMEA consulting cost centres.
"""
from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner

from ledgerflow.adapters.cli import main
from ledgerflow.adapters.diff.data_diff import data_diff

from test_diff import commit, edit, git
from conftest import cli_env

CENT = Decimal("0.01")
OLD_GBP = "GBP,USD,1.2710,closing,2026-01-01,"
NEW_GBP = "GBP,USD,1.2800,closing,2026-01-01,"
OLD_SELECTOR = """EMEA: 'cc.region = "EMEA"'"""
NEW_SELECTOR = """EMEA: 'cc.region = "EMEA" AND cc.department = "Consulting"'"""


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> dict:
    """C0 the sample; C1 a corrected GBP rate (exchange_rates v2); C2 a narrower selector in ts08."""
    from conftest import copy_workspace
    root = tmp_path_factory.mktemp("diffdata") / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    ws = copy_workspace("finance", root / "ws")
    c0 = commit(root, "sample")
    edit(ws / "datasets" / "exchange_rates.yml", "  - {version: 1}\n", "  - {version: 1}\n  - {version: 2}\n")
    v2 = ws / "data" / "exchange_rates" / "v2"
    v2.mkdir()
    text = (ws / "data" / "exchange_rates" / "v1" / "exchange_rates.csv").read_text()
    assert OLD_GBP in text
    (v2 / "exchange_rates.csv").write_text(text.replace(OLD_GBP, NEW_GBP))
    c1 = commit(root, "correct the GBP closing rate of January 2026")
    edit(ws / "projects" / "ts08_named_selector.yml", OLD_SELECTOR, NEW_SELECTOR)
    c2 = commit(root, "uplift the consulting cost centres only")
    return {"root": root, "ws": ws, "c0": c0, "c1": c1, "c2": c2}


def run(ws: Path, *args: str):
    return CliRunner().invoke(main, ["--workspace", str(ws), "diff", "--data", *args])


def nothing_written(repo: dict) -> None:
    ws = repo["ws"]
    assert not (ws / ".ledgerflow").exists()  # no run store, no run record, no registered version
    assert not [p for p in (ws / "data").iterdir() if p.name.startswith(("ts0", "close_"))]  # no output folder
    assert git(repo["root"], "status", "--porcelain") == ""


# ------------------------------------------------------------------ the hand computation (plain Python)
def rows(path: Path) -> list[dict]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def gl(ws: Path) -> list[dict]:
    return [r for r in rows(ws / "data" / "gl" / "v1" / "transactions.csv") if r["_period"] == "2026-01"]


def closing_rates(ws: Path, version: int) -> dict:
    """currency -> the closing rate to USD valid on 2026-01-01 (the bitemporal as-of rule)."""
    out = {}
    for r in rows(ws / "data" / "exchange_rates" / f"v{version}" / "exchange_rates.csv"):
        if r["to_currency"] == "USD" and r["rate_type"] == "closing" and r["_period_from"] <= "2026-01-01" \
                and (r["_period_to"] == "" or r["_period_to"] > "2026-01-01"):
            out[r["from_currency"]] = Decimal(r["rate"])
    return out


def money(value: Decimal) -> Decimal:
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def output_of(doc: dict, project: str) -> dict:
    p = next(p for p in doc["projects"] if p["name"] == project)
    assert p["status"] == "compared", p
    assert len(p["outputs"]) == 1
    return p["outputs"][0]


def changed_counts(out: dict) -> dict:
    return {c["column"]: c["changed_rows"] for c in out["columns"] if c["changed_rows"]}


def totals(out: dict) -> dict:
    return {t["column"]: (Decimal(t["base"]), Decimal(t["head"]), Decimal(t["change"])) for t in out["totals"]}


# ------------------------------------------------------------------------------------------- the figures
def test_fx_rate_change_every_figure(spark, repo):
    ws = repo["ws"]
    result = run(ws, "--period", "2026-01", repo["c0"], repo["c1"], "--project", "close_conversion",
                 "--by", "account_type", "--format", "json")
    assert result.exit_code == 4, result.output
    out = output_of(json.loads(result.stdout), "close_conversion")

    lines = gl(ws)
    before, after = closing_rates(ws, 1), closing_rates(ws, 2)
    types = {r["code"]: r["type"] for r in rows(ws / "data" / "accounts" / "v2" / "accounts.csv")}
    base = [money(Decimal(r["amount_local"]) * before[r["currency"]]) for r in lines]
    head = [money(Decimal(r["amount_local"]) * after[r["currency"]]) for r in lines]
    moved = [i for i in range(len(lines)) if base[i] != head[i]]
    groups: dict = {}
    for i in moved:
        key = types[lines[i]["account_code"]]
        n, change = groups.get(key, (0, Decimal(0)))
        groups[key] = (n + 1, change + head[i] - base[i])

    assert len(moved) == 2  # the two GBP lines
    assert out["rows"] == {"base": len(lines), "head": len(lines), "added": 0, "removed": 0, "changed": len(moved)}
    assert changed_counts(out) == {"amount_reporting": len(moved)}
    local = sum(Decimal(r["amount_local"]) for r in lines)
    assert totals(out) == {"amount_local": (local, local, Decimal(0)),
                           "amount_reporting": (sum(base), sum(head), sum(head) - sum(base))}
    assert sum(head) - sum(base) == Decimal("396.00")
    assert {g["key"]["account_type"]: (g["rows"], Decimal(g["changes"]["amount_reporting"])) for g in out["groups"]} \
        == groups
    assert sorted((s["status"], s["values"]["amount_reporting"]["base"], s["values"]["amount_reporting"]["head"])
                  for s in out["samples"]) == sorted(("changed", str(base[i]), str(head[i])) for i in moved)
    assert all(set(s["values"]) == {"amount_reporting"} for s in out["samples"])
    assert [s["row_id"] for s in out["samples"]] == sorted(s["row_id"] for s in out["samples"])
    nothing_written(repo)


def test_changed_selector_every_figure_and_the_pull_request_comment(spark, repo):
    ws = repo["ws"]
    args = ("--period", "2026-01", repo["c1"], repo["c2"], "--project", "ts08_named_selector",
            "--by", "cost_center_code")
    result = run(ws, *args, "--format", "json")
    assert result.exit_code == 4, result.output
    out = output_of(json.loads(result.stdout), "ts08_named_selector")

    lines = gl(ws)
    centres = {r["code"]: r for r in rows(ws / "data" / "cost_centers" / "v1" / "cost_centers.csv")}

    def uplifted(r: dict, narrow: bool) -> Decimal:
        cc = centres[r["cost_center_code"]]
        chosen = cc["region"] == "EMEA" and (not narrow or cc["department"] == "Consulting")
        amount = Decimal(r["amount_local"])
        return money(amount * Decimal("1.05")) if chosen else amount
    base = [uplifted(r, False) for r in lines]
    head = [uplifted(r, True) for r in lines]
    moved = [i for i in range(len(lines)) if base[i] != head[i]]
    groups: dict = {}
    for i in moved:
        n, change = groups.get(lines[i]["cost_center_code"], (0, Decimal(0)))
        groups[lines[i]["cost_center_code"]] = (n + 1, change + head[i] - base[i])
    reporting = sum(Decimal(r["amount_reporting"]) for r in lines if r["amount_reporting"])

    assert len(moved) == 4 and sum(head) - sum(base) == Decimal("-250000.00")  # JE-002 and JE-005, CC-200
    gross = sum(abs(head[i] - base[i]) for i in moved)  # JE-002's -425.00 and +425.00 net to nothing
    assert gross == Decimal("250850.00")
    assert Decimal(next(t for t in out["totals"] if t["column"] == "amount_local")["gross"]) == gross
    assert out["rows"] == {"base": len(lines), "head": len(lines), "added": 0, "removed": 0, "changed": len(moved)}
    assert changed_counts(out) == {"amount_local": len(moved)}  # _updated_at differs too: not compared
    assert totals(out) == {"amount_local": (sum(base), sum(head), sum(head) - sum(base)),
                           "amount_reporting": (reporting, reporting, Decimal(0))}
    assert {g["key"]["cost_center_code"]: (g["rows"], Decimal(g["changes"]["amount_local"])) for g in out["groups"]} \
        == groups
    assert sorted((s["values"]["amount_local"]["base"], s["values"]["amount_local"]["head"]) for s in out["samples"]) \
        == sorted((str(base[i]), str(head[i])) for i in moved)

    markdown = run(ws, *args, "--format", "markdown")
    assert markdown.exit_code == 4, markdown.output
    assert ("- January 2026: `ts08_named_selector` `Write uplifted lines` `amount_local` moves by **-250,000.00** "
            "net (**250,850.00** gross) in 4 rows") in markdown.stdout
    assert ("| `cost_center_code` | rows | `amount_local` net | `amount_local` gross | `amount_reporting` net | "
            "`amount_reporting` gross |") in markdown.stdout
    assert "| `CC-200` | 4 | -250,000.00 | 250,850.00 | +0.00 | 0.00 |" in markdown.stdout
    text = run(ws, *args)
    assert "amount_local moves by -250,000.00 net (250,850.00 gross) in 4 rows" in text.stdout
    assert "by cost_center_code=CC-200: 4 rows; amount_local net -250,000.00, gross 250,850.00" in text.stdout
    nothing_written(repo)


def test_same_rows_exit_0_and_unchanged_projects_are_not_run(spark, repo, tmp_path):
    ws = repo["ws"]
    path = ws / "projects" / "ts03_fx_conversion.yml"
    try:
        edit(path, "expression: transactions.amount_local * fx.rate", "expression: fx.rate * transactions.amount_local")
        result = run(ws, "--period", "2026-01", "--format", "json")
        assert result.exit_code == 0, result.output
        doc = json.loads(result.stdout)
        statuses = {p["name"]: p["status"] for p in doc["projects"]}
        assert statuses.pop("ts03_fx_conversion") == "compared"
        assert set(statuses.values()) == {"unchanged"}
        out = output_of(doc, "ts03_fx_conversion")
        assert out["rows"]["changed"] == 0 and out["rows"]["base"] == 10 and out["samples"] == []
    finally:
        git(repo["root"], "checkout", "--", ".")


def test_spark_failure_exits_3_naming_the_side(spark, repo):
    """HEAD joins every rate type: EUR matches two rates, the run-time multiplicity check fails on Spark."""
    ws = repo["ws"]
    try:
        edit(ws / "projects" / "ts03_fx_conversion.yml", ' AND fx.rate_type = "closing"', "")
        result = run(ws, "--period", "2026-01", "--project", "ts03_fx_conversion")
        assert result.exit_code == 3, result.output
        assert "project 'ts03_fx_conversion' on the head side (working tree) failed on Spark" in result.stderr
        assert "Traceback" not in result.output
        assert not (ws / ".ledgerflow").exists()
    finally:
        git(repo["root"], "checkout", "--", ".")


# ------------------------------------------------------------------------------------------- bad input
def test_a_side_that_does_not_compile_is_named(repo, tmp_path):
    ws = repo["ws"]
    try:
        edit(ws / "projects" / "ts03_fx_conversion.yml", "transactions.amount_local * fx.rate",
             "transactions.no_such_column * fx.rate")
        result = run(ws, "--period", "2026-01")
        assert result.exit_code == 1, result.output
        assert result.stderr.startswith("Error: head (working tree) does not compile:")
        assert "no_such_column" in result.stderr and "Traceback" not in result.output
        broken = tmp_path / "broken"
        shutil.copytree(ws, broken, ignore=shutil.ignore_patterns("data"))
        result = run(ws, "--period", "2026-01", str(broken), repo["c2"])  # a folder as BASE: that side fails
        assert result.exit_code == 1, result.output
        assert result.stderr.startswith(f"Error: base ({broken}) does not compile:")
    finally:
        git(repo["root"], "checkout", "--", ".")
    assert not (ws / ".ledgerflow").exists()


def test_a_side_reading_a_dataset_the_other_does_not_have(repo):
    ws = repo["ws"]
    regions = ws / "datasets" / "regions.yml"
    try:
        regions.write_text("id: 0a000000-0000-4000-8000-0000000000aa\nname: regions\nstatus: active\nversions:\n"
                           "  - {version: 1}\nmain_table:\n  name: regions\n  temporal_mode: snapshot\n  columns:\n"
                           "    - {name: code, type: string}\n    - {name: region, type: string}\n")
        edit(ws / "projects" / "ts08_named_selector.yml", "          on: transactions.cost_center_code = cc.code\n",
             "          on: transactions.cost_center_code = cc.code\n        - alias: rg\n          dataset_id: regions\n"
             "          on: transactions.cost_center_code = rg.code\n")
        result = run(ws, "--period", "2026-01", "--project", "ts08_named_selector")
        assert result.exit_code == 1, result.output
        assert ("project 'ts08_named_selector' on the head side (working tree) reads dataset 'regions', which the "
                "base side (HEAD (") in result.stderr
        assert "cannot run on the same inputs" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    finally:
        regions.unlink()
        git(repo["root"], "checkout", "--", ".")
    assert not (ws / ".ledgerflow").exists()


def test_by_a_column_an_output_lacks(repo):
    result = run(repo["ws"], "--period", "2026-01", repo["c1"], repo["c2"], "--by", "account_type")
    assert result.exit_code == 1, result.output
    assert ("--by account_type: output 'Write uplifted lines' of project 'ts08_named_selector' has no such column "
            "on either side (its columns: journal_id, line_number,") in result.stderr
    assert not (repo["ws"] / ".ledgerflow").exists()


@pytest.mark.parametrize("args, says", [
    (["--data"], "diff --data needs --period P"),
    (["--period", "2026-01"], "--period belongs to `ledgerflow diff --data`"),
    (["--by", "x"], "--by belongs to `ledgerflow diff --data`"),
    (["--data", "--period", "2026-01", "--fail-on", "any"], "--fail-on is for the compiled diff"),
    (["--data", "--period", "2026-13"], "2026-13"),
])
def test_usage_errors(repo, args, says):
    result = CliRunner().invoke(main, ["--workspace", str(repo["ws"]), "diff", *args])
    assert result.exit_code == 2, result.output
    assert says in result.stderr


# ------------------------------------------------------------------------------- data_diff on its own
def test_data_diff_counts_null_safe_ignored_columns_groups_and_samples(spark):
    """Rows matched by _row_id: NULL = NULL is no change, _updated_at is not compared, a removed row is grouped
    by its BASE value, an output on one side only is added or removed."""
    schema = "_row_id string, grp string, name string, amount decimal(10,2), _updated_at timestamp"
    import datetime
    t0, t1 = datetime.datetime(2026, 1, 1), datetime.datetime(2026, 2, 1)
    d = Decimal
    base = spark.createDataFrame([("a", "x", None, d("1.00"), t0), ("b", "x", None, d("2.00"), t0),
                                  ("c", "y", "c", d("5.00"), t0), ("d", "y", "d", None, t0)], schema)
    head = spark.createDataFrame([("a", "x", None, d("1.00"), t1), ("b", "x", "now", d("2.50"), t0),
                                  ("d", "y", "d", None, t0), ("e", "z", "e", d("7.00"), t0)], schema)
    result = data_diff({"o": base, "gone": base}, {"o": head, "new": head}, ["grp"])
    o, new, gone = result.outputs[0], result.outputs[1], result.outputs[2]
    assert (o.name, new.name, gone.name) == ("o", "new", "gone")
    assert (new.status, new.added, gone.status, gone.removed) == ("added", 4, "removed", 4)
    assert (o.base_rows, o.head_rows, o.added, o.removed, o.changed) == (4, 4, 1, 1, 1)
    assert {c.column: c.changed_rows for c in o.columns} == {"grp": 0, "name": 1, "amount": 1}
    assert [(t.column, t.base, t.head, t.change) for t in o.totals] == [("amount", d("8.00"), d("10.50"), d("2.50"))]
    assert {g.key["grp"]: (g.added, g.removed, g.changed, g.changes["amount"]) for g in o.groups} == {
        "x": (0, 0, 1, d("0.50")), "y": (0, 1, 0, d("-5.00")), "z": (1, 0, 0, d("7.00"))}
    assert [(s.row_id, s.status) for s in o.samples] == [("b", "changed"), ("c", "removed"), ("e", "added")]
    assert o.samples[0].values == {"name": (None, "now"), "amount": (d("2.00"), d("2.50"))}
    assert result.found and json.loads(json.dumps(result.to_json()))["outputs"][0]["totals"][0]["change"] == "2.50"


def test_an_output_without_row_id_is_compared_as_whole_rows(spark):
    schema = "journal_id string, amount decimal(10,2)"
    d = Decimal
    base = spark.createDataFrame([("J1", d("1.00")), ("J1", d("1.00")), ("J2", d("2.00"))], schema)
    head = spark.createDataFrame([("J1", d("1.00")), ("J2", d("2.00")), ("J3", d("3.00"))], schema)
    o = data_diff({"slim": base}, {"slim": head}).outputs[0]
    assert (o.match, o.base_rows, o.head_rows, o.added, o.removed, o.changed) == ("rows", 3, 3, 1, 1, 0)
    assert [(t.base, t.head) for t in o.totals] == [(d("4.00"), d("6.00"))]
    assert sorted(s.status for s in o.samples) == ["added", "removed"]


# ------------------------------------------------------------------------------------- the real process
def test_exit_4_from_the_real_process_and_nothing_written(repo, tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    proc = subprocess.run([sys.executable, "-m", "ledgerflow.adapters.cli", "diff", "--data", "--period", "2026-01",
                           repo["c0"], repo["c1"], "--project", "ts03_fx_conversion", "--format", "markdown"],
                          cwd=repo["ws"], capture_output=True, text=True, env=cli_env(TMPDIR=str(scratch)))
    assert proc.returncode == 4, proc.stderr
    assert "`ts03_fx_conversion` `Write converted lines` `amount_reporting` moves by **+396.00** net (**396.00** gross) in 2 rows" \
        in proc.stdout
    assert list(scratch.iterdir()) == []  # the revisions' exports are removed
    nothing_written(repo)


def test_a_row_whose_row_id_is_null_is_counted_on_its_side_and_said(spark):
    """Matching by `_row_id` dropped a row without an id from its side's count (4 -> 2 rows reported for 3 on each
    side, and an all-NULL removed row): such a row matches nothing, is counted on its side, and the report says
    so (counted in the diff's one aggregation)."""
    from ledgerflow.adapters.diff.data_diff import compare_output

    def side(ids):
        return spark.createDataFrame([(i, n, Decimal(f"{10 * n}.00")) for i, n in zip(ids, (1, 2, 3))],
                                     "_row_id string, line int, amount decimal(18,2)")
    missing = side(["id-1", None, "id-3"])
    out = compare_output("lines", missing, missing)
    assert out.match == "_row_id" and out.match_note.startswith("`_row_id` is NULL in some rows")
    assert (out.base_rows, out.head_rows, out.added, out.removed, out.changed) == (3, 3, 1, 1, 0)
    assert [(t.column, t.base, t.head) for t in out.totals] == [("amount", Decimal("60.00"), Decimal("60.00"))]
    assert compare_output("lines", side(["id-1", "id-2", "id-3"]), side(["id-1", "id-2", "id-3"])).match_note == ""

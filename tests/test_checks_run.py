"""Checks before publish, the run's side (docs/checks.md): a failing `fail` check publishes nothing, records the
run failed with its results and exits 4 with one paragraph; `warn` commits and prints; `quarantine` moves the
violating rows to the check's destination, swapped in with the outputs; `runs show` and `run --select` say
which check failed; scenario tests assert checks (`checks: {NAME: failed}`), one per kind made to fail.

The finance sample's project journal_controls carries the checks (they hold on the sample GL)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq

from cli_support import cli, describe, record, run, run_id_of, write
from conftest import cli_env

from partition_support import shown
from ledgerflow.adapters.store.runstore import RunStore

PROJECT = "journal_controls"
OUT = Path("out") / "journal_lines"


def _break_journal(ws: Path) -> None:
    """JE-002's credit line 100.00 short: the journal no longer balances."""
    gl = ws / "data" / "gl" / "v1" / "transactions.csv"
    text = gl.read_text()
    assert "JE-002,2,2026-01-10,2100,CC-200,EUR,-8500.00" in text
    gl.write_text(text.replace("JE-002,2,2026-01-10,2100,CC-200,EUR,-8500.00", "JE-002,2,2026-01-10,2100,CC-200,EUR,-8400.00"))


def _project(ws: Path) -> Path:
    return ws / "projects" / f"{PROJECT}.yml"


def _edit(ws: Path, old: str, new: str) -> None:
    path = _project(ws)
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def _rows(folder: Path) -> list[dict]:
    files = sorted(folder.glob("*.parquet"))
    return [row for f in files for row in pq.read_table(f).to_pylist()]


def _check(rec: dict, name: str) -> dict:
    found = [c for c in rec["checks"] if c["name"] == name]
    assert len(found) == 1, rec.get("checks")
    return found[0]


# ------------------------------------------------------------------------------------------------ the run
def test_sample_checks_hold_and_runs_show_prints_them(spark, finance):
    result = run(finance, PROJECT)
    rec = record(finance, run_id_of(result))
    assert rec["status"] == "completed"
    assert [(c["name"], c["kind"], c["on"], c["status"]) for c in rec["checks"]] == [
        ("journals_balance", "balanced", "3", "passed"), ("one_row_per_line", "unique", "3", "passed"),
        ("known_accounts", "not_null", "3", "passed"), ("amounts_present", "not_null", "3", "passed"),
        ("currencies", "accepted_values", "3", "passed"), ("some_lines", "row_count", "3", "passed"),
        ("lines_numbered", "expect", "input", "passed")]
    assert all(c["violations"] == 0 and c["sample"] == [] and c["amount_impact"] == {} for c in rec["checks"])
    listed = cli(finance, "runs", "show", rec["run_id"])
    assert listed.exit_code == 0, describe(listed)
    assert "Checks (judged on the staged rows before the commit point)" in listed.stdout
    assert "  journals_balance  balanced         3      fail      passed           0            0" in listed.stdout
    raw = json.loads(cli(finance, "runs", "show", rec["run_id"], "--json").stdout)
    assert raw["checks"] == rec["checks"]
    # judging them is in the run's timings: its seconds and the Spark jobs it started (balanced, unique: a query each)
    judged = rec["timings"]["checks"]
    assert judged["name"] == "checks" and judged["seconds"] > 0 and judged["spark_jobs"] >= 2, judged
    t = rec["timings"]
    assert t["spark_jobs"] == sum(e["spark_jobs"] for e in t["statements"] + t["outputs"] + [judged])
    assert f"checks {judged['seconds']:.1f} s" in result.output


def test_a_failing_check_publishes_nothing_releases_its_version_and_exits_4(spark, finance):
    """A real process: exit 4, one paragraph naming the check, its violating rows, amount impact and keys.
    The output registers a dataset: the failed run's version is released, the next run takes version 1."""
    _edit(finance, 'destination: {path: "out/journal_lines", format: parquet}',
          'destination: {path: "out/journal_lines/v{{version}}", format: parquet}\n'
          '      register_as_dataset: controlled_lines')
    _break_journal(finance)
    proc = subprocess.run([sys.executable, "-m", "ledgerflow.adapters.cli", "--workspace", str(finance), "run",
                           PROJECT, "--period", "2026-01"], capture_output=True, text=True, timeout=300,
                          env=cli_env())
    assert proc.returncode == 4, proc.stdout + proc.stderr
    error = proc.stderr.strip()
    assert error.count("\n") == 0, error  # one paragraph
    assert "failed its checks, so nothing was published: check 'journals_balance' (balanced on output 3) found 2 " \
           "violating rows (unbalanced groups), amount impact amount_signed 100.00; first (journal_id=JE-002, " \
           "amount_signed=100.00)." in error
    run_id = proc.stdout.split()[1].rstrip(":")
    rec = record(finance, run_id)
    assert rec["status"] == "failed" and rec["outputs"] == []
    failed = _check(rec, "journals_balance")
    assert failed == {"name": "journals_balance", "kind": "balanced", "on": "3", "severity": "fail",
                      "status": "failed", "violations": 2, "amount_impact": {"amount_signed": "100.00"},
                      "sample": [{"journal_id": "JE-002", "amount_signed": "100.00"}], "quarantined": 0}
    assert all(c["status"] == "passed" for c in rec["checks"] if c["name"] != "journals_balance")
    out = finance / "out" / "journal_lines"
    assert not list(out.rglob("*.parquet")), "nothing staged is left, nothing published"
    assert RunStore(str(finance)).registrations("controlled_lines") == []

    _break_journal_undo(finance)
    ok = record(finance, run_id_of(run(finance, PROJECT)))
    assert ok["status"] == "completed"
    assert [(o["registered_dataset"], o["registered_version"]) for o in ok["outputs"]] == [("controlled_lines", 1)]
    listed = cli(finance, "runs", "show", run_id).stdout
    assert "  journals_balance  balanced         3      fail      failed           2            0  amount_signed " \
           "100.00 | journal_id=JE-002, amount_signed=100.00" in listed


def _break_journal_undo(ws: Path) -> None:
    gl = ws / "data" / "gl" / "v1" / "transactions.csv"
    gl.write_text(gl.read_text().replace("EUR,-8400.00", "EUR,-8500.00"))


def test_a_failing_check_leaves_the_published_partition_as_it_was(spark, finance):
    first = run(finance, PROJECT)
    partition = finance / OUT / "_period=2026-01"
    before = shown(partition)
    _break_journal(finance)
    result = run(finance, PROJECT, expect=4)
    assert "check 'journals_balance' (balanced on output 3) found 2 violating rows" in result.stderr
    assert shown(partition) == before and len(_rows(partition)) == 10
    assert record(finance, run_id_of(first))["status"] == "completed"
    assert [p.name for p in (finance / OUT / ".lf_versions" / "_period=2026-01").iterdir()] == [os.path.basename(before)]


def test_warn_commits_and_prints(spark, finance):
    _edit(finance, "balanced: {group_by: [journal_id], amount: amount_signed, tolerance: \"0.00\"}",
          "balanced: {group_by: [journal_id], amount: amount_signed, tolerance: \"0.00\"}\n    severity: warn")
    _break_journal(finance)
    result = run(finance, PROJECT)
    assert "  check 'journals_balance' warned: 2 violations" in result.stdout
    rec = record(finance, run_id_of(result))
    assert rec["status"] == "completed"
    warned = _check(rec, "journals_balance")
    assert (warned["status"], warned["severity"], warned["violations"]) == ("warned", "warn", 2)
    assert len(_rows(finance / OUT / "_period=2026-01")) == 10


QUARANTINE = """
  - name: small_lines
    on: 3
    expect: 'ABS(transactions.amount_local) < 1000000'
    on_violation: quarantine
    quarantine: {path: "out/quarantine/{{YYYY}}/small_lines", format: parquet}
"""


def test_quarantine_moves_the_rows_with_the_outputs_or_not_at_all(spark, finance):
    _project(finance).write_text(_project(finance).read_text() + QUARANTINE.lstrip("\n"))
    quarantine = finance / "out" / "quarantine" / "2026" / "small_lines" / "_period=2026-01"
    _break_journal(finance)  # a failing check: neither the output nor the quarantine is swapped in
    failed = run(finance, PROJECT, expect=4)
    rec = record(finance, run_id_of(failed))
    assert _check(rec, "small_lines")["quarantined"] == 2
    assert not quarantine.exists() and not (finance / OUT / "_period=2026-01").exists()
    assert not list((finance / "out").rglob("*.parquet"))

    _break_journal_undo(finance)
    result = run(finance, PROJECT)
    assert "  check 'small_lines' warned: 2 rows quarantined" in result.stdout
    rec = record(finance, run_id_of(result))
    moved = _check(rec, "small_lines")
    assert (moved["status"], moved["severity"], moved["violations"], moved["quarantined"]) == ("warned", "warn", 2, 2)
    assert moved["amount_impact"] == {"amount_local": "5000000.00", "amount_signed": "0.00"}
    assert moved["sample"] == [{"journal_id": "JE-005", "line_number": 1}, {"journal_id": "JE-005", "line_number": 2}]
    kept = _rows(finance / OUT / "_period=2026-01")
    assert len(kept) == 8 and all(r["journal_id"] != "JE-005" for r in kept)
    held = sorted(_rows(quarantine), key=lambda r: r["line_number"])
    assert [(r["journal_id"], r["line_number"], r["_check"], r["_run_id"]) for r in held] == [
        ("JE-005", 1, "small_lines", rec["run_id"]), ("JE-005", 2, "small_lines", rec["run_id"])]
    assert rec["outputs"][0]["rows"] == 8

    # a row violating two quarantine checks goes to the first one's destination only (a review found it in both)
    also = QUARANTINE.replace("small_lines", "also_small").replace("< 1000000", "< 2000000")
    _project(finance).write_text(_project(finance).read_text() + also.lstrip("\n"))
    twice = record(finance, run_id_of(run(finance, PROJECT)))
    assert (_check(twice, "small_lines")["quarantined"], _check(twice, "also_small")["quarantined"]) == (2, 0)
    assert _check(twice, "also_small")["violations"] == 2
    assert len(_rows(quarantine)) == 2 and twice["outputs"][0]["rows"] == 8
    assert _rows(finance / "out" / "quarantine" / "2026" / "also_small" / "_period=2026-01") == []

    # a close keeps the quarantine partitions too: another project quarantining into the same folder is refused
    assert cli(finance, "periods", "close", "2026-01", "--project", PROJECT).exit_code == 0
    other = _project(finance).read_text().replace(f"name: {PROJECT}", "name: other_controls").replace(
        "0b000000-0000-4000-8000-000000000104", "0b000000-0000-4000-8000-000000000199").replace(
        "out/journal_lines", "out/other_lines")
    _project(finance).unlink()
    (finance / "projects" / "other_controls.yml").write_text(other)
    refused = cli(finance, "run", "other_controls", "--period", "2026-01")
    assert refused.exit_code == 1 and "PERIOD-001" in refused.output, describe(refused)
    assert len(_rows(quarantine)) == 2


def test_run_select_names_the_failed_check_and_exits_4(spark, finance):
    _break_journal(finance)
    result = cli(finance, "run", "--select", PROJECT, "--period", "2026-01")
    assert result.exit_code == 4, describe(result)
    line = next(x for x in result.stdout.splitlines() if x.strip().startswith(PROJECT) and "failed" in x)
    assert line.endswith("failed check journals_balance: nothing published"), line


# ------------------------------------------------------------------------------- scenario tests, per kind
BASE_GL = [  # JE-1 balances once its revenue line is signed as a credit
    "{journal_id: JE-1, line_number: 1, account_code: '4100', currency: USD, amount_local: '100.00'}",
    "{journal_id: JE-1, line_number: 2, account_code: '1200', currency: USD, amount_local: '100.00'}",
]
FAILING = {  # kind -> (check, the GL rows that make it fail)
    "balanced": ("journals_balance", [BASE_GL[0], BASE_GL[1].replace("'100.00'", "'90.00'")]),
    "unique": ("one_row_per_line", [BASE_GL[0], BASE_GL[1], BASE_GL[1].replace("'100.00'", "'0.00'")]),
    "not_null": ("known_accounts", [BASE_GL[0].replace("'4100'", "'9999'").replace("'100.00'", "'-100.00'"),
                                    BASE_GL[1]]),
    "accepted_values": ("currencies", [r.replace("USD", "CHF") for r in BASE_GL]),
    "row_count": ("some_lines", [r.replace("}", ", _period: 2026-02}") for r in BASE_GL]),
    "expect": ("lines_numbered", [BASE_GL[0].replace("line_number: 1", "line_number: 0"), BASE_GL[1]]),
}


def _scenario(name: str, rows: list[str], checks: str) -> str:
    body = "\n".join(f"      - {r}" for r in rows)
    return (f"name: {name}\nproject: {PROJECT}\nperiod: 2026-01\ngiven:\n  gl:\n    rows:\n{body}\n"
            f"  accounts: {{csv: fixtures/accounts_v2.csv}}\n{checks}")


def test_each_kind_made_to_fail_in_a_scenario_test(spark, finance):
    for kind, (check, rows) in FAILING.items():
        write(finance, f"tests/fails_{kind}.yml", _scenario(f"fails {kind}", rows, f"checks: {{{check}: failed}}\n"))
    # not saying the check fails: the test fails as the run would (exit 4), naming the check
    write(finance, "tests/unasserted.yml", _scenario("unasserted", FAILING["balanced"][1],
                                                     "expect:\n  - {output: 3, rows: []}\n"))
    write(finance, "tests/wrong.yml", _scenario("wrong", BASE_GL, "checks: {journals_balance: failed}\n"))
    result = cli(finance, "test", "-k", "fails_")
    assert result.exit_code == 0, describe(result)
    assert "6 passed, 0 failed, 0 invalid" in result.stdout
    result = cli(finance, "test", "unasserted", "wrong")
    assert result.exit_code == 4, describe(result)
    assert ("the run would fail its checks, publishing nothing (exit 4): check 'journals_balance' (balanced on "
            "output 3) found 2 violating rows (unbalanced groups), amount impact amount_signed -10.00; first "
            "(journal_id=JE-1, amount_signed=-10.00)") in result.stdout
    assert "check 'journals_balance': expected failed, got passed" in result.stdout


def test_a_scenario_test_naming_an_unknown_check_is_invalid(finance):
    write(finance, "tests/unknown.yml", _scenario("unknown", BASE_GL, "checks: {journal_balance: failed}\n"))
    result = cli(finance, "test", "unknown")
    assert result.exit_code == 1, describe(result)
    assert "TEST-001 project 'journal_controls' has no check 'journal_balance'" in result.stdout
    assert "journals_balance" in result.stdout  # the hint names the closest


def test_a_staged_csv_is_judged_with_its_empty_strings_apart_from_its_nulls(spark, tmp_path):
    """Spark writes NULL as an unquoted empty field and '' as a quoted one; read back with Spark's defaults both
    were NULL, so a unique check failed on distinct rows and a balanced check merged a '' group with the NULL
    group. The staged rows a check judges are read as written."""
    from ledgerflow.adapters.commit import staging
    frame = spark.createDataFrame([("JE-1", "", 5), ("JE-1", None, -5)], "journal_id string, tag string, amount int")
    folder = tmp_path / "staged"
    frame.write.options(**staging.CSV_WRITE_OPTIONS).csv(str(folder))
    rows = staging.read_staged(frame, str(folder), "csv").collect()
    assert sorted((r.tag is None, r.tag, r.amount) for r in rows) == [(False, "", 5), (True, None, -5)]

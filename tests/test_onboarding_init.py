"""``ledgerflow init DIR`` (issue 32 point 4, docs/commands.md "Starting a workspace: init"): the new workspace
validates, runs and tests through the CLI as written; a non-empty folder is refused; --force writes only
the missing files and never touches an existing one."""
from __future__ import annotations

from decimal import Decimal as D

from click.testing import CliRunner

from cli_support import cli, describe, read_output, run_ok
from ledgerflow.adapters.cli import main

STARTER = ["ledgerflow.yml", "datasets/gl.yml", "data/gl/v1/journal_lines.csv", "projects/journal_summary.yml",
           "tests/journal_summary.yml", ".gitignore"]


def _init(*args: str):
    return CliRunner().invoke(main, ["init", *[str(a) for a in args]])


def test_init_validates_runs_and_tests(spark, tmp_path):
    ws = tmp_path / "my_ledger"
    result = _init(ws)
    assert result.exit_code == 0, describe(result)
    assert sorted(p.relative_to(ws).as_posix() for p in ws.rglob("*") if p.is_file()) == sorted(STARTER)
    assert f"Wrote 6 files into {ws}" in result.stdout
    assert (ws / "ledgerflow.yml").read_text().startswith("name: my_ledger\n")
    assert (ws / ".gitignore").read_text().splitlines()[1:] == ["target/", ".ledgerflow/", "data/journal_summary/"]

    checked = cli(ws, "validate")
    assert checked.exit_code == 0, describe(checked)
    assert checked.stdout.strip() == "ok: 1 project valid (journal_summary)"

    rec = run_ok(ws, "journal_summary", "2026-01")
    assert [c["name"] for c in rec["checks"]] == ["journals_balance"] and rec["checks"][0]["status"] == "passed"
    types = {"amount": "decimal(18,2)", "side": "string", "total_amount": "decimal(28,2)", "line_count": "bigint",
             "account_code": "string"}
    _, rows = read_output(spark, rec, 3, types)
    lines = sorted((r["journal_id"], r["line_number"], r["side"], r["amount"]) for r in rows if r["journal_id"])
    assert lines == [("JE-1001", 1, "credit", D("-1200.00")), ("JE-1001", 2, "debit", D("1200.00")),
                     ("JE-1002", 1, "debit", D("350.25")), ("JE-1002", 2, "credit", D("-350.25"))]
    totals = sorted((r["side"], r["total_amount"], r["line_count"]) for r in rows if not r["journal_id"])
    assert totals == [("credit", D("-1550.25"), 2), ("debit", D("1550.25"), 2)]
    assert (ws / "data" / "journal_summary" / "v1").is_dir()  # where .gitignore says the output goes

    tested = cli(ws, "test")
    assert tested.exit_code == 0, describe(tested)
    assert "1 passed, 0 failed, 0 invalid" in tested.stdout


def test_init_refuses_a_folder_that_is_not_empty(tmp_path):
    ws = tmp_path / "busy"
    ws.mkdir()
    (ws / "notes.txt").write_text("mine\n")
    result = _init(ws)
    assert result.exit_code == 1, describe(result)
    assert result.stderr.startswith(f"Error: INIT-001 {ws} is not empty (it holds notes.txt)")
    assert "--force" in result.stderr
    assert sorted(p.name for p in ws.iterdir()) == ["notes.txt"]  # nothing written

    (tmp_path / "a_file").write_text("x")
    as_file = _init(tmp_path / "a_file")
    assert as_file.exit_code == 1 and "is a file, not a folder" in as_file.stderr


def test_init_force_writes_only_missing_files(tmp_path):
    ws = tmp_path / "half"
    (ws / "datasets").mkdir(parents=True)
    mine = b"id: 1\r\nname: my own gl, not YAML the starter would write\r\n"
    (ws / "datasets" / "gl.yml").write_bytes(mine)
    (ws / ".gitignore").write_bytes(b"*.tmp\n")
    result = _init(ws, "--force")
    assert result.exit_code == 0, describe(result)
    assert (ws / "datasets" / "gl.yml").read_bytes() == mine  # byte for byte
    assert (ws / ".gitignore").read_bytes() == b"*.tmp\n"
    assert "Wrote 4 files" in result.stdout
    assert "Skipped 2 that exist:\n  datasets/gl.yml (exists, left as it is)\n  .gitignore (exists, left as it is)" \
        in result.stdout
    for rel in ("ledgerflow.yml", "data/gl/v1/journal_lines.csv", "projects/journal_summary.yml",
                "tests/journal_summary.yml"):
        assert (ws / rel).is_file(), rel

    again = _init(ws, "--force")  # everything exists now: nothing written, everything named
    assert again.exit_code == 0 and "Wrote 0 files" in again.stdout and "Skipped 6 that exist" in again.stdout
    assert (ws / "datasets" / "gl.yml").read_bytes() == mine


def test_init_force_never_writes_through_a_link_out_of_the_folder(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "data").symlink_to(elsewhere, target_is_directory=True)
    (ws / ".gitignore").symlink_to(tmp_path / "outside.txt")  # dangling: open("x") would not follow it anyway
    result = _init(ws, "--force")
    assert result.exit_code == 1, describe(result)
    assert result.stderr.startswith("Error: INIT-001 ") and result.stderr.count("\n") == 1, result.stderr
    assert f"data/gl/v1/journal_lines.csv leads to {elsewhere}" in result.stderr and "nothing was written" in result.stderr
    assert sorted(p.name for p in ws.iterdir()) == [".gitignore", "data"]  # nothing written in the folder
    assert list(elsewhere.iterdir()) == [] and not (tmp_path / "outside.txt").exists()  # nor through the links

    (ws / "data").unlink()
    (ws / "data").mkdir()
    (ws / "data" / "gl").symlink_to(ws / "datasets", target_is_directory=True)  # a link that stays inside is fine
    (ws / ".gitignore").unlink()
    assert _init(ws, "--force").exit_code == 0

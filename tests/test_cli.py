"""The command line: compile/validate behaviour, exit codes, --debug, and every README command."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from ledgerflow.adapters.cli import main

from conftest import REPO, c1_env

TS03 = ["15000.00", "15000.00", "9282.00", "-9282.00", "27962.00", "27962.00", "3200.00", "-3200.00",
        "16800.00", "16800.00"]


def cli(ws: Path, *args: str):
    return CliRunner().invoke(main, ["--workspace", str(ws), *args])


def test_compile_prints_the_golden_script(finance):
    result = cli(finance, "compile", "ts03_fx_conversion")
    assert result.exit_code == 0
    assert result.output == (REPO / "tests" / "golden" / "finance" / "ts03_fx_conversion.sql").read_text()


def test_compile_accepts_project_id_and_path(finance):
    by_name = cli(finance, "compile", "ts03_fx_conversion").output
    assert cli(finance, "compile", "0b000000-0000-4000-8000-000000000003").output == by_name
    assert cli(finance, "compile", str(finance / "projects" / "ts03_fx_conversion.yml")).output == by_name


def test_compile_out_writes_the_script(finance, tmp_path):
    out = tmp_path / "compiled"
    result = cli(finance, "compile", "ts03_fx_conversion", "--out", str(out))
    assert result.exit_code == 0
    path = out / "ts03_fx_conversion" / "ts03_fx_conversion.sql"
    assert result.output.strip() == str(path)
    assert path.read_text() == cli(finance, "compile", "ts03_fx_conversion").output


def test_validate_reports_ok_and_errors(finance):
    ok = cli(finance, "validate")
    assert ok.exit_code == 0 and ok.output.startswith("ok: 12 projects valid")
    p = finance / "projects" / "ts03_fx_conversion.yml"
    p.write_text(p.read_text().replace("transactions.amount_local * fx.rate", "transactions.amount_lokal * fx.rate"))
    bad = cli(finance, "validate", "ts03_fx_conversion")
    assert bad.exit_code == 1
    assert "projects/ts03_fx_conversion.yml:18:23:" in bad.output and "BR-015" in bad.output
    assert "did you mean 'amount_local'?" in bad.output
    assert "Traceback" not in bad.output


def test_validate_names_a_workspace_without_projects(finance):
    for project in (finance / "projects").glob("*.yml"):
        project.unlink()
    empty = cli(finance, "validate")
    assert empty.exit_code == 0, empty.output  # nothing is wrong: there is nothing to validate yet
    assert empty.output == (f"warning: workspace 'finance' ({finance}) has no project, so there is nothing to "
                            "validate: add one as projects/NAME.yml (docs/workspace.md); its 5 datasets loaded "
                            "without error.\n")


def test_debug_shows_the_traceback(finance):
    (finance / "projects" / "ts01_output_only.yml").write_text("id: [unclosed\n")
    plain = cli(finance, "validate")
    assert plain.exit_code == 1 and "YAML-001" in plain.output and "Traceback" not in plain.output
    debug = CliRunner().invoke(main, ["--workspace", str(finance), "--debug", "validate"])
    assert debug.exit_code == 1 and "Traceback" in debug.output


def test_usage_errors_exit_2(finance):
    assert cli(finance, "compile", "ts03_fx_conversion", "--resolved").exit_code == 2
    assert cli(finance, "run", "ts03_fx_conversion", "--period", "2026-13").exit_code == 2
    assert cli(finance, "frobnicate").exit_code == 2


# `compile --resolved` run as-is by spark-sql: tests/test_hardening_names.py (one spark-sql process for both scripts).


# The files whose ```sh blocks are run, in this order (a RUN_ID is the run of an earlier command).
COMMAND_DOCS = ("README.md", "docs/commands.md", "docs/tests.md")


def _readme_commands() -> list[str]:
    text = "\n".join((REPO / name).read_text() for name in COMMAND_DOCS)
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    commands = []
    for block in blocks:
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            if "ledgerflow " in line:
                commands.append(line[line.index("ledgerflow "):])
    return commands


def test_every_readme_command_works(spark, finance, monkeypatch):
    """Each `ledgerflow ...` line of the README and the docs' command blocks runs successfully (cluster flags:
    see test_cluster.py)."""
    commands = _readme_commands()
    assert len(commands) >= 12
    monkeypatch.chdir(finance)
    run_id = None
    for command in commands:
        args = command.split()[1:]
        if "--master" in args or "--remote" in args:
            cluster_tests = (REPO / "tests" / "test_cluster.py").read_text()
            flag = "--master" if "--master" in args else "--remote"
            assert f'"{flag}", "{args[args.index(flag) + 1]}"' in cluster_tests
            continue
        if args[:2] == ["--workspace", "projects/finance"]:
            args = args[2:]  # the quickstart, run from the repository root
        args = [run_id if a == "RUN_ID" else a for a in args]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, f"{command}: {result.output}"
        if args[0] == "run" and "--select" not in args and "--all" not in args:  # one project
            run_id = result.output.split()[1].rstrip(":")
            assert "10 rows" in result.output
    assert run_id is not None
    assert (finance / "target" / "compiled" / "ts03_fx_conversion" / "ts03_fx_conversion.sql").exists()

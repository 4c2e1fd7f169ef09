"""The command line's shared parts: one workspace load per command, one "no such project" error, the
version from the installed distribution (pyproject.toml). No Spark."""
from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ledgerflow.adapters import cli
from ledgerflow.compiler import workspace as workspace_module
from ledgerflow.compiler.version import version

REPO = Path(__file__).resolve().parents[1]


def invoke(*args: str):
    return CliRunner().invoke(cli.main, list(args))


@pytest.fixture
def loads(monkeypatch):
    """Count the workspace loads."""
    calls = []
    real = workspace_module.load_workspace

    def counting(root, *args, **kwargs):
        calls.append(root)
        return real(root, *args, **kwargs)
    monkeypatch.setattr(workspace_module, "load_workspace", counting)
    return calls


def test_version_is_the_installed_distributions():
    if sys.version_info >= (3, 11):
        import tomllib
        declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
        assert importlib.metadata.version("ledgerflow") == declared, "reinstall ledgerflow (pip install -e .)"
    assert version() == importlib.metadata.version("ledgerflow")
    result = invoke("--version")
    assert result.exit_code == 0 and result.output == f"ledgerflow, version {version()}\n"


def test_compiled_header_names_the_version(finance):
    result = invoke("--workspace", str(finance), "compile", "ts01_output_only")
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"-- ledgerflow {version()}: project ts01_output_only (id ")


@pytest.mark.parametrize("args", [["compile", "ts03_fx_conversion"], ["validate"],
                                  ["validate", "ts01_output_only", "ts03_fx_conversion"], ["datasets"],
                                  ["datasets", "show", "gl"]])
def test_each_command_loads_the_workspace_once(finance, loads, args):
    result = invoke("--workspace", str(finance), *args)
    assert result.exit_code == 0, result.output
    assert loads == [str(finance)]


@pytest.mark.parametrize("command", ["run", "replay"])
def test_run_and_replay_load_the_workspace_once_and_hand_it_to_the_runner(finance, loads, monkeypatch, command):
    from ledgerflow.adapters.run import runner
    seen = {}

    def fake(self, ref, *args, workspace=None, **_kw):
        seen.update(ref=ref, workspace=workspace)
        return {}
    monkeypatch.setattr(runner.Runner, command, fake)
    # replay looks the run up before Spark (is its period closed?): a run id the store does not hold stops there
    monkeypatch.setattr("ledgerflow.adapters.periods.command.refuse_closed_replay", lambda inv, run_id: None)
    args = ["ts01_output_only", "--period", "2026-01"] if command == "run" else ["some-run-id"]
    result = invoke("--workspace", str(finance), command, *args, "--conf", "spark.x=1")
    assert result.exit_code == 0, result.output
    assert loads == [str(finance)]
    assert seen["workspace"] is not None and seen["workspace"].root == str(finance)


@pytest.mark.parametrize("args", [["compile", "nope"], ["validate", "ts01_output_only", "nope"]])
def test_an_unknown_project_names_the_workspace_and_its_projects(finance, args):
    result = invoke("--workspace", str(finance), *args)
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: no project 'nope' in {finance}; projects: close_consolidation, close_conversion, close_reporting, journal_controls, ts01_output_only, ")
    assert "Traceback" not in result.output


def test_options_after_the_command_override_the_groups(finance, tmp_path):
    result = CliRunner().invoke(cli.main, ["--workspace", str(tmp_path), "validate", "--workspace", str(finance)])
    assert result.exit_code == 0 and result.output.startswith("ok: 12 projects valid"), result.output
    debug = CliRunner().invoke(cli.main, ["--workspace", str(finance), "compile", "nope", "--debug"])
    assert debug.exit_code == 1 and "Traceback" in debug.output


@pytest.mark.parametrize("command", ["run", "replay"])
def test_run_and_replay_start_spark_before_importing_the_runner(finance, command):
    """The driver JVM takes seconds to launch: `run` and `replay` start it before importing the runner
    and the compiler, whose import then overlaps the launch. A fresh interpreter shows the order."""
    import subprocess
    args = ["ts01_output_only", "--period", "2026-01"] if command == "run" else ["some-run-id"]
    script = (
        "import sys\n"
        "from ledgerflow.adapters import cli\nfrom ledgerflow.adapters.spark import session as spark\n"
        "assert 'ledgerflow.adapters.run.runner' not in sys.modules\n"
        "def early_session(factory):\n"
        "    print('runner imported when Spark started:', 'ledgerflow.adapters.run.runner' in sys.modules)\n"
        "    sys.exit(0)\n"
        "spark.early_session = early_session\n"
        "import ledgerflow.adapters.periods.command as periods\n"
        "periods.refuse_closed_replay = lambda inv, run_id: None\n"
        f"cli.main(['--workspace', {str(finance)!r}, {command!r}, *{args!r}])\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "runner imported when Spark started: False"


def test_a_replay_of_an_unknown_run_is_refused_before_spark(finance, monkeypatch):
    from ledgerflow.adapters.spark import session as spark
    monkeypatch.setattr(spark, "early_session", lambda factory: pytest.fail("Spark started for an unknown run"))
    result = invoke("--workspace", str(finance), "replay", "some-run-id")
    assert result.exit_code == 1 and result.output.startswith("Error: no run 'some-run-id'"), result.output

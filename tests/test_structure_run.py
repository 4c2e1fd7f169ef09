"""The shape of execution (issue 44, points 1-5): one scheduler owns every batch, the run's variations are
strategies behind named hooks, a project-period travels as one value, and run/ sits below diff/ and periods/.
Read from the source (no Spark)."""
from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from test_structure import ROOT
from test_structure_adapters import imported_names, long_classes

RUN = ROOT / "adapters" / "run"
MAX_PARAMETERS = 8


def _trees(*folders: Path):
    for folder in folders:
        for path in sorted(folder.glob("*.py")):
            yield path, ast.parse(path.read_text(), str(path))


def _calls(tree: ast.AST, name: str) -> int:
    return sum(isinstance(n, ast.Call) and name in (getattr(n.func, "id", None), getattr(n.func, "attr", None))
               for n in ast.walk(tree))


def test_one_module_runs_the_batch_loop_and_concludes_it():
    """Only the scheduler ends a batch (summary, exit code): the five loops each called conclude()."""
    concluding = sorted(path.name for path, tree in _trees(RUN, ROOT / "adapters" / "periods")
                        if _calls(tree, "conclude") and path.name != "outcomes.py")
    assert concluding == ["scheduler.py"]


def test_every_executing_command_goes_through_the_scheduler():
    """run (one period, a range, --stale), retry, replay and restate reach their runs through the Scheduler."""
    cli = (ROOT / "adapters" / "cli.py").read_text()
    for command in ("run_cmd", "retry_cmd", "replay_cmd"):
        body = cli[cli.index(f"def {command}("):]
        body = body[:body.index("\n@main.command") if "\n@main.command" in body else len(body)]
        assert "Scheduler(" in body and ".run(" not in body.replace("scheduler.run_one(", ""), command
    restate = (ROOT / "adapters" / "periods" / "restate.py").read_text()
    assert "Scheduler(" in restate and "runner.run(" not in restate


def test_every_dry_run_goes_through_the_scheduler():
    """A ``diff --data`` side and ``restate --dry-run`` compute their frames by the scheduler's dry run (the
    evaluator's DryRun strategy), never by calling the run's compute themselves."""
    for path in (ROOT / "adapters" / "diff" / "data_command.py", ROOT / "adapters" / "periods" / "restate.py"):
        text = path.read_text()
        assert "Scheduler.dry_run(" in text, path.name
        assert "compute.compute(" not in text and "output_frames as" not in text and ", output_frames" not in text


def test_nothing_sets_another_objects_attributes_or_calls_its_private_names():
    """Strategies are handed over, not patched in: no ``runner.attr = ...`` (nor a runner's hooks, echo or
    session set on it from outside) and no ``other._name(...)`` in run/, periods/ or diff/ (self, cls aside)."""
    found = []
    for path, tree in _trees(RUN, ROOT / "adapters" / "periods", ROOT / "adapters" / "diff"):
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else []
            for t in targets:
                if isinstance(t, ast.Attribute) and ast.unparse(t.value) not in ("self", "cls") and (
                        "runner" in ast.unparse(t.value)
                        or t.attr in ("computation", "publishing", "echo", "session_factory", "stop_requested")):
                    found.append(f"{path.name}:{t.lineno} {ast.unparse(t)} =")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr.startswith("_") and not node.func.attr.startswith("__") \
                    and not (isinstance(node.func.value, ast.Name) and node.func.value.id in ("self", "cls", "super")):
                found.append(f"{path.name}:{node.lineno} {ast.unparse(node.func)}()")
    assert found == []


def test_the_runner_is_well_under_the_class_cap():
    assert long_classes(RUN, 200) == {}


def test_the_strategies_answer_the_same_named_hooks():
    from ledgerflow.adapters.periods.restate import RestatementRun
    from ledgerflow.adapters.run.evaluator import DryRun, PeriodRun, Strategy
    from ledgerflow.adapters.run.fused import FusedRange
    hooks = {"places", "compute", "publishing", "close"}
    assert hooks <= set(vars(Strategy))
    for strategy in (PeriodRun, FusedRange, RestatementRun, DryRun):
        assert all(callable(getattr(strategy, hook)) for hook in hooks), strategy


def test_no_function_of_run_or_diff_takes_more_than_eight_parameters():
    over = []
    for path, tree in _trees(RUN, ROOT / "adapters" / "diff"):
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = node.args
                names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs if x.arg not in ("self", "cls")]
                if len(names) > MAX_PARAMETERS:
                    over.append(f"{path.name}:{node.name} ({len(names)})")
    assert over == []


def test_a_unit_is_one_frozen_value_holding_the_period():
    from ledgerflow.adapters.run.unit import RunSettings, Unit
    from ledgerflow.compiler.periods import Period, parse_period
    unit = Unit("p", parse_period("2026-02"), RunSettings(batch_id="b"))
    assert isinstance(unit.period, Period) and unit.key == ("p", "2026-02")
    with pytest.raises(dataclasses.FrozenInstanceError):
        unit.period = parse_period("2026-03")  # type: ignore[misc]


def test_the_draft_refusal_is_written_once():
    texts = [path.name for path, _tree in _trees(RUN) if "is a draft; pass --allow-draft to" in path.read_text()]
    assert texts == ["context.py"]


def test_run_imports_nothing_above_it():
    """store < spark < inputs < commit < run < diff, periods, docs_site < cli: run/ imports none of the packages
    above it nor a module at the top of adapters/ (the command line's)."""
    folder = ROOT / "adapters"
    allowed = ("adapters.run", "adapters.commit", "adapters.inputs", "adapters.spark", "adapters.store",
               "adapters.layout", "adapters.events")
    found = {}
    for path in sorted(RUN.rglob("*.py")):
        bad = sorted(m for m in imported_names(folder, path) if m.startswith("adapters.") and not m.startswith(allowed))
        if bad:
            found[path.name] = bad
    assert found == {}

"""The Airflow DAG of docs/airflow.md (issue 47 point 5), run as it is printed.

Airflow itself is not installed: small stand-ins for ``airflow`` and ``pendulum`` record what the DAG declares
(its timetable, tasks, retries and dependencies) and call a task's function the way Airflow does, with the context
values it asks for. Everything else is real: the DAG's ``ledgerflow`` commands (``manifest``, then ``run ...
--results``) are run by ledgerflow's own CLI in this process on a real SparkSession, so the exit codes and results
documents the DAG maps to task states are the ones ledgerflow writes.
"""
from __future__ import annotations

import datetime
import json
import re
import subprocess
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

import pytest

from cli_support import add_project, cli, record

DOC = Path(__file__).resolve().parent.parent / "docs" / "airflow.md"
CHAIN = ["close_conversion", "close_consolidation", "close_reporting"]


class AirflowException(Exception):
    """Airflow's: a failed task that its retries may run again."""


class AirflowFailException(AirflowException):
    """Airflow's: a failed task that is not retried."""


@dataclass
class Task:
    task_id: str
    retries: int
    function: Callable
    upstream: set = field(default_factory=set)

    def __rshift__(self, other: "Task") -> "Task":
        other.upstream.add(self.task_id)
        return other


@dataclass
class Dag:
    kwargs: dict
    tasks: dict = field(default_factory=dict)

    def execute(self, task_id: str, logical_date: Optional[datetime.datetime], conf: Optional[dict] = None):
        """Call a task's function as Airflow does: context values by name, the DAG's params under the run's conf."""
        params = {**self.kwargs.get("params", {}), **(conf or {})}
        return self.tasks[task_id].function(logical_date=logical_date, params=params)


class CronTriggerTimetable:
    def __init__(self, cron: str, *, timezone: str):
        self.cron, self.timezone = cron, timezone


def _stand_ins(airflow_3: bool) -> dict:
    """The modules the DAG imports, recording into ``built`` each DAG its file declares."""
    built: list = []
    current: list = []

    def dag(**kwargs):
        def decorate(function):
            def declare():
                current.append(Dag(kwargs))
                function()
                built.append(current.pop())
                return built[-1]
            return declare
        return decorate

    def task(task_id: str, retries: int = 0):
        def decorate(function):
            def called():
                declared = Task(task_id, retries, function)
                current[-1].tasks[task_id] = declared
                return declared
            return called
        return decorate

    def module(name: str, **attrs) -> types.ModuleType:
        made = types.ModuleType(name)
        made.__dict__.update(attrs)
        return made

    pendulum = module("pendulum", datetime=lambda y, m, d, tz: datetime.datetime(y, m, d, tzinfo=datetime.timezone.utc))
    modules = {
        "pendulum": pendulum,
        "airflow": module("airflow"),
        "airflow.exceptions": module("airflow.exceptions", AirflowException=AirflowException,
                                     AirflowFailException=AirflowFailException),
        "airflow.timetables": module("airflow.timetables"),
        "airflow.timetables.trigger": module("airflow.timetables.trigger", CronTriggerTimetable=CronTriggerTimetable),
        ("airflow.sdk" if airflow_3 else "airflow.decorators"): module("decorators", dag=dag, task=task),
    }
    if not airflow_3:
        modules["airflow.sdk"] = None  # as when it is missing: importing it raises ImportError
    return {"modules": modules, "built": built}


@dataclass
class Commands:
    """``subprocess.run`` for ``ledgerflow`` commands: ledgerflow's CLI in this process (sharing the test's
    SparkSession); any other command runs as it would."""
    workspace: Path
    calls: list = field(default_factory=list)

    def __post_init__(self):
        self.real = subprocess.run

    def __call__(self, argv, *args, capture_output: bool = False, text: bool = False, **kwargs):
        if not argv or argv[0] != "ledgerflow":
            return self.real(argv, *args, capture_output=capture_output, text=text, **kwargs)
        assert argv[1:3] == ["--workspace", str(self.workspace)] and capture_output and text, argv
        self.calls.append(list(argv[3:]))
        done = cli(self.workspace, *argv[3:])
        return subprocess.CompletedProcess(argv, done.exit_code, done.stdout, done.stderr)


def _dag_source(workspace: Path) -> str:
    blocks = re.findall(r"```python\n(# dags/finance_close\.py\n.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 1, "docs/airflow.md holds one DAG file"
    assert blocks[0].count('WORKSPACE = "/srv/finance-close"') == 1
    return blocks[0].replace('WORKSPACE = "/srv/finance-close"', f"WORKSPACE = {str(workspace)!r}")


def _load(workspace: Path, monkeypatch, airflow_3: bool = True) -> tuple[Dag, Commands, dict]:
    """Run the documented DAG file; returns the DAG it declared, the commands it ran, and its globals."""
    stand_ins = _stand_ins(airflow_3)
    for name, made in stand_ins["modules"].items():
        monkeypatch.setitem(sys.modules, name, made)
    commands = Commands(workspace)
    monkeypatch.setattr(subprocess, "run", commands)
    namespace: dict = {"__name__": "finance_close"}
    exec(compile(_dag_source(workspace), "dags/finance_close.py", "exec"), namespace)
    assert len(stand_ins["built"]) == 1
    return stand_ins["built"][0], commands, namespace


def _edges(dag: Dag) -> set:
    return {(up, task_id) for task_id, t in dag.tasks.items() for up in t.upstream}


@pytest.mark.parametrize("airflow_3", [True, False], ids=["airflow-3", "airflow-2"])
def test_the_dag_has_a_task_per_active_project_in_the_manifests_order(finance, monkeypatch, airflow_3):
    dag, commands, _ = _load(finance, monkeypatch, airflow_3)
    manifest = cli(finance, "manifest")
    assert commands.calls == [["manifest"]]
    projects = json.loads(manifest.stdout)["projects"]
    assert set(dag.tasks) == set(projects) and len(projects) == 12
    assert _edges(dag) == {(CHAIN[0], CHAIN[1]), (CHAIN[1], CHAIN[2])}
    assert {t.retries for t in dag.tasks.values()} == {2}
    schedule = dag.kwargs["schedule"]
    assert (schedule.cron, schedule.timezone, dag.kwargs["catchup"]) == ("0 6 2 * *", "UTC", False)

    # a draft project has no task, and what depended on it waits for nothing
    path = finance / "projects" / "close_2_consolidation.yml"
    path.write_text(path.read_text().replace("status: active", "status: draft"))
    dag, _, _ = _load(finance, monkeypatch, airflow_3)
    assert set(dag.tasks) == set(projects) - {CHAIN[1]} and _edges(dag) == set()


def test_the_dags_tasks_run_ledgerflow_and_map_its_exit_codes_to_task_states(spark, finance, monkeypatch):
    dag, commands, namespace = _load(finance, monkeypatch)
    second_of_february = datetime.datetime(2026, 2, 2, 6, tzinfo=datetime.timezone.utc)

    # the close chain, each task after its upstream, closes January: what each returns is what its run recorded
    first_run = None
    for task_id in CHAIN:
        assert dag.tasks[task_id].upstream <= set(CHAIN[:CHAIN.index(task_id)])
        returned = dag.execute(task_id, second_of_february)
        assert len(returned) == 1 and returned[0]["period"] == "2026-01", returned
        rec = record(finance, returned[0]["run_id"])
        assert (rec["project"]["name"], rec["period"]["identifier"], rec["status"]) == (task_id, "2026-01", "completed")
        assert returned[0]["rows"] == [o["rows"] for o in rec["outputs"]] and all(returned[0]["rows"])
        first_run = first_run or returned[0]["run_id"]
    results_paths = [call[call.index("--results") + 1] for call in commands.calls if call[0] == "run"]
    assert len(set(results_paths)) == 3 and not any(Path(p).exists() for p in results_paths)
    assert [call[:4] for call in commands.calls[1:]] == [["run", name, "--period", "2026-01"] for name in CHAIN]

    # exit 4, a check failed: failed without retries, saying which check
    controls = finance / "projects" / "journal_controls.yml"
    controls.write_text(controls.read_text().replace("row_count: {min: 1}", "row_count: {min: 100000}"))
    with pytest.raises(AirflowFailException, match="some_lines"):
        dag.execute("journal_controls", second_of_february)

    # exit 2, a malformed period given by hand: failed without retries, naming it
    with pytest.raises(AirflowFailException, match="2026-13"):
        dag.execute("ts03_fx_conversion", None, {"period": "2026-13"})

    # no period at all (a run by hand without one, and no logical date): failed, saying how to give one
    with pytest.raises(AirflowFailException, match="no period"):
        dag.execute("ts03_fx_conversion", None)

    # exit 3, the run failed on Spark: an AirflowException its retries may run again, never a failure without retry
    add_project(finance, "reporting_amounts", "\n        - {seq: 1, name: Amounts, type: output, arguments: "
                "{destination: {path: out/reporting_amounts, format: csv}, columns: [amount_reporting]}}\n")
    dag, _, _ = _load(finance, monkeypatch)
    with pytest.raises(AirflowException, match="OUT-CSV-001") as failed:
        dag.execute("reporting_amounts", second_of_february)
    assert not isinstance(failed.value, AirflowFailException)

    # by hand, January again with its period as the run's conf: the same numbers, recorded again as a new run
    again = dag.execute(CHAIN[0], datetime.datetime(2026, 7, 14, tzinfo=datetime.timezone.utc), {"period": "2026-01"})
    assert again[0]["period"] == "2026-01" and again[0]["run_id"] != first_run

    # exit 1, a definition gone wrong after the DAG was parsed: failed without retries, with ledgerflow's paragraph
    broken = finance / "projects" / "ts01_output_only.yml"
    broken.write_text(broken.read_text() + "\nunknown_key: 1\n")
    with pytest.raises(AirflowFailException) as wrong:
        dag.execute("ts01_output_only", second_of_february)
    assert "unknown_key" in str(wrong.value), wrong.value

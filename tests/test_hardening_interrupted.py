"""A run whose process died (issue 8.6): marked failed ("interrupted: ...") by the next command that
opens the run store, its staging folders removed, live partitions and live runs left alone.

Two tests kill a real ``ledgerflow run`` subprocess with SIGKILL; the others build the state a dead
run leaves (a ``running`` record whose lock nobody holds, staged folders) deterministically.
"""
from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_support import add_project, cli, describe, read_output, record, run_ok, versions_dir
from conftest import cli_env
from partition_support import shown
from ledgerflow.adapters.store import liveness
from ledgerflow.adapters.commit import recovery
from ledgerflow.adapters.run.context import new_run_id, utcnow
from ledgerflow.adapters.run.runner import Runner
from ledgerflow.adapters.store.runstore import RunStore

PERIOD = "2026-01"
OUTPUTS = 6


# ------------------------------------------------------------------------------------------- helpers
def start_cli(ws: Path, *args: str) -> subprocess.Popen:
    """``python -m ledgerflow.adapters.cli --workspace WS ARGS`` in its own process group."""
    return subprocess.Popen([sys.executable, "-m", "ledgerflow.adapters.cli", "--workspace", str(ws), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env=cli_env())


def cli_process(ws: Path, *args: str) -> subprocess.CompletedProcess:
    """A CLI command in a fresh process (whose first RunStore does the once-per-process recovery)."""
    return subprocess.run([sys.executable, "-m", "ledgerflow.adapters.cli", "--workspace", str(ws), *args],
                          capture_output=True, text=True, timeout=300, env=cli_env())


def running_record(ws: Path, proc: subprocess.Popen, timeout: float = 240) -> dict:
    """Wait until the subprocess's run is recorded as running; its record."""
    deadline = time.monotonic() + timeout
    runs = ws / "target" / "runs"
    while time.monotonic() < deadline:
        for path in runs.glob("*/run.json") if runs.exists() else []:
            try:
                rec = json.loads(path.read_text())
            except (OSError, ValueError):  # being replaced right now
                continue
            if rec["status"] == "running":
                return rec
        assert proc.poll() is None, f"the run ended before it was seen running: {proc.communicate()}"
        time.sleep(0.01)
    raise AssertionError("the run was never recorded as running")


def kill_run(proc: subprocess.Popen) -> None:
    """SIGKILL the ledgerflow process, then its process group (the JVM it may have started would exit
    on its own when it sees its parent gone; killing it too keeps it from writing during the checks)."""
    proc.kill()
    assert proc.wait(timeout=60) == -signal.SIGKILL
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.communicate()


def dead_pid() -> int:
    """The pid of a process that has exited."""
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def own_folders(location: str, run_id: str) -> list[str]:
    """Version folders of a partition named after ``run_id``."""
    folder = versions_dir(location)
    return sorted(n for n in os.listdir(folder) if n.split(".")[0] == run_id) if folder.exists() else []


def many_outputs_project(ws: Path) -> None:
    """A project writing the GL to OUTPUTS local destinations: each is staged by its own Spark job, so
    a run spends seconds between its first staged folder and the swap."""
    ops = "\n".join(f"- {{seq: {i}, name: Out {i}, type: output, arguments: "
                    f"{{destination: {{path: out/o{i}, format: csv}}}}}}" for i in range(1, OUTPUTS + 1))
    add_project(ws, "many_outputs", ops)


def fake_dead_run(ws: Path, template: dict, *, staging: list[dict], host: str | None = None,
                  pid: int | None = None, process: bool = True) -> str:
    """Record a ``running`` run like a process that died leaves it: its lock file exists, unheld."""
    store = RunStore(str(ws))
    rec = json.loads(json.dumps(template))
    rec.update(run_id=new_run_id(utcnow()), status="running", finished_at=None, error=None, outputs=[],
               started_at=utcnow().isoformat(timespec="milliseconds"), staging=staging)
    if process:
        rec["process"] = {"pid": pid or dead_pid(), "host": host or socket.gethostname()}
    else:
        rec.pop("process", None)
    store.save_run(rec)
    Path(liveness.lock_path(store.runs_dir, rec["run_id"])).touch()
    return rec["run_id"]


def stage(location: str, name: str) -> Path:
    """A staged version folder ``name`` of a partition, with a data file."""
    folder = versions_dir(location) / name
    (folder / "_temporary").mkdir(parents=True)
    (folder / "part-00000.csv").write_text("journal_id\nJE-X\n")
    return folder


def entry(location: str) -> dict:
    loc = Path(location)
    return {"link": str(loc), "versions": str(versions_dir(location))}


def status_line(stdout: str, run_id: str) -> str:
    [line] = [ln for ln in stdout.splitlines() if ln.startswith(run_id)]
    return line


# ----------------------------------------------------------------------------------- real SIGKILL runs
def test_run_killed_once_recorded_running_is_marked_interrupted_by_runs_list(spark, finance):
    first = run_ok(finance, "ts01_output_only")
    assert "process" in first and first["staging"] == [entry(first["outputs"][0]["location"])]
    assert not Path(liveness.lock_path(str(finance / "target" / "runs"), first["run_id"])).exists()
    location = first["outputs"][0]["location"]
    live_before = shown(location)

    proc = start_cli(finance, "run", "ts01_output_only", "--period", PERIOD)
    try:
        rec = running_record(finance, proc)
    finally:
        kill_run(proc)
    run_id = rec["run_id"]
    assert rec["process"] == {"pid": proc.pid, "host": socket.gethostname()}
    assert rec["staging"] == [entry(location)]
    lock = Path(liveness.lock_path(str(finance / "target" / "runs"), run_id))
    assert lock.exists() and record(finance, run_id)["status"] == "running"  # what the dead process left

    listed = cli(finance, "runs", "list")
    assert listed.exit_code == 0, describe(listed)
    line = status_line(listed.stdout, run_id)
    assert line.split()[2] == "failed", line
    assert f"error: interrupted: the process (pid {proc.pid} on host {socket.gethostname()}) that ran it is gone" in line
    assert f"run {run_id} was interrupted" in listed.stderr
    failed = record(finance, run_id)
    assert failed["status"] == "failed" and failed["finished_at"] is not None
    assert failed["error"].startswith(f"interrupted: the process (pid {proc.pid} on host ")
    assert "found by `ledgerflow runs list`" in failed["error"]
    assert not lock.exists()
    assert own_folders(location, run_id) == []
    # the earlier run's partition is untouched and `runs show` agrees with run.json
    assert shown(location) == live_before
    _, rows = read_output(spark, first, 1)
    assert len(rows) == 10
    listed = cli(finance, "runs", "show", run_id, "--json")
    assert listed.exit_code == 0 and json.loads(listed.stdout) == failed
    # checked once: the next command finds nothing more to do
    again = cli(finance, "runs", "list")
    assert again.stderr == "" and status_line(again.stdout, run_id) == line


def test_run_killed_while_staging_outputs_leaves_no_staging_and_the_live_partitions(spark, finance):
    many_outputs_project(finance)
    first = run_ok(finance, "many_outputs")
    locations = [o["location"] for o in sorted(first["outputs"], key=lambda o: o["operation_seq"])]
    live_before = [shown(loc) for loc in locations]

    proc = start_cli(finance, "run", "many_outputs", "--period", PERIOD)
    try:
        rec = running_record(finance, proc)
        run_id = rec["run_id"]
        deadline = time.monotonic() + 240
        while not own_folders(locations[0], run_id):  # the first output is being staged
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no output was ever staged"
            time.sleep(0.01)
    finally:
        kill_run(proc)
    assert own_folders(locations[0], run_id)  # the dead run left a staged folder
    assert [shown(loc) for loc in locations] == live_before  # and swapped nothing in

    # the next command of any kind finds it: here `validate` in a new process (nothing printed to stdout
    # but its own answer)
    validated = cli_process(finance, "validate", "many_outputs")
    assert validated.returncode == 0, validated
    assert validated.stdout.startswith("ok: 1 project valid")
    assert f"run {run_id} was interrupted: the process (pid {proc.pid}" in validated.stderr
    assert "found by `ledgerflow validate`" in validated.stderr
    failed = record(finance, run_id)
    assert failed["status"] == "failed" and failed["error"].startswith("interrupted: ")
    assert failed["interrupted"]["removed"] and failed["interrupted"]["kept"] == []
    assert all(own_folders(loc, run_id) == [] for loc in locations)
    assert [shown(loc) for loc in locations] == live_before
    for seq in (1, OUTPUTS):
        _, rows = read_output(spark, first, seq)
        assert len(rows) == 10
    listed = cli(finance, "runs", "list")
    assert status_line(listed.stdout, run_id).split()[2] == "failed" and listed.stderr == ""


# --------------------------------------------------------------------------------- deterministic deaths
def test_dead_run_staging_removed_but_never_a_swapped_in_version_or_what_symlinks_point_at(spark, finance, tmp_path):
    first = run_ok(finance, "ts01_output_only")
    location = first["outputs"][0]["location"]
    live = shown(location)
    other = str(finance / "out" / "second" / f"_period={PERIOD}")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("not ledgerflow's")

    run_id = fake_dead_run(finance, first, staging=[entry(location), entry(other)])
    staged = stage(location, run_id)
    staged2 = stage(location, f"{run_id}.2")
    unrelated = stage(location, new_run_id(utcnow()))  # another run's version: not this run's
    os.symlink(outside, versions_dir(location) / f"{run_id}.3")  # a symlink named after the run: not followed
    tmp_link = Path(location).parent / f".{Path(location).name}.{run_id}.tmp"  # of an interrupted swap
    os.symlink(os.path.relpath(staged, tmp_link.parent), tmp_link)
    old_tmp_link = Path(f"{location}.{run_id}.tmp")  # the same, as an earlier release named it
    os.symlink(os.path.relpath(staged, old_tmp_link.parent), old_tmp_link)
    swapped = stage(other, run_id)  # this partition was swapped in before the process died: live data
    os.symlink(os.path.relpath(swapped, Path(other).parent), other)

    cleaned = cli(finance, "runs", "clean")
    assert cleaned.exit_code == 0, describe(cleaned)
    out = cleaned.stdout
    assert f"{run_id}  marked failed: interrupted: the process (pid " in out
    assert "found by `ledgerflow runs clean`" in out
    for path in (staged, staged2, tmp_link, old_tmp_link):
        assert f"    removed {path}" in out
        assert not os.path.lexists(path)
    rec = record(finance, run_id)
    assert rec["status"] == "failed"
    assert f"kept partition version(s) already swapped in before it died (this run's rows are visible there): " \
           f"{swapped}" in rec["error"]
    assert f"{versions_dir(location) / (run_id + '.3')} is not a folder: left alone" in rec["error"]
    assert rec["interrupted"]["kept"] == [str(swapped)]
    assert swapped.is_dir() and shown(other) == str(swapped)
    assert unrelated.is_dir() and (outside / "keep.txt").read_text() == "not ledgerflow's"
    assert shown(location) == live
    _, rows = read_output(spark, first, 1)
    assert len(rows) == 10
    # on demand again: nothing left to remove; the odd symlink is reported again, and still not followed
    again = cli(finance, "runs", "clean").stdout
    assert again.strip() == f"{run_id}  failed run: {versions_dir(location) / (run_id + '.3')} is not a folder: left alone"
    os.remove(versions_dir(location) / f"{run_id}.3")
    assert cli(finance, "runs", "clean").stdout.strip() == \
        "nothing to clean: no interrupted run, no leftover staging folder"
    assert (outside / "keep.txt").exists()


def test_live_run_other_host_and_legacy_runs_are_left_alone(spark, finance):
    first = run_ok(finance, "ts01_output_only")
    location = first["outputs"][0]["location"]
    runs_dir = str(finance / "target" / "runs")
    live_id = fake_dead_run(finance, first, staging=[entry(location)])
    live_staged = stage(location, live_id)
    remote_id = fake_dead_run(finance, first, staging=[entry(location)], host="another-host.example")
    remote_staged = stage(location, remote_id)
    legacy_id = fake_dead_run(finance, first, staging=[], process=False)
    # another process holds the live run's lock, as a running `ledgerflow run` does
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys, time\n"
        f"fd = os.open({liveness.lock_path(runs_dir, live_id)!r}, os.O_RDWR)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('locked', flush=True)\ntime.sleep(600)\n")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        for args in (("runs", "list"), ("runs", "clean")):
            result = cli(finance, *args)
            assert result.exit_code == 0, describe(result)
            for rid in (live_id, remote_id, legacy_id):
                assert record(finance, rid)["status"] == "running", args
            assert live_staged.is_dir() and remote_staged.is_dir()
        out = result.stdout
        assert f"{live_id}  left running (live): pid " in out
        assert f"{remote_id}  left running (other_host): started on host another-host.example" in out
        assert f"{legacy_id}  left running (unknown): no process recorded" in out
    finally:
        holder.kill()
        holder.wait()
    # its holder gone, the run is recovered; the other host's run only when its lock is trusted
    listed = cli(finance, "runs", "list")
    assert status_line(listed.stdout, live_id).split()[2] == "failed" and not live_staged.exists()
    assert record(finance, remote_id)["status"] == "running" and remote_staged.is_dir()
    result = cli(finance, "runs", "clean", "--other-hosts")
    assert f"{remote_id}  marked failed: interrupted: the process (pid " in result.stdout
    assert "on host another-host.example) that ran it is gone" in result.stdout
    assert not remote_staged.exists()
    assert record(finance, legacy_id)["status"] == "running"
    assert os.path.isdir(shown(location))


def test_own_process_run_is_never_marked(finance):
    store = RunStore(str(finance))
    template = {"run_id": "", "parent_run_id": None, "project": {"id": "p", "name": "p"},
                "period": {"identifier": PERIOD}, "started_at": "", "outputs": []}
    # held through liveness.hold (as the runner does), recorded under another pid
    held = fake_dead_run(finance, template, staging=[])
    liveness.hold(store.runs_dir, held)
    # held by this process through a separate open file: flock conflicts even within one process
    other = fake_dead_run(finance, template, staging=[])
    fd = os.open(liveness.lock_path(store.runs_dir, other), os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    # recorded with this process's pid, lock free
    mine = fake_dead_run(finance, template, staging=[], pid=os.getpid())
    try:
        outcomes = {o.run_id: o.action for o in recovery.recover(store, "test")}
        assert outcomes == {held: "live", other: "live", mine: "live"}
        assert all(store.get_run(r)["status"] == "running" for r in (held, other, mine))
    finally:
        liveness.release(held)
        os.close(fd)


def test_a_run_that_finished_meanwhile_is_not_marked(finance):
    """The record is re-read under the lock: a run that completed after the running rows were listed
    (and then released its lock) keeps its final status."""
    store = RunStore(str(finance))
    template = {"run_id": "", "parent_run_id": None, "project": {"id": "p", "name": "p"},
                "period": {"identifier": PERIOD}, "started_at": "", "outputs": []}
    run_id = fake_dead_run(finance, template, staging=[])
    stale = store.get_run(run_id)
    store.save_run({**stale, "status": "completed", "finished_at": utcnow().isoformat()})
    outcome = recovery.recover_run(store, stale, "test")
    assert outcome.action == "finished"
    assert outcome.detail == "finished (completed) before it was checked"  # the registry already said so
    assert store.get_run(run_id)["status"] == "completed"


def test_a_process_killed_between_run_json_and_the_registry_row(finance):
    """``save_run`` writes run.json, then the registry row: a kill in between leaves them apart.
    A first save (running) exists only in run.json: found and marked; a final save (completed) only
    in run.json: the registry takes it, the run is not marked."""
    store = RunStore(str(finance))
    template = {"run_id": "", "parent_run_id": None, "project": {"id": "p", "name": "p"},
                "period": {"identifier": PERIOD}, "started_at": "", "outputs": []}
    only_file = fake_dead_run(finance, template, staging=[])
    done = fake_dead_run(finance, template, staging=[])
    rec = record(finance, done)
    Path(store.runs_dir, done, "run.json").write_text(json.dumps({**rec, "status": "completed"}))
    with sqlite3.connect(store.db_path) as conn:
        conn.execute("DELETE FROM runs WHERE run_id = ?", (only_file,))
    assert sorted(r["run_id"] for r in store.running_records()) == sorted([only_file, done])
    listed = cli(finance, "runs", "list")
    assert status_line(listed.stdout, only_file).split()[2] == "failed"
    assert record(finance, only_file)["error"].startswith("interrupted: the process (pid ")
    assert status_line(listed.stdout, done).split()[2] == "completed"
    assert listed.stderr == f"ledgerflow: run {only_file} was {record(finance, only_file)['error']}\n"
    assert store.get_run(done) == {**rec, "status": "completed"}
    assert store.running_records() == []


def test_first_run_of_a_workspace_killed_before_the_registry_existed(finance):
    """No state.db yet, only target/runs/<id>/run.json saying running: still found."""
    template = {"run_id": "", "parent_run_id": None, "project": {"id": "p", "name": "p"},
                "period": {"identifier": PERIOD}, "started_at": "", "outputs": []}
    run_id = fake_dead_run(finance, template, staging=[])
    (finance / ".ledgerflow" / "state.db").unlink()
    result = cli_process(finance, "runs", "list")
    assert result.returncode == 0, result
    assert status_line(result.stdout, run_id).split()[2] == "failed"
    assert f"found by `ledgerflow runs list` (pid " in record(finance, run_id)["error"]


def test_interrupt_in_process_marks_the_run_failed_and_releases_its_lock(finance):
    """Ctrl-C (KeyboardInterrupt) inside a run: recorded failed at once, lock released."""
    def interrupted():
        raise KeyboardInterrupt

    runner = Runner(str(finance), echo=lambda _line: None, session_factory=interrupted)
    with pytest.raises(KeyboardInterrupt):
        runner.run("ts01_output_only", PERIOD)
    [rec] = RunStore(str(finance)).list_runs()
    assert rec["status"] == "failed" and rec["error"] == "interrupted: KeyboardInterrupt in the process that ran it"
    assert not Path(liveness.lock_path(runner.store.runs_dir, rec["run_id"])).exists()
    assert not liveness.holds(rec["run_id"])


def test_dead_run_pending_registration_is_released(finance):
    """A run killed after reserving a registered version (before its swap) leaves a pending row: the
    recovery drops it, so the version never becomes visible and its location is no longer blocked."""
    store = RunStore(str(finance))
    template = {"run_id": "", "parent_run_id": None, "project": {"id": "p", "name": "p"},
                "period": {"identifier": PERIOD}, "started_at": "", "outputs": []}
    run_id = fake_dead_run(finance, template, staging=[])
    location = str(finance / "registered" / "gl_snapshot" / "v1")
    assert store.reserve("gl_snapshot", run_id, [PERIOD], 1, location, "parquet")
    with sqlite3.connect(store.db_path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM registered_datasets WHERE status = 'pending'").fetchone()[0] == 1
    outcomes = recovery.recover(store, "test")
    assert [o.action for o in outcomes if o.run_id == run_id] == ["interrupted"]
    with sqlite3.connect(store.db_path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM registered_datasets").fetchone()[0] == 0
    assert store.live_registrations_at(location) == []
    assert store.get_run(run_id)["status"] == "failed"

"""A run's outputs become visible all together or not at all, up to its commit point.

A run stages its local outputs, records each swap in its run record before making it (the journal:
partition, staged folder, the version it replaces), swaps them in, writes catalog tables and URIs,
then confirms its registered versions and records itself completed in one transaction of the run
store (the commit point). Until then every failure rolls the local partitions back; a process that
dies is rolled back by the next command from the journal (``recovery.py``). The versions a run
replaced are deleted only after the commit point.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from cli_support import (add_project, cli, describe, output_entry, read_output, record, run, run_id_of, run_ok,
                         versions_dir)
from conftest import cli_env
from test_hardening_destinations import REGISTER
from test_hardening_interrupted import (OUTPUTS, PERIOD, dead_pid, fake_dead_run, many_outputs_project, own_folders,
                                        stage)

from partition_support import shown
from ledgerflow.adapters.commit.shown import show
from ledgerflow.adapters.store import liveness
from ledgerflow.adapters.commit import recovery
from ledgerflow.adapters.commit import partitions, publish, spark_writes, staging, swaps
from ledgerflow.adapters.run.runner import Runner
from ledgerflow.adapters.store.runstore import RunStore

KILL_AT_SWAP = textwrap.dedent("""
    import os, signal, sys
    from ledgerflow.adapters import cli
    from ledgerflow.adapters.commit import swaps
    real, swapped = swaps._swap, []

    def swap(link, target):
        swapped.append(link)
        if len(swapped) == int(sys.argv[1]):
            os.kill(os.getpid(), signal.SIGKILL)  # the process dies between two swaps of its commit
        real(link, target)
    swaps._swap = swap
    cli.main(sys.argv[2:])
""")

STAMP = REGISTER.split("- seq: 2")[0]  # seq 1: source_system = {stamp}


def stamped(stamp: str, copy: str) -> str:
    """The GL stamped with ``stamp``, written to a local folder (seq 2) and to ``copy`` (seq 3)."""
    return STAMP.format(stamp=stamp) + textwrap.dedent(f"""\
        - {{seq: 2, name: Local copy, type: output, arguments: {{destination: {{path: out/local, format: csv}}}}}}
        - {{seq: 3, name: Copy, type: output, arguments: {copy}}}
        """)


def stamps(spark, location: str) -> set[str]:
    """The ``source_system`` values of the partition at ``location``."""
    return {r[0] for r in spark.read.option("header", "true").csv(location).select("source_system").collect()}


def test_a_run_killed_between_two_swaps_is_rolled_back_by_the_next_command(spark, finance):
    """SIGKILL after 3 of OUTPUTS (6) partitions were swapped in: the next command points them back at the first
    run's versions (the old code kept them, so the outputs mixed two runs) and removes the staging."""
    many_outputs_project(finance)
    first = run_ok(finance, "many_outputs")
    locations = [o["location"] for o in sorted(first["outputs"], key=lambda o: o["operation_seq"])]
    live_before = [shown(loc) for loc in locations]

    proc = subprocess.Popen([sys.executable, "-c", KILL_AT_SWAP, "4", "--workspace", str(finance), "run",
                             "many_outputs", "--period", PERIOD], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, env=cli_env())
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == -signal.SIGKILL, (out, err)
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # its JVM, if still there
    except ProcessLookupError:
        pass
    run_id = [p.name for p in (finance / "target" / "runs").iterdir() if p.name != first["run_id"]][0]
    dead = json.loads((finance / "target" / "runs" / run_id / "run.json").read_text())
    assert dead["status"] == "running"
    journal = dead["commit"]["partitions"]
    assert [e["link"] for e in journal] == locations[:4]  # the 4th was recorded before its swap
    assert [e["previous"] for e in journal] == live_before[:4]
    assert [shown(loc) == live_before[i] for i, loc in enumerate(locations)] == [False] * 3 + [True] * (OUTPUTS - 3)

    cleaned = cli(finance, "runs", "clean")
    assert cleaned.exit_code == 0, describe(cleaned)
    failed = record(finance, run_id)
    assert failed["status"] == "failed" and failed["error"].startswith("interrupted: ")
    assert f"rolled back 3 partitions it had swapped in to the version before it: {', '.join(locations[2::-1])}" \
        in failed["error"]
    assert failed["interrupted"]["rolled_back"] == locations[2::-1] and failed["interrupted"]["kept"] == []
    assert [shown(loc) for loc in locations] == live_before
    assert all(own_folders(loc, run_id) == [] for loc in locations)
    for seq in range(1, OUTPUTS + 1):
        assert len(read_output(spark, first, seq)[1]) == 10


def test_a_failure_at_the_commit_point_rolls_every_output_back_and_releases_the_version(spark, finance,
                                                                                       monkeypatch):
    """The run store fails to record the run completed: its partitions show the previous run's versions
    again, its registered version is not committed, and the versions it replaced are still there."""
    add_project(finance, "stamped", stamped("first", '{destination: {path: "out/snap/v{{version}}", format: csv}, '
                                                     'register_as_dataset: stamped_snap}'))
    first = run_ok(finance, "stamped")
    local = first["outputs"][0]["location"]
    before = shown(local)
    project = finance / "projects" / "stamped.yml"
    project.write_text(project.read_text().replace('"first"', '"second"'))

    def fail(*_args, **_kwargs):
        raise sqlite3.OperationalError("disk I/O error (simulated)")
    monkeypatch.setattr(RunStore, "complete", fail)
    result = run(finance, "stamped", expect=3)
    monkeypatch.undo()
    assert "could not record its completion in the run store (disk I/O error (simulated)); its outputs were " \
           "rolled back to the versions before it." in result.stderr
    rec = record(finance, run_id_of(result))
    assert rec["status"] == "failed" and rec["outputs"] == []
    assert shown(local) == before and os.path.isdir(before)
    assert stamps(spark, local) == {"first"}
    assert own_folders(local, rec["run_id"]) == []
    registered = finance / "out" / "snap" / "v2" / f"_period={PERIOD}"
    assert not os.path.lexists(registered) and own_folders(str(registered), rec["run_id"]) == []
    assert [(g["version"], g["run_id"]) for g in RunStore(str(finance)).registrations("stamped_snap")] == \
        [(1, first["run_id"])]
    # the next run commits normally and only then deletes the version it replaced
    second = run_ok(finance, "stamped")
    assert stamps(spark, local) == {"second"} and not os.path.exists(before)
    assert [g["version"] for g in RunStore(str(finance)).registrations("stamped_snap")] == [1, 2]
    assert second["outputs"][1]["registered_version"] == 2


def test_a_catalog_table_is_written_only_after_the_local_partitions_are_swapped_in(spark, finance, monkeypatch):
    """A swap that fails leaves the table as the last run wrote it (the old code replaced the table's
    period before the local swaps, so a failed run left the table with its rows)."""
    db = "commit_order_db"
    spark.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")
    spark.sql(f"CREATE DATABASE {db} LOCATION '{finance / 'warehouse' / db}'")
    try:
        add_project(finance, "stamped_table", stamped("first", f"{{destination: {{catalog_table: {db}.stamped}}}}"))
        first = run_ok(finance, "stamped_table")
        local = first["outputs"][0]["location"]
        project = finance / "projects" / "stamped_table.yml"
        project.write_text(project.read_text().replace('"first"', '"second"'))

        def swap(link, target):
            raise OSError("no space left on device (simulated)")
        monkeypatch.setattr(swaps, "_swap", swap)
        result = run(finance, "stamped_table", expect=3)
        monkeypatch.undo()
        assert "no space left on device (simulated)" in result.stderr
        table = {r[0] for r in spark.sql(f"SELECT source_system FROM {db}.stamped WHERE _period = '{PERIOD}'")
                 .collect()}
        assert table == {"first"}
        assert stamps(spark, local) == {"first"}
        run_ok(finance, "stamped_table")
        table = {r[0] for r in spark.sql(f"SELECT source_system FROM {db}.stamped WHERE _period = '{PERIOD}'")
                 .collect()}
        assert table == {"second"} and stamps(spark, local) == {"second"}
    finally:
        spark.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")


# ------------------------------------------------------------------------------------ the journal itself
def _version(root: Path, name: str) -> str:
    folder = root / ".lf_versions" / f"_period={PERIOD}" / name
    folder.mkdir(parents=True)
    (folder / "part-0.csv").write_text(f"run\n{name}\n")
    return str(folder)


def test_roll_back_keeps_the_rows_when_the_replaced_version_is_gone(tmp_path):
    """A partition is never left without rows by a rollback: when the version it replaced has vanished
    (the old code removed the link then), it keeps the staged rows and says so."""
    root = tmp_path / "out"
    old, new = _version(root, "run-0"), _version(root, "run-1")
    link = str(root / f"_period={PERIOD}")
    swaps.commit([staging.Staged(link, old)])
    journal: list[dict] = []
    swaps.swap_in([staging.Staged(link, new)], journal)
    assert journal == [{"link": link, "staged": new, "previous": old, "files": swaps.file_stats(new)}]
    partitions.remove_version(old, str(root), PERIOD)
    rolled, kept, problems = swaps.roll_back(journal)
    assert (rolled, kept) == ([], [link]) and "is gone, so the partition keeps the rows of" in problems[0]
    assert shown(link) == new


def test_a_dead_runs_journal_is_followed_only_into_its_own_version_folders(spark, finance):
    """A damaged journal entry (a staged folder of another run, a link outside a destination) is left alone
    and reported; the run's own entry is rolled back."""
    first = run_ok(finance, "ts01_output_only")
    location = first["outputs"][0]["location"]
    live = shown(location)
    run_id = fake_dead_run(finance, first, staging=[{"link": location, "versions": str(versions_dir(location))}])
    staged = stage(location, run_id)
    show(location, str(staged))  # swapped in before it died
    foreign = stage(location, "another-run")
    store = RunStore(str(finance))
    rec = store.get_run(run_id)
    rec["commit"] = {"partitions": [{"link": location, "staged": str(staged), "previous": live},
                                    {"link": location, "staged": str(foreign), "previous": live},
                                    {"link": "/etc/passwd", "staged": str(staged), "previous": None}],
                     "elsewhere": ["spark_catalog.default.t"]}
    store.save_run(rec)
    cleaned = cli(finance, "runs", "clean")
    assert cleaned.exit_code == 0, describe(cleaned)
    failed = record(finance, run_id)
    assert shown(location) == live and not staged.exists() and foreign.is_dir()
    assert failed["interrupted"]["rolled_back"] == [location]
    assert "unexpected commit entry {'link': '/etc/passwd'" in failed["error"]
    assert f"'staged': '{foreign}'" in failed["error"]
    assert "outputs written by Spark to spark_catalog.default.t are not rolled back" in failed["error"]
    assert len(read_output(spark, first, 1)[1]) == 10


@pytest.mark.parametrize("broken", ["staged", "previous"])
def test_roll_back_refuses_entries_outside_the_partitions_version_folder(tmp_path, broken):
    root = tmp_path / "out"
    old, new = _version(root, "run-0"), _version(root, "run-1")
    link = str(root / f"_period={PERIOD}")
    swaps.commit([staging.Staged(link, new)])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    entry = {"link": link, "staged": new, "previous": old, broken: str(elsewhere)}
    assert swaps.roll_back([entry]) == ([], [], [f"unexpected commit entry {entry!r}: left alone"])
    assert shown(link) == new and elsewhere.is_dir()


def test_runs_clean_deletes_the_versions_a_completed_run_had_not_deleted_yet(spark, finance, monkeypatch):
    """A process that dies right after its commit point leaves the versions it replaced behind (not live):
    `ledgerflow runs clean` deletes them, and only them."""
    first = run_ok(finance, "ts01_output_only")
    location = first["outputs"][0]["location"]
    replaced = shown(location)
    monkeypatch.setattr(swaps, "retire", lambda journal, keep_replaced=False: [])  # as if it died before deleting
    second = run_ok(finance, "ts01_output_only")
    monkeypatch.undo()
    [entry] = second["commit"]["partitions"]
    assert (entry["link"], shown(entry["staged"]), entry["previous"]) == \
        (location, shown(location), replaced)
    assert os.path.isdir(replaced)
    cleaned = cli(finance, "runs", "clean")
    assert cleaned.exit_code == 0, describe(cleaned)
    assert cleaned.stdout.splitlines() == [f"{second['run_id']}  completed run: removed 1 version it replaced",
                                           f"    removed {replaced}"]
    assert not os.path.exists(replaced) and len(read_output(spark, second, 1)[1]) == 10
    assert cli(finance, "runs", "clean").stdout.strip() == \
        "nothing to clean: no interrupted run, no leftover staging folder"


def test_a_journal_never_gets_the_live_version_deleted(tmp_path):
    """A damaged journal naming the live version as the one replaced (spelt with a trailing slash, so the
    strings differ) deletes nothing, through a rollback, a retirement or a direct removal."""
    root = tmp_path / "out"
    live, other = _version(root, "run-1"), _version(root, "run-2")
    link = str(root / f"_period={PERIOD}")
    swaps.commit([staging.Staged(link, live)])
    entry = {"link": link, "staged": other, "previous": live + "/"}
    swaps.roll_back([entry])
    assert swaps.retire([{**entry, "staged": live}]) == []
    assert not partitions.remove_version(live, str(root), PERIOD)
    assert shown(link) == live and os.listdir(live) == ["part-0.csv"]


def test_a_record_whose_journal_has_the_wrong_shape_breaks_no_command(spark, finance):
    first = run_ok(finance, "ts01_output_only")
    location = first["outputs"][0]["location"]
    dead = fake_dead_run(finance, first, staging=[])
    store = RunStore(str(finance))
    for run_id, commit in ((dead, "x"), (first["run_id"], {"partitions": ["a", 1], "elsewhere": [None]})):
        rec = store.get_run(run_id)
        rec["commit"] = commit
        store.save_run(rec)
    cleaned = cli(finance, "runs", "clean")
    assert cleaned.exit_code == 0, describe(cleaned)
    assert record(finance, dead)["status"] == "failed"
    assert cli(finance, "runs", "list").exit_code == 0
    assert len(read_output(spark, first, 1)[1]) == 10 and shown(location) != os.path.realpath(location)


def test_after_the_commit_point_a_failure_to_write_run_json_only_warns(spark, finance, monkeypatch):
    """The registry holds the completed record: the run is not rolled back or recorded failed because its
    run.json could not be written."""
    first = run_ok(finance, "ts01_output_only")
    replaced = shown(first["outputs"][0]["location"])
    real = RunStore.write_files

    def write_files(self, rec, sql_text=None):
        if rec["status"] == "completed":
            raise OSError(28, "No space left on device")
        return real(self, rec, sql_text)
    monkeypatch.setattr(RunStore, "write_files", write_files)
    result = run(finance, "ts01_output_only")
    monkeypatch.undo()
    assert "Warning: the run completed, but its run.json could not be written" in result.stdout
    rec = RunStore(str(finance)).get_run(run_id_of(result))
    assert rec["status"] == "completed"
    location = rec["outputs"][0]["location"]
    assert shown(location).endswith(rec["run_id"])
    assert not os.path.exists(replaced)  # the version it replaced was deleted after the commit point


# ------------------------------------------------------------------------------------ second review
def test_a_rollback_through_a_symlinked_folder_points_at_the_earlier_version(tmp_path):
    """The destination reached through a link to a folder at another depth (a workspace under a
    symlinked /tmp or /data): the link written back must resolve from where it really is."""
    real = tmp_path / "deep" / "er" / "real"
    real.mkdir(parents=True)
    os.symlink(real, tmp_path / "a")
    root = tmp_path / "a" / "ws" / "out"
    old, new = _version(root, "run-0"), _version(root, "run-1")
    link = str(root / f"_period={PERIOD}")
    swaps.commit([staging.Staged(link, old)])
    journal: list[dict] = []
    swaps.swap_in([staging.Staged(link, new)], journal)
    assert swaps.roll_back(journal) == ([link], [], [])
    assert shown(link) == shown(old)
    assert (Path(link) / "part-0.csv").read_text() == "run\nrun-0\n"


def test_ctrl_c_just_after_the_commit_point_leaves_the_run_completed(spark, finance, monkeypatch):
    """The transaction committed, then the interrupt arrived: the run stands (its registered version
    keeps its partition), is recorded, and a note says the interrupt came after its commit point (the
    run returns: `ledgerflow run` exits 0)."""
    add_project(finance, "stamped", stamped("first", '{destination: {path: "out/snap/v{{version}}", format: csv}, '
                                                     'register_as_dataset: stamped_snap}'))
    real = RunStore.complete

    def complete_then_interrupt(self, *args, **kwargs):
        real(self, *args, **kwargs)
        raise KeyboardInterrupt
    monkeypatch.setattr(RunStore, "complete", complete_then_interrupt)
    lines: list[str] = []
    returned = Runner(str(finance), echo=lines.append, session_factory=lambda: spark).run("stamped", PERIOD)
    monkeypatch.undo()
    [rec] = RunStore(str(finance)).list_runs()
    assert rec["status"] == "completed" and returned["run_id"] == rec["run_id"]
    assert lines[-1] == (f"Interrupted after the commit point: run {rec['run_id']} is committed (completed); "
                         "nothing was rolled back.")
    assert json.loads((finance / "target" / "runs" / rec["run_id"] / "run.json").read_text())["status"] == "completed"
    registered = output_entry(rec, 3)["location"]
    assert shown(registered).endswith(rec["run_id"]) and stamps(spark, registered) == {"first"}
    assert [(g["version"], g["run_id"]) for g in RunStore(str(finance)).registrations("stamped_snap")] == \
        [(1, rec["run_id"])]


def test_ctrl_c_right_after_the_commit_transaction_is_reported_as_after_the_commit_point(spark, finance):
    """Ctrl-C at the first line the runner runs once its commit point returned: the run stands and says
    it was interrupted after the commit point (before: that line could lie between `_commit` and the
    deferral of signals, and the interrupt went out as "no run was under way", exit 3). The signal is
    raised from a trace function, at exactly that line."""
    from ledgerflow.adapters.run import runner as runner_module
    state = {"committed": False, "sent_at": None}

    def on_commit(_frame, event, _arg):
        if event == "return":
            state["committed"] = True
        return on_commit

    def in_runner(frame, event, _arg):
        if event == "line" and state["committed"] and state["sent_at"] is None:
            state["sent_at"] = f"{frame.f_code.co_name}:{frame.f_lineno}"
            signal.raise_signal(signal.SIGINT)
        return in_runner

    def tracer(frame, _event, _arg):
        if frame.f_code is publish.commit_point.__code__:
            return on_commit
        if frame.f_code.co_filename == runner_module.__file__ and frame.f_code.co_name.startswith("_execute"):
            return in_runner
        return None
    lines: list[str] = []
    runner = Runner(str(finance), echo=lines.append, session_factory=lambda: spark)
    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        got = runner.run("ts01_output_only", PERIOD)
    except BaseException as exc:  # noqa: BLE001 - a KeyboardInterrupt escaping would end the test session
        got = exc
    finally:
        sys.settrace(previous)
    assert state["sent_at"] is not None
    assert isinstance(got, dict) and got["status"] == "completed", (state["sent_at"], repr(got), lines)
    assert lines[-1] == (f"Interrupted after the commit point: run {got['run_id']} is committed (completed); "
                         "nothing was rolled back.")
    assert runner.stop_requested
    assert RunStore(str(finance)).get_run(got["run_id"])["status"] == "completed"
    assert record(finance, got["run_id"])["status"] == "completed"
    assert not liveness.holds(got["run_id"]) and RunStore(str(finance)).leases() == []


def test_a_check_that_saw_a_run_running_never_rolls_it_back_once_committed(spark, finance):
    """A command lists a run as running; the run commits and dies before writing its run.json. The
    registry's completed record wins over the stale run.json: nothing is rolled back, run.json is mended."""
    rec = run_ok(finance, "ts01_output_only")
    location = rec["outputs"][0]["location"]
    live = shown(location)
    store = RunStore(str(finance))
    stale = json.loads(json.dumps(rec))
    stale.update(status="running", finished_at=None, outputs=[], process={**rec["process"], "pid": dead_pid()})
    store.write_files(stale)  # what run.json held before the commit point
    Path(liveness.lock_path(store.runs_dir, rec["run_id"])).touch()  # its lock, not held
    outcome = recovery.recover_run(store, stale, "a test")
    assert (outcome.action, outcome.detail) == ("finished", "finished (completed) before it was checked; run.json "
                                                            "updated from the registry")
    assert shown(location) == live
    assert json.loads((finance / "target" / "runs" / rec["run_id"] / "run.json").read_text())["status"] == "completed"


def test_a_rollback_that_cannot_restore_a_partition_says_so(spark, finance, monkeypatch):
    """The version the first partition replaced vanishes before the second swap fails: that partition
    keeps the failed run's rows, and the error and the record name it."""
    many_outputs_project(finance)
    first = run_ok(finance, "many_outputs")
    locations = [o["location"] for o in sorted(first["outputs"], key=lambda o: o["operation_seq"])]
    gone = shown(locations[0])
    real, swapped = swaps._swap, []

    def swap(link, target):
        swapped.append(link)
        if len(swapped) == 2:
            shutil.rmtree(gone)
            raise OSError("no space left on device (simulated)")
        real(link, target)
    monkeypatch.setattr(swaps, "_swap", swap)
    result = run(finance, "many_outputs", expect=3)
    monkeypatch.undo()
    rec = record(finance, run_id_of(result))
    assert rec["rolled_back"]["kept"] == [locations[0]]
    assert f"(these partitions keep this run's rows: {locations[0]})" in rec["error"]
    assert f"the version it replaced ({gone}) is gone" in result.stderr + result.stdout
    assert shown(locations[0]).endswith(rec["run_id"])  # rows, not nothing
    assert [shown(loc) for loc in locations[1:]] == [shown(o["location"])
                                                                for o in first["outputs"][1:]]


def test_ctrl_c_waits_while_a_rollback_runs_even_with_other_threads_alive():
    """The signal mask would hold SIGINT only for its own thread: with another thread alive the kernel
    delivers it there and Python raises it in the main thread at once. The deferring handler holds it."""
    from ledgerflow.adapters.commit.signals import signals_deferred
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()
    steps, before = [], signal.getsignal(signal.SIGINT)
    try:
        with pytest.raises(KeyboardInterrupt):
            with signals_deferred():
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.05)
                steps.append("rolled back")  # reached: the interrupt waits for the block's end
    finally:
        stop.set()
    assert steps == ["rolled back"]
    assert signal.getsignal(signal.SIGINT) is before


class _Catalog:
    def currentCatalog(self):
        return "spark_catalog"

    def currentDatabase(self):
        return "default"


class _Session:
    catalog = _Catalog()


@pytest.mark.parametrize("a, b, same", [
    ("t", "default.t", True), ("db.t", "spark_catalog.db.t", True), ("`DB`.`T`", "db.t", True),
    ("spark_catalog.t", "default.t", True), ("ice.a.b.t", "ice.a.c.t", False), ("`a.b`.t", "a.`b.t`", False),
    ("db.t", "db.u", False)])
def test_catalog_table_names_are_compared_as_spark_resolves_them(a, b, same):
    assert (spark_writes.qualified_table(_Session(), a) == spark_writes.qualified_table(_Session(), b)) is same


def test_a_catalog_table_name_sqlglot_cannot_read_is_compared_as_written():
    assert spark_writes.qualified_table(_Session(), "db.T;x") == "db.t;x"


def test_a_rollback_cut_short_is_finished_before_the_run_is_recorded_failed(spark, finance, monkeypatch):
    """A second Ctrl-C stops the first rollback before it began: the failed run is not recorded until its
    journal has been rolled back again, so no partition keeps its rows."""
    many_outputs_project(finance)
    first = run_ok(finance, "many_outputs")
    locations = [o["location"] for o in sorted(first["outputs"], key=lambda o: o["operation_seq"])]
    live_before = [shown(loc) for loc in locations]
    real_swap, real_roll_back, swapped, calls = swaps._swap, swaps.roll_back, [], []

    def swap(link, target):
        swapped.append(link)
        if len(swapped) == 3:
            raise OSError("no space left on device (simulated)")
        real_swap(link, target)

    def roll_back(journal):
        calls.append(len(journal))
        if len(calls) == 1:
            raise KeyboardInterrupt  # the user presses Ctrl-C again as the rollback starts
        return real_roll_back(journal)
    monkeypatch.setattr(swaps, "_swap", swap)
    monkeypatch.setattr(swaps, "roll_back", roll_back)
    with pytest.raises(KeyboardInterrupt):
        Runner(str(finance), echo=lambda _line: None, session_factory=lambda: spark).run("many_outputs", PERIOD)
    monkeypatch.undo()
    assert calls == [3, 3]
    rec = [r for r in RunStore(str(finance)).list_runs() if r["run_id"] != first["run_id"]][0]
    assert rec["status"] == "failed" and rec["error"] == "interrupted: KeyboardInterrupt in the process that ran it"
    assert rec["rolled_back"]["partitions"] == locations[1::-1]
    assert [shown(loc) for loc in locations] == live_before


def test_a_rolled_back_restatement_removes_only_its_own_keep_mark(tmp_path):
    """A version an earlier restatement kept (its mark names that restatement) that a later restatement replaced
    again keeps the earlier mark when the later one is rolled back: the earlier one's superseded rows stay."""
    root = tmp_path / "out"
    kept, other, newest = _version(root, "run-0"), _version(root, "run-1"), _version(root, "run-2")
    link = str(root / f"_period={PERIOD}")
    swaps.commit([staging.Staged(link, kept)])
    first: list[dict] = []
    swaps.swap_in([staging.Staged(link, other)], first, keep="restate-1")  # run-0 superseded, kept
    assert (Path(kept) / partitions.KEPT).read_text().strip() == "restate-1"
    swaps.swap_in([staging.Staged(link, kept)], [], keep="promote-back")  # run-0 shown again (from another env)
    later: list[dict] = []
    swaps.swap_in([staging.Staged(link, newest)], later, keep="restate-3")  # a later restatement, rolled back
    assert later[0]["keep"] == "restate-3"
    rolled, _kept, problems = swaps.roll_back(later)
    assert rolled == [link] and not problems
    assert (Path(kept) / partitions.KEPT).read_text().strip() == "restate-1"
    swaps.swap_in([staging.Staged(link, other)], [], keep=None)
    assert not partitions.remove_version(kept, str(root), PERIOD) and Path(kept).is_dir()

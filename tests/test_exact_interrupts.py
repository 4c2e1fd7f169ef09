"""Ctrl-C during a run: one line, no py4j tracebacks, exit 3 before the commit point and 0 after it;
and a run killed after its commit point gets its run.json mended by `runs clean`.

One real ``ledgerflow run`` process gets SIGINT (sent to its process group, as a terminal's Ctrl-C
is) inside a Spark job: that is where a real process matters (the JVM gets the signal too, py4j is
waiting on Spark). It is paused at a known point by a wrapper that patches one function before
calling the CLI, and signals that it got there with a marker file: no timing guesses. Every other
point is checked in this process (the CLI in-process, or the runner with the shared session), with
the signal raised at the point: the handler runs exactly as it would for a terminal's Ctrl-C.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from cli_support import add_project, cli, describe, read_output, record, run_ok
from conftest import cli_env
from test_hardening_commit import STAMP
from test_hardening_interrupted import PERIOD, own_folders

from partition_support import shown
from ledgerflow.adapters.run import interrupts
from ledgerflow.adapters.store import liveness
from ledgerflow.adapters.inputs import loaders
from ledgerflow.adapters.commit import spark_writes, swaps
from ledgerflow.adapters.run.many import run_many
from ledgerflow.adapters.run.runner import Runner
from ledgerflow.adapters.store.runstore import RunStore
from ledgerflow.compiler.periods import parse_period

# Pauses the run inside a Spark job: when the run loads its inputs, a job that would run for hours
# starts first; the marker appears once Spark reports the job's stage active.
IN_SPARK_JOB = textwrap.dedent("""
    import os, sys, threading, time
    from ledgerflow.adapters import cli
    from ledgerflow.adapters.inputs import loaders
    real, marker = loaders.load_inputs, sys.argv[1]

    def load_inputs(spark, inputs, args):
        def mark():
            while not spark.sparkContext.statusTracker().getActiveStageIds():
                time.sleep(0.05)
            open(marker, "w").close()
        threading.Thread(target=mark, daemon=True).start()
        spark.sql("SELECT count(*) FROM range(0, 100000000000000) a").collect()
        return real(spark, inputs, args)
    loaders.load_inputs = load_inputs
    cli.main(sys.argv[2:])
""")


def inside_py4j(*pauses: float) -> dict:
    """A function ``send_command`` defined in a module named like py4j's (the handler looks for a py4j
    frame on the main thread's stack): it sends SIGINT to this process after each of ``pauses``
    seconds, then sleeps 0.2 s, as py4j waits on Spark's answer; returns "answer"."""
    namespace: dict = {"__name__": "py4j.clientserver"}
    exec(textwrap.dedent("""
        import os, signal, time
        def send_command(pauses):
            for pause in pauses:
                time.sleep(pause)
                os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.2)
            return "answer"
    """), namespace)
    real = namespace["send_command"]
    namespace["send_command"] = lambda: real(pauses)
    return namespace


def interrupted_run(ws: Path, wrapper: str, marker: Path, after_signal=lambda: None) -> subprocess.CompletedProcess:
    """Run ts01_output_only through ``wrapper``; SIGINT its process group once ``marker`` exists."""
    proc = subprocess.Popen([sys.executable, "-c", wrapper, str(marker), "--workspace", str(ws), "run",
                             "ts01_output_only", "--period", PERIOD], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, env=cli_env())
    try:
        deadline = time.monotonic() + 300
        while not marker.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the run never reached the point"
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)
        after_signal()
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def quiet(result: subprocess.CompletedProcess) -> None:
    """Nothing of Python's or py4j's tracebacks on the terminal."""
    for noise in ("Traceback", "py4j", "Py4J", "ERROR", "Exception", "Aborted!"):
        assert noise not in result.stdout + result.stderr, (noise, result.stdout, result.stderr)


def test_ctrl_c_during_a_spark_job_cancels_it_rolls_back_and_exits_3(spark, finance, tmp_path):
    first = run_ok(finance, "ts01_output_only")
    link = first["outputs"][0]["location"]
    live = shown(link)
    result = interrupted_run(finance, IN_SPARK_JOB, tmp_path / "in-job")
    [run_id] = [p.name for p in (finance / "target" / "runs").iterdir() if p.name != first["run_id"]]
    assert result.returncode == 3, (result.stdout, result.stderr)
    assert result.stderr == (f"Interrupted: run {run_id} was stopped before its commit point and is recorded failed; "
                             "nothing it wrote was made visible.\n")
    quiet(result)
    rec = record(finance, run_id)
    assert rec["status"] == "failed" and rec["error"] == "interrupted: KeyboardInterrupt in the process that ran it"
    assert RunStore(str(finance)).get_run(run_id)["status"] == "failed"
    assert shown(link) == live and own_folders(link, run_id) == []
    assert len(read_output(spark, first, 1)[1]) == 10
    assert not Path(liveness.lock_path(str(finance / "target" / "runs"), run_id)).exists()
    assert RunStore(str(finance)).leases() == []


def test_ctrl_c_after_the_commit_point_keeps_the_run_and_exits_0(spark, finance, monkeypatch):
    """Ctrl-C as the run deletes the versions it replaced (after its commit point): `ledgerflow run`
    (in this process) says so and exits 0; the run stands and lets go of its lease and lock."""
    real = swaps.retire

    def retire(journal, keep_replaced=False):
        signal.raise_signal(signal.SIGINT)
        return real(journal, keep_replaced=keep_replaced)
    monkeypatch.setattr(swaps, "retire", retire)
    result = cli(finance, "run", "ts01_output_only", "--period", PERIOD)
    monkeypatch.undo()
    [run_id] = [p.name for p in (finance / "target" / "runs").iterdir()]
    assert result.exit_code == 0, describe(result)
    assert result.stdout.splitlines()[-1] == (f"Interrupted after the commit point: run {run_id} is committed "
                                              "(completed); nothing was rolled back.")
    assert result.stderr == ""
    quiet(result)
    rec = record(finance, run_id)
    assert rec["status"] == "completed" and RunStore(str(finance)).get_run(run_id)["status"] == "completed"
    assert os.path.basename(shown(rec["outputs"][0]["location"])) == run_id
    assert len(read_output(spark, rec, 1)[1]) == 10
    assert not Path(liveness.lock_path(str(finance / "target" / "runs"), run_id)).exists()
    assert RunStore(str(finance)).leases() == []


def test_runs_clean_mends_run_json_of_a_run_killed_between_its_commit_point_and_run_json(spark, finance):
    """The registry says completed (the commit point), run.json still says running and the lock file of
    the dead process is there: `runs clean` writes run.json from the registry and removes the lock file
    (before: neither, as only runs the registry called running were looked at)."""
    rec = run_ok(finance, "ts01_output_only")
    store = RunStore(str(finance))
    stale = {**rec, "status": "running", "finished_at": None, "outputs": []}
    store.write_files(stale)
    lock = Path(liveness.lock_path(store.runs_dir, rec["run_id"]))
    lock.touch()  # left by the dead process, not held
    cleaned = cli(finance, "runs", "clean")
    assert cleaned.exit_code == 0, describe(cleaned)
    assert f"{rec['run_id']}  finished (completed); its process died before it released its lock; run.json " \
           "updated from the registry" in cleaned.stdout
    assert json.loads((Path(store.runs_dir) / rec["run_id"] / "run.json").read_text()) == store.get_run(rec["run_id"])
    assert not lock.exists()


def test_the_handler_never_calls_py4j_from_inside_a_py4j_call():
    """Inside a py4j call (a py4j frame on the main thread's stack) the handler only notes Ctrl-C and
    cancels the jobs from another thread; outside one it raises KeyboardInterrupt (after the same)."""
    cancelled: list[str] = []
    ran = threading.Event()

    def cancel():
        cancelled.append(threading.current_thread().name)
        ran.set()
    inside_py4j: dict = {"__name__": "py4j.clientserver"}
    exec(textwrap.dedent("""
        import os, signal, time
        def send_command():  # stands for py4j waiting on Spark's answer
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.2)
            return "answer"
    """), inside_py4j)
    with interrupts.watching(cancel):
        assert inside_py4j["send_command"]() == "answer"  # not interrupted inside py4j
        assert interrupts.requested() and ran.wait(5)
        assert cancelled == ["ledgerflow-cancel-jobs"]
        try:
            interrupts.check()
            raised = False
        except KeyboardInterrupt:
            raised = True
        assert raised
        ran.clear()
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)
            raised = False
        except KeyboardInterrupt:
            raised = True
        assert raised and ran.wait(5)
    assert not interrupts.requested()


def outcome(call):
    """What ``call()`` returned or raised (a KeyboardInterrupt escaping a test would end the whole session)."""
    try:
        return call()
    except BaseException as exc:  # noqa: BLE001 - handed to the test
        return exc


def test_a_second_ctrl_c_raises_even_inside_a_py4j_call():
    """A py4j call that is no Spark job (a metastore call, a Hadoop rename, a wedged JVM) is not ended by
    cancelling the jobs: the first Ctrl-C is noted, the second raises at once (before: nothing, however
    often it was pressed, until the call returned)."""
    call = inside_py4j(0, 0.2, 30)  # Ctrl-C twice, then a 30 s call: the second one must end it
    clock = time.monotonic()
    with interrupts.watching(lambda: None):
        with pytest.raises(KeyboardInterrupt):
            call["send_command"]()
    assert time.monotonic() - clock < 10


def test_ctrl_c_after_one_projects_commit_point_stops_run_select(spark, finance, monkeypatch):
    """`run --select A --select B`: Ctrl-C after A's commit point keeps A (completed) and runs nothing more:
    B is skipped, the summary is printed and the exit is 3 (before: the interrupt was dropped, B ran and
    the exit was 0)."""
    real, fired = RunStore.write_files, []

    def write_files(self, rec, *args, **kwargs):
        if rec.get("status") == "completed" and not fired:
            fired.append(rec["run_id"])
            signal.raise_signal(signal.SIGINT)  # after the commit point of the first project
        return real(self, rec, *args, **kwargs)
    monkeypatch.setattr(RunStore, "write_files", write_files)
    result = cli(finance, "run", "--select", "ts01_output_only", "--select", "ts05_aggregate_by_type",
                 "--period", PERIOD)
    monkeypatch.undo()
    assert result.exit_code == 3, describe(result)
    [rec] = RunStore(str(finance)).list_runs()
    assert rec["run_id"] == fired[0] and rec["project"]["name"] == "ts01_output_only" and rec["status"] == "completed"
    assert record(finance, rec["run_id"])["status"] == "completed"
    assert f"Interrupted after the commit point: run {rec['run_id']} is committed (completed)" in result.stdout
    [skipped] = [ln for ln in result.stdout.splitlines() if ln.strip().startswith("ts05_aggregate_by_type")]
    assert skipped.split()[1] == "skipped" and skipped.endswith("not run: the invocation was stopped by Ctrl-C")
    assert "1 completed, 0 failed, 1 skipped" in result.stdout
    assert result.stderr == (f"Interrupted: Ctrl-C after the commit point of ts01_output_only (run {rec['run_id']}, "
                             "completed). Not run: 1 project; completed (committed, they stand): 1. See the summary "
                             "above.\n")
    assert RunStore(str(finance)).leases() == []


def test_run_select_stops_at_a_project_interrupted_before_its_commit_point(finance):
    """A project interrupted before its commit point (rolled back, recorded failed) ends the invocation too,
    with the summary (before: the interrupt went straight out, no summary)."""
    calls: list[str] = []
    stopped = ("run 0190 was stopped before its commit point and is recorded failed; nothing it wrote was made "
               "visible.")

    class Interrupted:  # a runner whose run is interrupted (no Spark needed to show what run_many does)
        store = RunStore(str(finance))
        stop_requested = False

        def run(self, name, *_args, **_kwargs):
            calls.append(name)
            raise interrupts.RunInterrupted(stopped)
    lines: list[str] = []
    with pytest.raises(interrupts.RunInterrupted) as stop:
        run_many(Interrupted(), str(finance), parse_period(PERIOD), "ts01_output_only ts05_aggregate_by_type",
                 echo=lines.append)
    assert calls == ["ts01_output_only"]
    assert str(stop.value) == (f"ts01_output_only: {stopped.rstrip('.')}. Not run: 1 project; completed (committed, "
                               "they stand): 0. See the summary above.")
    text = "\n".join(lines)
    assert f"  failed: interrupted: {stopped}" in text and "0 completed, 1 failed, 1 skipped" in text


def test_a_second_ctrl_c_while_the_run_is_recorded_failed_releases_its_lease_and_lock(spark, finance, monkeypatch):
    """Ctrl-C stops the run; a second one comes while it is being recorded failed. The failed record, its
    leases and its lock go all the same (before: the leases and the lock stayed, and the next run of this
    process failed RUN-001 naming its own pid)."""
    real_load, real_save, pressed = loaders.load_inputs, RunStore.save_run, []

    def load_inputs(*args, **kwargs):
        signal.raise_signal(signal.SIGINT)  # the first Ctrl-C, outside py4j: raised here
        return real_load(*args, **kwargs)

    def save_run(self, rec, sql_text=None, release=False):
        if release and not pressed:
            pressed.append(rec["run_id"])
            signal.raise_signal(signal.SIGINT)  # the second, as the failed record is written
        return real_save(self, rec, sql_text, release)
    monkeypatch.setattr(loaders, "load_inputs", load_inputs)
    monkeypatch.setattr(RunStore, "save_run", save_run)
    runner = Runner(str(finance), echo=lambda _line: None, session_factory=lambda: spark)
    stop = outcome(lambda: runner.run("ts01_output_only", PERIOD))
    monkeypatch.undo()
    [run_id] = pressed
    assert isinstance(stop, interrupts.RunInterrupted), repr(stop)
    assert str(stop) == (f"run {run_id} was stopped before its commit point and is recorded failed; nothing it "
                         "wrote was made visible.")
    assert runner.stop_requested  # a caller of several runs stops
    store = RunStore(str(finance))
    assert store.get_run(run_id)["status"] == "failed" and record(finance, run_id)["status"] == "failed"
    assert store.leases() == [] and not liveness.holds(run_id)
    assert not Path(liveness.lock_path(store.runs_dir, run_id)).exists()


def test_ledgerflows_handler_replaces_pysparks_once_a_session_is_created(spark, finance, monkeypatch):
    """A SparkContext created on the main thread installs PySpark's SIGINT handler (it calls py4j from inside
    the handler). The Python API's default session is created during the run, and `ledgerflow test` creates
    its session itself: ledgerflow's handler is the one installed afterwards (before: PySpark's stayed)."""
    from ledgerflow.adapters import api
    from ledgerflow.adapters.spark import session as spark_module
    from ledgerflow.adapters.scenarios import execute, suite

    def pysparks(_signum, _frame):
        raise KeyboardInterrupt

    def new_context(*_args, **_kwargs):
        signal.signal(signal.SIGINT, pysparks)  # what SparkContext() does on the main thread
        return spark
    seen: list = []
    real_load, real_execute = loaders.load_inputs, execute.run

    def load_inputs(*args, **kwargs):
        seen.append(("run", signal.getsignal(signal.SIGINT)))
        return real_load(*args, **kwargs)

    def run_test(*args, **kwargs):
        seen.append(("test", signal.getsignal(signal.SIGINT)))
        return real_execute(*args, **kwargs)
    monkeypatch.setattr(spark_module, "local_session", new_context)
    monkeypatch.setattr(loaders, "load_inputs", load_inputs)
    monkeypatch.setattr(execute, "run", run_test)
    before = signal.getsignal(signal.SIGINT)
    rec = outcome(lambda: api.run(str(finance), "ts01_output_only", PERIOD, echo=lambda _line: None))
    assert isinstance(rec, dict) and rec["status"] == "completed", rec
    from ledgerflow.compiler.workspace import load_workspace
    results, code = suite.run_tests(load_workspace(str(finance)), ("ts01_output_only",), None, new_context,
                                    lambda _line: None)
    monkeypatch.undo()
    assert code == 0, [r.lines for r in results]
    assert seen == [("run", interrupts._handler), ("test", interrupts._handler)]
    assert signal.getsignal(signal.SIGINT) is before  # each gives back the handler it found


def test_a_ctrl_c_once_a_catalog_table_is_written_lets_the_run_commit(spark, finance, monkeypatch):
    """A catalog table (or URI) written by the run cannot be rolled back: once the first is being written,
    a first Ctrl-C is only noted, the run commits and says it was interrupted after its commit point
    (before: the run was rolled back while the tables kept its rows, a mix of two runs). Both ways the
    Ctrl-C can come: raised outside py4j between two table writes, and noted inside py4j during the last
    one (the job finished anyway; before, the commit point's check rolled the run back)."""
    db = "interrupt_tables_db"
    spark.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")
    spark.sql(f"CREATE DATABASE {db} LOCATION '{finance / 'warehouse' / db}'")
    real_write = spark_writes.write_catalog_table

    def project(stamp: str) -> str:
        return STAMP.format(stamp=stamp) + textwrap.dedent(f"""\
            - {{seq: 2, name: Local copy, type: output, arguments: {{destination: {{path: out/local, format: csv}}}}}}
            - {{seq: 3, name: First, type: output, arguments: {{destination: {{catalog_table: {db}.first}}}}}}
            - {{seq: 4, name: Second, type: output, arguments: {{destination: {{catalog_table: {db}.second}}}}}}
            """)

    def stamps_in(table: str) -> set:
        return {r[0] for r in spark.sql(f"SELECT source_system FROM {db}.{table} WHERE _period = '{PERIOD}'").collect()}
    try:
        for stamp, when, ctrl_c in (("one", 1, lambda: signal.raise_signal(signal.SIGINT)),
                                    ("two", 2, lambda: inside_py4j(0)["send_command"]())):
            add_project(finance, "tables", project(stamp))
            writes: list[str] = []

            def write_catalog_table(df, table, *args, when=when, ctrl_c=ctrl_c):
                location = real_write(df, table, *args)
                writes.append(table)
                if len(writes) == when:
                    ctrl_c()
                return location
            monkeypatch.setattr(spark_writes, "write_catalog_table", write_catalog_table)
            lines: list[str] = []
            runner = Runner(str(finance), echo=lines.append, session_factory=lambda: spark)
            rec = outcome(lambda: runner.run("tables", PERIOD))
            monkeypatch.undo()
            assert isinstance(rec, dict) and rec["status"] == "completed" and len(writes) == 2, (rec, lines)
            assert lines[-1] == (f"Interrupted after the commit point: run {rec['run_id']} is committed (completed); "
                                 "nothing was rolled back.")
            assert runner.stop_requested
            local = [o["location"] for o in rec["outputs"] if o["operation_seq"] == 2][0]
            assert os.path.basename(shown(local)) == rec["run_id"]
            assert stamps_in("first") == stamps_in("second") == {stamp}
            assert RunStore(str(finance)).get_run(rec["run_id"])["status"] == "completed"
    finally:
        spark.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")

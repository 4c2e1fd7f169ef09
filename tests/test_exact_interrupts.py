"""Ctrl-C during a run: one line, no py4j tracebacks, exit 3 before the commit point and 0 after it;
and a run killed after its commit point gets its run.json mended by `runs clean`.

Two real ``ledgerflow run`` processes get SIGINT (sent to their process group, as a terminal's Ctrl-C
is). Each is paused at a known point by a wrapper that patches one function before calling the CLI,
and signals that it got there with a marker file: no timing guesses.
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

from cli_support import cli, describe, read_output, record, run_ok
from test_hardening_interrupted import PERIOD, own_folders

from ledgerflow.adapters import interrupts, liveness
from ledgerflow.adapters.runstore import RunStore

# Pauses the run inside a Spark job: when the run loads its inputs, a job that would run for hours
# starts first; the marker appears once Spark reports the job's stage active.
IN_SPARK_JOB = textwrap.dedent("""
    import os, sys, threading, time
    from ledgerflow.adapters import cli, loaders
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

# Pauses the run after its commit point (where it deletes the versions it replaced) until the test
# creates `<marker>.go`.
AFTER_COMMIT = textwrap.dedent("""
    import os, sys, time
    from ledgerflow.adapters import cli, writers
    real, marker = writers.retire, sys.argv[1]

    def retire(journal):
        open(marker, "w").close()
        while not os.path.exists(marker + ".go"):
            time.sleep(0.05)
        return real(journal)
    writers.retire = retire
    cli.main(sys.argv[2:])
""")


def interrupted_run(ws: Path, wrapper: str, marker: Path, after_signal=lambda: None) -> subprocess.CompletedProcess:
    """Run ts01_output_only through ``wrapper``; SIGINT its process group once ``marker`` exists."""
    proc = subprocess.Popen([sys.executable, "-c", wrapper, str(marker), "--workspace", str(ws), "run",
                             "ts01_output_only", "--period", PERIOD], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
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
    live = os.path.realpath(link)
    result = interrupted_run(finance, IN_SPARK_JOB, tmp_path / "in-job")
    [run_id] = [p.name for p in (finance / "target" / "runs").iterdir() if p.name != first["run_id"]]
    assert result.returncode == 3, (result.stdout, result.stderr)
    assert result.stderr == (f"Interrupted: run {run_id} was stopped before its commit point and is recorded failed; "
                             "nothing it wrote was made visible.\n")
    quiet(result)
    rec = record(finance, run_id)
    assert rec["status"] == "failed" and rec["error"] == "interrupted: KeyboardInterrupt in the process that ran it"
    assert RunStore(str(finance)).get_run(run_id)["status"] == "failed"
    assert os.path.realpath(link) == live and own_folders(link, run_id) == []
    assert len(read_output(spark, first, 1)[1]) == 10
    assert not Path(liveness.lock_path(str(finance / "target" / "runs"), run_id)).exists()
    assert RunStore(str(finance)).leases() == []


def test_ctrl_c_after_the_commit_point_keeps_the_run_and_exits_0(spark, finance, tmp_path):
    marker = tmp_path / "committed"
    result = interrupted_run(finance, AFTER_COMMIT, marker, after_signal=lambda: Path(f"{marker}.go").touch())
    [run_id] = [p.name for p in (finance / "target" / "runs").iterdir()]
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert result.stdout.splitlines()[-1] == (f"Interrupted after the commit point: run {run_id} is committed "
                                              "(completed); nothing was rolled back.")
    assert result.stderr == ""
    quiet(result)
    rec = record(finance, run_id)
    assert rec["status"] == "completed" and RunStore(str(finance)).get_run(run_id)["status"] == "completed"
    assert os.path.basename(os.path.realpath(rec["outputs"][0]["location"])) == run_id
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

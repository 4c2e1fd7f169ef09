"""One writer per destination partition (leases in the run store), and what recovery releases.

Two runs writing the same partitions at once could each swap in some of them, so that a reader saw
outputs no run computed together. A run now leases every destination partition before its first
Spark query: a second run needing one fails at once naming the holder, or waits (``run --wait``).
A process killed after reserving a registered version (or leasing) and before its run was recorded
left the version ``pending`` forever; recovery now releases such claims by the process they record.

The concurrent runs here run in this process (one SparkSession): a run of this process is alive for
the liveness probe exactly as another live process would be.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from cli_support import add_project, cli, describe, record, run_ok
from conftest import cli_env
from test_hardening_commit import stamped
from test_hardening_interrupted import PERIOD, dead_pid

from partition_support import shown
from ledgerflow.adapters.run import leases
from ledgerflow.adapters.store import liveness
from ledgerflow.adapters.inputs import loaders
from ledgerflow.adapters.commit import recovery
from ledgerflow.adapters.run.leases import LeaseHeld
from ledgerflow.adapters.commit.destinations import OutputDestination
from ledgerflow.adapters.run.runner import Runner
from ledgerflow.adapters.store.runstore import RunStore

HOST = socket.gethostname()

# Dies (SIGKILL) when the run is first recorded: after it took its lock, reserved its registered
# version and leased its partitions, before any record of it exists.
KILL_AT_FIRST_RECORD = textwrap.dedent("""
    import os, signal, sys
    from ledgerflow.adapters import cli
    from ledgerflow.adapters.store.runstore import RunStore

    def save_run(self, record, *args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)
    RunStore.save_run = save_run
    cli.main(sys.argv[1:])
""")


def _wait_until_gone(group: int, timeout: float = 60) -> None:
    """Until no live process (a zombie aside) is left in process ``group``: a JVM killed with its group takes a
    moment to exit on a loaded machine, and the next command must find the killed run dead, not dying."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        live = False
        for pid in (e for e in os.listdir("/proc") if e.isdigit()):
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            live = live or (fields[0] != "Z" and int(fields[2]) == group)
        if not live:
            return
        time.sleep(0.05)


def while_loading(monkeypatch, during) -> list:
    """Call ``during()`` once, when the first run of this test loads its inputs (its leases are taken,
    its Spark work begins); returns what it returned or raised (a one-item list)."""
    real, got = loaders.load_inputs, []

    def load_inputs(spark, inputs, args):
        if not got:
            got.append(None)
            try:
                got[0] = during()
            except BaseException as exc:  # noqa: BLE001 - handed to the test
                got[0] = exc
        return real(spark, inputs, args)
    monkeypatch.setattr(loaders, "load_inputs", load_inputs)
    return got


def test_a_second_run_needing_a_leased_partition_fails_at_once_naming_the_holder(spark, finance, monkeypatch):
    """Run B starts while run A is executing and needs A's partition: B fails (exit 1) before any Spark
    query, naming A, its process and host; A commits alone. (Before: B ran and both swapped in.)"""
    first: list[str] = []

    def second_run():
        return Runner(str(finance), echo=lambda _line: None, session_factory=lambda: spark).run(
            "ts01_output_only", PERIOD)
    got = while_loading(monkeypatch, second_run)
    a = Runner(str(finance), echo=first.append, session_factory=lambda: spark).run("ts01_output_only", PERIOD)
    monkeypatch.undo()
    [err] = got
    assert isinstance(err, LeaseHeld), err
    assert err.exit_code == 1
    link = a["outputs"][0]["location"]
    partition = os.path.join(shown(os.path.dirname(link)), os.path.basename(link))
    message = str(err)
    assert message.startswith(f"RUN-001 the destination partition {partition} is being written"), message
    assert f"is being written by run {a['run_id']} (pid {os.getpid()} on host {HOST}, holding it since " in message
    assert "pass --wait to wait for it" in message
    store = RunStore(str(finance))
    [b] = [r for r in store.list_runs() if r["run_id"] != a["run_id"]]
    assert b["status"] == "failed" and b["error"] == message and b.get("commit") is None
    assert b.get("timings") is None  # it never reached Spark
    assert os.path.basename(shown(link)) == a["run_id"]  # the partition shows A's version
    assert store.leases() == []  # A's leases went with its commit, B's with its failure


def test_run_wait_waits_for_the_holder_then_runs(spark, finance, monkeypatch):
    """``run --wait``: B says it is waiting for A, starts its Spark work only after A committed, and
    then commits its own version of the partition."""
    events: list[tuple[str, str]] = []
    waiting = threading.Event()
    done: dict = {}

    def echo_b(line: str) -> None:
        events.append(("B", line))
        if line.strip().startswith("waiting:"):
            waiting.set()

    def run_b():
        try:
            done["b"] = Runner(str(finance), echo=echo_b, session_factory=lambda: spark, wait=True).run(
                "ts01_output_only", PERIOD)
        except BaseException as exc:  # noqa: BLE001
            done["b"] = exc
    thread = threading.Thread(target=run_b)

    def start_b_and_let_it_wait():
        thread.start()
        assert waiting.wait(60), events
    got = while_loading(monkeypatch, start_b_and_let_it_wait)
    a = Runner(str(finance), echo=lambda line: events.append(("A", line)),
               session_factory=lambda: spark).run("ts01_output_only", PERIOD)
    thread.join(120)
    monkeypatch.undo()
    assert got == [None], got
    b = done["b"]
    assert isinstance(b, dict) and b["status"] == "completed", b
    [wait_line] = [line for who, line in events if who == "B" and "waiting:" in line]
    assert f"is being written by run {a['run_id']} (pid {os.getpid()} on host {HOST}" in wait_line
    a_done = events.index(next(e for e in events if e[0] == "A" and e[1].startswith("Completed run")))
    b_loads = events.index(next(e for e in events if e[0] == "B" and e[1].strip().startswith("loaded ")))
    assert b_loads > a_done, events
    assert os.path.basename(shown(b["outputs"][0]["location"])) == b["run_id"]
    assert RunStore(str(finance)).leases() == []


def test_a_process_killed_before_its_run_was_recorded_leaves_no_pending_version_nor_lease(spark, finance):
    """SIGKILL after the run reserved a registered version and leased its partitions, before its first
    record: `runs clean` releases both (before: it found nothing and the version stayed pending, so the
    next run took v2), and the next run registers v1."""
    add_project(finance, "stamped", stamped("first", '{destination: {path: "out/snap/v{{version}}", format: csv}, '
                                                     'register_as_dataset: stamped_snap}'))
    proc = subprocess.Popen([sys.executable, "-c", KILL_AT_FIRST_RECORD, "--workspace", str(finance), "run",
                             "stamped", "--period", PERIOD], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, env=cli_env())
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == -signal.SIGKILL, (out, err)
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # its JVM, if it got that far
    except ProcessLookupError:
        pass
    _wait_until_gone(proc.pid)
    [run_dir] = list((finance / "target" / "runs").iterdir())
    assert not (run_dir / "run.json").exists()
    cleaned = cli(finance, "runs", "clean")
    assert cleaned.exit_code == 0, describe(cleaned)
    # the store's opening released them (one line on stderr); `runs clean` would have, as it does a run's
    [line] = [ln for ln in cleaned.stderr.splitlines() if run_dir.name in ln]
    assert line.startswith(f"ledgerflow: run {run_dir.name}: released reserved version stamped_snap v1 and leases "
                           "on "), describe(cleaned)
    assert str(finance / "out" / "local" / f"_period={PERIOD}") in line
    assert f"died before the run was recorded" in line
    assert not run_dir.exists()  # its folder held only its lock file
    store = RunStore(str(finance))
    assert store.leases() == [] and store.pending_reservations(run_dir.name) == []
    rec = run_ok(finance, "stamped")
    assert rec["outputs"][1]["registered_version"] == 1


# ------------------------------------------------------------------------------ the lease table itself
def test_lease_keys_name_each_destination_partition(tmp_path):
    """A local partition by its real path, a URI's partition by its text, a catalog table by its name."""
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    destinations = {1: OutputDestination("path", str(tmp_path / "link" / "out"), "csv", 1),
                    2: OutputDestination("path", "file:" + str(real / "out"), "csv", 1),
                    3: OutputDestination("path", "s3a://bucket/out/", "parquet", 1),
                    4: OutputDestination("table", "spark_catalog.Db.`T`", "table", 1),
                    5: OutputDestination("table", "t", "table", 1)}
    assert leases.resources(destinations, PERIOD) == [
        f"path {real / 'out' / ('_period=' + PERIOD)}", f"uri s3a://bucket/out/_period={PERIOD}",
        f"table t _period={PERIOD}"]


def test_a_lease_of_a_dead_process_is_taken_over_and_a_live_one_is_not(finance):
    """The holder's lock decides: held (this process holds it here) -> LeaseHeld; free or missing with
    its pid gone -> recovery releases it and the lease is taken."""
    store = RunStore(str(finance))
    resource = ["path /x/_period=2026-01"]
    me = liveness.owner()
    live_id, dead_id, gone_id = "01000000-0000-7000-8000-00000000000a", "01000000-0000-7000-8000-00000000000b", \
        "01000000-0000-7000-8000-00000000000c"
    liveness.hold(store.runs_dir, live_id)
    try:
        assert store.take_leases(live_id, me, resource, "t0") is None
        with pytest.raises(LeaseHeld, match=f"run {live_id} \\(pid {os.getpid()} on host {HOST}"):
            leases.take(store, "other", me, resource)
    finally:
        liveness.release(live_id)
        store.release(live_id)
    # dead, its lock file left behind unheld
    assert store.take_leases(dead_id, {"pid": dead_pid(), "host": HOST}, resource, "t0") is None
    Path(liveness.lock_path(store.runs_dir, dead_id)).parent.mkdir(parents=True)
    Path(liveness.lock_path(store.runs_dir, dead_id)).touch()
    leases.take(store, "next", me, resource)
    assert [(lease["run_id"], lease["resource"]) for lease in store.leases()] == [("next", resource[0])]
    assert not Path(store.runs_dir, dead_id).exists()
    store.release("next")
    # dead, no lock file at all: its pid decides
    assert store.take_leases(gone_id, {"pid": dead_pid(), "host": HOST}, resource, "t0") is None
    leases.take(store, "after", me, resource)
    assert [lease["run_id"] for lease in store.leases()] == ["after"]


def test_wait_polls_until_the_holder_lets_go(finance, monkeypatch):
    store = RunStore(str(finance))
    resource = ["uri s3a://b/o/_period=2026-01"]
    holder = "01000000-0000-7000-8000-00000000000d"
    liveness.hold(store.runs_dir, holder)
    assert store.take_leases(holder, liveness.owner(), resource, "t0") is None
    monkeypatch.setattr(leases, "POLL_SECONDS", 0.05)
    lines: list[str] = []

    def let_go():
        time.sleep(0.3)
        store.release(holder)
        liveness.release(holder)
    threading.Thread(target=let_go).start()
    leases.take(store, "waiter", liveness.owner(), resource, wait=True, echo=lines.append)
    assert lines == [f"  waiting: the destination partition s3a://b/o/_period=2026-01 is being written by run "
                     f"{holder} (pid {os.getpid()} on host {HOST}, holding it since t0Z) (Ctrl-C to stop)"]
    assert [lease["run_id"] for lease in store.leases()] == ["waiter"]


def test_a_holder_on_another_host_is_named_with_runs_clean_other_hosts(finance, monkeypatch):
    """A container killed and replaced under a new host name on the same volume: its lease is not taken
    over from here (its lock may not be visible), so RUN-001 and the --wait line say that the holder runs on
    another host, that its lock looks abandoned, and name `ledgerflow runs clean --other-hosts`, which
    releases it (before: "run again when it has finished", and --wait waited forever without a word)."""
    store = RunStore(str(finance))
    gone = "01000000-0000-7000-8000-0000000000e1"
    resource = [f"path /data/gl/_period={PERIOD}"]
    assert store.take_leases(gone, {"pid": 4242, "host": "old-pod-7f9c"}, resource, "t0") is None
    lock = Path(liveness.lock_path(store.runs_dir, gone))
    lock.parent.mkdir(parents=True)
    lock.touch()  # its lock file on the shared volume, held by nobody
    elsewhere = (f"That run was started on host old-pod-7f9c, not this one ({HOST}), so ledgerflow does not take it "
                 "for dead by itself; its lock looks abandoned from here (nobody holds it; trust that only where all "
                 "hosts see each other's locks, e.g. NFSv4).")
    with pytest.raises(LeaseHeld) as held:
        leases.take(store, "next", liveness.owner(), resource)
    assert str(held.value) == (
        f"RUN-001 the destination partition /data/gl/_period={PERIOD} is being written by run {gone} (pid 4242 on "
        "host old-pod-7f9c, holding it since t0Z); two runs writing one partition at once could publish a mix of "
        f"both. Nothing was run. {elsewhere} If that run is no longer running, `ledgerflow runs clean --other-hosts` "
        "rolls it back and releases its partitions; else run again when it has finished, or pass --wait to wait "
        "for it.")
    monkeypatch.setattr(leases, "POLL_SECONDS", 0.05)
    lines: list[str] = []

    def clean_other_hosts():
        deadline = time.monotonic() + 30
        while not lines and time.monotonic() < deadline:
            time.sleep(0.05)
        lines.append(recovery.report(recovery.clean(RunStore(str(finance)), other_hosts=True)))
    thread = threading.Thread(target=clean_other_hosts)
    thread.start()
    leases.take(store, "next", liveness.owner(), resource, wait=True, echo=lines.append)
    thread.join(30)
    assert lines[0] == (f"  waiting: the destination partition /data/gl/_period={PERIOD} is being written by run {gone} "
                        f"(pid 4242 on host old-pod-7f9c, holding it since t0Z). {elsewhere} If that run is no longer "
                        "running, this waits until `ledgerflow runs clean --other-hosts` releases it (Ctrl-C to stop)")
    assert len(lines) == 2 and any(gone in line and "released lease" in line for line in lines[1])
    assert [lease["run_id"] for lease in store.leases()] == ["next"]


def test_a_lease_of_a_run_recorded_final_is_stale_whatever_its_pid(finance):
    """A lease whose run is recorded completed or failed is released and taken, even when its pid is alive
    (reused) and it has no lock file, or it was taken on another host (before: such a lease was never
    released, and every later run failed RUN-001)."""
    store = RunStore(str(finance))
    resource = [f"path /data/gl/_period={PERIOD}", f"uri s3a://b/o/_period={PERIOD}"]
    for run_id, status, host, res in (("01000000-0000-7000-8000-0000000000e2", "completed", HOST, resource[0]),
                                      ("01000000-0000-7000-8000-0000000000e3", "failed", "other-host", resource[1])):
        store.save_run({"run_id": run_id, "parent_run_id": None, "project": {"id": "p", "name": "p"},
                        "period": {"identifier": PERIOD}, "status": status, "started_at": "t0", "finished_at": "t1",
                        "error": None, "outputs": []})
        assert store.take_leases(run_id, {"pid": os.getpid(), "host": host}, [res], "t0") is None  # a live pid
    leases.take(store, "next", liveness.owner(), resource)
    assert sorted(lease["run_id"] for lease in store.leases()) == ["next", "next"]

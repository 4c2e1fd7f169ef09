"""Opening the run store (issue 28): ``RunStore(root)`` only knows where the store lives; the command's
opener (:func:`ledgerflow.adapters.run.open_store.open_store`) checks the file and recovers the runs whose
process died. No Spark."""
from __future__ import annotations

import socket
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from ledgerflow.adapters.commit import recovery
from ledgerflow.adapters.run.open_store import open_store
from ledgerflow.adapters.store import health, liveness
from ledgerflow.adapters.store.health import RunStoreDamaged
from ledgerflow.adapters.store.runstore import RunStore


def dead_run(root: Path) -> str:
    """A ``running`` record as a process that died leaves it: its lock file exists, unheld."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    store = RunStore(str(root))
    rec = {"run_id": "20260101T000000000Z-dead", "parent_run_id": None, "project": {"id": "p", "name": "p"},
           "period": {"identifier": "2026-01"}, "status": "running", "started_at": "2026-01-01T00:00:00.000",
           "finished_at": None, "error": None, "outputs": [], "staging": [],
           "process": {"pid": proc.pid, "host": socket.gethostname()}}
    store.save_run(rec)
    Path(liveness.lock_path(store.runs_dir, rec["run_id"])).touch()
    recovery._CHECKED.discard(store.db_path)  # as in a new process
    return rec["run_id"]


def test_making_a_run_store_recovers_nothing_until_the_command_opens_it(tmp_path):
    run_id = dead_run(tmp_path)
    store = RunStore(str(tmp_path))
    assert store.get_run(run_id)["status"] == "running"  # a dead run stays running: nothing recovered yet
    opened = open_store(str(tmp_path))
    rec = opened.get_run(run_id)
    assert rec["status"] == "failed" and rec["error"].startswith("interrupted: the process (pid "), rec
    assert RunStore(str(tmp_path)).read_run_json(run_id)["status"] == "failed"


def test_only_the_opener_checks_the_file(tmp_path):
    db = tmp_path / ".ledgerflow" / "state.db"
    db.parent.mkdir()
    db.write_bytes(b"this is not an SQLite database\n" * 200)
    store = RunStore(str(tmp_path))  # knows where the store is; reads nothing
    assert store.db_path == str(db)
    with pytest.raises(RunStoreDamaged) as caught:
        open_store(str(tmp_path))
    assert str(db) in caught.value.render()


def test_a_transaction_a_killed_writer_left_is_rolled_back_not_reported_unreadable(tmp_path):
    """A process killed inside a write transaction leaves a hot journal beside the store. A read-only check
    cannot roll it back ("attempt to write a readonly database"): that is no damage, and opening the store
    rolls it back, so the half-written row is gone and the command goes on."""
    first = dead_run(tmp_path)
    db = Path(RunStore(str(tmp_path)).db_path)
    killed = ("import os, sqlite3\n"
              f"c = sqlite3.connect({str(db)!r}, isolation_level=None)\n"
              "c.execute('PRAGMA cache_size = 1')\n"
              "c.execute('BEGIN IMMEDIATE')\n"
              "c.execute(\"UPDATE runs SET status = 'half-written'\")\n"
              # enough pages that the cache spills: the journal is synced and the store's file written
              "c.execute('CREATE TABLE junk (x)')\n"
              "c.execute('WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000) "
              "INSERT INTO junk SELECT randomblob(200) FROM n')\n"
              "os._exit(9)\n")
    subprocess.run([sys.executable, "-c", killed], check=False)
    assert Path(str(db) + "-journal").exists()  # the hot journal the killed writer left
    health.check(str(db))  # not reported as unreadable
    opened = open_store(str(tmp_path))
    assert not Path(str(db) + "-journal").exists() or Path(str(db) + "-journal").stat().st_size == 0
    assert opened.get_run(first)["status"] != "half-written"
    import sqlite3
    with closing(sqlite3.connect(str(db))) as conn:  # the killed transaction is gone whole
        assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'junk'").fetchone() == (0,)

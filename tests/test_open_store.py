"""Opening the run store (issue 28): ``RunStore(root)`` only knows where the store lives; the command's
opener (:func:`ledgerflow.adapters.commit.open_store.open_store`) checks the file and recovers the runs whose
process died. No Spark."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from ledgerflow.adapters.commit import recovery
from ledgerflow.adapters.commit.open_store import open_store
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


def test_a_runs_files_are_written_whole_through_no_link_planted_in_its_folder(tmp_path):
    """run.json was written through ``run.json.tmp`` (a fixed name) and compiled.sql in place: a link planted at
    either name in the run's folder was written through, into a file ledgerflow never made. Both are now written
    whole under a random temporary name, and a link at the file's own name is replaced, not followed."""
    from ledgerflow.adapters.store.runstore import RunStore
    store = RunStore(str(tmp_path))
    folder = os.path.join(store.runs_dir, "r1")
    os.makedirs(folder)
    victim_json, victim_sql = tmp_path / "keep.json", tmp_path / "keep.sql"
    victim_json.write_text("mine")
    victim_sql.write_text("mine too")
    os.symlink(victim_json, os.path.join(folder, "run.json.tmp"))
    os.symlink(victim_sql, os.path.join(folder, "compiled.sql"))
    store.write_files({"run_id": "r1", "status": "completed"}, "SELECT 1")
    assert victim_json.read_text() == "mine" and victim_sql.read_text() == "mine too"
    assert json.loads(open(os.path.join(folder, "run.json")).read()) == {"run_id": "r1", "status": "completed"}
    assert not os.path.islink(os.path.join(folder, "compiled.sql"))
    assert open(os.path.join(folder, "compiled.sql")).read() == "SELECT 1"
    assert not [n for n in os.listdir(folder) if n.endswith(".tmp") and not n == "run.json.tmp"]


def test_tables_are_made_once_per_file_and_again_for_a_file_made_anew(tmp_path, monkeypatch):
    """A process makes the store's tables on its first connection to a file, not on each (a promotion connects
    thousands of times); a state.db removed and made again, or emptied in place, gets its tables again."""
    from ledgerflow.adapters.store import database
    store = RunStore(str(tmp_path))
    scripts: list = []
    real_connect = database.sqlite3.connect

    class Counting:
        def __init__(self, conn):
            self._conn = conn

        def executescript(self, text):
            scripts.append(text)
            return self._conn.executescript(text)

        def __getattr__(self, name):
            return getattr(self._conn, name)

    monkeypatch.setattr(database.sqlite3, "connect", lambda *a, **k: Counting(real_connect(*a, **k)))
    assert store.list_runs() == [] and store.list_runs() == []
    made = len(scripts)
    assert made >= 1
    store.list_runs()
    assert len(scripts) == made  # the same file: not made again
    db = tmp_path / ".ledgerflow" / "state.db"
    db.unlink()
    assert store.list_runs() == [] and len(scripts) == 2 * made  # a new file (whatever its inode): made again
    with open(db, "r+b") as fh:  # emptied in place: the same inode, no tables
        fh.truncate(0)
    assert store.list_runs() == [] and len(scripts) == 3 * made

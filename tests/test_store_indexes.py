"""The run store's reads that every command or a promotion makes at scale use an index, not a walk through every
run's record: the runs still running (recovery, at each command's first opening of the store) and the last
completed run of each project-period (``status``, a promotion's plan, stale checks)."""
from __future__ import annotations

import json
import sqlite3
from contextlib import closing

from ledgerflow.adapters.store import database
from ledgerflow.adapters.store.published import _LAST
from ledgerflow.adapters.store.runstore import RunStore


def _plan(conn, sql: str, args=()) -> str:
    return " ".join(row[-1] for row in conn.execute("EXPLAIN QUERY PLAN " + sql, args))


def _record(run_id: str, status: str) -> dict:
    return {"run_id": run_id, "project": {"id": "p-id", "name": "p"}, "period": {"identifier": "2026-01"},
            "status": status, "started_at": "2026-02-01T00:00:00", "finished_at": "2026-02-01T00:01:00",
            "padding": "x" * 20000}


def test_running_runs_and_last_completed_runs_are_read_through_their_indexes(tmp_path):
    store = RunStore(str(tmp_path))
    with store._immediate() as conn:
        for k in range(3):
            conn.execute("INSERT INTO runs (run_id, project_id, project_name, period, status, started_at, "
                         "finished_at, record) VALUES (?,?,?,?,?,?,?,?)",
                         (f"r{k}", "p-id", "p", "2026-01", "completed" if k else "running", "a", "b",
                          json.dumps(_record(f"r{k}", "completed" if k else "running"))))
    with closing(store._connect()) as conn:
        running = _plan(conn, "SELECT record FROM runs WHERE status = 'running' ORDER BY run_id")
        last = _plan(conn, _LAST.format(where=" AND env IS NULL AND period IN (?) AND project_name IN (?)",
                                        columns="r.record"), ["2026-01", "p"])
    assert running == "SCAN runs USING INDEX runs_running"  # the partial index: the running rows only
    assert "USING INDEX runs_last" in last
    assert [r["run_id"] for r in store.running_records()] == ["r0"]
    assert [r["run_id"] for r in store.last_completed(["2026-01"], ["p"])] == ["r2"]


def test_an_environments_own_last_records_are_parsed_and_leave_out_what_it_reads_from_prod(tmp_path):
    prod, dev = RunStore(str(tmp_path)), RunStore(str(tmp_path), env="dev")
    with prod._immediate() as conn:
        for run_id, period, env, finished, inputs in (("r1", "2026-01", "dev", "b1", '{"i": 1}'),
                                                      ("r2", "2026-01", "dev", "b2", '{"i": 2}'),
                                                      ("r3", "2026-02", None, "b3", '{"i": 3}'),
                                                      ("r4", "2026-03", "dev", "b4", None)):
            conn.execute("INSERT INTO runs (run_id, project_id, project_name, period, status, started_at, "
                         "finished_at, record, inputs, input_files, env) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                         (run_id, "p-id", "p", period, "completed", "a", finished,
                          json.dumps({**_record(run_id, "completed"), "period": {"identifier": period}}), inputs,
                          "[]", env))
    own = dict(dev.own_last_records(["2026-01", "2026-02", "2026-03"], ["p"]))
    assert sorted(own) == [("p", "2026-01"), ("p", "2026-03")]  # 2026-02: prod's, which dev reads, not its own
    record, keys, plain = own[("p", "2026-01")]
    assert record["run_id"] == "r2" and record["padding"] == "x" * 20000  # its last run, the record parsed
    assert keys == ('{"i": 2}', "[]") and plain
    assert own[("p", "2026-03")][1] is None  # recorded before the columns: its texts are computed from the record
    assert list(dev.own_last_records(["2026-01"], [])) == []
    assert dict(prod.own_last_records(["2026-02"], ["p"]))[("p", "2026-02")][0]["run_id"] == "r3"


def test_a_store_made_before_the_indexes_gets_them_when_opened(tmp_path):
    db = tmp_path / ".ledgerflow" / "state.db"
    db.parent.mkdir()
    with closing(sqlite3.connect(db)) as conn:  # an older file: the runs table only, as first released
        conn.execute("CREATE TABLE runs (run_id TEXT PRIMARY KEY, parent_run_id TEXT, project_id TEXT, project_name "
                     "TEXT, period TEXT, status TEXT, started_at TEXT, finished_at TEXT, error TEXT, record TEXT, "
                     "batch_id TEXT)")
        conn.commit()
    database._MADE.clear()
    with closing(RunStore(str(tmp_path))._connect()) as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"runs_last", "runs_running"} <= names

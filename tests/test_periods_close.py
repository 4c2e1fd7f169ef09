"""Closed periods (issue 31 point 1, docs/commands.md "Closed periods"): `periods close | reopen | list` in the
run store, a run of a closed project-period refused, and the bad input. Store- and CLI-level: no Spark."""
from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest

from cli_support import add_project, cli, describe
from ledgerflow.adapters.store.closure_table import PeriodClosed, PeriodStateError
from ledgerflow.adapters.store import liveness
from ledgerflow.adapters.store.runstore import RunStore

FINANCE_PROJECTS = 12
TS01_ID = "0b000000-0000-4000-8000-000000000001"


def _history(ws) -> list[tuple]:
    with sqlite3.connect(ws / ".ledgerflow" / "state.db") as conn:
        return conn.execute("SELECT project, period, action, by_name, note FROM period_closures ORDER BY seq").fetchall()


def _record(run_id: str, project: str, period: str, status: str = "running") -> dict:
    """A run record as the runner saves it; its process (this host, no run lock) has ended: a close does not
    wait for it."""
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    return {"run_id": run_id, "project": {"id": "p-" + project, "name": project, "sha256": "x"},
            "period": {"identifier": period}, "status": status, "started_at": "2026-02-01T00:00:00.000",
            "finished_at": None, "outputs": [], "process": {"pid": ended.pid, "host": liveness.this_host()}}


# ------------------------------------------------------------------------------------------------ the store
def test_close_and_reopen_are_a_history_and_twice_is_refused_with_nothing_written(tmp_path):
    store = RunStore(str(tmp_path))
    store.set_closed([("a", "2026-01"), ("b", "2026-01")], "close", "alice", "2026-02-03T10:00:00Z", "books closed")
    assert store.closed("a", "2026-01")["by"] == "alice" and store.closed("a", "2026-02") is None
    with pytest.raises(PeriodStateError) as err:  # b is closed: neither c nor b is written
        store.set_closed([("c", "2026-01"), ("b", "2026-01")], "close", "bob", "2026-02-04T00:00:00Z", None)
    assert "PERIOD-002" in str(err.value) and "2026-01 of 'b' (closed by alice at 2026-02-03T10:00:00Z" in str(err.value)
    assert store.closed("c", "2026-01") is None
    with pytest.raises(PeriodStateError, match="PERIOD-003 not closed: 2026-02 of 'a' \\(never closed\\)"):
        store.set_closed([("a", "2026-02")], "reopen", "bob", "t", None)
    store.set_closed([("a", "2026-01")], "reopen", "bob", "2026-02-05T00:00:00Z", "late journal")
    assert store.closed("a", "2026-01") is None
    assert [h["action"] for h in store.history("a", "2026-01")] == ["close", "reopen"]
    assert store.closures(periods=["2026-01"])[("b", "2026-01")]["note"] == "books closed"


def test_a_run_of_a_period_closed_while_it_ran_does_not_commit(tmp_path):
    """The commit point refuses it in the transaction that would record it completed: nothing of it stands."""
    store = RunStore(str(tmp_path))
    rec = _record("r1", "a", "2026-01")
    store.save_run(rec)
    store.set_closed([("a", "2026-01")], "close", "alice", "2026-02-03T10:00:00Z", None)
    done = {**rec, "status": "completed", "finished_at": "2026-02-03T10:00:01.000"}
    with pytest.raises(PeriodClosed, match="PERIOD-001 period 2026-01 of project 'a' is closed: closed by alice"):
        store.complete(done, [], "2026-02-03T10:00:00Z")
    assert store.run_status("r1") == "running"  # the caller rolls it back and records it failed
    assert store.last_completed() == []
    store.complete({**done, "restatement": {"reason": "FX fix"}}, [], "t")  # a restatement commits
    assert store.run_status("r1") == "completed"


# ------------------------------------------------------------------------------------------------ the CLI
def test_close_list_reopen_from_the_command_line(finance, monkeypatch):
    monkeypatch.setenv("USER", "carol")
    r = cli(finance, "periods", "close", "2026-01", "--project", "ts01_output_only", "--note", "January closed")
    assert r.exit_code == 0, describe(r)
    assert "Closed 1 project-period by carol" in r.stdout
    listed = cli(finance, "periods", "list")
    assert listed.exit_code == 0, describe(listed)
    line = next(l for l in listed.stdout.splitlines() if "ts01_output_only" in l)
    assert line.split()[:3] == ["2026-01", "ts01_output_only", "closed"] and 'note: "January closed"' in line
    assert cli(finance, "periods", "reopen", "2026-01", "--project", "ts01_output_only", "--by", "dave").exit_code == 0
    assert _history(finance) == [("ts01_output_only", "2026-01", "close", "carol", "January closed"),
                                 ("ts01_output_only", "2026-01", "reopen", "dave", None)]


def test_closing_all_projects_records_each_and_a_project_added_later_is_open(finance):
    r = cli(finance, "periods", "close", "2026-01..2026-03", "--by", "alice")
    assert r.exit_code == 0, describe(r)
    assert len(_history(finance)) == FINANCE_PROJECTS * 3
    add_project(finance, "later", "- {kind: output, destination: {path: out/later}}")
    store = RunStore(str(finance))
    assert store.closed("later", "2026-02") is None and store.closed("ts01_output_only", "2026-02") is not None


def test_bad_input_is_one_paragraph_and_writes_nothing(finance):
    assert cli(finance, "periods", "close", "2026-01", "--project", "ts01_output_only", "--by", "alice").exit_code == 0
    twice = cli(finance, "periods", "close", "2026-01", "--by", "bob")  # every project: ts01 is closed already
    assert twice.exit_code == 1, describe(twice)
    assert "PERIOD-002 already closed: 2026-01 of 'ts01_output_only' (closed by alice at " in twice.stderr
    assert len(twice.stderr.strip().splitlines()) == 1
    reopen = cli(finance, "periods", "reopen", "2026-02", "--project", "ts01_output_only")
    assert reopen.exit_code == 1 and "PERIOD-003 not closed" in reopen.stderr, describe(reopen)
    unknown = cli(finance, "periods", "close", "2026-01", "--project", "nope")
    assert unknown.exit_code == 1 and "nope" in unknown.stderr, describe(unknown)
    malformed = cli(finance, "periods", "close", "2026-13")
    assert malformed.exit_code == 2, describe(malformed)
    reversed_range = cli(finance, "periods", "reopen", "2026-03..2026-01")
    assert reversed_range.exit_code == 2, describe(reversed_range)
    assert _history(finance) == [("ts01_output_only", "2026-01", "close", "alice", None)]


def test_a_run_of_a_closed_project_period_is_refused_before_spark(finance):
    assert cli(finance, "periods", "close", "2026-01", "--project", "ts01_output_only", "--by", "alice",
               "--note", "reported to the board").exit_code == 0
    r = cli(finance, "run", "ts01_output_only", "--period", "2026-01")
    assert r.exit_code == 1, describe(r)
    err = r.stderr
    assert "PERIOD-001 period 2026-01 of project 'ts01_output_only' is closed: closed by alice at" in err
    assert 'note: "reported to the board"' in err and "ledgerflow restate ts01_output_only --period 2026-01" in err
    assert not (finance / "target" / "runs").exists()  # nothing ran, nothing recorded
    with sqlite3.connect(finance / ".ledgerflow" / "state.db") as conn:
        assert conn.execute("SELECT count(*) FROM runs").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM batches").fetchone() == (0,)


def test_a_replay_of_a_run_of_a_closed_period_is_refused_before_spark(finance):
    from ledgerflow.adapters.store.runstore import RunStore
    rec = _record("r-jan", "ts01_output_only", "2026-01", "completed")
    rec["project"]["id"] = TS01_ID  # a close is of the project's id
    RunStore(str(finance)).save_run({**rec, "finished_at": "2026-02-01T00:00:01.000"})
    assert cli(finance, "periods", "close", "2026-01", "--by", "alice").exit_code == 0
    r = cli(finance, "replay", "r-jan")
    assert r.exit_code == 1, describe(r)
    assert "PERIOD-001 period 2026-01 of project 'ts01_output_only' is closed: closed by alice" in r.stderr
    assert RunStore(str(finance)).list_runs()[0]["run_id"] == "r-jan" and len(RunStore(str(finance)).list_runs()) == 1


def test_a_renamed_project_is_still_refused_for_the_periods_closed_under_its_old_name(tmp_path):
    """A close recorded before closes held the project's id (kept by name): a project renamed (same id, same
    outputs) would otherwise republish the period closed under its old name. The commit point refuses the
    closes of the names the project's id ran under, naming the project by its name now."""
    store = RunStore(str(tmp_path))
    store.save_run({**_record("r1", "a", "2026-01", "completed"), "finished_at": "2026-02-01T00:00:01.000"})
    store.set_closed([("a", "2026-01")], "close", "alice", "2026-02-03T10:00:00Z", None)
    renamed = _record("r2", "a", "2026-01")
    renamed["project"] = {**renamed["project"], "name": "a_renamed"}  # the same project id, p-a
    store.save_run(renamed)
    done = {**renamed, "status": "completed", "finished_at": "2026-02-04T00:00:01.000"}
    with pytest.raises(PeriodClosed, match="PERIOD-001 period 2026-01 of project 'a_renamed' is closed: closed as "
                       "project 'a' by alice"):
        store.complete(done, [], "2026-02-04T00:00:00Z")
    assert store.run_status("r2") == "running"
    other = _record("r3", "b", "2026-01")  # another project (its own id) is open
    store.save_run(other)
    store.complete({**other, "status": "completed", "finished_at": "2026-02-04T00:00:02.000"}, [], "t")
    assert store.run_status("r3") == "completed"

"""Closes kept by project id and the partitions a close protects (issue 43 points 3 and 9, docs/commands.md
"Closed periods"): a renamed project keeps its closed periods under its new name (run refused, restate,
reopen and list by the new name, a period closed before any run included; closes recorded by name before
ids still hold); a project removed from the workspace is listed as removed; a closed project-period's
published partition is not replaced by another project writing the same place. The real CLI; real Spark
where a run is needed."""
from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path

from cli_support import cli, describe, edit, record, run_id_of
from partition_support import shown

PERIOD = "2026-01"
TS01, TS01_ID = "ts01_output_only", "0b000000-0000-4000-8000-000000000001"
COPY_ID = "0d000000-0000-4000-8000-0000000000fe"


def _rename(ws: Path, old: str, new: str) -> None:
    """Rename a project (same id, same file name: only its name changes)."""
    edit(ws, f"projects/{old}.yml", f"name: {old}\n", f"name: {new}\n")


def _line(listed: str, name: str) -> str:
    return next(line for line in listed.splitlines() if f" {name} " in line)


def _tree(folder: Path) -> dict[str, str]:
    """Every file and link under ``folder`` (links not followed): path -> sha256 of its bytes, or its target."""
    out = {}
    for here, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(here, name)
            rel = os.path.relpath(path, folder)
            if os.path.islink(path):
                out[rel] = "-> " + os.readlink(path)
            elif os.path.isfile(path):
                out[rel] = hashlib.sha256(open(path, "rb").read()).hexdigest()
    return out


# ------------------------------------------------------------------------------------ no Spark
def test_a_period_closed_before_any_run_stays_closed_for_the_renamed_project(finance):
    """The red team's rename (same id) with no run recorded: closes were kept by name, so the renamed project
    published into the period closed under its old name."""
    closed = cli(finance, "periods", "close", PERIOD, "--project", TS01, "--by", "alice", "--note", "Q1 audit")
    assert closed.exit_code == 0, describe(closed)
    _rename(finance, TS01, "ts01_renamed")
    r = cli(finance, "run", "ts01_renamed", "--period", PERIOD)
    assert r.exit_code == 1, describe(r)
    assert ("PERIOD-001 period 2026-01 of project 'ts01_renamed' is closed: closed as project 'ts01_output_only' by "
            "alice at") in r.stderr
    assert "ledgerflow restate ts01_renamed --period 2026-01" in r.stderr
    assert not (finance / "target" / "runs").exists()  # refused before anything ran or was recorded
    listed = cli(finance, "periods", "list")
    assert listed.exit_code == 0, describe(listed)
    assert _line(listed.stdout, "ts01_renamed").split()[:3] == [PERIOD, "ts01_renamed", "closed"]
    assert "ts01_output_only" not in listed.stdout.replace("as project 'ts01_output_only'", "")
    reopened = cli(finance, "periods", "reopen", PERIOD, "--project", "ts01_renamed", "--by", "bob")
    assert reopened.exit_code == 0, describe(reopened)
    assert _line(cli(finance, "periods", "list").stdout, "ts01_renamed").split()[:3] == [PERIOD, "ts01_renamed", "open"]


def test_closes_recorded_by_name_before_ids_still_hold_for_the_renamed_project(finance):
    """A run store written before closes held the project's id: the close is found through the name the
    project's runs were recorded under."""
    state = finance / ".ledgerflow"
    state.mkdir()
    with sqlite3.connect(state / "state.db") as conn:  # the tables as they were (no period_closures.project_id)
        conn.executescript(
            "CREATE TABLE runs (run_id TEXT PRIMARY KEY, parent_run_id TEXT, project_id TEXT, project_name TEXT, "
            "period TEXT, status TEXT, started_at TEXT, finished_at TEXT, error TEXT, record TEXT, batch_id TEXT);"
            "CREATE TABLE period_closures (seq INTEGER PRIMARY KEY AUTOINCREMENT, project TEXT NOT NULL, period TEXT "
            "NOT NULL, action TEXT NOT NULL, by_name TEXT, at TEXT, note TEXT);")
        conn.execute("INSERT INTO runs (run_id, project_id, project_name, period, status, started_at, finished_at, "
                     "record) VALUES ('r-old', ?, ?, ?, 'failed', '2026-02-01T00:00:00.000', "
                     "'2026-02-01T00:00:01.000', ?)",
                     (TS01_ID, TS01, PERIOD, '{"run_id": "r-old", "project": {"id": "%s", "name": "%s"}, "period": '
                      '{"identifier": "%s"}, "status": "failed"}' % (TS01_ID, TS01, PERIOD)))
        conn.execute("INSERT INTO period_closures (project, period, action, by_name, at, note) VALUES "
                     "(?, ?, 'close', 'alice', '2026-02-03T10:00:00Z', NULL)", (TS01, PERIOD))
    _rename(finance, TS01, "ts01_renamed")
    r = cli(finance, "run", "ts01_renamed", "--period", PERIOD)
    assert r.exit_code == 1, describe(r)
    assert ("PERIOD-001 period 2026-01 of project 'ts01_renamed' is closed: closed as project 'ts01_output_only'"
            in r.stderr)
    listed = cli(finance, "periods", "list")
    assert _line(listed.stdout, "ts01_renamed").split()[:3] == [PERIOD, "ts01_renamed", "closed"]
    with sqlite3.connect(state / "state.db") as conn:  # the old row is as it was; the column was added
        assert conn.execute("SELECT project, project_id FROM period_closures").fetchall() == [(TS01, None)]


def test_a_project_no_longer_in_the_workspace_is_listed_as_removed(finance):
    assert cli(finance, "periods", "close", PERIOD, "--project", "ts07_output_columns").exit_code == 0
    (finance / "projects" / "ts07_output_columns.yml").unlink()
    listed = cli(finance, "periods", "list")
    assert listed.exit_code == 0, describe(listed)
    assert _line(listed.stdout, "ts07_output_columns").split()[:4] == [PERIOD, "ts07_output_columns", "(removed)",
                                                                      "closed"]
    assert ("Removed: project ts07_output_columns no longer in the workspace; their closes and published runs stay "
            "recorded.") in listed.stdout
    assert cli(finance, "periods", "close", PERIOD, "--project", TS01).exit_code == 0  # a live one is not marked
    assert _line(cli(finance, "periods", "list").stdout, TS01).split()[:3] == [PERIOD, TS01, "closed"]
    # the removed project's close can be lifted by the name it is listed under (it keeps what it published)
    reopened = cli(finance, "periods", "reopen", PERIOD, "--project", "ts07_output_columns", "--by", "bob")
    assert reopened.exit_code == 0, describe(reopened)
    assert _line(cli(finance, "periods", "list").stdout, "ts07_output_columns").split()[2:4] == ["(removed)", "open"]
    unknown = cli(finance, "periods", "reopen", PERIOD, "--project", "never_was")
    assert unknown.exit_code == 1 and "never_was" in unknown.stderr, describe(unknown)


# ------------------------------------------------------------------------------------ Spark
def test_another_project_cannot_replace_a_closed_project_periods_partition(spark, finance):
    """The red team's critical case: a copy (its own id) of a project writes the destination the original
    published and closed. With both in the workspace, validate refuses the pair; with the original gone
    from it, the run of the copy is refused by the close (PERIOD-001), and the closed partition, its version
    folder and the close all stand (restate of the original's rows stays possible)."""
    first = cli(finance, "run", TS01, "--period", PERIOD)
    assert first.exit_code == 0, describe(first)
    published = record(finance, run_id_of(first))["outputs"][0]["location"]
    assert cli(finance, "periods", "close", PERIOD, "--project", TS01, "--by", "alice").exit_code == 0
    destination = Path(published).parent
    before = _tree(destination)
    text = (finance / "projects" / f"{TS01}.yml").read_text()
    (finance / "projects" / "ts01_copy.yml").write_text(
        text.replace(TS01_ID, COPY_ID).replace(f"name: {TS01}\n", "name: ts01_copy\n"))
    both = cli(finance, "run", "ts01_copy", "--period", PERIOD)
    assert both.exit_code == 1 and "OUT-VR-003" in both.stderr, describe(both)
    (finance / "projects" / f"{TS01}.yml").unlink()
    r = cli(finance, "run", "ts01_copy", "--period", PERIOD)
    assert r.exit_code == 1, describe(r)
    assert "PERIOD-001 period 2026-01 of project 'ts01_output_only' is closed: closed by alice" in r.stderr
    partition = f"{shown(destination)}/_period=2026-01"
    assert f"Project 'ts01_copy' would replace the partition {partition}, which run {run_id_of(first)}" in r.stderr
    assert _tree(destination) == before  # the partition link, its version folder and every file as they were
    listed = cli(finance, "periods", "list").stdout
    assert _line(listed, TS01).split()[:4] == [PERIOD, TS01, "(removed)", "closed"]


def test_a_renamed_project_with_a_run_is_refused_restated_and_reopened_by_its_new_name(spark, finance):
    """The red team's dead end: with a run recorded, the renamed project's run was refused, restate said the
    period was open (RESTATE-002) and reopen took neither name."""
    first = cli(finance, "run", TS01, "--period", PERIOD)
    assert first.exit_code == 0, describe(first)
    assert cli(finance, "periods", "close", PERIOD, "--project", TS01, "--by", "alice").exit_code == 0
    _rename(finance, TS01, "ts01_renamed")
    refused = cli(finance, "run", "ts01_renamed", "--period", PERIOD)
    assert refused.exit_code == 1, describe(refused)
    assert "PERIOD-001 period 2026-01 of project 'ts01_renamed' is closed: closed as project 'ts01_output_only'" \
        in refused.stderr
    before = cli(finance, "periods", "list").stdout  # the run published under the old name, listed under the new
    assert _line(before, "ts01_renamed").split()[:4] == [PERIOD, "ts01_renamed", "closed", run_id_of(first)]
    assert "(removed)" not in before
    restated = cli(finance, "restate", "ts01_renamed", "--period", PERIOD, "--reason", "renamed project's rerun")
    assert restated.exit_code == 0, describe(restated)
    rec = record(finance, run_id_of(restated))
    assert rec["restatement"]["supersedes_run_id"] == run_id_of(first)
    listed = cli(finance, "periods", "list").stdout
    assert _line(listed, "ts01_renamed").split()[:4] == [PERIOD, "ts01_renamed", "closed", rec["run_id"]]
    reopened = cli(finance, "periods", "reopen", PERIOD, "--project", "ts01_renamed")
    assert reopened.exit_code == 0, describe(reopened)
    assert _line(cli(finance, "periods", "list").stdout, "ts01_renamed").split()[2] == "open"

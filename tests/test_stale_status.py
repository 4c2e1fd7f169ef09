"""Stale project-periods (issue 31 point 4, docs/commands.md "Stale periods") judged from recorded runs, without
Spark: each record is built as a run records its inputs (resolutions, pins, fingerprints, declarations), then
the workspace changes and ``status`` must say why."""
from __future__ import annotations

import hashlib
import os
import sqlite3

from cli_support import cli, describe, edit
from ledgerflow.adapters.inputs.fingerprint import fingerprint_path
from ledgerflow.adapters.periods.stale import stale_report
from ledgerflow.adapters.store.runstore import RunStore
from ledgerflow.compiler.workspace import load_workspace

GL_FILE = "data/gl/v1/transactions.csv"


def _record(ws_root, project: str, period: str, run_id: str, reads: list[tuple], pinned=(), finished="1") -> dict:
    """A completed record of ``project`` for ``period`` that read ``reads`` ([(view, dataset, version, source,
    relative location)]), fingerprinted as they are now (with content hashes, as a run records them)."""
    ws = load_workspace(str(ws_root))
    p = ws.find_project(project)
    resolutions, prints, snapshots = {}, [], []
    for view, name, version, source, rel in reads:
        ds = ws.find_dataset(name)
        location = os.path.join(str(ws_root), rel)
        resolutions[view] = {"dataset_id": ds.id if ds else name, "dataset_name": name, "version": version,
                             "resolver_id": "x", "resolver_source": source, "rule": "", "locations": []}
        prints.append({"view": view, "dataset": name, "dataset_version": version, "location": location,
                       "kind": "path", "checked": True, **fingerprint_path(location)})
        if ds is not None and ds.raw is not None:
            snapshots.append(ds.raw)
    digest = hashlib.sha256(open(os.path.join(str(ws_root), p.file), "rb").read()).hexdigest()
    return {"run_id": run_id, "project": {"id": p.id, "name": p.name, "version": 1, "sha256": digest},
            "period": {"identifier": period}, "status": "completed", "started_at": f"2026-02-01T00:00:0{finished}",
            "finished_at": f"2026-02-01T00:01:0{finished}", "datasets_snapshot": snapshots, "outputs": [],
            "resolver_snapshot": {"resolutions": resolutions, "pinned_views": sorted(pinned),
                                  "input_fingerprints": prints}}


def _save(ws_root, rec: dict) -> None:
    RunStore(str(ws_root)).save_run(rec)


def _reasons(ws_root, periods=None) -> dict:
    store = RunStore(str(ws_root))
    report = stale_report(store, load_workspace(str(ws_root), extra_datasets=store.registered_datasets), periods)
    return {(e.project, e.period): e.reasons for e in report.entries}


def test_files_edited_added_removed_are_found_without_reading_data(finance):
    folder = finance / "data" / "gl" / "monthly"
    _save(finance, _record(finance, "ts01_output_only", "2026-01", "r1",
                           [("gl", "gl", 1, "dataset_resolver", "data/gl/monthly")]))
    assert _reasons(finance) == {}
    os.utime(folder / "2026-02.csv", ns=(1, 1))  # same size, another mtime: edited (no content is read)
    (folder / "2026-04.csv").write_text("journal_id\n")
    (folder / "2026-03.csv").unlink()
    [why] = _reasons(finance)[("ts01_output_only", "2026-01")]
    assert "added 2026-04.csv" in why and "removed 2026-03.csv" in why and "changed 2026-02.csv (modified" in why


def test_declarations_and_newer_unpinned_versions(finance):
    """A changed project file, a changed dataset declaration, a newer active version read unpinned (the pinned
    read of the same dataset is not stale)."""
    _save(finance, _record(finance, "ts01_output_only", "2026-01", "r1", [("gl", "gl", 1, "dataset_resolver",
                                                                          GL_FILE)]))
    _save(finance, _record(finance, "ts03_fx_conversion", "2026-01", "r2",
                           [("acct", "accounts", 1, "dataset_resolver", "data/accounts/v1"),
                            ("fx", "exchange_rates", 1, "dataset_resolver", "data/exchange_rates/v1")], pinned=["acct"]))
    _save(finance, _record(finance, "ts05_aggregate_by_type", "2026-01", "r3",
                           [("acct", "accounts", 1, "dataset_resolver", "data/accounts/v1")]))
    assert _reasons(finance) == {
        ("ts05_aggregate_by_type", "2026-01"): ["dataset 'accounts' has active version 2 now; the run read version 1 "
                                                "(not pinned)"]}
    edit(finance, "projects/ts01_output_only.yml", "(10 rows).", "(ten rows).")
    edit(finance, "datasets/exchange_rates.yml", "versions:", "# a comment is no change\nversions:")
    assert list(_reasons(finance)) == [("ts01_output_only", "2026-01"), ("ts05_aggregate_by_type", "2026-01")]
    edit(finance, "datasets/exchange_rates.yml", "description: FX rates", "description: Corrected FX rates")
    found = _reasons(finance)
    assert found[("ts01_output_only", "2026-01")] == ["project declaration projects/ts01_output_only.yml changed "
                                                      "since the run"]
    assert found[("ts03_fx_conversion", "2026-01")] == ["dataset declaration 'exchange_rates' "
                                                        "(datasets/exchange_rates.yml) changed since the run"]


def test_a_newer_registered_version_and_the_downstream_of_a_stale_upstream(finance):
    """close_consolidation read close_converted v1; the producing project ran again (v2): stale, and
    close_reporting below it too. A closed stale upstream makes nothing downstream stale."""
    store = RunStore(str(finance))
    loc = finance / "reg" / "close_converted"
    for version in (1, 2):
        (loc / f"v{version}" / "_period=2026-01").mkdir(parents=True)
        store.register("close_converted", version, str(loc / f"v{version}"), "parquet", ["2026-01"],
                       [("journal_id", "string")], f"c{version}", "2026-02-01T00:00:00")
    _save(finance, _record(finance, "close_consolidation", "2026-01", "r1",
                           [("close_converted", "close_converted", 1, "registered", "reg/close_converted/v1")]))
    _save(finance, _record(finance, "close_reporting", "2026-01", "r2", []))
    found = _reasons(finance)
    assert found[("close_consolidation", "2026-01")] == [
        "registered dataset 'close_converted' has version 2 for 2026-01 now; the run read version 1 (not pinned)"]
    assert found[("close_reporting", "2026-01")] == [
        "upstream project 'close_consolidation' is stale for 2026-01: running it registers a version this reads"]
    store.set_closed([("close_consolidation", "2026-01")], "close", "alice", "t", None)
    assert list(_reasons(finance)) == [("close_consolidation", "2026-01")]
    assert _reasons(finance, ["2026-02"]) == {}


def test_status_and_periods_list_from_the_command_line(finance):
    r = cli(finance, "status")
    assert r.exit_code == 0 and "No completed run yet" in r.stdout, describe(r)
    _save(finance, _record(finance, "ts01_output_only", "2026-01", "r1", [("gl", "gl", 1, "dataset_resolver",
                                                                          GL_FILE)]))
    _save(finance, _record(finance, "ts01_output_only", "2026-01", "r0", [], finished="0"))  # older: not published
    r = cli(finance, "status", "--period", "2026-01")
    assert r.exit_code == 0 and "Up to date: none of the 1 published project-period of 2026-01" in r.stdout, describe(r)
    with open(finance / GL_FILE, "a") as fh:
        fh.write("JE-999,1,2026-01-31,4100,CC-100,USD,1.00,1.00,late,ERP\n")
    assert cli(finance, "periods", "close", "2026-01", "--project", "ts01_output_only", "--by", "alice").exit_code == 0
    r = cli(finance, "status", "--period", "2026-01")
    assert r.exit_code == 0, describe(r)
    lines = r.stdout.splitlines()
    assert lines[0] == "Stale: 1 of 1 published project-period of 2026-01 (last completed run, then why):"
    assert lines[1].startswith("  2026-01  ts01_output_only  run r1  closed by alice at ")
    assert "`ledgerflow restate ts01_output_only --period 2026-01 --reason TEXT` changes it" in lines[1]
    assert f"dataset 'gl' v1 at {finance / GL_FILE}: changed transactions.csv (size " in lines[2]
    listed = cli(finance, "periods", "list", "--period", "2026-01")
    row = next(l for l in listed.stdout.splitlines() if "ts01_output_only" in l).split()
    assert row[:5] == ["2026-01", "ts01_output_only", "closed", "r1", "yes"], listed.stdout
    assert cli(finance, "status", "--period", "2026-1x").exit_code == 2


def test_legacy_rows_without_the_inputs_column_are_read_from_their_record(finance):
    _save(finance, _record(finance, "ts01_output_only", "2026-01", "r1", [("gl", "gl", 1, "dataset_resolver",
                                                                          GL_FILE)]))
    with sqlite3.connect(finance / ".ledgerflow" / "state.db") as conn:
        conn.execute("UPDATE runs SET inputs = NULL")
    [row] = RunStore(str(finance)).last_completed()
    assert row["run_id"] == "r1" and row["inputs"]["reads"][0]["pinned"] is False
    edit(finance, "projects/ts01_output_only.yml", "(10 rows).", "(ten rows).")
    assert list(_reasons(finance)) == [("ts01_output_only", "2026-01")]


def test_a_renamed_project_is_judged_under_its_name_now(finance):
    """A project renamed since its run (same id): `status` judges its published run under the new name, as `periods
    list` does (it said "No completed run" and counted the run as a removed project's); so does the report
    `run --stale` reads, which asks for projects by their names now."""
    _save(finance, _record(finance, "ts01_output_only", "2026-01", "r1", [("gl", "gl", 1, "dataset_resolver",
                                                                          GL_FILE)]))
    edit(finance, "projects/ts01_output_only.yml", "name: ts01_output_only", "name: ts01_renamed")
    store = RunStore(str(finance))
    ws = load_workspace(str(finance))
    report = stale_report(store, ws, ["2026-01"], ["ts01_renamed"])
    assert report.checked == 1 and not report.gone
    assert [(e.project, e.period, e.run_id) for e in report.entries] == [("ts01_renamed", "2026-01", "r1")]
    assert report.entries[0].reasons == ["project declaration projects/ts01_output_only.yml changed since the run"]
    r = cli(finance, "status", "--period", "2026-01")
    assert r.exit_code == 0, describe(r)
    assert r.stdout.splitlines()[0] == "Stale: 1 of 1 published project-period of 2026-01 (last completed run, then why):"
    assert r.stdout.splitlines()[1].startswith("  2026-01  ts01_renamed  run r1"), r.stdout


def test_the_docs_sites_periods_list_a_renamed_project_under_its_name_now(finance):
    """The docs site's periods page (``run_data.periods_data``) lists a renamed project's published run, stale, and
    its runs' count under its name now: one row, not one per name."""
    from ledgerflow.adapters.docs_site.run_data import periods_data
    rec = _record(finance, "ts01_output_only", "2026-01", "r1", [("gl", "gl", 1, "dataset_resolver", GL_FILE)])
    _save(finance, rec)
    edit(finance, "projects/ts01_output_only.yml", "name: ts01_output_only", "name: ts01_renamed")
    rows = periods_data(RunStore(str(finance)), load_workspace(str(finance)), [rec])
    assert [(r["project"], r["published_run"], r["runs"], r["stale"]) for r in rows] == [("ts01_renamed", "r1", 1, True)]

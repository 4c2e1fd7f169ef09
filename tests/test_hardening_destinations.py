"""Hardening of outputs and registered datasets (issue 8, points 1-3), end to end on Spark and on the writers.

1. A run deletes only what ledgerflow created: a destination's ``_period=P`` that is a foreign symbolic
   link (to a folder outside the workspace), a plain folder, or a planted ``.lf_versions`` link is refused
   before anything runs (exit 1), and nothing is deleted.
2. A registered version is immutable: registering without ``{{version}}`` in the destination path is
   OUT-VR-001, and no later output may write into a registered version's location.
3. Concurrent registrations: the version is reserved in SQLite before anything runs, so two concurrent
   runs get different versions and both end consistent.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from cli_support import (add_project, by_key, check_row_ids, cli, describe, edit, output_entry, read_output,
                         read_table, record, run, run_id_of, run_ok, versions_dir)

from partition_support import shown
from ledgerflow.adapters.commit import partitions, staging, swaps
from ledgerflow.adapters.run.runner import Runner
from ledgerflow.adapters.store.runstore import RunStore

INLINE = """
- seq: 1
  name: Write
  type: output
  arguments:
    destination: {{path: {path}, format: csv}}
"""

REGISTER = """
- seq: 1
  name: Stamp
  type: update
  arguments:
    assignments:
      - column: source_system
        expression: '"{stamp}"'
- seq: 2
  name: Register
  type: output
  arguments:
    destination: {destination}
    register_as_dataset: {name}
"""


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative path -> content), for before/after comparisons."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def victim_folder(tmp_path: Path) -> Path:
    """A folder of somebody else's files, outside the workspace."""
    victim = tmp_path / "victim"
    (victim / "sub").mkdir(parents=True)
    (victim / "ledger.csv").write_text("account,amount\n4100,15000.00\n")
    (victim / "sub" / "notes.txt").write_text("closing notes\n")
    return victim


# ------------------------------------------------------------------------------ 1. foreign partitions
def test_foreign_symlink_partition_outside_the_workspace_is_refused_and_survives(spark, finance, tmp_path):
    victim = victim_folder(tmp_path)
    assert not str(victim).startswith(str(finance))
    before = tree(victim)
    add_project(finance, "to_out", INLINE.format(path="out/report"))
    dest = finance / "out" / "report"
    dest.mkdir(parents=True)
    link = dest / "_period=2026-01"
    os.symlink(victim, link)

    result = run(finance, "to_out", "2026-01", expect=1)
    assert f"the partition {link} is a symbolic link to {victim}, which ledgerflow did not create" in result.stderr
    assert "Nothing was written there and nothing was deleted" in result.stderr and "Traceback" not in result.stderr
    assert tree(victim) == before  # every file of the folder it points to is still there
    assert os.path.islink(link) and os.readlink(link) == str(victim)
    assert not (dest / ".lf_versions").exists()  # nothing was staged either
    failed = record(finance, run_id_of(result))
    assert failed["status"] == "failed" and failed["outputs"] == []


def test_plain_folder_partition_is_refused_not_deleted(spark, finance):
    add_project(finance, "to_plain", INLINE.format(path="out/plain"), extra="resolver_overrides: {gl: monthly}\n")
    partition = finance / "out" / "plain" / "_period=2026-01"
    partition.mkdir(parents=True)
    (partition / "part-00000.csv").write_text("journal_id\nJE-X\n")
    result = run(finance, "to_plain", "2026-01", expect=1)
    assert f"the partition {partition} is a folder, which ledgerflow did not create" in result.stderr
    assert (partition / "part-00000.csv").read_text() == "journal_id\nJE-X\n"
    # another period of the same destination is written as usual
    feb = run_ok(finance, "to_plain", "2026-02")
    location = output_entry(feb, 1)["location"]
    assert output_entry(feb, 1)["rows"] == 2 and shown(location).startswith(str(versions_dir(location)))


def test_planted_lf_versions_link_is_refused(spark, finance, tmp_path):
    """``.lf_versions`` itself a link out of the destination: the partition link seems to point into it."""
    victim = victim_folder(tmp_path)
    (victim / "_period=2026-01" / "old").mkdir(parents=True)
    (victim / "_period=2026-01" / "old" / "keep.csv").write_text("x\n1\n")
    before = tree(victim)
    add_project(finance, "to_planted", INLINE.format(path="out/planted"))
    dest = finance / "out" / "planted"
    dest.mkdir(parents=True)
    os.symlink(victim, dest / ".lf_versions")
    os.symlink(".lf_versions/_period=2026-01/old", dest / "_period=2026-01")
    result = run(finance, "to_planted", "2026-01", expect=1)
    assert f"{dest / '.lf_versions'} is a symbolic link to {victim}, which ledgerflow did not create" in result.stderr
    assert tree(victim) == before


def test_own_partition_is_still_replaced_and_its_old_version_dropped(spark, finance):
    add_project(finance, "own", INLINE.format(path="out/own"))
    first = run_ok(finance, "own", "2026-01")
    second = run_ok(finance, "own", "2026-01")
    location = output_entry(second, 1)["location"]
    assert sorted(os.listdir(versions_dir(location))) == [second["run_id"]]
    check_row_ids(read_output(spark, second, 1)[1], second)
    assert first["run_id"] != second["run_id"]


def _staged(root: Path, period: str, name: str) -> staging.Staged:
    folder = root / ".lf_versions" / f"_period={period}" / name
    folder.mkdir(parents=True)
    (folder / "part-0.csv").write_text("a\n1\n")
    return staging.Staged(str(root / f"_period={period}"), str(folder))


def test_commit_rechecks_the_partition_at_the_swap(tmp_path):
    """A foreign link planted while the run computed: the commit fails, the victim and the old state stay."""
    victim = victim_folder(tmp_path)
    before = tree(victim)
    root = tmp_path / "dest"
    staged = _staged(root, "2026-01", "run-2")
    os.symlink(victim, root / "_period=2026-01")
    with pytest.raises(partitions.UnsafeDestination, match="which ledgerflow did not create"):
        swaps.commit([staged])
    assert tree(victim) == before
    assert os.readlink(root / "_period=2026-01") == str(victim)
    assert not os.path.exists(staged.staged)  # the staged version was dropped


def test_a_failed_commit_never_undoes_another_runs_commit(tmp_path, monkeypatch):
    """Runs A and B write the same partition: A swaps its first output in, B commits its own over it, then
    A's second swap fails. A's rollback leaves B's version live (B's run completed) and undoes only
    what is still its own."""
    out1, out2 = tmp_path / "out1", tmp_path / "out2"
    run0 = _staged(out1, "2026-01", "run-0")
    swaps.commit([run0])
    a = [_staged(out1, "2026-01", "run-a"), _staged(out2, "2026-01", "run-a")]
    b = _staged(out1, "2026-01", "run-b")
    real_swap = swaps._swap

    def swap(link, target):
        if target == a[1].staged:  # A's second swap: meanwhile B commits, then A's swap fails
            monkeypatch.setattr(swaps, "_swap", real_swap)
            swaps.commit([b])
            raise OSError("disk full (simulated)")
        real_swap(link, target)
    monkeypatch.setattr(swaps, "_swap", swap)
    with pytest.raises(OSError, match="disk full"):
        swaps.commit(a)
    assert shown(out1 / "_period=2026-01") == shown(b.staged)
    assert (out1 / "_period=2026-01" / "part-0.csv").read_text() == "a\n1\n"
    assert not os.path.lexists(out2 / "_period=2026-01")  # A's second output never appeared
    assert not os.path.exists(a[0].staged) and not os.path.exists(a[1].staged)
    assert not os.path.exists(run0.staged)  # the version A replaced is not left behind either


def test_version_folders_are_removed_only_when_they_are_ours(tmp_path):
    """discard and the post-swap clean-up never follow a link out of ``.lf_versions/_period=P``."""
    victim = victim_folder(tmp_path)
    before = tree(victim)
    root = tmp_path / "dest"
    versions = root / ".lf_versions" / "_period=2026-01"
    versions.mkdir(parents=True)
    os.symlink(victim, versions / "planted")
    # a staged entry that is a link: discard leaves it (and what it points to) alone
    staging.discard([staging.Staged(str(root / "_period=2026-01"), str(versions / "planted"))])
    assert tree(victim) == before and os.path.islink(versions / "planted")
    # the partition linked (by a relative link, like ours) to that planted entry is not ours either
    os.symlink(".lf_versions/_period=2026-01/planted", root / "_period=2026-01")
    with pytest.raises(partitions.UnsafeDestination):
        partitions.check_partition(str(root), "2026-01")
    os.remove(root / "_period=2026-01")
    # our own previous version is replaced and deleted
    old = _staged(root, "2026-01", "run-1")
    swaps.commit([old])
    new = _staged(root, "2026-01", "run-2")
    swaps.commit([new])
    assert shown(root / "_period=2026-01") == shown(new.staged)
    assert not os.path.exists(old.staged) and tree(victim) == before


# -------------------------------------------------------------------------- 2. immutable registrations
def test_registration_without_version_in_the_path_is_out_vr_001(spark, finance):
    add_project(finance, "flat_register", REGISTER.format(stamp="first", name="flat_snap",
                                                          destination="{path: out/flat_snap, format: csv}"))
    result = cli(finance, "validate", "flat_register")
    assert result.exit_code == 1, describe(result)
    assert "projects/flat_register.yml:" in result.stderr
    assert "OUT-VR-001 output 2 registers dataset 'flat_snap' at the path 'out/flat_snap', which has no " \
           "{{version}}" in result.stderr
    # and `run` refuses it before anything is written: v1's files can never be replaced by v2
    result = run(finance, "flat_register", "2026-01", expect=1)
    assert "OUT-VR-001" in result.stderr
    assert not (finance / "out" / "flat_snap").exists()
    assert RunStore(str(finance)).registrations("flat_snap") == []


def test_registration_through_a_resolver_rule_without_version_is_out_vr_001(spark, finance):
    edit(finance, "ledgerflow.yml", "  monthly:",
         '  flat:\n'
         '    rules:\n'
         '      - name: flat-files\n'
         '        strategy: {type: path, path: "data/{{dataset}}/{{table_name}}.csv", format: csv}\n'
         '  monthly:')
    add_project(finance, "flat_table", REGISTER.format(stamp="first", name="flat_table_snap",
                                                       destination="{table: flat_table_snap, resolver: flat}"))
    result = cli(finance, "compile", "flat_table")
    assert result.exit_code == 1, describe(result)
    assert "OUT-VR-001 output 2 registers dataset 'flat_table_snap' through resolver 'flat', whose rule " \
           "'flat-files' (ledgerflow.yml:" in result.stderr
    assert "projects/flat_table.yml:" in result.stderr


def test_later_output_may_not_replace_a_registered_versions_partition(spark, finance):
    """``{table: gl_snapshot}`` without registering resolves to version 1's location: refused, v1 intact (by
    validate while the registering project writes there too; by the run once it is gone from the workspace)."""
    add_project(finance, "snap", REGISTER.format(stamp="first", name="gl_snapshot",
                                                 destination="{table: gl_snapshot}"))
    v1 = run_ok(finance, "snap", "2026-01")
    location = output_entry(v1, 2)["location"]
    before = tree(Path(location).parent)
    add_project(finance, "overwrite_snap", INLINE.replace("{{path: {path}, format: csv}}", "{table: gl_snapshot}"))
    assert "OUT-VR-003" in run(finance, "overwrite_snap", "2026-01", expect=1).stderr
    (finance / "projects" / "snap.yml").unlink()
    result = run(finance, "overwrite_snap", "2026-01", expect=1)
    assert "overlaps the location" in result.stderr and "registered dataset 'gl_snapshot' version 1" in result.stderr
    assert tree(Path(location).parent) == before
    # a run pinned to v1 still reads v1's rows
    add_project(finance, "read_v1", INLINE.format(path="out/read_v1"), input_dataset="gl_snapshot",
                extra="input_dataset_version: 1\n")
    rows = read_output(spark, run_ok(finance, "read_v1", "2026-01"), 1)[1]
    assert {r["source_system"] for r in rows} == {"first"}
    assert by_key([{"_row_id": r["_row_id"]} for r in rows], "_row_id") == \
        by_key([{"_row_id": r["_row_id"]} for r in read_output(spark, v1, 2)[1]], "_row_id")


def test_registered_version_never_replaces_an_existing_partition(spark, finance):
    """The location a new version gets already holds a partition (written by an unregistered output):
    the registering run refuses instead of replacing it."""
    add_project(finance, "squatter", INLINE.format(path='"out/snap/v{{version}}"'))
    squat = run_ok(finance, "squatter", "2026-01")
    assert output_entry(squat, 1)["location"] == str(finance / "out" / "snap" / "v1" / "_period=2026-01")
    add_project(finance, "reg_inline", REGISTER.format(stamp="first", name="inline_snap",
                                                       destination='{path: "out/snap/v{{version}}", format: csv}'))
    assert "OUT-VR-003" in run(finance, "reg_inline", "2026-01", expect=1).stderr  # both in the workspace
    (finance / "projects" / "squatter.yml").unlink()
    result = run(finance, "reg_inline", "2026-01", expect=1)
    assert "already exists, and an output registering a dataset version" in result.stderr
    check_row_ids(read_output(spark, squat, 1)[1], squat)
    assert RunStore(str(finance)).registrations("inline_snap") == []


# ------------------------------------------------------------------------ 3. concurrent registrations
def test_concurrent_runs_registering_the_same_dataset_get_different_versions(spark, finance, monkeypatch):
    """Two runs in two threads, both past their destinations before either writes (the old code gave both
    v1, and the second failed with a UNIQUE constraint after its output was swapped in)."""
    add_project(finance, "snap_gl", REGISTER.format(stamp="concurrent", name="gl_snapshot",
                                                    destination="{table: gl_snapshot}"))
    barrier = threading.Barrier(2, timeout=300)
    from ledgerflow.adapters.run import compute as compute_module
    real = compute_module.compute

    def together(*args, **kwargs):
        barrier.wait()  # both runs resolved their destinations (and versions)
        return real(*args, **kwargs)
    monkeypatch.setattr(compute_module, "compute", together)
    results: dict = {}

    def go(key):
        try:
            results[key] = Runner(str(finance), echo=lambda _line: None,
                                  session_factory=spark.newSession).run("snap_gl", "2026-01")
        except BaseException as exc:  # noqa: BLE001 - reported below
            results[key] = exc
    threads = [threading.Thread(target=go, args=(k,)) for k in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    monkeypatch.undo()
    assert all(isinstance(r, dict) for r in results.values()), results
    recs = sorted(results.values(), key=lambda r: output_entry(r, 2)["registered_version"])
    assert [output_entry(r, 2)["registered_version"] for r in recs] == [1, 2]
    regs = RunStore(str(finance)).registrations("gl_snapshot")
    assert [(g["version"], g["run_id"]) for g in regs] == [(1, recs[0]["run_id"]), (2, recs[1]["run_id"])]
    for rec, reg in zip(recs, regs):
        location = output_entry(rec, 2)["location"]
        assert os.path.dirname(location) == reg["location"]
        assert f"/gl_snapshot/v{reg['version']}/" in location
        _, rows = read_table(spark, location, "2026-01")
        assert len(rows) == 10
        check_row_ids(rows, rec)  # each version holds its own run's rows
    listed = [line.split() for line in cli(finance, "datasets", "list").stdout.splitlines()]
    assert ["gl_snapshot", "registered", "period", "active", "versions", "1,2"] in listed


RESERVE = textwrap.dedent("""
    import sys, time
    from ledgerflow.adapters.store.runstore import RunStore
    root, worker, start = sys.argv[1], sys.argv[2], float(sys.argv[3])
    while time.time() < start:
        time.sleep(0.001)
    store = RunStore(root)
    for i in range(5):
        v = store.next_version("shared")
        while not store.reserve("shared", f"{worker}-{i}", ["2026-01"], v, f"{root}/out/v{v}", "csv"):
            v = store.next_version("shared")  # another process took v meanwhile
        store.confirm("shared", v, f"{worker}-{i}", [], "t")
        print(v)
""")


def test_reservations_from_concurrent_processes_never_share_a_version(tmp_path):
    """Four processes reserving at the same moment against one state.db: twenty distinct versions."""
    import time
    start = str(time.time() + 2)
    procs = [subprocess.Popen([sys.executable, "-c", RESERVE, str(tmp_path), str(w), start], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=os.environ.copy()) for w in range(4)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    versions = sorted(int(v) for out, _ in outs for v in out.split())
    assert versions == list(range(1, 21))
    assert [r["version"] for r in RunStore(str(tmp_path)).registrations("shared")] == list(range(1, 21))


def test_pending_reservation_is_invisible_and_released_on_failure(spark, finance, monkeypatch):
    store = RunStore(str(finance))
    add_project(finance, "snap_gl", REGISTER.format(stamp="x", name="gl_snapshot",
                                                    destination="{table: gl_snapshot}"))
    # a reservation held by a run still in progress: readers do not see it, the next run takes v2
    assert store.reserve("gl_snapshot", "other-run", ["2026-01"], 1,
                         str(finance / "data" / "gl_snapshot" / "v1" / "gl_snapshot.csv"), "csv")
    assert store.registrations("gl_snapshot") == [] and store.registered_datasets() == []
    # a run that fails on Spark releases its reservation (v2) and leaves nothing visible
    monkeypatch.setattr(swaps, "_swap", lambda link, target: (_ for _ in ()).throw(OSError("simulated failure")))
    result = run(finance, "snap_gl", "2026-01", expect=3)
    assert "simulated failure" in result.stderr
    monkeypatch.undo()
    assert store.registrations("gl_snapshot") == []
    assert store.next_version("gl_snapshot") == 2  # only the other run's reservation is left
    rec = run_ok(finance, "snap_gl", "2026-01")
    assert output_entry(rec, 2)["registered_version"] == 2
    assert [r["version"] for r in store.registrations("gl_snapshot")] == [2]
    store.release("other-run")
    assert store.next_version("gl_snapshot") == 3


def test_a_run_that_breaks_before_spark_releases_its_reservation(spark, finance, monkeypatch):
    """Anything that goes wrong between taking a registered version and starting Spark (here a bug in the
    lineage, an unexpected exception) releases the version: the next run takes it."""
    from ledgerflow.adapters.run import runner as runner_module
    store = RunStore(str(finance))
    add_project(finance, "snap_gl", REGISTER.format(stamp="x", name="gl_snapshot",
                                                    destination="{table: gl_snapshot}"))
    monkeypatch.setattr(runner_module, "output_lineage", lambda ctx: (_ for _ in ()).throw(RuntimeError("a bug")))
    result = cli(finance, "run", "snap_gl", "--period", "2026-01")
    assert isinstance(result.exception, RuntimeError), describe(result)
    monkeypatch.undo()
    assert store.next_version("gl_snapshot") == 1
    assert output_entry(run_ok(finance, "snap_gl", "2026-01"), 2)["registered_version"] == 1


def test_state_db_written_before_reservations_is_migrated(tmp_path):
    """A registry row of an older ledgerflow (no status column) stays a committed version."""
    import sqlite3
    (tmp_path / ".ledgerflow").mkdir()
    conn = sqlite3.connect(tmp_path / ".ledgerflow" / "state.db")
    conn.execute("CREATE TABLE registered_datasets (name TEXT, version INTEGER, dataset_id TEXT, location TEXT, "
                 "format TEXT, periods TEXT, columns TEXT, run_id TEXT, created_at TEXT, PRIMARY KEY (name, version))")
    conn.execute("INSERT INTO registered_datasets VALUES ('old', 1, 'id', '/x/v1', 'csv', '[\"2026-01\"]', '[]', "
                 "'r1', 't')")
    conn.commit()
    conn.close()
    store = RunStore(str(tmp_path))
    assert [(r["name"], r["version"], r["location"]) for r in store.registrations()] == [("old", 1, "/x/v1")]
    assert store.next_version("old") == 2 and store.reserve("old", "r2", ["2026-02"], 2, "/x/v2", "csv")
    assert [r["version"] for r in store.registrations("old")] == [1]


def test_a_version_another_run_took_meanwhile_is_refused(tmp_path):
    """The caller computes the next version's destination outside the store's transaction; a version another
    run reserved in between is refused (nothing written), and the caller asks for the next one."""
    import sqlite3
    store = RunStore(str(tmp_path))
    assert store.next_version("s") == 1
    assert store.reserve("s", "r1", ["2026-01"], 1, "/x/v1", "csv")  # r1 is faster
    assert not store.reserve("s", "r2", ["2026-01"], 1, "/y/v1", "csv")  # r2 computed v1 too: refused
    assert store.next_version("s") == 2 and store.reserve("s", "r2", ["2026-01"], 2, "/x/v2", "csv")
    with sqlite3.connect(store.db_path) as conn:
        rows = conn.execute("SELECT run_id, version, location FROM registered_datasets ORDER BY version").fetchall()
    assert rows == [("r1", 1, "/x/v1"), ("r2", 2, "/x/v2")]

"""What a review of promotion found, each shown failing before its mend (no Spark: the promotion benchmark's
workspace, ``bench/promotion_scale.py``): a copy of a workspace never re-points or deletes the original's
partitions, a planted journal or a linked ``target/promotions`` is never followed by recovery or a promotion, a
partition a live run holds is never re-pointed, a file added to a version after it was published is never promoted,
and a failure after the commit point is no failed promotion."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from cli_support import cli, describe
from ledgerflow.adapters.store import liveness
from ledgerflow.adapters.store.runstore import RunStore

PERIOD = "2024-01"


def _workspace(root: Path) -> Path:
    from bench.promotion_scale import build
    root.mkdir()
    build(root, 1, [PERIOD])
    return root


def _out(ws: Path) -> Path:
    return ws / "out" / "p0000"


def _shown(ws: Path) -> str:
    return (_out(ws) / f"_period={PERIOD}" / ".lf_version").read_text().strip()


def _versions(ws: Path) -> list[str]:
    return sorted(os.listdir(_out(ws) / ".lf_versions" / f"_period={PERIOD}"))


def _promote(ws: Path):
    return cli(ws, "promote", "p0000", "--from", "dev", "--period", PERIOD)


def test_a_copy_of_a_workspace_never_touches_the_originals_partitions(tmp_path):
    original = _workspace(tmp_path / "original")
    copy = tmp_path / "copy"
    shutil.copytree(original, copy, symlinks=True)
    before, versions = _shown(original), _versions(original)
    result = _promote(copy)
    assert result.exit_code == 1 and "ENV-007" in result.output and "outside this workspace" in result.output, \
        describe(result)
    assert _shown(original) == before == _shown(copy) and _versions(original) == versions


def test_a_planted_journal_and_a_linked_journal_folder_are_never_followed(tmp_path):
    ws = _workspace(tmp_path / "ws")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = _out(ws)
    planted = {"promotion_id": "../../../elsewhere/x", "status": "running", "commit": {"partitions": [
        {"link": str(out / f"_period={PERIOD}"), "staged": str(out / ".lf_versions" / f"_period={PERIOD}" /
                                                              f"p0000-{PERIOD}-new"), "previous": None}]}}
    (elsewhere / "01900000-0000-7000-8000-000000000001.json").write_text(json.dumps(planted))
    (ws / "target").mkdir(exist_ok=True)
    os.symlink(elsewhere, ws / "target" / "promotions")
    before, versions = _shown(ws), _versions(ws)
    listed = cli(ws, "runs", "list")
    assert listed.exit_code == 0, describe(listed)
    assert _shown(ws) == before and _versions(ws) == versions  # nothing rolled back, nothing deleted
    refused = _promote(ws)
    assert refused.exit_code == 1 and "ENV-007" in refused.output and "target/promotions" in refused.output
    assert sorted(os.listdir(elsewhere)) == ["01900000-0000-7000-8000-000000000001.json"]
    # the same journal, named as a promotion would name it but naming another id, in a real folder
    os.remove(ws / "target" / "promotions")
    (ws / "target" / "promotions").mkdir()
    (ws / "target" / "promotions" / "01900000-0000-7000-8000-000000000002.json").write_text(json.dumps(planted))
    assert cli(ws, "runs", "list").exit_code == 0
    assert _shown(ws) == before and _versions(ws) == versions


def test_a_partition_a_live_run_holds_is_never_re_pointed(tmp_path):
    ws = _workspace(tmp_path / "ws")
    store = RunStore(str(ws))
    process = liveness.hold(store.runs_dir, "run-under-way")
    try:
        key = f"path {os.path.realpath(_out(ws))}/_period={PERIOD}"
        assert store.take_leases("run-under-way", process, [key], "2026-12-06T00:00:00") is None
        before = _shown(ws)
        result = _promote(ws)
        assert result.exit_code == 1 and "RUN-001" in result.output and "run-under-way" in result.output, \
            describe(result)
        assert _shown(ws) == before
        assert [lease["run_id"] for lease in store.leases()] == ["run-under-way"]  # the promotion holds none
    finally:
        store.release("run-under-way")
        liveness.release("run-under-way")
    promoted = _promote(ws)
    assert promoted.exit_code == 0, describe(promoted)
    assert store.leases() == []  # released at the commit point


def test_a_file_added_to_a_version_after_it_was_published_is_never_promoted(tmp_path):
    ws = _workspace(tmp_path / "ws")
    version = _out(ws) / ".lf_versions" / f"_period={PERIOD}" / f"p0000-{PERIOD}-dev"
    (version / "part-00001-extra.csv").write_text("code,amount\nZZZ,1000000.00\n")
    before = _shown(ws)
    result = _promote(ws)
    assert result.exit_code == 1 and "ENV-007" in result.output and "no longer shows" in result.output, \
        describe(result)
    assert _shown(ws) == before
    assert not (_out(ws) / f"_period={PERIOD}" / "part-00001-extra.csv").exists()


def test_a_failure_after_the_commit_point_leaves_a_promotion_that_stands(tmp_path, monkeypatch):
    from ledgerflow.adapters.envs import promote as module
    ws = _workspace(tmp_path / "ws")
    real = module._write_json
    calls = []

    def full_disk(path, data):
        calls.append(data.get("status"))
        if data.get("status") == "completed":
            raise OSError(28, "No space left on device")
        real(path, data)
    monkeypatch.setattr(module, "_write_json", full_disk)
    result = _promote(ws)
    assert result.exit_code == 0, describe(result)
    assert "interrupted after the commit point" in result.stderr and "the promotion stands" in result.stderr
    assert _shown(ws) == f"p0000-{PERIOD}-dev" and "completed" in calls
    monkeypatch.undo()
    listed = cli(ws, "runs", "list")  # the next command finishes the journal
    assert listed.exit_code == 0, describe(listed)
    journal = next((ws / "target" / "promotions").glob("*.json"))
    assert json.loads(journal.read_text())["status"] == "completed"


def test_dropping_an_environment_in_a_copy_leaves_the_originals_partitions(tmp_path):
    original = _workspace(tmp_path / "original")
    copy = tmp_path / "copy"
    shutil.copytree(original, copy, symlinks=True)
    dev = _out(original) / ".lf_envs" / "dev" / f"_period={PERIOD}"
    result = cli(copy, "envs", "drop", "dev")
    assert result.exit_code == 0, describe(result)
    assert "outside this workspace" in result.stderr
    assert dev.is_dir() and (dev / ".lf_version").read_text().strip() == f"p0000-{PERIOD}-dev"


def test_recovery_in_a_copy_leaves_the_originals_run_under_way_alone(tmp_path):
    """A copy taken while a run of the original is under way holds that run's record, naming the original's
    partitions: the copy's recovery (the run's lock is free there) leaves it alone instead of rolling it back."""
    import sqlite3
    original = _workspace(tmp_path / "original")
    with sqlite3.connect(original / ".ledgerflow" / "state.db") as conn:  # dev's run, as if still under way
        run_id, text = conn.execute("SELECT run_id, record FROM runs WHERE env = 'dev'").fetchone()
        rec = json.loads(text)
        rec.update(status="running", finished_at=None,
                   process={"pid": 4194000, "host": liveness.this_host(), "started_at": "2026-12-06T00:00:00"})
        conn.execute("UPDATE runs SET status = 'running', finished_at = NULL, record = ? WHERE run_id = ?",
                     (json.dumps(rec), run_id))
    copy = tmp_path / "copy"
    shutil.copytree(original, copy, symlinks=True)
    store = RunStore(str(copy))
    liveness.hold(store.runs_dir, run_id)
    liveness.release(run_id, keep_file=True)  # an abandoned lock, as a copy finds it
    result = cli(copy, "runs", "list")
    assert result.exit_code == 0, describe(result)
    dev = _out(original) / ".lf_envs" / "dev" / f"_period={PERIOD}"
    assert dev.is_dir() and (dev / ".lf_version").read_text().strip() == f"p0000-{PERIOD}-dev"
    assert (_out(original) / ".lf_versions" / f"_period={PERIOD}" / f"p0000-{PERIOD}-dev").is_dir()

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


def test_a_planted_show_folder_or_link_among_the_versions_is_never_removed(tmp_path):
    """A folder named as ledgerflow names its shown folders, whose only file has a second name inside it, holds
    the only copy of its data; a link named so points outside: a promotion's sweep leaves both."""
    ws = _workspace(tmp_path / "ws")
    versions = _out(ws) / ".lf_versions" / f"_period={PERIOD}"
    planted = versions / f".show.p0000-{PERIOD}-new.mine"
    planted.mkdir()
    (planted / "a").write_text("only copy of my data")
    os.link(planted / "a", planted / "b")
    victim = tmp_path / "victim"
    victim.mkdir()
    os.symlink(victim, versions / f".show.p0000-{PERIOD}-dev.lnk")
    promoted = _promote(ws)
    assert promoted.exit_code == 0, describe(promoted)
    assert (planted / "a").read_text() == "only copy of my data" and (planted / "b").exists()
    assert os.path.islink(versions / f".show.p0000-{PERIOD}-dev.lnk") and victim.is_dir()
    assert _shown(ws) == f"p0000-{PERIOD}-dev"
    left = {n for n in os.listdir(versions) if n.startswith(".show.")}
    assert left == {planted.name, f".show.p0000-{PERIOD}-dev.lnk"}


def test_where_names_cannot_be_exchanged_the_temporary_link_is_hidden_from_readers(tmp_path, monkeypatch):
    """On a file system without renameat2 a partition is shown by a symbolic link made under a temporary name
    first; that name is hidden, so a reader listing the destination never takes it for a partition."""
    from ledgerflow.adapters.commit import shown
    root = tmp_path / "out"
    version = root / ".lf_versions" / f"_period={PERIOD}" / "run-1"
    version.mkdir(parents=True)
    (version / "part-00000.csv").write_text("code,amount\nA,1.00\n")
    seen = []
    real_symlink = os.symlink

    def symlink(target, name, *args, **kwargs):
        real_symlink(target, name, *args, **kwargs)
        seen.append(sorted(n for n in os.listdir(root) if not n.startswith(".")))
    monkeypatch.setattr(shown, "exchange_supported", lambda versions: False)
    monkeypatch.setattr(os, "symlink", symlink)
    shown.show(str(root / f"_period={PERIOD}"), str(version))
    assert seen == [[]]  # while the temporary link existed, a reader saw no partition at all
    assert os.path.islink(root / f"_period={PERIOD}")
    assert sorted(os.listdir(root)) == [".lf_versions", f"_period={PERIOD}"]


def test_runs_clean_turns_partitions_of_an_earlier_release_into_real_folders(tmp_path):
    """A partition published as a symbolic link shows its version's _SUCCESS file, which pyarrow given
    ignore_prefixes=["."] fails on: `runs clean` makes it a real folder showing the same rows."""
    import pyarrow.dataset as ds
    ws = _workspace(tmp_path / "ws")
    shows = _out(ws) / ".lf_envs" / "dev"  # dev's partition, which dev's completed run's journal names
    partition = shows / f"_period={PERIOD}"
    version = _out(ws) / ".lf_versions" / f"_period={PERIOD}" / f"p0000-{PERIOD}-dev"
    (version / "_SUCCESS").write_text("")
    shutil.rmtree(partition)
    os.symlink(os.path.relpath(version, partition.parent), partition)  # as an earlier release published it
    cleaned = cli(ws, "runs", "clean")
    assert cleaned.exit_code == 0 and "now a real folder" in cleaned.stdout, describe(cleaned)
    assert partition.is_dir() and not partition.is_symlink()
    assert (partition / ".lf_version").read_text().strip() == version.name
    rows = ds.dataset(str(shows), format="csv", partitioning="hive", ignore_prefixes=["."]).to_table()
    assert rows.num_rows == 200
    assert not [n for n in os.listdir(version.parent) if n.startswith(".show.")]


def test_a_damaged_running_journal_is_left_alone_and_every_command_still_works(tmp_path):
    """A journal saying ``running`` (its process gone) without a list of partitions, or with entries that name no
    partition: the next command's recovery leaves it as it is, and the command does its work."""
    import json as _json
    from bench.promotion_scale import build
    from cli_support import cli, describe
    from ledgerflow.adapters.store import liveness
    from ledgerflow.adapters.store.runstore import RunStore
    for k, variant in enumerate(({}, {"commit": None}, {"commit": {"partitions": None}},
                                 {"commit": {"partitions": [1, "x"]}})):
        ws = tmp_path / f"ws{k}"
        ws.mkdir()
        build(ws, 1, ["2024-01"])
        pid = f"01900000-0000-7000-8000-0000000000a{k}"
        (ws / "target" / "promotions").mkdir(parents=True, exist_ok=True)
        journal = ws / "target" / "promotions" / f"{pid}.json"
        journal.write_text(_json.dumps({"promotion_id": pid, "status": "running", **variant}))
        liveness.hold(RunStore(str(ws)).runs_dir, pid)
        liveness.release(pid, keep_file=True)  # its process gone, its lock abandoned
        listed = cli(ws, "runs", "list")
        assert listed.exit_code == 0 and "p0000" in listed.stdout, (variant, describe(listed))


def test_envs_list_says_same_for_environments_showing_one_runs_rows(tmp_path):
    """Promoted dev -> staging, dev -> prod and prod -> qa: all four show the same version, and `envs list` says so
    (it said staging was behind and qa ahead, comparing run ids only with prod's promotion source)."""
    from bench.promotion_scale import build
    from cli_support import cli, describe
    ws = tmp_path / "ws"
    ws.mkdir()
    build(ws, 1, ["2024-01"])
    for args in (("--from", "dev", "--to", "staging"), ("--from", "dev"), ("--from", "prod", "--to", "qa")):
        done = cli(ws, "promote", "p0000", *args, "--period", "2024-01")
        assert done.exit_code == 0, describe(done)
    listed = cli(ws, "envs", "list")
    states = [line.split(":")[1].split()[0] for line in listed.stdout.splitlines() if "p0000 2024-01" in line]
    assert states == ["same", "same", "same"], listed.stdout


def test_envs_drop_refuses_while_a_run_writes_one_of_its_partitions(tmp_path):
    """A dev run under way holds the lease on dev's partition: `envs drop dev` is refused (RUN-001) and removes
    nothing; once the run is gone, the drop removes it."""
    from bench.promotion_scale import build
    from cli_support import cli, describe
    from ledgerflow.adapters.layout.partition_paths import partition_key
    from ledgerflow.adapters.store import liveness
    from ledgerflow.adapters.store.runstore import RunStore
    ws = tmp_path / "ws"
    ws.mkdir()
    build(ws, 1, ["2024-01"])
    out = ws / "out" / "p0000"
    store = RunStore(str(ws))
    process = liveness.hold(store.runs_dir, "dev-run-under-way")
    try:
        assert store.take_leases("dev-run-under-way", process, [partition_key("path", str(out), "2024-01", "dev")],
                                 "2026-12-06T00:00:00") is None
        refused = cli(ws, "envs", "drop", "dev")
        assert refused.exit_code == 1 and "RUN-001" in refused.stderr, describe(refused)
        assert (out / ".lf_envs" / "dev" / "_period=2024-01").is_dir()
    finally:
        store.release("dev-run-under-way")
        liveness.release("dev-run-under-way")
    dropped = cli(ws, "envs", "drop", "dev")
    assert dropped.exit_code == 0 and not (out / ".lf_envs" / "dev" / "_period=2024-01").exists(), describe(dropped)


def test_a_promoted_partition_links_the_sources_marker_instead_of_writing_a_file(tmp_path):
    """Prod's new partition names its version by a hard link of dev's marker (a link costs the file system a tenth
    of a new file); a source whose marker says anything else gets no link, but a marker of its own."""
    from ledgerflow.adapters.commit import shown
    ws = _workspace(tmp_path / "ws")
    dev = _out(ws) / ".lf_envs" / "dev" / f"_period={PERIOD}" / ".lf_version"
    dev_marker = dev.read_text()
    result = _promote(ws)
    assert result.exit_code == 0, describe(result)
    prod = _out(ws) / f"_period={PERIOD}" / ".lf_version"
    assert os.path.samefile(prod, dev) and prod.read_text() == dev_marker
    # the marker of a partition that names another version is never linked
    version = str(_out(ws) / ".lf_versions" / f"_period={PERIOD}" / dev_marker.strip())
    other = tmp_path / "other"
    other.mkdir()
    (other / ".lf_version").write_text("another-version\n")
    built = shown.build(version, shown_by=str(other))
    mine = Path(built) / ".lf_version"
    assert mine.read_text() == dev_marker and not os.path.samefile(mine, other / ".lf_version")
    shutil.rmtree(built)


def test_a_promoted_runs_registry_row_holds_what_its_record_says_it_read(tmp_path):
    """The registry texts ``status`` compares (runs.inputs, runs.input_files) of a promoted run are its source's
    when its snapshot was kept, and always what its own record gives."""
    import sqlite3
    from ledgerflow.adapters.store.published import stored_inputs
    ws = _workspace(tmp_path / "ws")
    assert _promote(ws).exit_code == 0
    with sqlite3.connect(ws / ".ledgerflow" / "state.db") as conn:
        rows = conn.execute("SELECT record, inputs, input_files FROM runs WHERE env IS NULL AND record LIKE "
                            "'%\"promotion\"%'").fetchall()
    assert len(rows) == 1
    record, inputs, files = rows[0]
    assert (inputs, files) == stored_inputs(json.loads(record))


def test_a_marker_replaced_between_its_read_and_its_link_is_never_kept(tmp_path, monkeypatch):
    """The source's marker is read, then linked: should the name have become something else in between (here a
    link to another file), the new folder gets a marker of its own."""
    from ledgerflow.adapters.commit import shown
    ws = _workspace(tmp_path / "ws")
    source = _out(ws) / ".lf_envs" / "dev" / f"_period={PERIOD}"
    name = (source / ".lf_version").read_text().strip()
    version = str(_out(ws) / ".lf_versions" / f"_period={PERIOD}" / name)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("someone else's file\n")
    real_link = os.link
    monkeypatch.setattr(shown.os, "link", lambda src, dst, **kw: os.symlink(elsewhere, dst)
                        if dst.endswith(".lf_version") else real_link(src, dst, **kw))
    built = Path(shown.build(version, shown_by=str(source)))
    mine = built / ".lf_version"
    assert not mine.is_symlink() and mine.read_text() == name + "\n" and elsewhere.read_text() == "someone else's file\n"
    shutil.rmtree(built)

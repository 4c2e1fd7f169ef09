"""Input fingerprints (adapters/inputs/fingerprint.py) without Spark: what a folder's fingerprint holds, what
Spark ignores, links and cycles, and which differences count as a change."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from ledgerflow.adapters.inputs import fingerprint as fp
from ledgerflow.compiler.resolver import Resolution, ResolvedLocation


def _tree(root: Path) -> Path:
    """A folder as Spark writes and partitions one, plus the files Spark skips."""
    files = {
        "a.csv": "x,y\n1,2\n",
        "sub/b.csv": "x,y\n3,4\n",
        "_period=2026-01/c.csv": "x,y\n5,6\n",  # partition folders start with _ but hold '=': read
        "_SUCCESS": "",
        ".a.csv.crc": "crc",
        ".lf_versions/_period=2026-01/old/d.csv": "x,y\n7,8\n",
        "_temporary/0/e.csv": "x,y\n9,9\n",
        "f.csv._COPYING_": "partial",
        "_metadata": "parquet summary",  # listed by Spark's file index, never read as data
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _paths(result: dict) -> list[str]:
    return [f["path"] for f in result["files"]]


def test_folder_fingerprint_lists_what_spark_reads(tmp_path):
    root = _tree(tmp_path / "ds")
    result = fp.fingerprint_path(str(root))
    assert result["exists"] and result["type"] == "directory"
    assert _paths(result) == ["_period=2026-01/c.csv", "a.csv", "sub/b.csv"]
    a = next(f for f in result["files"] if f["path"] == "a.csv")
    st = os.stat(root / "a.csv")
    assert a == {"path": "a.csv", "size": st.st_size, "mtime_ns": st.st_mtime_ns,
                 "sha256": hashlib.sha256(b"x,y\n1,2\n").hexdigest()}
    assert result["file_count"] == 3 and result["total_bytes"] == sum(f["size"] for f in result["files"])
    # a single file location: its name, same fields
    single = fp.fingerprint_path(str(root / "a.csv"))
    assert single["type"] == "file" and single["files"] == [a]


def test_folder_changes_detected_and_ignored_files_are_not(tmp_path):
    root = _tree(tmp_path / "ds")
    before = fp.fingerprint_path(str(root))
    assert fp.compare(before, fp.fingerprint_path(str(root))) is None
    # files Spark skips may come and go
    (root / "_SUCCESS").write_text("now with text")
    (root / ".a.csv.crc").unlink()
    (root / ".b.csv.crc").write_text("crc")
    (root / "_temporary" / "0" / "e.csv").write_text("x,y\n0,0\n")
    assert fp.compare(before, fp.fingerprint_path(str(root))) is None
    # added, removed, changed
    (root / "sub" / "new.csv").write_text("x,y\n1,1\n")
    (root / "sub" / "b.csv").unlink()
    (root / "a.csv").write_text("x,y\n1,3\n")
    diff = fp.compare(before, fp.fingerprint_path(str(root)))
    assert diff["change"] == "files"
    assert diff["added"] == ["sub/new.csv"] and diff["removed"] == ["sub/b.csv"]
    [changed] = diff["changed"]
    assert changed["path"] == "a.csv" and changed["before"]["sha256"] != changed["after"]["sha256"]
    text = fp.describe_change({"view": "v", "dataset": "d", "dataset_version": 2, "location": str(root), **diff})
    assert text.startswith(f"dataset 'd' v2 at {root}: ")
    assert "added sub/new.csv" in text and "removed sub/b.csv" in text and "changed a.csv (" in text
    assert "sha256" in text
    # the location deleted
    import shutil
    shutil.rmtree(root)
    assert fp.compare(before, fp.fingerprint_path(str(root))) == {"change": "deleted"}


def test_hash_rule_touch_is_no_change_but_same_size_and_mtime_edit_is(tmp_path):
    path = tmp_path / "rates.csv"
    path.write_text("EUR,1.0920\n")
    before = fp.fingerprint_path(str(path))
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))  # touched: same bytes
    assert fp.compare(before, fp.fingerprint_path(str(path))) is None
    path.write_text("EUR,1.0930\n")  # same size, mtime put back: only the hash sees it
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    diff = fp.compare(before, fp.fingerprint_path(str(path)))
    assert [c["path"] for c in diff["changed"]] == ["rates.csv"]


def test_unhashed_files_compare_by_size_and_mtime(tmp_path, monkeypatch):
    monkeypatch.setattr(fp, "HASH_FILE_LIMIT", 4)  # every file here is "big"
    path = tmp_path / "big.csv"
    path.write_text("0123456789\n")
    before = fp.fingerprint_path(str(path))
    assert before["files"][0]["sha256"] is None
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    diff = fp.compare(before, fp.fingerprint_path(str(path)))
    assert diff["changed"][0]["before"]["mtime_ns"] != diff["changed"][0]["after"]["mtime_ns"]


def test_hash_budget_is_shared_and_bounded():
    budget = fp.HashBudget(total=10)
    assert budget.take(6) and not budget.take(6) and budget.take(4) and not budget.take(1)
    assert not fp.HashBudget().take(fp.HASH_FILE_LIMIT + 1)


def test_links_are_followed_like_spark_and_cycles_end(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "part-0.csv").write_text("x\n1\n")
    root = tmp_path / "ds"
    root.mkdir()
    (root / "_period=2026-01").symlink_to(outside, target_is_directory=True)  # as writers swap partitions
    (root / "loop").symlink_to(root, target_is_directory=True)  # a cycle: must not hang
    (root / "dangling.csv").symlink_to(tmp_path / "missing.csv")
    result = fp.fingerprint_path(str(root))
    assert _paths(result) == ["_period=2026-01/part-0.csv", "dangling.csv"]
    assert result["files"][0]["size"] == os.stat(outside / "part-0.csv").st_size
    assert result["files"][1]["size"] is None
    assert result["cycles_skipped"] == ["loop"]
    # the link swapped to another version with other files is a change
    other = tmp_path / "v2"
    other.mkdir()
    (other / "part-1.csv").write_text("x\n2\n")
    before = result
    (root / "_period=2026-01").unlink()
    (root / "_period=2026-01").symlink_to(other, target_is_directory=True)
    diff = fp.compare(before, fp.fingerprint_path(str(root)))
    assert diff["added"] == ["_period=2026-01/part-1.csv"] and diff["removed"] == ["_period=2026-01/part-0.csv"]


def test_many_files_record_a_listing_digest(tmp_path, monkeypatch):
    monkeypatch.setattr(fp, "MAX_LISTED_FILES", 2)
    for i in range(3):
        (tmp_path / f"p{i}.csv").write_text(str(i))
    before = fp.fingerprint_path(str(tmp_path))
    assert before["files"] is None and before["file_count"] == 3
    (tmp_path / "p3.csv").write_text("3")
    diff = fp.compare(before, fp.fingerprint_path(str(tmp_path)))
    assert "3 -> 4 files" in diff["listing"]


@pytest.mark.parametrize("target, expected", [
    ("/data/x.csv", "/data/x.csv"), ("file:/data/x", "/data/x"), ("file:///data/x", "/data/x"),
    ("file://localhost/data/x", "/data/x"), ("hdfs://nn:8020/data/x", None), ("s3a://bucket/x", None)])
def test_local_path(target, expected):
    assert fp.local_path(target) == expected


def test_locations_by_kind(tmp_path):
    (tmp_path / "a.csv").write_text("x\n")
    res = Resolution("id", "gl", 1, "local", "system_default", "files", [
        ResolvedLocation("path", f"file://{tmp_path}/a.csv", "csv"),
        ResolvedLocation("path", "hdfs://nn/x", "parquet"),
        ResolvedLocation("table", "db.t", "table"),
        ResolvedLocation("memory", "run/transactions", "memory")])
    local, uri, table, memory = fp.fingerprint_inputs({"transactions": res}, session=None)
    assert local["checked"] and local["kind"] == "path" and local["files"][0]["path"] == "a.csv"
    assert (local["view"], local["dataset"], local["dataset_version"]) == ("transactions", "gl", 1)
    assert (uri["kind"], uri["checked"]) == ("uri", False) and "hdfs:" in uri["reason"]
    assert (table["kind"], table["checked"]) == ("table", False)
    assert (memory["kind"], memory["checked"]) == ("memory", False)
    # a replay: the URI and the table are named as unverifiable, the memory location is left to the loader
    check = fp.check_replay([local, uri, table, memory], {"transactions": res})
    assert check.changed == [] and [u["location"] for u in check.unverified] == ["hdfs://nn/x", "db.t"]
    # a record without fingerprints: all unverifiable, but a deleted local file is still found
    (tmp_path / "a.csv").unlink()
    check = fp.check_replay(None, {"transactions": res})
    assert not check.recorded and [c["change"] for c in check.changed] == ["deleted"]


def test_a_process_hashes_an_unchanged_file_once_and_an_edit_that_keeps_size_and_mtime_again(tmp_path, monkeypatch):
    """The runs of a range fingerprint the same files: the second fingerprint reads no file, and still sees
    an edit that put back the size and mtime (its ctime moved). A file changed in the last moments is read
    each time (its next edit could fall in the same tick of the file clock)."""
    _tree(tmp_path)
    opened: list[str] = []
    real = fp._sha256
    monkeypatch.setattr(fp, "_sha256", lambda path: opened.append(path) or real(path))
    first = fp.fingerprint_path(str(tmp_path))
    assert fp.fingerprint_path(str(tmp_path)) == first and len(opened) == 6  # just written: read both times
    monkeypatch.setattr(fp, "RACY_NS", -10**12)  # as if written long ago
    opened.clear()
    fp.fingerprint_path(str(tmp_path))
    assert fp.fingerprint_path(str(tmp_path)) == first and len(opened) == 3  # read once, then remembered
    path = tmp_path / "a.csv"
    st = os.stat(path)
    path.write_text("x,y\n1,3\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    opened.clear()
    diff = fp.compare(first, fp.fingerprint_path(str(tmp_path)))
    assert opened == [str(path)] and [c["path"] for c in diff["changed"]] == ["a.csv"]

"""The few-system-call helpers that decide what a partition shows and what may be deleted
(``adapters/commit/folder_stats.py``) and the real paths a pass of checks remembers (``layout/real_path.py``)."""
from __future__ import annotations

import os

from ledgerflow.adapters.commit import folder_stats
from ledgerflow.adapters.layout import real_path as real_paths


def test_stats_lists_every_entry_once_with_its_lstat_and_never_follows_a_link(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "f").write_text("x")
    (tmp_path / "a").write_text("yy")
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "secret").write_text("z")
    os.symlink(outside, tmp_path / "c")
    listed = dict(folder_stats.stats(str(tmp_path)))
    assert list(listed) == ["a", "b", os.path.join("b", "f"), "c"]
    assert listed["a"].st_size == 2 and folder_stats.is_link(listed["c"]) and folder_stats.is_folder(listed["b"])


def test_read_small_reads_a_plain_file_and_refuses_a_link_a_fifo_and_nothing(tmp_path):
    plain = tmp_path / "plain"
    plain.write_text("v1\n")
    os.symlink(plain, tmp_path / "link")
    os.mkfifo(tmp_path / "fifo")
    assert folder_stats.read_small(str(plain)) == b"v1\n"
    assert folder_stats.read_small(str(tmp_path / "link")) is None
    assert folder_stats.read_small(str(tmp_path / "fifo")) is None  # never opened: a reader would wait for ever
    assert folder_stats.read_small(str(tmp_path / "absent")) is None


def test_remove_flat_removes_a_folders_files_but_never_through_a_link(tmp_path):
    folder = tmp_path / "folder"
    folder.mkdir()
    for name in ("one", ".hidden"):
        (folder / name).write_text(name)
    folder_stats.remove_flat(str(folder))
    assert not folder.exists()
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "data").write_text("keep me")
    os.symlink(kept, tmp_path / "link")
    folder_stats.remove_flat(str(tmp_path / "link"))  # a link at the folder's name is never followed
    assert (kept / "data").read_text() == "keep me" and os.path.islink(tmp_path / "link")
    nested = tmp_path / "nested"
    (nested / "sub").mkdir(parents=True)
    (nested / "sub" / "f").write_text("x")
    os.symlink(kept, nested / "sub" / "out")
    folder_stats.remove_flat(str(nested))  # folders inside: shutil.rmtree, which unlinks links, never follows
    assert not nested.exists() and (kept / "data").read_text() == "keep me"


def test_real_paths_are_remembered_only_inside_the_block(tmp_path, monkeypatch):
    target_a, target_b = tmp_path / "a", tmp_path / "b"
    target_a.mkdir()
    target_b.mkdir()
    link = tmp_path / "link"
    os.symlink(target_a, link)
    asked = []
    resolve = real_paths._resolve
    monkeypatch.setattr(real_paths, "_resolve", lambda path: asked.append(path) or resolve(path))
    with real_paths.remembered():
        assert real_paths.real_path(str(link)) == str(target_a)
        os.remove(link)
        os.symlink(target_b, link)
        assert real_paths.real_path(str(link)) == str(target_a)  # the pass of checks sees one answer
    assert asked == [str(link)]
    assert real_paths.real_path(str(link)) == str(target_b)  # after it, the kernel is asked again

"""A shown folder built from the files a check listed (a promotion's plan lists the source partition's files, and the
swap links them without listing the version again, ``shown.build(files=...)``): each name is linked as it is, never
through a link, so a file replaced by a link since the listing never gets a second name for what the link points
at, and the folder then shows nothing ledgerflow would take for its own. (On Linux, Python 3.11 to 3.13 links a link
itself whatever ``follow_symlinks`` says; later releases follow it by default, CPython gh-81793, and ``build`` says
``False``: this test guards those.)"""
from __future__ import annotations

import os
from pathlib import Path

from ledgerflow.adapters.commit import shown


def _version(tmp_path: Path) -> tuple[Path, Path]:
    versions = tmp_path / "dest" / ".lf_versions" / "_period=2026-01"
    version = versions / "v1"
    version.mkdir(parents=True)
    (version / "part-0.csv").write_text("a\n1\n")
    return versions, version


def test_a_folder_is_built_from_the_listed_files_without_listing_the_version_again(tmp_path, monkeypatch):
    versions, version = _version(tmp_path)
    partition = tmp_path / "dest" / "_period=2026-01"
    shown.show(str(partition), str(version))
    now, files = shown.shown_listing(str(partition), str(versions))
    assert now == str(version) and sorted(files) == ["part-0.csv"]
    monkeypatch.setattr(shown, "_shown_files", lambda version: (_ for _ in ()).throw(AssertionError("listed")))
    built = shown.build(str(version), str(partition), files)
    assert sorted(os.listdir(built)) == [shown.MARKER, "part-0.csv"]
    assert os.stat(os.path.join(built, "part-0.csv")).st_ino == os.stat(version / "part-0.csv").st_ino
    assert shown.mirrors(built, str(version))


def test_a_listed_file_replaced_by_a_link_is_never_linked_through(tmp_path):
    versions, version = _version(tmp_path)
    files = shown._shown_stats(str(version))
    secret = tmp_path / "secret.txt"
    secret.write_text("not ledgerflow's")
    os.remove(version / "part-0.csv")
    os.symlink(secret, version / "part-0.csv")  # after the listing: the name now leads elsewhere
    built = shown.build(str(version), None, files)
    assert os.path.islink(os.path.join(built, "part-0.csv"))  # the link itself, not a second name of the secret
    assert os.stat(secret).st_nlink == 1
    assert not shown.mirrors(built, str(version))  # and the folder shows nothing ledgerflow would take for its own

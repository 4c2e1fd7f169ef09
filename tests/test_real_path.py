"""``real_path`` (the kernel's resolution) answers exactly as ``os.path.realpath`` on every kind of path."""
import os

from ledgerflow.adapters.layout.real_path import real_path, remembered


def _every_kind_of_path(tmp_path, monkeypatch) -> list[str]:
    base = tmp_path / "base"
    (base / "a" / "b").mkdir(parents=True)
    (base / "a" / "file.txt").write_text("x")
    (base / "elsewhere").mkdir()
    os.symlink(base / "elsewhere", base / "a" / "to_elsewhere")  # absolute link to a folder
    os.symlink("b", base / "a" / "to_b")  # relative link
    os.symlink(base / "missing", base / "a" / "dangling")
    os.symlink("loop", base / "a" / "loop")
    os.symlink(base / "a", base / "link_a")  # a link on the way
    monkeypatch.chdir(base)
    paths = [str(base), str(base / "a"), str(base / "a" / "file.txt"), str(base / "a" / "to_elsewhere"),
             str(base / "a" / "to_b"), str(base / "a" / "to_b" / ".."),  # .. taken from where the link leads
             str(base / "a" / "to_elsewhere" / ".." / "a"), str(base / "a" / "dangling"),
             str(base / "a" / "dangling" / "below"), str(base / "a" / "loop"), str(base / "link_a" / "b"),
             str(base / "link_a" / "nothing" / "deeper"), str(base / "a" / "b" / "."), "a/b", "link_a/to_b", ".",
             "nothing-here", str(base / "a" / "file.txt" / "x"), str(base / "link_a" / "to_b" / "."),
             str(base / "a" / "to_b" / "deeper"), str(base / "link_a") + "//b", str(base / "a") + "/"]
    return paths


def test_real_path_matches_os_realpath_on_every_kind_of_path(tmp_path, monkeypatch):
    for path in _every_kind_of_path(tmp_path, monkeypatch):
        assert real_path(path) == os.path.realpath(path), path


def test_remembered_real_paths_match_os_realpath_resolved_through_their_folders(tmp_path, monkeypatch):
    """Inside ``remembered`` a path is its folder's remembered real path followed by its name: the same answers, in
    any order (a folder asked first or last), a link on the way or at the name resolved as the kernel does."""
    paths = _every_kind_of_path(tmp_path, monkeypatch)
    for order in (paths, paths[::-1]):
        with remembered():
            for path in order:
                assert real_path(path) == os.path.realpath(path), path

"""The folder one swap exchanged out is removed by its name when the commit ends (``sweeps.sweep_exchanged``), only
when that loses nothing: every file in it a hard link of a file of the version it showed, the marker aside, in a
versions folder reached through no link. Anything else is left for the sweep, untouched."""
from __future__ import annotations

import os
from pathlib import Path

from ledgerflow.adapters.commit import shown, sweeps


def _versions(tmp_path: Path) -> tuple[Path, Path, Path]:
    """``<dest>/.lf_versions/_period=2026-01`` holding versions ``v1`` and ``v2``, one data file each."""
    versions = tmp_path / "dest" / ".lf_versions" / "_period=2026-01"
    for name in ("v1", "v2"):
        (versions / name).mkdir(parents=True)
        (versions / name / f"part-{name}.csv").write_text(f"a\n{name}\n")
    return versions, versions / "v1", versions / "v2"


def _exchanged_out(versions: Path, version: Path, name: str = ".show.v2.0a1b2c3d") -> Path:
    """A folder as a swap leaves it: hard links to ``version``'s files and its marker."""
    folder = versions / name
    folder.mkdir()
    for f in version.iterdir():
        os.link(f, folder / f.name)
    (folder / shown.MARKER).write_text(version.name + "\n")
    return folder


def test_the_folder_exchanged_out_is_removed_and_the_version_it_showed_keeps_its_files(tmp_path):
    versions, v1, _v2 = _versions(tmp_path)
    out = _exchanged_out(versions, v1)
    assert sweeps.sweep_exchanged(str(out), str(v1))
    assert not out.exists() and (v1 / "part-v1.csv").read_text() == "a\nv1\n"


def test_a_folder_holding_anything_but_links_of_the_version_it_showed_is_left_as_it_is(tmp_path):
    versions, v1, v2 = _versions(tmp_path)
    stranger = _exchanged_out(versions, v1)
    (stranger / "notes.txt").write_text("someone's own file")  # its only name: removing it would lose it
    other = _exchanged_out(versions, v2, ".show.v1.0a1b2c3d")  # links of another version than the one named
    for folder, version in ((stranger, v1), (other, v1)):
        assert not sweeps.sweep_exchanged(str(folder), str(version))
        assert folder.is_dir()
    assert (stranger / "notes.txt").read_text() == "someone's own file"
    assert not sweeps.sweep_exchanged(str(other), None)  # no version named: nothing is taken for a link of one
    assert other.is_dir()


def test_a_name_that_is_no_swaps_or_a_versions_folder_reached_through_a_link_is_never_removed(tmp_path):
    versions, v1, _v2 = _versions(tmp_path)
    plain = _exchanged_out(versions, v1, "v3")  # not a ".show." folder: a version's own name
    assert not sweeps.sweep_exchanged(str(plain), str(v1)) and plain.is_dir()
    linked = tmp_path / "elsewhere"
    os.symlink(versions, linked)  # the same folders, reached through a link
    out = _exchanged_out(versions, v1)
    assert not sweeps.sweep_exchanged(str(linked / out.name), str(linked / "v1"))
    assert out.is_dir()


def test_a_link_of_an_earlier_release_exchanged_out_is_removed_and_never_followed(tmp_path):
    versions, v1, _v2 = _versions(tmp_path)
    out = versions / ".show.v2.0a1b2c3d"
    os.symlink("v1", out)  # a partition of an earlier release: a link to its version, exchanged out
    assert sweeps.sweep_exchanged(str(out), str(v1))
    assert not os.path.lexists(out) and (v1 / "part-v1.csv").read_text() == "a\nv1\n"

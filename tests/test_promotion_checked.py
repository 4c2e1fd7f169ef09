"""A promotion exchanges out only the very partition its check judged: the swap compares the partition's inode with
the ``lstat`` taken before the check (``commit/partitions.checked_partition``), so a folder put in its place after
the check, which ledgerflow did not make, is never moved away (issue 46: never touch what ledgerflow did not create).

No Spark: the workspace is the promotion benchmark's (``bench/promotion_scale.py``)."""
from __future__ import annotations

from pathlib import Path

from cli_support import cli, describe


def _workspace(root: Path) -> Path:
    from bench.promotion_scale import build
    root.mkdir()
    build(root, 1, ["2024-01"])
    return root


def test_a_folder_put_in_place_of_a_partition_after_its_check_is_left_where_it_is(tmp_path, monkeypatch):
    from ledgerflow.adapters.commit import shown
    ws = _workspace(tmp_path / "ws")
    prod = ws / "out" / "p0000" / "_period=2024-01"
    aside = tmp_path / "aside"
    judged = shown._mirrored

    def mirrored(folder, version, listed=None):
        files = judged(folder, version, listed)
        if files is not None and Path(folder) == prod and not aside.exists():  # the swap's check judged prod's
            prod.rename(aside)  # someone moves it away and puts a folder of their own there
            prod.mkdir()
            (prod / "mine.csv").write_text("code,amount\nA1,1.00\n")
        return files
    monkeypatch.setattr(shown, "_mirrored", mirrored)
    result = cli(ws, "promote", "--all", "--from", "dev", "--period", "2024-01")
    assert result.exit_code != 0, describe(result)
    assert sorted(p.name for p in prod.iterdir()) == ["mine.csv"], describe(result)  # theirs, where they put it
    assert (prod / "mine.csv").read_text() == "code,amount\nA1,1.00\n"
    assert not list((ws / "out" / "p0000" / ".lf_versions" / "_period=2024-01").glob(".show.*/mine.csv"))


def test_a_version_folder_that_cannot_be_listed_is_refused_by_name_and_nothing_changes(tmp_path, monkeypatch):
    """ENV-007 names the folder and the system's reason (as an unreadable folder gives it to a user who is not
    root), not a changed file; every partition stays as it was."""
    from ledgerflow.adapters.commit import folder_stats
    ws = _workspace(tmp_path / "ws")
    prod = ws / "out" / "p0000" / "_period=2024-01"
    before = sorted(p.name for p in prod.iterdir()), (prod / ".lf_version").read_text()
    listing = folder_stats.stats_by_name

    def refused(folder):
        if str(folder).endswith("p0000-2024-01-dev"):
            raise PermissionError(13, "Permission denied", str(folder))
        return listing(folder)
    monkeypatch.setattr(folder_stats, "stats_by_name", refused)
    result = cli(ws, "promote", "--all", "--from", "dev", "--period", "2024-01")
    assert result.exit_code == 1, describe(result)
    assert "ENV-007 p0000 2024-01: its version folder" in result.stderr and \
        "p0000-2024-01-dev cannot be listed (Permission denied)" in result.stderr, describe(result)
    assert (sorted(p.name for p in prod.iterdir()), (prod / ".lf_version").read_text()) == before

"""``promote --dry-run``: the data diff (``diff --data``'s report) between what the target environment publishes
now and what it would publish after the promotion, read from the two published version folders: nothing is
recomputed and nothing is published.

Each promoted partition is compared as an output of its project: the rows the target shows now (none when it shows
none yet) against the source's version, matched by ``_row_id`` (the run-start part of a ledgerflow-made id cut off,
as a restatement's diff does: :func:`..diff.data_keys.keyed`), else by whole rows. A folder is read in the format
of its files (Parquet, ORC, JSON or CSV with its header; a CSV's values compare as text).
"""
from __future__ import annotations

import os
from typing import Optional

from ..diff.data_diff import data_diff
from ..diff.data_keys import keyed
from ..diff.data_result import DataDiff, ProjectDataDiff, WorkspaceDataDiff
from ..commit.partitions import check_partition
from ..layout.partition_paths import link_env, root_period
from ..inputs.files import spark_path

_FORMATS = ((".parquet", "parquet"), (".orc", "orc"), (".json", "json"), (".csv", "csv"))


def folder_format(folder: str) -> Optional[str]:
    """The format of the data files in ``folder`` by their names (Spark's ``part-...<ext>``), None when empty."""
    for name in sorted(os.listdir(folder)):
        for ext, fmt in _FORMATS:
            if name.startswith("part-") and name.endswith(ext):
                return fmt
    return None


def _read(spark, folder: Optional[str], fmt: Optional[str]):
    if folder is None or fmt is None:
        return None
    reader = spark.read.format(fmt)
    if fmt == "csv":
        reader = reader.options(header="true", escape='"', multiLine="true")
    return reader.load(spark_path(folder))


def reports(spark, items, source_env: str, target_env: str) -> list[WorkspaceDataDiff]:
    """One data-diff report per period of ``items`` (:func:`.promote.plan`'s), each project's partitions compared."""
    by_period: dict[str, list[ProjectDataDiff]] = {}
    for item in items:
        by_period.setdefault(item.period, []).append(ProjectDataDiff(item.project, "compared", item_diff(spark, item)))
    return [WorkspaceDataDiff(f"{target_env} (published now)", f"{source_env} (published, to be promoted)",
                              period, [], projects) for period, projects in sorted(by_period.items())]


def item_diff(spark, item) -> DataDiff:
    """The data diff of one promoted project-period: the rows each of its target partitions shows now against the
    source's version folder."""
    base, head, seqs = {}, {}, {}
    outputs = {o.get("location"): o.get("operation_seq") for o in item.record.get("outputs") or []}
    for k, (link, version) in enumerate(item.swaps):
        root, period = root_period(link)
        now = check_partition(root, period, env=link_env(link))
        fmt = folder_format(version) or (folder_format(now) if now else None)
        seq = next((s for loc, s in outputs.items() if isinstance(loc, str) and root_period(loc)[0] == root), k)
        name = f"output {seq}"
        seqs[name] = seq
        for side, folder in ((base, now), (head, version)):
            frame = _read(spark, folder, fmt)
            if frame is not None:
                side[name] = keyed(frame)
    return data_diff(base, head, (), seqs)

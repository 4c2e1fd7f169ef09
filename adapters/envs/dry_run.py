"""``promote --dry-run``: the data diff (``diff --data``'s report) between what the target environment publishes
now and what it would publish after the promotion, read from the two published version folders: nothing is
recomputed and nothing is published. A catalog table's or a URI's partition is compared as it is now with the
environment's rows of it that the promotion would copy there.

Each promoted partition is compared as an output of its project: the rows the target shows now (none when it shows
none yet; for an output registering a dataset, the partition of the version the target reads now, which may lie
under another version's folder) against the source's version, matched by ``_row_id`` (the run-start part of a ledgerflow-made id cut off,
as a restatement's diff does: :func:`..diff.data_keys.keyed`), else by whole rows. A folder is read in the format
of its files (Parquet, ORC, JSON or CSV with its header; a CSV's values compare as text).
"""
from __future__ import annotations

import os
from typing import Optional

from ..diff.data_diff import data_diff
from ..diff.data_keys import keyed
from . import spark_copies
from ..diff.data_result import DataDiff, ProjectDataDiff, WorkspaceDataDiff
from ..commit import shown
from ..commit.partitions import check_partition
from ..layout.partition_paths import link_env, local_path, partition_link, root_period, versions_dir
from ..inputs.files import spark_path
from ..inputs.registered_reads import version_read

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


def reports(spark, items, source_env: str, target) -> list[WorkspaceDataDiff]:
    """One data-diff report per period of ``items`` (:func:`.promote.plan`'s), each project's partitions compared
    with what ``target`` (the target's run store) publishes now."""
    target_env = target.env
    by_period: dict[str, list[ProjectDataDiff]] = {}
    for item in items:
        by_period.setdefault(item.period, []).append(
            ProjectDataDiff(item.project, "compared", item_diff(spark, item, target)))
    return [WorkspaceDataDiff(f"{target_env} (published now)", f"{source_env} (published, to be promoted)",
                              period, [], projects) for period, projects in sorted(by_period.items())]


def _registered_now(target, out: dict, period: str) -> Optional[str]:
    """The version folder the target shows now for ``period`` of the dataset output ``out`` registers (the version
    the target reads: its own folder, not the promoted version's), or None."""
    name = out.get("registered_dataset")
    regs = target.registrations(name) if name else []
    version = version_read(regs, period)
    reg = next((r for r in regs if r["version"] == version), None)
    if reg is None:
        return None
    root = local_path(reg["location"])
    return shown.shown_version(partition_link(root, period, reg.get("shown_in", "prod")), versions_dir(root, period))


def item_diff(spark, item, target) -> DataDiff:
    """The data diff of one promoted project-period: the rows each of its target partitions shows now (in
    ``target``, the target's run store) against the source's version folder."""
    base, head, seqs = {}, {}, {}
    outputs = {o.get("location"): o.get("operation_seq") for o in item.record.get("outputs") or []}
    registering = {root_period(o["location"])[0]: o for o in item.record.get("outputs") or []
                   if o.get("registered_dataset") and isinstance(o.get("location"), str)
                   and os.path.isabs(o["location"])}
    for k, (link, version) in enumerate(item.swaps):
        root, period = root_period(link)
        now = check_partition(root, period, env=link_env(link))
        if now is None and root in registering:  # a version of its own folder: the target shows another's
            now = _registered_now(target, registering[root], period)
        fmt = folder_format(version) or (folder_format(now) if now else None)
        seq = next((s for loc, s in outputs.items() if isinstance(loc, str) and root_period(loc)[0] == root), k)
        name = f"output {seq}"
        seqs[name] = seq
        for side, folder in ((base, now), (head, version)):
            frame = _read(spark, folder, fmt)
            if frame is not None:
                side[name] = keyed(frame)
    seq_of = {o.get("location"): o.get("operation_seq") for o in item.record.get("outputs") or []}
    for copy in item.copies:  # what the table or URI holds now, and the rows the promotion would copy there
        name = f"output {seq_of.get(copy.output)}"
        seqs[name] = seq_of.get(copy.output)
        entry = {**copy._asdict(), "period": item.period}
        now = spark_copies.rows_now(spark, entry)
        if now is not None:
            base[name] = keyed(now)
        head[name] = keyed(spark_copies.source_rows(spark, entry))
    return data_diff(base, head, (), seqs)

"""Rows of several periods staged by one write, each period's folder then adopted by that period's run.

A fused range (issue 30) computes an output for every period at once. Writing it once, partitioned by
period, costs one pass over the rows; twelve filtered writes cost twelve. :func:`write_prestaged` writes
the rows to ``<dest>/.lf_versions/.fused-<run_id>/<key>=<period>/``, a hidden folder of its own inside the
destination (Spark's partition discovery ignores it, nothing reads it). Each period's run then makes its
folder the next version of its partition with :func:`adopt_partition`: a rename inside
``<dest>/.lf_versions``, the same checks as :func:`.staging.stage_partition`, and from there on the
ordinary staged version (swapped in by the run's journal, or discarded). :func:`discard_prestaged` removes
what no run adopted once the range is over, under the deletion rule of :mod:`.partitions`.
"""
from __future__ import annotations

import os
import shutil
from typing import Optional

from ..inputs.files import spark_path
from ..spark.scoped_conf import session_settings
from ..layout.partition_paths import PROD, VERSIONS, local_path, partition_link, versions_dir
from .partitions import UnsafeDestination, check_inside, check_partition, what
from .staging import CSV_WRITE_OPTIONS, Staged, refuse_unwritable, version_name, without_period

PREFIX = ".fused-"

# Session settings while a prestaged write runs (restored after). Spark plans a partitioned write as a sort of
# its rows by the partition column, then one file at a time; rows of many periods arrive mixed (a flat input's
# files hold every month), so the sort of every row, ~36 characters of _row_id included, is the write's own
# cost. Without the planned sort each task keeps one open file per period instead (up to the limit; past it
# Spark sorts what is left, as before): the same rows, written without sorting them (issue 30: pipeline P,
# 12 months of 10M flat rows, fused run 53 s -> 46-50 s wall).
UNSORTED_WRITE_SETTINGS = {"spark.sql.optimizer.plannedWrite.enabled": "false",
                           "spark.sql.maxConcurrentOutputFileWriters": "64"}


def prestage_root(target: str, run_id: str) -> str:
    """``<dest>/.lf_versions/.fused-<run_id>``: where one fused write stages every period's rows."""
    return os.path.join(local_path(target), VERSIONS, PREFIX + run_id)


def _ours(folder: str, target: str) -> bool:
    """Whether ``folder`` is a prestaged root ledgerflow made: a real folder named ``.fused-*`` directly
    inside the real ``<dest>/.lf_versions``, neither of them a link."""
    versions = os.path.join(local_path(target), VERSIONS)
    return (os.path.basename(folder).startswith(PREFIX) and not os.path.islink(folder)
            and not os.path.islink(versions) and os.path.isdir(folder)
            and os.path.dirname(os.path.realpath(folder)) == os.path.realpath(versions))


def discard_prestaged(folder: str, target: str) -> None:
    """Remove the prestaged root ``folder`` of destination ``target`` and what no run adopted from it;
    anything that is not ours (see :func:`_ours`) is left where it is."""
    if _ours(folder, target):
        shutil.rmtree(folder, ignore_errors=True)  # rmtree unlinks links inside, never follows them


def write_prestaged(df, key: str, target: str, fmt: str, run_id: str, within: Optional[str] = None) -> str:
    """Write ``df`` (its ``_period`` dropped, as a partition's write drops it) partitioned by the column
    ``key`` to :func:`prestage_root`; returns that folder. Nothing is replaced: the folder is new, and a
    failed write leaves nothing behind."""
    root = local_path(target)
    check_inside(root, within)  # raises before anything is written
    versions = os.path.join(root, VERSIONS)
    if os.path.islink(versions) or (os.path.lexists(versions) and not os.path.isdir(versions)):
        raise UnsafeDestination(f"{versions} is {what(versions)}, which ledgerflow did not create (it writes version "
                                "folders only in a real folder there). Nothing was written there and nothing was "
                                "deleted. Move it out of the destination and run again.")
    folder = prestage_root(target, run_id)
    refuse_unwritable(without_period(df).drop(key), fmt, target)  # the files hold every column but the key
    writer = without_period(df).write.mode("error").format(fmt).partitionBy(key)
    if fmt == "csv":
        writer = writer.options(**CSV_WRITE_OPTIONS)
    try:
        with session_settings(df.sparkSession, UNSORTED_WRITE_SETTINGS):
            writer.save(spark_path(folder))
    except BaseException:
        discard_prestaged(folder, target)
        raise
    if not _ours(folder, target):  # a folder on the way was replaced by a link while Spark wrote
        raise UnsafeDestination(f"the destination {root} was redirected while the run wrote {folder} (a folder on "
                                "the way was replaced by a symbolic link). Nothing was swapped in and nothing was "
                                "deleted. Remove the link and run again.")
    return folder


def period_folder(folder: str, key: str, period: str) -> Optional[str]:
    """The folder of ``period``'s rows in the prestaged root ``folder`` (None: the period has no rows)."""
    path = os.path.join(folder, f"{key}={period}")
    return path if os.path.isdir(path) and not os.path.islink(path) else None


def adopt_partition(folder: str, target: str, period: str, run_id: str, create_only: bool = False,
                    within: Optional[str] = None, env: str = PROD) -> Staged:
    """Make the prestaged ``folder`` (one period's rows, see :func:`write_prestaged`) the next version of
    partition ``_period=period`` of ``target``, as :func:`.staging.stage_partition` would have written it:
    the same checks, then a rename within ``<dest>/.lf_versions`` (no copy)."""
    root = local_path(target)
    check_inside(root, within)
    check_partition(target, period, create_only, env=env)
    parent = os.path.dirname(folder)
    if os.path.islink(folder) or not _ours(parent, target) or os.path.dirname(os.path.realpath(folder)) != \
            os.path.realpath(parent):
        raise UnsafeDestination(f"{folder} is not a folder ledgerflow staged in {root} (a folder on the way was "
                                "replaced while the run ran). Nothing was swapped in and nothing was deleted.")
    versions = versions_dir(root, period)
    os.makedirs(versions, exist_ok=True)
    staged = os.path.join(versions, version_name(versions, run_id))
    expected = os.path.realpath(staged)
    os.rename(folder, staged)
    return Staged(partition_link(root, period, env), staged, create_only, within, expected)

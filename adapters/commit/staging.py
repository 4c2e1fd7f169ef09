"""Stage an output's rows as the next version of a local partition, not yet visible.

The rows are written to ``<dest>/.lf_versions/_period=P/<run_id>`` (:mod:`.partitions`), a folder of its
own that Spark writes without deleting anything; :mod:`.swaps` later makes it the partition, or
:func:`discard` drops it.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

from ...compiler.errors import ExecutionError
from ..layout.partition_paths import PARTITION, PROD, local_path, partition_link, root_period, versions_dir
from ..layout.real_path import real_path
from .partitions import UnsafeDestination, check_inside, check_partition, remove_version

# How ledgerflow writes CSV: RFC 4180 (a quote inside a quoted value doubled, which ledgerflow's own
# reading expects; Spark's default escapes it with a backslash) and every value as it is (Spark's
# writer trims leading and trailing spaces of values by default).
CSV_WRITE_OPTIONS = {"header": "true", "escape": '"', "ignoreLeadingWhiteSpace": "false",
                     "ignoreTrailingWhiteSpace": "false"}
# Reading back what CSV_WRITE_OPTIONS wrote, as written: a record whose value holds a line break is one row, and
# only an unquoted empty field (how Spark writes NULL) is NULL; a quoted one ("", an empty string) stays ''. With
# Spark's default nullValue (""), both read as NULL, and a check of the staged rows (unique, balanced) took the
# two for one. No field is NO_NULL_TEXT.
NO_NULL_TEXT = "\u0000<null>\u0000"
CSV_READ_BACK_OPTIONS = {"header": "true", "escape": '"', "multiLine": "true", "nullValue": NO_NULL_TEXT}


def without_period(df):
    """``df`` without its ``_period`` column: the partition's folder name holds the period."""
    return df.drop(PARTITION) if PARTITION in df.columns else df


@dataclass
class Staged:
    """A partition written to its hidden version folder, not yet visible: ``swaps.swap_in`` swaps it in."""

    link: str
    staged: str
    create_only: bool = False  # a registered version's partition: never replaces an existing one
    within: Optional[str] = None  # a destination a relative path gave: the workspace it must stay inside
    real: Optional[str] = None  # the staged folder's real path when it was written
    shown_by: Optional[str] = None  # a partition already showing it (a promotion's source): its marker is linked
    files: Optional[dict] = None  # the files shown_by shows, as a check listed them: linked without a new listing


def version_name(versions: str, run_id: str) -> str:
    """The name of run ``run_id``'s next version folder in ``versions``: ``<run_id>``, or ``<run_id>.<n>`` for
    a second output of the run to the same partition."""
    name, n = run_id, 1
    while os.path.lexists(os.path.join(versions, name)):
        n += 1
        name = f"{run_id}.{n}"
    return name


class UnwritableRows(ExecutionError):
    """Rows the output's format cannot hold (OUT-CSV-001): nothing is written or published."""


def refuse_unwritable(data, fmt: str, target: str) -> None:
    """Raise :class:`UnwritableRows` when ``data`` (the columns a file of ``target`` holds) is a CSV of one column
    with a NULL in it: Spark writes such a row as an empty line, and every CSV reader, Spark's included, skips an
    empty line, so the row would be lost without a word (a second column, or a quoted empty field, would keep it).
    One Spark job, only for a one-column CSV."""
    if fmt != "csv" or len(data.columns) != 1:
        return
    from pyspark.sql import functions as F
    column = data.columns[0]
    nulls = data.where(F.col(f"`{column.replace('`', '``')}`").isNull()).count()
    if nulls:
        raise UnwritableRows(
            f"OUT-CSV-001 the output to {target} is a CSV file of one column, '{column}', and {nulls} of its rows hold "
            "NULL there: CSV writes such a row as an empty line, which every CSV reader skips, so those rows would be "
            "lost. Nothing was written or published. Write the output as Parquet, give it a second column (its "
            "`columns:`), or make the value not NULL (COALESCE).")


def stage_partition(df, target: str, fmt: str, period: str, run_id: str, create_only: bool = False,
                    within: Optional[str] = None, env: str = PROD) -> Staged:
    """Write ``df`` as the next version of partition ``_period=period`` of the local folder ``target``.

    ``create_only`` (an output registering a new dataset version): the partition must not exist yet.
    ``within`` (a destination a relative path gave): the workspace folder whose inside ``target`` must
    be, as a real path. ``env``: the environment whose partition the version is for (the version folder is
    the same for every environment: promotion shows it elsewhere without copying it)."""
    data = without_period(df)
    root = local_path(target)
    check_inside(root, within)  # raises before anything is written
    check_partition(target, period, create_only, env=env)
    refuse_unwritable(data, fmt, target)
    versions = versions_dir(root, period)
    staged = os.path.join(versions, version_name(versions, run_id))
    writer = data.write.mode("error").format(fmt)  # a fresh folder: Spark never deletes anything ("error": Connect knows no "errorifexists")
    if fmt == "csv":
        writer = writer.options(**CSV_WRITE_OPTIONS)
    existed = versions
    while not os.path.isdir(existed) and os.path.dirname(existed) != existed:
        existed = os.path.dirname(existed)
    expected = real_path(staged)  # taken before the write: a folder redirected during it is caught below
    try:
        writer.save(staged)
    except BaseException:  # the query itself may fail here (the runner does not materialise local outputs)
        remove_version(staged, root, period)
        folder = versions
        while len(folder) > len(existed):  # and the (empty) folders this write created
            try:
                os.rmdir(folder)
            except OSError:
                break
            folder = os.path.dirname(folder)
        raise
    now = real_path(staged)
    if now != expected:
        raise UnsafeDestination(f"the destination {root} was redirected while the run wrote it: its rows were to go to "
                                f"{expected} and went to {now} (a folder on the way was replaced by a symbolic link). "
                                "Nothing was swapped in and nothing was deleted; the rows written there are left as "
                                "they are. Remove the link and run again.")
    return Staged(partition_link(root, period, env), staged, create_only, within, expected)


def check_staged_in_place(s: Staged) -> None:
    """Raise :class:`UnsafeDestination` unless the staged version of ``s`` is still where it was written
    (its real path then and now compared) and, for a relative destination, inside the workspace: a
    folder on the way replaced by a symbolic link while the run ran would otherwise get a partition
    link written wherever the new link points."""
    root, _ = root_period(s.link)
    check_inside(root, s.within, staged=True)
    now = real_path(s.staged)
    if s.real is not None and now != s.real:
        raise UnsafeDestination(f"the destination {root} now leads to {real_path(root)}, not "
                                f"to the folder its rows were written in ({s.real}): a folder on the way was "
                                "replaced while the run ran. Nothing was swapped in there.")


def part_files(folder: str) -> list[str]:
    """The data files Spark wrote to ``folder`` (``part-*``, not their checksums), sorted."""
    import glob
    return sorted(f for f in glob.glob(os.path.join(glob.escape(folder), "part-*")) if not f.endswith(".crc"))


def count_rows(df, folder: str, fmt: str) -> int:
    """Rows of ``df`` as written to ``folder`` by :func:`stage_partition` (Parquet and ORC answer from
    their footers; the written schema is given, so an empty output needs no inference)."""
    if fmt in ("parquet", "orc"):
        # the footers hold the row counts: read them directly instead of running a Spark job
        files = part_files(folder)
        if fmt == "parquet":
            import pyarrow.parquet as pq
            return sum(pq.ParquetFile(f).metadata.num_rows for f in files)
        import pyarrow.orc as orc
        return sum(orc.ORCFile(f).nrows for f in files)
    return read_staged(df, folder, fmt).count()


def read_staged(df, folder: str, fmt: str):
    """The rows of ``df`` as :func:`stage_partition` wrote them to ``folder`` (without ``_period``), read back
    with the written schema (what a check of the staged output reads)."""
    data = without_period(df)
    reader = df.sparkSession.read.format(fmt).schema(data.schema)
    if fmt == "csv":  # records as written: a value holding a line break is one row, not two, and '' is not NULL
        reader = reader.options(**CSV_READ_BACK_OPTIONS)
    from ..inputs.files import spark_path  # with Spark only: the listing helpers load the compiler's model
    return reader.load(spark_path(folder))


def discard(staged: list[Staged]) -> None:
    """Delete staged version folders that are not (or no longer) visible."""
    for s in staged:
        remove_version(s.staged, *root_period(s.link))  # never the version a partition shows

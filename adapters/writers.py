"""Write an output's rows: a period's partition is replaced atomically, other periods untouched.

Local paths: the rows are written to ``<dest>/.lf_versions/_period=P/<run_id>`` and the partition
``<dest>/_period=P`` is a symbolic link swapped to the new folder with one ``os.replace``, so a
reader sees the old partition or the new one, never a mix, and a failure before the swap leaves
the old partition as it was. A run stages all its local outputs first and swaps them in together
(``commit``), so a failed run leaves every output as it was. Spark's partition discovery ignores
the hidden ``.lf_versions``.
URIs fall back to Spark's dynamic partition overwrite; catalog tables use ``INSERT OVERWRITE``.
"""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from typing import Optional

PARTITION = "_period"


def _local(target: str) -> str:
    return target[len("file:"):] if target.startswith("file:") else target


@dataclass
class Staged:
    """A partition written to its hidden version folder, not yet visible: ``commit`` swaps it in."""

    link: str
    staged: str


def is_local(target: str) -> bool:
    """Whether ``target`` is a local folder (written by staging and an atomic swap)."""
    return target.startswith("/") or target.startswith("file:")


def stage_partition(df, target: str, fmt: str, period: str, run_id: str) -> Staged:
    """Write ``df`` as the next version of partition ``_period=period`` of the local folder ``target``."""
    data = df.drop(PARTITION) if PARTITION in df.columns else df
    root = _local(target)
    versions = os.path.join(root, ".lf_versions", f"{PARTITION}={period}")
    name, n = run_id, 1
    while os.path.lexists(os.path.join(versions, name)):  # two outputs of one run to one partition
        n += 1
        name = f"{run_id}.{n}"
    staged = os.path.join(versions, name)
    writer = data.write.mode("overwrite").format(fmt)
    if fmt == "csv":
        writer = writer.option("header", "true")
    existed = versions
    while not os.path.isdir(existed) and os.path.dirname(existed) != existed:
        existed = os.path.dirname(existed)
    try:
        writer.save(staged)
    except BaseException:  # the query itself may fail here (the runner does not materialise local outputs)
        shutil.rmtree(staged, ignore_errors=True)
        folder = versions
        while len(folder) > len(existed):  # and the (empty) folders this write created
            try:
                os.rmdir(folder)
            except OSError:
                break
            folder = os.path.dirname(folder)
        raise
    return Staged(os.path.join(root, f"{PARTITION}={period}"), staged)


def count_rows(df, folder: str, fmt: str) -> int:
    """Rows of ``df`` as written to ``folder`` by :func:`stage_partition` (Parquet and ORC answer from
    their footers; the written schema is given, so an empty output needs no inference)."""
    if fmt in ("parquet", "orc"):
        # the footers hold the row counts: read them directly instead of running a Spark job
        import glob
        files = [f for f in glob.glob(os.path.join(folder, "part-*")) if not f.endswith(".crc")]
        if fmt == "parquet":
            import pyarrow.parquet as pq
            return sum(pq.ParquetFile(f).metadata.num_rows for f in files)
        import pyarrow.orc as orc
        return sum(orc.ORCFile(f).nrows for f in files)
    data = df.drop(PARTITION) if PARTITION in df.columns else df
    reader = df.sparkSession.read.format(fmt).schema(data.schema)
    if fmt == "csv":
        reader = reader.option("header", "true")
    return reader.load(folder).count()


def commit(staged: list[Staged]) -> None:
    """Swap every staged partition in, all or nothing: when one swap fails, the partitions already
    swapped are pointed back at their previous versions and the staged files are dropped. The
    replaced versions are deleted only once every swap succeeded."""
    done: list[tuple[str, Optional[str]]] = []
    try:
        for s in staged:
            previous = os.path.realpath(s.link) if os.path.islink(s.link) else None
            _swap(s.link, s.staged)
            done.append((s.link, previous))
    except BaseException:
        for link, previous in reversed(done):
            if previous is not None and os.path.isdir(previous):
                _point(link, previous)
            elif os.path.islink(link):
                os.remove(link)
        discard(staged)
        raise
    final = {os.path.realpath(s.link) for s in staged}
    for _link, previous in done:
        if previous and previous not in final and os.path.isdir(previous):
            shutil.rmtree(previous, ignore_errors=True)


def discard(staged: list[Staged]) -> None:
    """Delete staged version folders that are not (or no longer) visible."""
    for s in staged:
        if os.path.realpath(s.link) != os.path.realpath(s.staged):
            shutil.rmtree(s.staged, ignore_errors=True)


def write_uri_partition(df, target: str, fmt: str, period: str) -> str:
    """A URI destination: Spark's dynamic partition overwrite of ``_period=period``."""
    spark = df.sparkSession
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    from pyspark.sql import functions as F
    (df.withColumn(PARTITION, F.lit(period)).write.mode("overwrite").format(fmt)
       .options(**({"header": "true"} if fmt == "csv" else {})).partitionBy(PARTITION).save(target))
    return f"{target}/{PARTITION}={period}"


def _swap(link: str, new_target: str) -> None:
    """Point ``link`` at ``new_target`` atomically (the previous version's files are kept: see ``commit``)."""
    _point(link, new_target)


def _point(link: str, new_target: str) -> None:
    tmp = f"{link}.{os.path.basename(new_target)}.tmp"
    if os.path.lexists(tmp):
        os.remove(tmp)
    os.symlink(os.path.relpath(new_target, os.path.dirname(link)), tmp)
    if os.path.isdir(link) and not os.path.islink(link):
        shutil.rmtree(link)  # a plain folder from another writer: cannot be swapped atomically
    os.replace(tmp, link)


def write_catalog_table(df, table: str, period: str) -> str:
    """Replace partition ``_period=period`` of a catalog table (created partitioned if absent)."""
    from pyspark.sql import functions as F
    spark = df.sparkSession
    data = df.drop(PARTITION) if PARTITION in df.columns else df
    data = data.withColumn(PARTITION, F.lit(period))
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    if not spark.catalog.tableExists(table):
        data.write.partitionBy(PARTITION).saveAsTable(table)
    else:
        data.write.insertInto(table, overwrite=True)
    return f"{table} ({PARTITION}={period})"

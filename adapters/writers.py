"""Write an output's rows: a period's partition is replaced atomically, other periods untouched.

Local paths: the rows are written to ``<dest>/.lf_versions/_period=P/<run_id>`` and the partition
``<dest>/_period=P`` is a symbolic link swapped to the new folder with one ``os.replace``, so a
reader sees the old partition or the new one, never a mix, and a failure before the swap leaves
the old partition as it was. Spark's partition discovery ignores the hidden ``.lf_versions``.
URIs fall back to Spark's dynamic partition overwrite; catalog tables use ``INSERT OVERWRITE``.
"""
from __future__ import annotations

import os
import shutil
from typing import Optional

PARTITION = "_period"


def _is_local(target: str) -> bool:
    return target.startswith("/") or target.startswith("file:")


def _local(target: str) -> str:
    return target[len("file:"):] if target.startswith("file:") else target


def write_partition(df, target: str, fmt: str, period: str, run_id: str) -> str:
    """Replace partition ``_period=period`` of the folder ``target`` with ``df``; returns its path."""
    data = df.drop(PARTITION) if PARTITION in df.columns else df
    if not _is_local(target):
        spark = df.sparkSession
        spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
        from pyspark.sql import functions as F
        (df.withColumn(PARTITION, F.lit(period)).write.mode("overwrite").format(fmt)
           .options(**({"header": "true"} if fmt == "csv" else {})).partitionBy(PARTITION).save(target))
        return f"{target}/{PARTITION}={period}"
    root = _local(target)
    versions = os.path.join(root, ".lf_versions", f"{PARTITION}={period}")
    staged = os.path.join(versions, run_id)
    writer = data.write.mode("overwrite").format(fmt)
    if fmt == "csv":
        writer = writer.option("header", "true")
    writer.save(staged)
    link = os.path.join(root, f"{PARTITION}={period}")
    _swap(link, staged)
    return link


def _swap(link: str, new_target: str) -> None:
    """Point ``link`` at ``new_target`` atomically, then drop the previous version's files."""
    old: Optional[str] = os.path.realpath(link) if os.path.islink(link) else None
    tmp = f"{link}.{os.path.basename(new_target)}.tmp"
    if os.path.lexists(tmp):
        os.remove(tmp)
    os.symlink(os.path.relpath(new_target, os.path.dirname(link)), tmp)
    if os.path.isdir(link) and not os.path.islink(link):
        shutil.rmtree(link)  # a plain folder from another writer: cannot be swapped atomically
    os.replace(tmp, link)
    if old and os.path.realpath(old) != os.path.realpath(new_target) and os.path.isdir(old):
        shutil.rmtree(old, ignore_errors=True)


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

"""The catalog-table and URI partitions a promotion copies with Spark (docs/environments.md, "Catalog tables and
URIs").

Spark writes a catalog table and a URI in place, where prod's readers read them, so an environment other than prod
keeps its rows of them elsewhere: a table's in a folder of the workspace (:func:`..run.destinations.env_table_folder`),
a URI's in ``<uri>/.lf_envs/<env>``. Promoting such a project-period copies rows: the source's partition is written
into the target's exactly as a run writes it there (:func:`..commit.spark_writes.write_catalog_table`,
:func:`..commit.spark_writes.write_uri_partition`).

Each copy is an entry of the promotion's journal (``copies``), listed before anything changes. Just before a
partition is replaced, its rows are written to ``target/promotions/<promotion id>/before/<n>`` and the journal says
so (``kept``), then the copy is made and the journal says ``copied``. A failure before the commit point writes every
such partition's rows back from there (:func:`restore`; a partition the copy created is removed), so the target shows
what it showed. After the commit point the kept rows are deleted (:func:`discard`). A process killed between a copy
and the commit point cannot be undone by the next command, which starts no JVM: its recovery says which partitions
may hold the promoted rows and where their rows from before are kept
(:func:`..commit.promotion_journal.tables_left`); promoting again completes it.
"""
from __future__ import annotations

import os
import shutil
from typing import Callable, NamedTuple, Optional

from ...compiler.errors import ExecutionError, LedgerflowError
from ..commit.spark_writes import check_catalog_table, write_catalog_table, write_uri_partition
from ..inputs.files import spark_path
from ..layout.partition_paths import PARTITION, partition_key
from ..layout.real_path import real_path

BEFORE = "before"  # target/promotions/<id>/before/<n>: a copied partition's rows from before the promotion
TABLE, URI = "table", "uri"


class Copy(NamedTuple):
    """One partition a promotion copies: ``kind`` :data:`TABLE` (``target`` a catalog table, ``source`` a version
    folder of Parquet) or :data:`URI` (``target`` the URI whose partition is replaced, ``source`` the source
    environment's partition there, in ``format``); ``rows`` the source's rows; ``output`` the source record's output
    location (the promoted record's becomes where the copy wrote)."""

    kind: str
    target: str
    source: str
    rows: int
    format: str
    output: str

    def lease_key(self, period: str, env: str) -> str:
        """The name of the partition this copy replaces, as leases and closes compare it."""
        return partition_key("table" if self.kind == TABLE else "path", self.target, period, env)


def planned(folder: str, promotion_id: str, copies: list[tuple[str, Copy]]) -> list[dict]:
    """The journal's ``copies``: one entry per (period, :class:`Copy`), each with the folder its partition's rows
    from before will be kept in (under ``folder``, the journals' folder)."""
    keep = os.path.join(folder, promotion_id, BEFORE)
    return [{**c._asdict(), "period": period, "before": os.path.join(keep, str(n)), "state": "planned"}
            for n, (period, c) in enumerate(copies)]


def where(entry: dict) -> str:
    """The partition a copy replaces, for a message."""
    if entry["kind"] == TABLE:
        return f"the catalog table {entry['target']} (partition {PARTITION}={entry['period']})"
    return f"{entry['target'].rstrip('/')}/{PARTITION}={entry['period']}"


def _hadoop_path(spark, location: str):
    jvm = spark._jvm
    path = jvm.org.apache.hadoop.fs.Path(location)
    return path.getFileSystem(spark._jsc.hadoopConfiguration()), path


def _read(spark, entry: dict, location: str):
    return spark.read.format(entry["format"]).load(location)


def rows_now(spark, entry: dict):
    """The rows the target partition holds now (None when it does not exist)."""
    if entry["kind"] == TABLE:
        if not spark.catalog.tableExists(entry["target"]):
            return None
        from pyspark.sql import functions as F
        return spark.table(entry["target"]).where(F.col(PARTITION) == F.lit(entry["period"])).drop(PARTITION)
    location = f"{entry['target'].rstrip('/')}/{PARTITION}={entry['period']}"
    fs, path = _hadoop_path(spark, location)
    return _read(spark, entry, location) if fs.exists(path) else None


def source_rows(spark, entry: dict):
    """The rows a copy (a journal entry, or a :class:`Copy` as a dict) writes: its source's."""
    if entry["kind"] == TABLE:
        return spark.read.parquet(spark_path(entry["source"]))
    return _read(spark, entry, entry["source"])


def _write(entry: dict, rows, count: int) -> str:
    if entry["kind"] == TABLE:
        return write_catalog_table(rows, entry["target"], entry["period"], count)
    return write_uri_partition(rows, entry["target"].rstrip("/"), entry["format"], entry["period"], count)


def copy_all(spark, copies: list[dict], journal: Callable[[], None]) -> None:
    """Copy every planned partition (see the module docstring), keeping the journal (``journal()`` writes it) a step
    ahead of each change. A table whose columns are not the copied rows' is refused before any copy, as a run
    writing it is refused (:func:`..commit.spark_writes.check_catalog_table`)."""
    for entry in copies:
        if entry["kind"] == TABLE:
            columns = spark.read.parquet(spark_path(entry["source"])).columns
            check_catalog_table(spark, entry["target"], columns, f"promoting {entry['source']} into "
                                f"{entry['target']} (nothing was promoted)")
    for entry in copies:
        try:
            os.makedirs(os.path.dirname(entry["before"]), exist_ok=True)
            now = rows_now(spark, entry)
            if now is not None:
                now.write.mode("errorifexists").parquet(spark_path(entry["before"]))
            entry.update(state="kept", existed=now is not None)
            journal()
            entry["location"] = _write(entry, source_rows(spark, entry), int(entry["rows"] or 0))
        except LedgerflowError:
            raise
        except Exception as exc:  # noqa: BLE001 - Spark's error, said in one paragraph (exit 3)
            raise ExecutionError(f"ENV-008 copying {entry['source']} into {where(entry)} failed: {type(exc).__name__}: "
                                 f"{str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ''}. The "
                                 "promotion is rolled back: every partition it changed shows what it showed before. "
                                 "Hint: fix the cause and promote again.") from exc
        entry["state"] = "copied"
        journal()


def restore(spark, copies: list[dict]) -> list[str]:
    """Write back the rows from before of every partition copied (or being copied), last first; returns the
    problems (a partition whose rows could not be written back, and where they are kept)."""
    problems = []
    for entry in reversed(copies):
        if entry.get("state") not in ("kept", "copied"):
            continue
        try:
            if entry.get("existed"):
                before = spark.read.parquet(spark_path(entry["before"]))
                _write(entry, before, before.count())
            elif entry["kind"] == URI:  # the copy created the partition: it goes
                fs, path = _hadoop_path(spark, f"{entry['target'].rstrip('/')}/{PARTITION}={entry['period']}")
                fs.delete(path, True)
            elif spark.catalog.tableExists(entry["target"]):  # the copy created the table: its partition emptied
                _write(entry, source_rows(spark, entry).limit(0), 0)
            entry["state"] = "restored"
        except Exception as exc:  # noqa: BLE001 - said, with where the rows from before are kept
            problems.append(f"{where(entry)} may hold the promoted rows ({type(exc).__name__}: "
                            f"{str(exc).splitlines()[0][:200] if str(exc) else ''}); its rows from before are kept in "
                            f"{entry['before']}")
    return problems


def discard(folder: str, promotion_id: str) -> Optional[str]:
    """Delete the rows kept from before a committed promotion (``<folder>/<promotion id>``, a real folder inside
    the journals' folder ``folder``); returns the folder deleted, if any."""
    kept = os.path.join(folder, promotion_id)
    if os.path.islink(kept) or not os.path.isdir(kept) or os.path.dirname(real_path(kept)) != real_path(folder):
        return None
    shutil.rmtree(kept)
    return kept

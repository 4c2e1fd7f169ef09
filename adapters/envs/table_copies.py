"""The catalog-table partitions a promotion into prod copies with Spark (docs/environments.md, "Catalog tables").

An environment other than prod keeps its rows of a catalog table in a folder of the workspace
(:func:`..run.destinations.env_table_folder`): prod's readers read the table itself, which no environment writes.
Promoting such a project-period into prod therefore copies rows: the source's version folder is written into the
table's partition exactly as a prod run writes it (:func:`..commit.spark_writes.write_catalog_table`).

Each copy is an entry of the promotion's journal (``copies``), listed before anything changes. Just before a
partition is replaced, its rows are written to ``target/promotions/<promotion id>/before/<n>`` and the journal
says so (``kept``), then the copy is made and the journal says ``copied``. A failure before the commit point writes
every copied partition's rows back from there (:func:`restore`), so prod's table shows what it showed. After the
commit point the kept rows are deleted (:func:`discard`). A process killed between a copy and the commit point
cannot be undone by the next command, which starts no JVM: its recovery says which partitions hold the promoted
rows and where their rows from before are kept (:func:`..commit.promotion_journal.tables_left`);
promoting again completes it.
"""
from __future__ import annotations

import os
import shutil
from typing import Callable, Optional

from ...compiler.errors import ExecutionError, LedgerflowError
from ..commit.spark_writes import write_catalog_table
from ..inputs.files import spark_path
from ..layout.partition_paths import PARTITION
from ..layout.real_path import real_path

BEFORE = "before"  # target/promotions/<id>/before/<n>: a copied partition's rows from before the promotion


def planned(folder: str, promotion_id: str, copies: list[tuple[str, str, str, int]]) -> list[dict]:
    """The journal's ``copies``: one entry per (table, period, the source's version folder, its rows), each with
    the folder its partition's rows from before will be kept in (under ``folder``, the journals' folder)."""
    keep = os.path.join(folder, promotion_id, BEFORE)
    return [{"table": table, "period": period, "version": version, "rows": rows, "before": os.path.join(keep, str(n)),
             "state": "planned"} for n, (table, period, version, rows) in enumerate(copies)]


def _partition(spark, table: str, period: str):
    from pyspark.sql import functions as F
    return spark.table(table).where(F.col(PARTITION) == F.lit(period)).drop(PARTITION)


def copy_all(spark, copies: list[dict], journal: Callable[[], None]) -> None:
    """Copy every planned partition into its table (see the module docstring), keeping the journal (``journal()``
    writes it) a step ahead of each change."""
    for entry in copies:
        try:
            os.makedirs(os.path.dirname(entry["before"]), exist_ok=True)
            existed = spark.catalog.tableExists(entry["table"])
            if existed:
                _partition(spark, entry["table"], entry["period"]).write.mode("errorifexists").parquet(
                    spark_path(entry["before"]))
            entry.update(state="kept", table_existed=existed)
            journal()
            rows = spark.read.parquet(spark_path(entry["version"]))
            entry["location"] = write_catalog_table(rows, entry["table"], entry["period"], int(entry["rows"] or 0))
        except LedgerflowError:
            raise
        except Exception as exc:  # noqa: BLE001 - Spark's error, said in one paragraph (exit 3)
            raise ExecutionError(f"ENV-008 copying {entry['version']} into the catalog table {entry['table']} "
                                 f"(partition {PARTITION}={entry['period']}) failed: {type(exc).__name__}: "
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
            if entry.get("table_existed"):
                before = spark.read.parquet(spark_path(entry["before"]))
                write_catalog_table(before, entry["table"], entry["period"], before.count())
            elif spark.catalog.tableExists(entry["table"]):  # the promotion created the table: left empty
                write_catalog_table(spark.read.parquet(spark_path(entry["version"])).limit(0), entry["table"],
                                    entry["period"], 0)
            entry["state"] = "restored"
        except Exception as exc:  # noqa: BLE001 - said, with where the rows from before are kept
            problems.append(f"the catalog table {entry['table']} partition {PARTITION}={entry['period']} may hold the "
                            f"promoted rows ({type(exc).__name__}: {str(exc).splitlines()[0][:200]}); its rows from "
                            f"before are kept in {entry['before']}")
    return problems


def discard(folder: str, promotion_id: str) -> Optional[str]:
    """Delete the rows kept from before a committed promotion (``<folder>/<promotion id>``, a real folder inside
    the journals' folder ``folder``); returns the folder deleted, if any."""
    kept = os.path.join(folder, promotion_id)
    if os.path.islink(kept) or not os.path.isdir(kept) or os.path.dirname(real_path(kept)) != real_path(folder):
        return None
    shutil.rmtree(kept)
    return kept

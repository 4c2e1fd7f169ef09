"""Outputs Spark writes in place: a URI's partition and a catalog table's partition.

Neither is staged nor journalled: Spark's dynamic partition overwrite replaces the period's partition
when its job commits (catalog tables matched by column name), and an output with no rows overwrites
the partition statically, so that it is emptied too. Once written, such an output cannot be rolled back.
"""
from __future__ import annotations

from ...compiler.errors import ResolutionError
from ..layout.partition_paths import PARTITION
from .staging import CSV_WRITE_OPTIONS, without_period


def write_uri_partition(df, target: str, fmt: str, period: str, rows: int) -> str:
    """A URI destination: partition ``_period=period`` of ``target`` replaced by ``df`` (``rows`` rows).

    Rows: Spark's dynamic partition overwrite (written aside, the partition replaced when the job
    commits; a failed job leaves it as it was). No rows: the partition's folder is overwritten, as a
    dynamic overwrite replaces only the partitions its rows hold and would keep the last run's."""
    location = f"{target.rstrip('/')}/{PARTITION}={period}"
    data = without_period(df)
    header = CSV_WRITE_OPTIONS if fmt == "csv" else {}
    if rows == 0:
        data.write.mode("overwrite").format(fmt).options(**header).save(location)
        return location
    from pyspark.sql import functions as F
    (data.withColumn(PARTITION, F.lit(period)).write.mode("overwrite").format(fmt).options(**header)
     .option("partitionOverwriteMode", "dynamic").partitionBy(PARTITION).save(target))
    return location


def qualified_table(spark, table: str) -> str:
    """``table`` as every part of its name (catalog, namespaces, name), each quoted, in lower case; the
    parts a one- or two-part name leaves out filled as Spark fills them (the session's current catalog
    and database), so that ``t``, ``db.t`` and ``spark_catalog.db.t`` compare equal when they name one
    table. A name sqlglot cannot read is compared as written (lower case)."""
    from sqlglot import exp
    try:
        parts = [p.name for p in exp.to_table(table, dialect="spark").parts]
    except Exception:  # noqa: BLE001 - Spark itself will say what is wrong with the name
        return table.lower()
    current = spark.catalog.currentCatalog()
    if len(parts) == 2 and parts[0].lower() == current.lower():  # `spark_catalog.t`: a catalog and a table
        parts = [parts[0], spark.catalog.currentDatabase(), parts[1]]
    elif len(parts) < 3:
        parts = [current, *([spark.catalog.currentDatabase()] if len(parts) == 1 else []), *parts]
    return ".".join("`" + p.replace("`", "``") + "`" for p in parts).lower()


def check_catalog_table(spark, table: str, columns: list[str], where: str) -> None:
    """An existing catalog table an output writes must be partitioned by ``_period`` alone and have
    the output's columns (compared case-insensitively, in any order); checked before any output is
    written. A table that does not exist yet is created by the write."""
    if not spark.catalog.tableExists(table):
        return
    listed = spark.catalog.listColumns(table)
    partitions = [c.name for c in listed if c.isPartition]
    if [p.lower() for p in partitions] != [PARTITION]:
        raise ResolutionError(f"{where}: the catalog table {table} is partitioned by {partitions or 'nothing'}, "
                              f"not by {PARTITION} alone: ledgerflow replaces one period's partition of a table. "
                              "Write to a table ledgerflow created, or recreate it partitioned by _period.")
    have = {c.name.lower() for c in listed if not c.isPartition}
    want = {c.lower() for c in columns if c.lower() != PARTITION}
    if have != want:
        missing, extra = sorted(want - have), sorted(have - want)
        raise ResolutionError(f"{where}: the catalog table {table} does not have the output's columns"
                              + (f"; the table lacks {', '.join(missing)}" if missing else "")
                              + (f"; the output lacks {', '.join(extra)}" if extra else "")
                              + ". Change the output's columns, or the table.")


def write_catalog_table(df, table: str, period: str, rows: int) -> str:
    """Replace partition ``_period=period`` of a catalog table by ``df`` (``rows`` rows), its columns
    matched to the table's by name (:func:`check_catalog_table` checked them); a table that does not
    exist is created partitioned by ``_period``.

    Rows: a dynamic partition overwrite (the partition replaced when the job commits; a failed job
    leaves it as it was). No rows: ``INSERT OVERWRITE ... PARTITION (_period = P)`` of nothing, which
    empties the partition (a dynamic overwrite replaces only the partitions its rows hold). The
    table's name and the period are parameters of that statement, never SQL text."""
    from pyspark.sql import functions as F
    spark = df.sparkSession
    data = without_period(df)
    if not spark.catalog.tableExists(table):
        data.withColumn(PARTITION, F.lit(period)).write.partitionBy(PARTITION).saveAsTable(table)
        return f"{table} ({PARTITION}={period})"
    by_name = {c.lower(): c for c in data.columns}
    ordered = data.select(*[F.col("`" + by_name[c.name.lower()].replace("`", "``") + "`").alias(c.name)
                            for c in spark.catalog.listColumns(table) if not c.isPartition])
    if rows == 0:
        import uuid
        view = f"__lf_output_{uuid.uuid4().hex}"
        ordered.createOrReplaceTempView(view)
        try:
            spark.sql(f"INSERT OVERWRITE TABLE IDENTIFIER(:table) PARTITION (`{PARTITION}` = :period) "
                      f"SELECT * FROM `{view}`", args={"table": table, "period": period})
        finally:
            spark.catalog.dropTempView(view)
    else:
        spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
        ordered.withColumn(PARTITION, F.lit(period)).write.insertInto(table, overwrite=True)
    return f"{table} ({PARTITION}={period})"

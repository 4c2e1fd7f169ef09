"""What the hand-written PySpark scripts of pipeline P share: its steps written once with the DataFrame API, their
command-line options and their local SparkSession.

Plain PySpark, as a user would write it: nothing here imports ledgerflow. The scripts beside this file
(``handwritten_source.py``, ``handwritten_range.py``, ``handwritten_checks.py``, ``handwritten_diff.py``) and the
in-process ``baseline.py`` import it.
"""
from __future__ import annotations

import argparse
import datetime
from decimal import Decimal

GL_ID = "0c000000-0000-4000-8000-000000000001"
BUDGETS_ID = "0c000000-0000-4000-8000-000000000004"
DEC = "decimal(18,2)"
LINE_KEYS = ("journal_id", "line_number", "posting_date", "account_code", "cost_center_code", "customer_id",
             "currency", "amount_local")


def converted(F, gl, fx, customers, started, join_keys=("currency",), first=(), carried=(), last=()):
    """Step 1: the lines joined to their FX rate and customer; a posted (non-manual) line converted to USD and
    enriched with the customer's segment, region and activity. ``first``/``carried``/``last``: more columns kept
    before the lines' own, after ``source_system`` and at the end."""
    df = gl.join(F.broadcast(fx), list(join_keys), "left").join(F.broadcast(customers), "customer_id", "left")
    posted = F.coalesce(F.col("source_system") != "MANUAL", F.lit(False))
    return df.select(
        *first, *LINE_KEYS,
        F.when(posted, (F.col("amount_local") * F.col("rate")).cast(DEC)).otherwise(F.col("amount_reporting"))
        .alias("amount_reporting"),
        "description", "source_system", *carried,
        F.when(posted, started).alias("_updated_at"),
        F.when(posted, F.col("segment")).alias("customer_segment"),
        F.when(posted, F.col("region")).alias("customer_region"),
        F.when(posted, F.col("is_active")).alias("customer_active"),
        *last)


def discounted(F, df, started):
    """Step 2: the enterprise discount (2% off a positive amount of an ENTERPRISE customer's line)."""
    discount = F.coalesce((F.col("customer_segment") == "ENTERPRISE") & (F.col("amount_reporting") > 0), F.lit(False))
    return (df.withColumn("_updated_at", F.when(discount, started).otherwise(F.col("_updated_at")))
              .withColumn("discounted", F.when(discount, F.lit(True)))
              .withColumn("amount_reporting",
                          F.when(discount, F.round(F.col("amount_reporting") * F.lit(Decimal("0.98")), 2).cast(DEC))
                          .otherwise(F.col("amount_reporting"))))


def unknown_customer(F):
    """Step 3's condition: a line of an unknown or inactive customer (deleted)."""
    return F.coalesce(F.col("customer_region").isNull() | (F.col("customer_active") == F.lit(False)), F.lit(False))


def total_rows(F, totals, started, last=()):
    """Step 4's rows as written: the totals per region and currency in the output's columns."""
    none = _nulls(F)
    return totals.select(
        none["string"].alias("journal_id"), none["int"].alias("line_number"), none["date"].alias("posting_date"),
        none["string"].alias("account_code"), none["string"].alias("cost_center_code"),
        none["string"].alias("customer_id"), "currency", "amount_local", "amount_reporting",
        none["string"].alias("description"), none["string"].alias("source_system"),
        F.lit(False).alias("_deleted"), started.alias("_updated_at"), F.lit("").alias("_labels"),
        F.lit(GL_ID).alias("_source_dataset"), F.lit(4).alias("_operation_seq"),
        none["string"].alias("customer_segment"), "customer_region", none["boolean"].alias("customer_active"),
        none["boolean"].alias("discounted"), "line_count", *last)


def budget_rows(F, budgets, started, last=()):
    """Step 5's rows as written: the budgets summed per account, cost center and currency, in the output's
    columns."""
    none = _nulls(F)
    return budgets.select(
        none["string"].alias("journal_id"), none["int"].alias("line_number"), none["date"].alias("posting_date"),
        "account_code", "cost_center_code", none["string"].alias("customer_id"), "currency", "amount_local",
        none[DEC].alias("amount_reporting"), none["string"].alias("description"),
        none["string"].alias("source_system"), F.lit(False).alias("_deleted"), started.alias("_updated_at"),
        F.lit("").alias("_labels"), F.lit(BUDGETS_ID).alias("_source_dataset"), F.lit(5).alias("_operation_seq"),
        none["string"].alias("customer_segment"), none["string"].alias("customer_region"),
        none["boolean"].alias("customer_active"), none["boolean"].alias("discounted"),
        none["bigint"].alias("line_count"), *last)


def _nulls(F) -> dict:
    return {t: F.lit(None).cast(t) for t in ("string", "int", "date", DEC, "boolean", "bigint")}


def script_arguments(description: str, period: str | None) -> argparse.ArgumentParser:
    """The options every hand-written script takes: ``--data``, ``--layout``, ``--period`` (default ``period``;
    none when ``period`` is None), ``--started-at``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--data", required=True)
    parser.add_argument("--layout", choices=["flat", "folders", "csv"], required=True)
    if period is not None:
        parser.add_argument("--period", default=period)
    parser.add_argument("--started-at", default=None, help="ISO timestamp for _updated_at (default: now, UTC)")
    return parser


def started_at_of(args) -> datetime.datetime:
    """``--started-at`` as a timestamp without zone; now (UTC) when not given."""
    return (datetime.datetime.fromisoformat(args.started_at) if args.started_at
            else datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None))


def local_session(settings: dict, app: str = "handwritten", driver_memory=None, java_options=None):
    """A ``local[2]`` SparkSession with ``settings``, the driver's memory and more JVM options when given."""
    from pyspark.sql import SparkSession
    builder = SparkSession.builder.master("local[2]").appName(app)
    for k, v in settings.items():
        builder = builder.config(k, v)
    if driver_memory:
        builder = builder.config("spark.driver.memory", driver_memory)
    if java_options:
        builder = builder.config("spark.driver.extraJavaOptions", java_options)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark

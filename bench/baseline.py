"""Pipeline P hand-written with the PySpark DataFrame API, as an experienced Spark engineer would.

Same semantics as ``bench/workspace/projects/pipeline_p.yml`` run by ledgerflow (docs/workspace.md, operations):
left joins on the rows of the run's period (FX as of the period start, customers of the period),
exact decimal arithmetic, a delete that removes rows from what is written, summary rows per region
and currency appended, budgets summed per account, cost center and currency appended, and the
result written as the period's partition of a Parquet folder. It writes the same ``_row_id``,
``_updated_at`` and lineage columns as ledgerflow (given the same run start), so the two outputs
can be compared column for column.

What the engineer does that ledgerflow does not: filters deleted rows out instead of flagging them
(the output excludes them anyway), broadcasts both small join sides, skips the join-multiplicity
check (the engineer "knows" the keys are unique), and writes in one pass without materialising.
"""
from __future__ import annotations

import datetime
import os
import shutil

from bench.handwritten_common import BUDGETS_ID, DEC, GL_ID, converted, discounted, unknown_customer


def _in_period(F, period: str):
    """Monthly ``_period`` values inside a year or month run (the data only has months)."""
    return F.col("_period").startswith(period)


def _row_id(F, seq: int, keys: list[str], started_at: datetime.datetime):
    """ledgerflow's UUIDv7 for appended rows: run start millis + SHA-256 of (operation seq, group keys)."""
    fields = ", ".join([f"{seq} AS k0"] + [f"`{k}` AS k{i + 1}" for i, k in enumerate(keys)])
    ms = int(started_at.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000)
    return F.expr(
        f"lower(regexp_replace(concat(lpad(hex({ms}), 12, '0'), '7', "
        f"overlay(substr(sha2(to_json(struct({fields})), 256), 1, 18) placing '8' from 4 for 0)), "
        "'^(.{8})(.{4})(.{4})(.{4})(.{12})$', '$1-$2-$3-$4-$5'))")


def run(spark, data: str, out: str, period: str, period_start: datetime.date,
        started_at: datetime.datetime):
    """Run pipeline P on the data folder ``data``; writes ``<out>/_period=<period>``; returns the written
    DataFrame (for ``explain``)."""
    from pyspark.sql import functions as F

    started = F.lit(started_at).cast("timestamp")
    gl = (spark.read.parquet(os.path.join(data, "gl", "v1"))
          .where(_in_period(F, period) & ~F.col("_deleted")))
    fx = (spark.read.parquet(os.path.join(data, "exchange_rates", "v1"))
          .where(~F.col("_deleted") & (F.col("_period_from") <= F.lit(period_start))
                 & (F.col("_period_to").isNull() | (F.col("_period_to") > F.lit(period_start)))
                 & (F.col("to_currency") == "USD") & (F.col("rate_type") == "closing"))
          .select(F.col("from_currency").alias("currency"), "rate"))
    customers = (spark.read.parquet(os.path.join(data, "customers", "v1"))
                 .where(~F.col("_deleted") & _in_period(F, period))
                 .select("customer_id", "segment", "region", "is_active"))

    # 1. convert to USD and enrich, for posted (non-manual) lines
    df = converted(F, gl, fx, customers, started, carried=("_row_id",), last=("_period",))
    # 2. enterprise discount
    df = discounted(F, df, started)
    # 3. delete lines of unknown or inactive customers (not written, so simply dropped)
    df = df.where(~unknown_customer(F))
    lines = df.select(
        "journal_id", "line_number", "posting_date", "account_code", "cost_center_code", "customer_id", "currency",
        "amount_local", "amount_reporting", "description", "source_system", "_row_id",
        F.lit(False).alias("_deleted"), "_updated_at", F.lit("").alias("_labels"), F.lit(GL_ID).alias("_source_dataset"),
        F.lit(0).alias("_operation_seq"), "customer_segment", "customer_region", "customer_active", "discounted",
        F.lit(None).cast("bigint").alias("line_count"))
    # 4. totals per region and currency
    totals = (df.groupBy("customer_region", "currency")
              .agg(F.sum("amount_local").cast(DEC).alias("amount_local"),
                   F.sum("amount_reporting").cast(DEC).alias("amount_reporting"),
                   F.count("journal_id").alias("line_count")))
    totals = totals.select(
        F.lit(None).cast("string").alias("journal_id"), F.lit(None).cast("int").alias("line_number"),
        F.lit(None).cast("date").alias("posting_date"), F.lit(None).cast("string").alias("account_code"),
        F.lit(None).cast("string").alias("cost_center_code"), F.lit(None).cast("string").alias("customer_id"),
        "currency", "amount_local", "amount_reporting", F.lit(None).cast("string").alias("description"),
        F.lit(None).cast("string").alias("source_system"),
        _row_id(F, 4, ["customer_region", "currency"], started_at).alias("_row_id"),
        F.lit(False).alias("_deleted"), started.alias("_updated_at"), F.lit("").alias("_labels"),
        F.lit(GL_ID).alias("_source_dataset"), F.lit(4).alias("_operation_seq"),
        F.lit(None).cast("string").alias("customer_segment"), "customer_region",
        F.lit(None).cast("boolean").alias("customer_active"), F.lit(None).cast("boolean").alias("discounted"),
        "line_count")
    # 5. budgets summed per account, cost center and currency
    budgets = (spark.read.parquet(os.path.join(data, "budgets", "v1"))
               .where(~F.col("_deleted") & _in_period(F, period))
               .groupBy("account_code", "cost_center_code", "currency")
               .agg(F.sum("amount").cast(DEC).alias("amount_local")))
    budgets = budgets.select(
        F.lit(None).cast("string").alias("journal_id"), F.lit(None).cast("int").alias("line_number"),
        F.lit(None).cast("date").alias("posting_date"), "account_code", "cost_center_code",
        F.lit(None).cast("string").alias("customer_id"), "currency", "amount_local",
        F.lit(None).cast(DEC).alias("amount_reporting"), F.lit(None).cast("string").alias("description"),
        F.lit(None).cast("string").alias("source_system"),
        _row_id(F, 5, ["account_code", "cost_center_code", "currency"], started_at).alias("_row_id"),
        F.lit(False).alias("_deleted"), started.alias("_updated_at"), F.lit("").alias("_labels"),
        F.lit(BUDGETS_ID).alias("_source_dataset"), F.lit(5).alias("_operation_seq"),
        F.lit(None).cast("string").alias("customer_segment"), F.lit(None).cast("string").alias("customer_region"),
        F.lit(None).cast("boolean").alias("customer_active"), F.lit(None).cast("boolean").alias("discounted"),
        F.lit(None).cast("bigint").alias("line_count"))
    # 6. output: the period's partition, replaced
    result = lines.unionByName(totals).unionByName(budgets)
    target = os.path.join(out, f"_period={period}")
    shutil.rmtree(target, ignore_errors=True)
    result.write.mode("overwrite").parquet(target)
    return result

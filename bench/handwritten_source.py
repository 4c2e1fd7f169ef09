"""Pipeline P on source-shaped data, hand-written with the PySpark DataFrame API: a standalone script.

This file is what the cold-process benchmark (``bench/cold_process.py``) runs as its own ``python``
process against a whole ``ledgerflow run`` process. It imports nothing from ledgerflow (the steps it shares
with the other hand-written scripts are in ``handwritten_common.py`` beside it, plain PySpark too):

    python bench/handwritten_source.py --data WS/data --layout flat|folders|csv --out DIR --period 2026-02
        [--started-at 2026-11-26T08:00:00.123] [--driver-memory 4g]

It starts its own ``local[2]`` SparkSession with the settings ledgerflow gives its local sessions
(UI off, 4 shuffle partitions, UTC, ANSI on, adaptive execution on), reads the source-shaped data of
``bench/datagen.py`` (no ``_row_id``/``_deleted``/``_updated_at``: GL and budgets with a ``_period``
column, customers a snapshot, FX rates with ``_period_from``/``_period_to``), and writes
``<out>/_period=<period>`` with the rows and columns ``ledgerflow run pipeline_p`` writes, except
``_row_id``. ``--started-at`` fixes ``_updated_at`` (the benchmark passes ledgerflow's run start so
the outputs can be compared on every other column). What an experienced engineer does here: a
declared schema for CSV, the period filter on ``_period``, broadcast dimension joins, exact
``Decimal`` literals, unknown/inactive customers dropped, one write.
"""
from __future__ import annotations

import datetime
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from handwritten_common import (DEC, GL_ID, budget_rows, converted, discounted, local_session,  # noqa: E402,F401
                                script_arguments, started_at_of, total_rows, unknown_customer)

SCHEMAS = {  # declared column order = the CSV header order of bench/datagen.py
    "gl": "journal_id string, line_number int, posting_date date, account_code string, cost_center_code string, "
          "customer_id string, currency string, amount_local decimal(18,2), amount_reporting decimal(18,2), "
          "description string, source_system string, _period string",
    "exchange_rates": "from_currency string, to_currency string, rate decimal(18,6), rate_type string, "
                      "_period_from date, _period_to date",
    "customers": "customer_id string, customer_name string, segment string, region string, is_active boolean",
    "budgets": "budget_id string, line_number int, account_code string, cost_center_code string, currency string, "
               "amount decimal(18,2), budget_type string, _period string",
}
SESSION = {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
           "spark.sql.shuffle.partitions": "4", "spark.sql.session.timeZone": "UTC",
           "spark.sql.ansi.enabled": "true", "spark.sql.adaptive.enabled": "true"}


def read(spark, data: str, layout: str, name: str):
    path = os.path.join(data, name, "v1")
    if layout == "csv":
        return spark.read.schema(SCHEMAS[name]).option("header", "true").csv(path)
    return spark.read.parquet(path)


def pipeline(spark, data: str, layout: str, period: str, started_at: datetime.datetime, observe_delete=None,
             rate_type: str = "closing", keep=None, bridge_rows: bool = False, observe=None):
    """Pipeline P's output rows for ``period``, as a DataFrame (nothing computed yet). ``observe_delete``:
    called with the lines before the delete and its condition, returns the frame the lines go on from (the
    hand-written checks observe the deleted rows there: ``bench/handwritten_checks.py``). ``rate_type``: the
    FX rate joined. ``keep``: applied to each input as read for the period (``bench/handwritten_diff.py``
    shares them between two pipelines). ``bridge_rows``: the rows as the bridge of
    ``bench/handwritten_checks.py --bridge`` sums them: the lines the delete removes stay, marked
    ``_deleted``, and every line carries ``_before_1``/``_before_2``, ``amount_reporting`` before each update
    (NULL on the other rows); the caller drops both before writing. ``observe``: the hooks of
    ``bench/handwritten_bridge.py``, each returning the frame it was given with an observation:
    ``observe.lines(lines, deleted)`` on the lines before the delete (carrying ``_before_1``/``_before_2``,
    not written) and ``observe.created(rows, seq)`` on the rows operation 4 or 5 creates."""
    from pyspark.sql import functions as F
    keep = keep or (lambda frame, name: frame)
    start = datetime.date.fromisoformat(period + "-01")
    started = F.lit(started_at).cast("timestamp")
    gl = keep(read(spark, data, layout, "gl").where(F.col("_period") == period), "gl")
    rates = keep(read(spark, data, layout, "exchange_rates")
                 .where((F.col("_period_from") <= F.lit(start))
                        & (F.col("_period_to").isNull() | (F.col("_period_to") > F.lit(start)))), "exchange_rates")
    fx = (rates.where((F.col("to_currency") == "USD") & (F.col("rate_type") == rate_type))
          .select(F.col("from_currency").alias("currency"), "rate"))
    customers = keep(read(spark, data, layout, "customers"), "customers").select("customer_id", "segment", "region",
                                                                                  "is_active")

    # 1. convert to USD and enrich, for posted (non-manual) lines
    df = converted(F, gl, fx, customers, started,
                   last=[F.col("amount_reporting").alias("_before_1")] if bridge_rows or observe else [])
    # 2. enterprise discount
    if bridge_rows or observe:
        df = df.withColumn("_before_2", F.col("amount_reporting"))
    df = discounted(F, df, started)
    # 3. delete lines of unknown or inactive customers (not written, so simply dropped)
    unknown = unknown_customer(F)
    if observe is not None:
        observe_delete = observe.lines
    lines = df if bridge_rows else (df if observe_delete is None else observe_delete(df, unknown)).where(~unknown)
    df = df.where(~unknown)
    lines = lines.select(
        "journal_id", "line_number", "posting_date", "account_code", "cost_center_code", "customer_id", "currency",
        "amount_local", "amount_reporting", "description", "source_system",
        (unknown if bridge_rows else F.lit(False)).alias("_deleted"), "_updated_at", F.lit("").alias("_labels"), F.lit(GL_ID).alias("_source_dataset"),
        F.lit(0).alias("_operation_seq"), "customer_segment", "customer_region", "customer_active", "discounted",
        F.lit(None).cast("bigint").alias("line_count"), *(["_before_1", "_before_2"] if bridge_rows else []))
    # 4. totals per region and currency
    totals = (df.groupBy("customer_region", "currency")
              .agg(F.sum("amount_local").cast(DEC).alias("amount_local"),
                   F.sum("amount_reporting").cast(DEC).alias("amount_reporting"),
                   F.count("journal_id").alias("line_count")))
    totals = total_rows(F, totals, started)
    if observe is not None:
        totals = observe.created(totals, 4)
    # 5. budgets of the period summed per account, cost center and currency
    budgets = (keep(read(spark, data, layout, "budgets").where(F.col("_period") == period), "budgets")
               .groupBy("account_code", "cost_center_code", "currency")
               .agg(F.sum("amount").cast(DEC).alias("amount_local")))
    budgets = budget_rows(F, budgets, started)
    if observe is not None:
        budgets = observe.created(budgets, 5)
    return lines.unionByName(totals, allowMissingColumns=True).unionByName(budgets, allowMissingColumns=True)


def run(spark, data: str, layout: str, out: str, period: str, started_at: datetime.datetime) -> None:
    """Pipeline P for ``period``; 6. output: the period's partition, replaced."""
    target = os.path.join(out, f"_period={period}")
    shutil.rmtree(target, ignore_errors=True)
    pipeline(spark, data, layout, period, started_at).write.mode("overwrite").parquet(target)


def main() -> None:
    parser = script_arguments("pipeline P, hand-written, on source-shaped data", period="2026-02")
    parser.add_argument("--out", required=True)
    parser.add_argument("--driver-memory", default=None)
    parser.add_argument("--java-options", default=None,
                        help="more driver JVM options (cold_process --handwritten-archive: a class archive)")
    args = parser.parse_args()
    spark = session(args.driver_memory, args.java_options)
    run(spark, args.data, args.layout, args.out, args.period, started_at_of(args))
    spark.stop()


def session(driver_memory=None, java_options=None):
    """The script's own ``local[2]`` SparkSession with :data:`SESSION`'s settings."""
    return local_session(SESSION, "handwritten", driver_memory, java_options)


if __name__ == "__main__":
    main()

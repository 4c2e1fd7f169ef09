"""Pipeline P for a range of months, hand-written with the PySpark DataFrame API: a standalone script.

The range benchmark (``bench/range_cost.py``) runs it as its own ``python`` process, in two ways:

    python bench/handwritten_range.py --how loop    --data WS/data --layout flat --out DIR --periods 2026-01..2026-12
    python bench/handwritten_range.py --how onepass --data WS/data --layout flat --out DIR --periods 2026-01..2026-12
        [--started-at 2026-11-26T08:00:00.123] [--driver-memory 4g]

``loop``: one SparkSession, ``bench/handwritten_source.py``'s job once per month (what a user writes first).
``onepass``: every month in one pass, what an experienced engineer writes for a backfill: the GL and budgets
read once with the range's filter, the FX rate valid on each month's start joined per month, totals and
budgets grouped by month too, one partitioned write. Both write ``<out>/_period=<month>`` with the rows
and columns ``ledgerflow run pipeline_p`` writes for each month (except ``_row_id``); ``--started-at`` fixes
``_updated_at``. It imports nothing from ledgerflow.

``--bridge FILE`` (with ``onepass``): the one pass also records each month's bridge, the figures a fused
``ledgerflow run`` records for every period's run (``--bridge`` is the floor a fused range with its bridge is
measured against), taken as an engineer who knows pipeline P takes them once the output is written: the
changes of the two updates and of the delete grouped by month over the lines (a second, column-pruned pass:
each line keeps its reporting amount before each update, the deleted lines are counted before they are
dropped), and the rows operations 4 and 5 created and the output's value at the end grouped by month and
``_operation_seq`` from the files just written (column-pruned). The figures go to ``FILE`` as JSON: per month,
per measure, each operation's change and the output's value.
"""
from __future__ import annotations

import datetime
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import handwritten_source as one  # noqa: E402 - the single-month job, its schemas and session settings

DEC = one.DEC


def months(text: str) -> list[str]:
    """``2026-01..2026-12`` -> the months, in order."""
    first, _, last = text.partition("..")
    y, m = map(int, first.split("-"))
    out = [first]
    while out[-1] != (last or first):
        m = m % 12 + 1
        y += m == 1
        out.append(f"{y:04d}-{m:02d}")
    return out


def onepass(spark, data: str, layout: str, out: str, periods: list[str], started_at: datetime.datetime,
            bridge: str = None) -> None:
    """Every month of ``periods`` in one pass; with ``bridge``, each month's bridge written there (see the module
    docstring)."""
    from pyspark.sql import functions as F
    started = F.lit(started_at).cast("timestamp")
    starts = spark.createDataFrame([(p, datetime.date.fromisoformat(p + "-01")) for p in periods],
                                   "_period string, start date")
    gl = one.read(spark, data, layout, "gl").where(F.col("_period").isin(periods))
    fx = (one.read(spark, data, layout, "exchange_rates")
          .where((F.col("to_currency") == "USD") & (F.col("rate_type") == "closing"))
          .join(F.broadcast(starts), (F.col("_period_from") <= F.col("start"))
                & (F.col("_period_to").isNull() | (F.col("_period_to") > F.col("start"))))
          .select("_period", F.col("from_currency").alias("currency"), "rate"))
    customers = one.read(spark, data, layout, "customers").select("customer_id", "segment", "region", "is_active")

    df = one.converted(F, gl, fx, customers, started, join_keys=("_period", "currency"), first=("_period",),
                       last=[F.col("amount_reporting").alias("_before_1")] if bridge else [])
    if bridge:
        df = df.withColumn("_before_2", F.col("amount_reporting"))
    marked = one.discounted(F, df, started)  # the lines before the delete (with the bridge: their values before)
    df = marked.where(~one.unknown_customer(F))
    lines = df.select(
        "journal_id", "line_number", "posting_date", "account_code", "cost_center_code", "customer_id", "currency",
        "amount_local", "amount_reporting", "description", "source_system",
        F.lit(False).alias("_deleted"), "_updated_at", F.lit("").alias("_labels"),
        F.lit(one.GL_ID).alias("_source_dataset"), F.lit(0).alias("_operation_seq"), "customer_segment",
        "customer_region", "customer_active", "discounted", F.lit(None).cast("bigint").alias("line_count"), "_period")
    totals = (df.groupBy("_period", "customer_region", "currency")
              .agg(F.sum("amount_local").cast(DEC).alias("amount_local"),
                   F.sum("amount_reporting").cast(DEC).alias("amount_reporting"),
                   F.count("journal_id").alias("line_count")))
    totals = one.total_rows(F, totals, started, last=("_period",))
    budgets = (one.read(spark, data, layout, "budgets").where(F.col("_period").isin(periods))
               .groupBy("_period", "account_code", "cost_center_code", "currency")
               .agg(F.sum("amount").cast(DEC).alias("amount_local")))
    budgets = one.budget_rows(F, budgets, started, last=("_period",))
    for p in periods:
        shutil.rmtree(os.path.join(out, f"_period={p}"), ignore_errors=True)
    (lines.unionByName(totals).unionByName(budgets).write.mode("append").partitionBy("_period").parquet(out))
    if bridge:
        _record_bridge(spark, F, marked, out, periods, bridge)


def _record_bridge(spark, F, marked, out: str, periods: list[str], path: str) -> None:
    """Each month's bridge of pipeline P (see the module docstring), written to ``path`` as JSON."""
    import json
    zero = lambda c: F.coalesce(F.col(c), F.lit(0))  # noqa: E731 - a NULL counts as 0, as in ledgerflow's bridge
    unknown = one.unknown_customer(F)
    lines = {r["_period"]: r for r in marked.groupBy("_period").agg(
        (F.sum(zero("_before_2")) - F.sum(zero("_before_1"))).alias("c1"),
        (F.sum(zero("amount_reporting")) - F.sum(zero("_before_2"))).alias("c2"),
        F.count_if(unknown).alias("n3"), F.sum(F.when(unknown, F.col("amount_local"))).alias("l3"),
        F.sum(F.when(unknown, F.col("amount_reporting"))).alias("r3")).collect()}
    written: dict = {}
    for r in (spark.read.parquet(out).where(F.col("_period").isin(periods) & ~F.col("_deleted"))
              .groupBy("_period", "_operation_seq")
              .agg(F.count(F.lit(1)).alias("n"), F.sum("amount_local").alias("l"),
                   F.sum("amount_reporting").alias("r")).collect()):
        written.setdefault(r["_period"], {})[r["_operation_seq"]] = r
    figures = {}
    for p in periods:
        ln, wr = lines.get(p), written.get(p, {})
        got = lambda seq, k: (wr[seq][k] if seq in wr else None)  # noqa: E731
        end = {k: sum((w[k] or 0) for w in wr.values()) for k in ("n", "l", "r")}
        figures[p] = {
            "count": {"changes": {1: 0, 2: 0, 3: -(ln["n3"] if ln else 0), 4: got(4, "n") or 0, 5: got(5, "n") or 0},
                      "output_value": end["n"]},
            "SUM(amount_local)": {"changes": {1: 0, 2: 0, 3: -((ln and ln["l3"]) or 0), 4: got(4, "l") or 0,
                                              5: got(5, "l") or 0}, "output_value": end["l"]},
            "SUM(amount_reporting)": {"changes": {1: (ln and ln["c1"]) or 0, 2: (ln and ln["c2"]) or 0,
                                                  3: -((ln and ln["r3"]) or 0), 4: got(4, "r") or 0,
                                                  5: got(5, "r") or 0}, "output_value": end["r"]}}
    with open(path, "w") as fh:
        json.dump(figures, fh, indent=1, default=str)


def main() -> None:
    parser = one.script_arguments("pipeline P over a range of months, hand-written", period=None)
    parser.add_argument("--how", choices=["loop", "onepass"], required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--periods", default="2026-01..2026-12")
    parser.add_argument("--driver-memory", default=None)
    parser.add_argument("--bridge", default=None, help="with onepass: write each month's bridge here (JSON)")
    args = parser.parse_args()
    started_at = one.started_at_of(args)
    spark = one.local_session(one.SESSION, f"handwritten-{args.how}", args.driver_memory)
    periods = months(args.periods)
    if args.how == "loop":
        for p in periods:
            one.run(spark, args.data, args.layout, args.out, p, started_at)
    else:
        onepass(spark, args.data, args.layout, args.out, periods, started_at, args.bridge)
    spark.stop()


if __name__ == "__main__":
    main()

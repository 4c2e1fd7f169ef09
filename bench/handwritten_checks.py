"""Pipeline P with issue 29's six checks, hand-written with the PySpark DataFrame API: a standalone script.

What an experienced engineer writes for the checks ``bench.checks_cost`` declares, evaluated before the
rows are published, as cheaply as the DataFrame API allows (``bench/checks_floor.py`` times it against
``bench/handwritten_source.py``, the same pipeline without checks):

    python bench/handwritten_checks.py --data WS/data --layout flat --out DIR --period 2026-02

- the two ``expect`` rules, ``not_null`` and the output's side of the ``reconcile`` (count and
  ``SUM(amount_local)`` of the written rows, and of the rows the aggregate and the append made) are counted
  while the rows are written: one ``observe`` (Spark's ``CollectMetrics``) on the written frame;
- the rows the delete removes are counted by a second ``observe`` on the lines before the delete;
- ``unique`` on the input's line key and the input's side of the ``reconcile`` are one aggregation of the
  input after the period filter (per key: rows and amount; then their totals and the keys of more than one
  row), run in a thread beside the write;
- ``balanced`` (``severity: warn``) is one aggregation of the written rows read back from the staging folder;
- the rows are written to a staging folder and moved into place only when no failing check failed (exit 4
  otherwise, nothing published).

It checks no more than the six checks ask (no amount impact of a violation); ``--bridge`` adds the rest of the
bridge the contract asks of a run with checks (the SUM of ``amount_reporting`` at each point).
"""
from __future__ import annotations

import datetime
import os
import shutil
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from handwritten_common import script_arguments, started_at_of  # noqa: E402  (scripts beside this one)
from handwritten_source import pipeline, read, session  # noqa: E402


def checked_run(spark, data: str, layout: str, out: str, period: str, started_at: datetime.datetime,
                bridge: bool = False) -> tuple[list[str], dict]:
    """Pipeline P for ``period`` with the six checks: (the failed checks' messages, empty when the rows were
    published; the bridge: measure -> {"input", each operation's seq, "output"} -> value).
    ``bridge``: also the rest of the run's bridge as the contract has it, the SUM of ``amount_reporting`` at
    each point (before and after each update, removed by the delete, made by the aggregate and the append,
    written): the deleted lines stay in the rows until the observation, which sees every point at once."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F
    deleted, written = Observation("deleted"), Observation("written")
    seq, amount, reporting = F.col("_operation_seq"), F.col("amount_local"), F.col("amount_reporting")
    gone = F.col("_deleted") if bridge else F.lit(False)

    def observe_delete(frame, unknown):
        return frame.observe(deleted, F.count_if(unknown).alias("n"), F.sum(F.when(unknown, amount)).alias("s"))

    def live(value, cond=None):
        cond = ~gone if cond is None else ~gone & cond
        return F.sum(F.when(cond, value)) if bridge else F.sum(value if cond is None else F.when(cond, value))
    more = [live(reporting).alias("r"), live(reporting, seq == 4).alias("r4"), live(reporting, seq == 5).alias("r5"),
            F.count_if(gone).alias("dn"), F.sum(F.when(gone, amount)).alias("ds"),
            F.sum(F.when(gone, reporting)).alias("dr"), F.sum("_before_1").alias("before_1"),
            F.sum("_before_2").alias("before_2"), F.sum(F.when(seq == 0, reporting)).alias("after_2")] if bridge else []
    rows = pipeline(spark, data, layout, period, started_at, None if bridge else observe_delete, bridge_rows=bridge)
    rows = rows.observe(
        written, F.count_if(~gone).alias("n"), live(amount).alias("s"), *more,
        F.count_if(~gone & (seq == 4)).alias("n4"), live(amount, seq == 4).alias("s4"),
        F.count_if(~gone & (seq == 5)).alias("n5"), live(amount, seq == 5).alias("s5"),
        F.count_if(~gone & F.col("currency").isNull()).alias("currency_known"),
        F.count_if(~gone & ~F.coalesce(F.col("line_count").isNull() | (F.col("line_count") >= 0), F.lit(False)))
        .alias("counts_not_negative"),
        F.count_if(~gone & (amount.isNull() | F.col("currency").isNull())).alias("amounts_present"))
    if bridge:
        rows = rows.where(~gone).drop("_before_1", "_before_2")
    found: dict = {}

    def input_checks() -> None:  # unique on the line key, and the reconcile's input: one aggregation
        gl = read(spark, data, layout, "gl").where(F.col("_period") == period)
        per_key = gl.groupBy("journal_id", "line_number").agg(F.count(F.lit(1)).alias("n"),
                                                              F.sum("amount_local").alias("s"))
        found["input"] = per_key.agg(F.sum("n").alias("n"), F.sum("s").alias("s"),
                                     F.count_if(F.col("n") > 1).alias("duplicated")).collect()[0]
        if found["input"]["duplicated"]:
            found["keys"] = per_key.where(F.col("n") > 1).limit(5).collect()
    thread = threading.Thread(target=input_checks)
    thread.start()
    target = os.path.join(out, f"_period={period}")
    staging = os.path.join(out, f"_staging_{period}")
    shutil.rmtree(staging, ignore_errors=True)
    rows.write.parquet(staging)
    thread.join()
    w, i = written.get, found["input"]
    d = {"n": w["dn"], "s": w["ds"], "r": w["dr"]} if bridge else deleted.get
    failed = [f"{name}: {w[name]} rows" for name in ("currency_known", "counts_not_negative", "amounts_present")
              if w[name]]
    if i["duplicated"]:
        failed.append(f"one_row_per_line: {i['duplicated']} keys, e.g. {found['keys'][0]}")
    zero = lambda value: value or 0  # noqa: E731  (a sum of no values is 0)
    figures = {"count": {"input": i["n"], 3: -d["n"], 4: w["n4"], 5: w["n5"], "output": w["n"]},
               "SUM(amount_local)": {"input": zero(i["s"]), 3: -zero(d["s"]), 4: zero(w["s4"]), 5: zero(w["s5"]),
                                     "output": zero(w["s"])}}
    for measure, points in figures.items():
        explained = points["input"] + sum(points[seq] for seq in (3, 4, 5))
        if explained != points["output"]:
            failed.append(f"control_totals: {measure} explained {explained}, written {points['output']}")
    if bridge:  # SUM(amount_reporting) from the input to the output, each update's change too
        b1, b2, a2 = (zero(w[k]) for k in ("before_1", "before_2", "after_2"))
        figures["SUM(amount_reporting)"] = {"input": b1, 1: b2 - b1, 2: a2 - b2, 3: -zero(d["r"]), 4: zero(w["r4"]),
                                            5: zero(w["r5"]), "output": zero(w["r"])}
    unbalanced = (spark.read.parquet(staging).groupBy("customer_region", "currency")
                  .agg(F.sum("amount_local").alias("s")).where(F.col("s") != 0).orderBy(F.abs("s").desc()).collect())
    if unbalanced:  # severity warn: reported, the rows are published
        print(f"warning: regions_balance: {len(unbalanced)} groups do not balance, e.g. {unbalanced[0]}")
    if failed:
        shutil.rmtree(staging)
        return failed, figures
    shutil.rmtree(target, ignore_errors=True)
    os.replace(staging, target)
    return [], figures


def main() -> int:
    parser = script_arguments("pipeline P with six checks, hand-written, on source-shaped data", period="2026-02")
    parser.add_argument("--out", required=True)
    parser.add_argument("--bridge", action="store_true", help="record the whole bridge too (SUM(amount_reporting))")
    args = parser.parse_args()
    spark = session()
    failed, figures = checked_run(spark, args.data, args.layout, args.out, args.period, started_at_of(args),
                                  args.bridge)
    spark.stop()
    for measure, points in figures.items():
        print(f"bridge of {measure}: " + ", ".join(f"{k if isinstance(k, str) else f'operation {k}'} {v}"
                                                  for k, v in points.items()))
    for message in failed:
        print(f"check failed: {message}", file=sys.stderr)
    return 4 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

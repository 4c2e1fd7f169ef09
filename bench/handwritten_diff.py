"""A data diff of pipeline P hand-written with the PySpark DataFrame API: a standalone script.

What an experienced engineer writes to see how pipeline P's numbers move when its FX join takes the
average rate instead of the closing one (``bench.diff_data_cost``'s change), on the same inputs, nothing
written: ``bench/diff_floor.py`` times it against ``bench/handwritten_source.py`` (one run of pipeline P).

    python bench/handwritten_diff.py --data WS/data --layout flat --period 2026-01

- both sides are ``handwritten_source.pipeline``, in one session; each input is read once and kept (a
  lazy ``localCheckpoint``) for both sides;
- rows are matched on their identity (the operation that made them and its key columns: the line key, the
  total's group, the budget's group), a full outer join;
- one aggregation gives the rows added, removed and changed, the changed rows per column and the decimal
  columns' totals on each side and their gross change (the sum of each row's absolute change, as ledgerflow
  reports it); one query over the kept joined rows gives up to 10 differing rows.

``--figures-only``: the aggregation alone, joined rows not kept, no sample rows: the least any comparison
that matches rows can do.
"""
from __future__ import annotations

import datetime
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from handwritten_common import script_arguments, started_at_of  # noqa: E402  (scripts beside this one)
from handwritten_source import pipeline, session  # noqa: E402

KEY = ["_operation_seq", "journal_id", "line_number", "customer_region", "currency", "account_code",
       "cost_center_code"]
IGNORED = {"_updated_at"}


def data_diff(spark, data: str, layout: str, period: str, started_at: datetime.datetime,
              samples: bool = True) -> dict:
    """The figures of the diff (base: closing rate, head: average rate); ``samples``: and up to 10 differing
    rows (the joined rows kept for them)."""
    from pyspark.sql import functions as F
    kept: dict = {}

    def keep(frame, name):
        if name not in kept:
            kept[name] = frame.localCheckpoint(eager=False)
        return kept[name]
    sides = {}
    for side, rate in (("b", "closing"), ("h", "average")):
        rows = pipeline(spark, data, layout, period, started_at, rate_type=rate, keep=keep)
        identity = F.concat_ws("\x1f", *[F.coalesce(F.col(c).cast("string"), F.lit("\x00")) for c in KEY])
        columns = [c for c in rows.columns if c not in IGNORED]
        sides[side] = rows.select(identity.alias(f"{side}_key"), *[F.col(c).alias(f"{side}_{c}") for c in columns])
    decimals = [f.name for f in rows.schema.fields if f.name in columns and f.dataType.typeName() == "decimal"]
    joined = sides["b"].join(sides["h"], F.col("b_key") == F.col("h_key"), "full_outer")
    if samples:
        joined = joined.localCheckpoint(eager=False)
    both = F.col("b_key").isNotNull() & F.col("h_key").isNotNull()
    differs = {c: both & ~F.col(f"b_{c}").eqNullSafe(F.col(f"h_{c}")) for c in columns}
    any_differs = F.lit(False)
    for cond in differs.values():
        any_differs = any_differs | cond
    added, removed = F.col("b_key").isNull(), F.col("h_key").isNull()
    figures = joined.agg(F.count(F.lit(1)).alias("rows"), F.count_if(added).alias("added"),
                         F.count_if(removed).alias("removed"), F.count_if(any_differs).alias("changed"),
                         *[F.count_if(cond).alias(f"changed_{c}") for c, cond in differs.items()],
                         *[F.sum(f"{s}_{c}").alias(f"sum_{s}_{c}") for c in decimals for s in "bh"],
                         *[F.sum(F.abs(F.coalesce(f"h_{c}", F.lit(0)) - F.coalesce(f"b_{c}", F.lit(0))))
                           .alias(f"gross_{c}") for c in decimals]).collect()[0]
    rows = (joined.where(added | removed | any_differs).orderBy(F.coalesce("h_key", "b_key")).limit(10).collect()
            if samples else [])
    return {"figures": figures.asDict(), "samples": rows, "decimals": decimals}


def main() -> int:
    parser = script_arguments("pipeline P's data diff, hand-written, on source-shaped data", period="2026-01")
    parser.add_argument("--figures-only", action="store_true", help="no sample rows (the joined rows not kept)")
    args = parser.parse_args()
    spark = session()
    result = data_diff(spark, args.data, args.layout, args.period, started_at_of(args), samples=not args.figures_only)
    spark.stop()
    f = result["figures"]
    print(f"{f['rows'] - f['added']:,} -> {f['rows'] - f['removed']:,} rows: {f['added']} added, {f['removed']} "
          f"removed, {f['changed']} changed")
    for c in result["decimals"]:
        base, head = f[f"sum_b_{c}"] or 0, f[f"sum_h_{c}"] or 0
        print(f"  total {c}: {base:,} -> {head:,} (net {head - base:+,}, gross {f[f'gross_{c}'] or 0:,})")
    print(f"  changed rows per column: " + ", ".join(f"{k[8:]} {v}" for k, v in f.items()
                                                      if k.startswith("changed_") and v))
    print(f"  {len(result['samples'])} sample rows, the first: {result['samples'][0]['h_key'] if result['samples'] else '-'}")
    return 4 if f["added"] or f["removed"] or f["changed"] else 0


if __name__ == "__main__":
    sys.exit(main())

"""Pipeline P hand-written in PySpark, recording its whole bridge as cheaply as the DataFrame API allows: the
least the bridge can cost (``bench/bridge_cost.py --floor`` times it against ``bench/handwritten_source.py``).

    python bench/handwritten_bridge.py --data WS/data --layout flat|folders --out DIR --period 2026-02
        [--started-at 2026-11-26T08:00:00]

The bridge is the one a ledgerflow run records for pipeline P: ``count``, ``SUM(amount_local)`` and
``SUM(amount_reporting)`` of the rows written, as they were after the period filter, each operation's change
and as written. An engineer who knows the pipeline observes each figure where it is cheapest, in the one pass
that writes the output (``DataFrame.observe``; nothing read twice):

- the lines before the delete: each update's change of ``amount_reporting`` (one aggregate of each line's
  difference, the value before each update carried in a column that is not written) and what the delete
  removes (a count and two sums): 5 aggregates over every line;
- the totals (operation 4) and the budgets (operation 5) on their own few rows, before they join the lines:
  3 aggregates each;
- the written rows, under the write: 3 aggregates;
- the value after the period filter is the written value less every change.

It writes what ``bench/handwritten_source.py`` writes and prints the bridge as JSON (measure -> ``input``, each
operation's seq, ``output``), which the benchmark compares with ledgerflow's record. Imports nothing from
ledgerflow.
"""
from __future__ import annotations

import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from handwritten_common import script_arguments, started_at_of  # noqa: E402
from handwritten_source import pipeline, session  # noqa: E402

MEASURES = {"count": None, "SUM(amount_local)": "amount_local", "SUM(amount_reporting)": "amount_reporting"}


class Bridge:
    """The observations of the bridge (see the module docstring), and the bridge read from them."""

    def __init__(self):
        self.observed: dict = {}

    def _observe(self, df, name: str, *metrics):
        from pyspark.sql import Observation
        self.observed[name] = Observation(f"hand_bridge_{name}")
        return df.observe(self.observed[name], *metrics)

    def _totals(self, df, name: str):
        from pyspark.sql import functions as F
        return self._observe(df, name, F.count(F.lit(1)).alias("count"),
                             *[F.sum(c).alias(m) for m, c in MEASURES.items() if c])

    def lines(self, df, deleted):
        """The lines before the delete, observed: each update's change, what the delete removes."""
        from pyspark.sql import functions as F

        def moved(after, before):
            return F.sum(F.coalesce(F.col(after), F.lit(0)) - F.coalesce(F.col(before), F.lit(0)))
        return self._observe(df, "lines", moved("_before_2", "_before_1").alias("1"),
                             moved("amount_reporting", "_before_2").alias("2"),
                             F.count_if(deleted).alias("3|count"),
                             *[F.sum(F.when(deleted, F.col(c))).alias(f"3|{m}") for m, c in MEASURES.items() if c])

    def created(self, df, seq: int):
        """The rows operation ``seq`` creates, observed on their own."""
        return self._totals(df, f"op{seq}")

    def written(self, df):
        """The rows written, observed under the write."""
        return self._totals(df, "written")

    def figures(self) -> dict:
        """measure -> {"input", 1..5, "output"}: exact decimals as text, counts as ints."""
        from decimal import Decimal
        got = {name: o.get for name, o in self.observed.items()}
        out = {}
        for m in MEASURES:
            lines = got["lines"]
            changes = {1: lines["1"] if m == "SUM(amount_reporting)" else 0,
                       2: lines["2"] if m == "SUM(amount_reporting)" else 0,
                       3: -(lines[f"3|{m}"] or 0), 4: got["op4"][m] or 0, 5: got["op5"][m] or 0}
            written = got["written"][m] or 0
            value = Decimal(written) - sum(Decimal(v) for v in changes.values())
            out[m] = {"input": str(value), **{str(k): str(v) for k, v in changes.items()}, "output": str(written)}
        return out


def main() -> None:
    parser = script_arguments("pipeline P, hand-written, recording its bridge", period="2026-02")
    parser.add_argument("--out", required=True)
    parser.add_argument("--driver-memory", default=None)
    args = parser.parse_args()
    spark = session(args.driver_memory)
    bridge = Bridge()
    target = os.path.join(args.out, f"_period={args.period}")
    shutil.rmtree(target, ignore_errors=True)
    rows = pipeline(spark, args.data, args.layout, args.period, started_at_of(args), observe=bridge)
    bridge.written(rows).write.mode("overwrite").parquet(target)
    print("bridge " + json.dumps(bridge.figures(), sort_keys=True))
    spark.stop()


if __name__ == "__main__":
    main()

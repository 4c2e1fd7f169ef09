"""The designs of the run's bridge that ``bench/bridge_cost.py`` times, as a ledgerflow process:

    python bench/bridge_variants.py VARIANT --workspace WS run pipeline_p --period 2026-02

runs the ledgerflow CLI with the bridge's observation replaced by the design ``VARIANT`` (a benchmark
only: the shipped design is the CLI itself, ``per_point``). Each variant changes what
``adapters/run/bridge.py`` observes, nothing else:

- ``under_write``: no observation of the stage's rows; one observation of the output's written rows, under
  the write (the live filter and the projection below it, so pushed down as with no bridge): ``count`` and the
  SUM of every measured column. The value at the end only: the deleted rows and the values before each
  update never reach it, so each operation's change is not told.
- ``limbs``: the shipped observation with every decimal ``SUM(x)`` replaced by integral sums of its integer
  part and of its hundredths, both ``bigint`` (``CAST(x AS BIGINT)``; the hundredths through a double, exact
  below 45 trillion): what summing in two exact ``bigint`` limbs costs instead of ``Decimal`` (the figures
  are not put back together: cost only).
- ``write_scan``: no observation at all; the rows counted from the staged files' footers as every run
  counts them, and the SUM of every measured column from a column-pruned scan of the staged files after the
  write. The value at the end only.
- ``counts_only``: the shipped observation holding only its counts (no sum).
- ``one_count``: the shipped observation holding ``COUNT(1)`` alone: the least any observation of the
  stage's rows costs.
"""
from __future__ import annotations

import sys

VARIANTS = ("under_write", "limbs", "write_scan", "counts_only", "one_count")


def _limbs(sql: str) -> str:
    import sqlglot
    from sqlglot import exp

    def limb(node):
        if not isinstance(node, exp.Sum):
            return node
        x = node.this
        whole = exp.Cast(this=x.copy(), to=exp.DataType.build("bigint"))
        as_double = exp.Cast(this=x.copy(), to=exp.DataType.build("double"))
        whole_double = exp.Cast(this=whole.copy(), to=exp.DataType.build("double"))
        cents = exp.Cast(this=exp.Round(this=exp.Mul(this=exp.paren(exp.Sub(this=as_double, expression=whole_double)),
                                                     expression=exp.Literal.number(100))),
                         to=exp.DataType.build("bigint"))
        return exp.Add(this=exp.Sum(this=whole), expression=exp.Sum(this=cents))
    return sqlglot.parse_one(sql, read="spark").transform(limb).sql(dialect="spark")


def install(variant: str) -> None:
    """Replace the bridge's observation in this process by ``variant``'s (see the module docstring)."""
    from ledgerflow.adapters.run import bridge
    shipped = bridge.stage_metrics
    if variant in ("limbs", "counts_only", "one_count"):
        def metrics(plan, seqs):
            found = shipped(plan, seqs)
            if variant == "counts_only":
                return [(n, s) for n, s in found if n.endswith("|count")]
            if variant == "one_count":
                return found[:1] and [(found[0][0], "COUNT(1)")]
            return [(n, _limbs(s)) for n, s in found]
        bridge.stage_metrics = metrics
        return
    bridge.BridgeObserver.observe_stage = lambda self, df, stage, outputs: df
    if variant == "under_write":
        def observe_output(self, df, seq):
            from pyspark.sql import Observation
            from pyspark.sql import functions as F
            self.frames[seq] = df
            observation = Observation(f"lf_bridge_{self.tag}_out_{seq}")
            self.outputs[seq] = observation
            return df.observe(observation, *[F.expr(s).alias(n) for n, s in bridge.output_metrics(self.plan, seq)])
        bridge.BridgeObserver.observe_output = observe_output
        return
    if variant == "write_scan":
        from ledgerflow.adapters.commit import staging
        counted = staging.count_rows

        def count_rows(df, folder, fmt):
            from pyspark.sql import functions as F
            rows = counted(df, folder, fmt)
            measured = [c for c, t in df.dtypes if t.startswith("decimal")]
            df.sparkSession.read.parquet(folder).agg(*[F.sum(c) for c in measured]).collect()
            return rows
        staging.count_rows = count_rows
        bridge.BridgeObserver.observe_output = lambda self, df, seq: self.frames.setdefault(seq, df)
        return
    raise SystemExit(f"unknown variant {variant!r}: one of {', '.join(VARIANTS)}")


def main() -> None:
    """``python bench/bridge_variants.py VARIANT ARGS...``: the ledgerflow CLI with ``ARGS``, under ``VARIANT``."""
    variant, args = sys.argv[1], sys.argv[2:]
    install(variant)
    from ledgerflow.adapters.cli import main as cli
    sys.argv = ["ledgerflow", *args]
    cli()


if __name__ == "__main__":
    main()

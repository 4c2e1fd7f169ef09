"""The bridge of a fused range (docs/fused.md, "The bridge"): each period's figures from the one pass that
computes the range, never from another Spark job.

A period's run observes, on the working rows at the end of each stage an output reads, the aggregates of
:func:`ledgerflow.compiler.bridge.stage_metrics` (and on each output's own rows its
:func:`~ledgerflow.compiler.bridge.output_metrics`). The fused stage holds the rows of every period,
each carrying its period in ``__lf_period_identifier`` and the bridge's columns, so a period's figure is the
same aggregate over the rows of that period. The periods are known before anything runs, so one observation
of the fused stage holds every period's figures: each aggregate once per period, restricted to the period's
rows (``SUM(IF(period = 'P', x, NULL))``, ``COUNT_IF(period = 'P' AND c)``). Spark refuses a ``FILTER``
clause in an observed metric, hence the condition inside the aggregate.

:func:`period_metrics` makes the restricted aggregates, :func:`period_values` reads one period's figures out
of the observed values under the names the period's own run would have.
"""
from __future__ import annotations

from typing import Sequence

import sqlglot
from sqlglot import exp

from .fused import PERIOD_KEY
from .periods import Period
from .render import pretty


def metric_for(name: str, index: int) -> str:
    """The name under which a fused observation holds metric ``name`` of the ``index``-th period."""
    return f"{name}@{index}"


def _in_period(node: exp.Expression, period: Period) -> exp.Expression:
    """``node`` (an aggregate expression in Spark SQL) with every aggregate taken over ``period``'s rows only."""
    mine = exp.EQ(this=exp.column(PERIOD_KEY, quoted=True), expression=exp.Literal.string(period.identifier))
    for agg in list(node.find_all(exp.AggFunc)):
        if isinstance(agg, exp.Count) and isinstance(agg.this, exp.Star):
            new: exp.Expression = exp.CountIf(this=mine.copy())
        elif isinstance(agg, exp.CountIf):
            new = exp.CountIf(this=exp.and_(mine.copy(), exp.paren(agg.this.copy())))
        elif isinstance(agg, (exp.Sum, exp.Count)) and not agg.args.get("distinct"):
            new = agg.__class__(this=exp.If(this=mine.copy(), true=agg.this.copy(), false=exp.Null()))
        else:  # never a figure made up: an aggregate this rewrite does not know is a bug to see
            raise ValueError(f"the fused bridge cannot restrict {agg.sql('spark')} to a period")
        if agg is node:
            return new
        agg.replace(new)
    return node


def period_metrics(metrics: Sequence[tuple[str, str]], periods: Sequence[Period]) -> list[tuple[str, str]]:
    """Every ``(name, Spark SQL aggregate)`` of ``metrics`` once per period of ``periods``, restricted to the
    period's rows, named :func:`metric_for`."""
    out = []
    for name, sql in metrics:
        tree = sqlglot.parse_one(sql, read="spark")
        for i, period in enumerate(periods):
            out.append((metric_for(name, i), pretty(_in_period(tree.copy(), period))))
    return out


def period_values(values: dict, names: Sequence[str], index: int) -> dict:
    """The figures of the ``index``-th period out of a fused observation's ``values``, under their own
    ``names`` (what the period's own run observes)."""
    return {name: values.get(metric_for(name, index)) for name in names}

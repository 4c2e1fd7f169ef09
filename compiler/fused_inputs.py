"""Reading an input for a fused range (issue 30): each location read once, its rows paired with the
periods of the range whose own filter they pass.

:func:`location_query` reads a location for the whole range, joined to :data:`~.fused.PERIODS_VIEW`.
"""
from __future__ import annotations

import datetime
from typing import Optional, Sequence

import sqlglot
from sqlglot import exp

from . import periods as period_filters
from .fused_rewrite import PERIOD_KEY, PERIODS_VIEW, NotFusable, bind_period, period_columns, quoted_column, substitute
from .periods import Period


def _range_prefilter(temporal_mode: str, periods: Sequence[Period]) -> Optional[exp.Expression]:
    """A condition on a row's own columns that holds for every row some period of ``periods`` reads (a
    superset: the join to the periods assigns rows exactly), simple enough to push into the scan: per
    period, the pushable first conjunct of its period filter, or its as-of filter, with literals."""
    condition = period_filters.period_filter(temporal_mode)
    if condition is None:
        return None
    # a period filter is (A) AND (B), A `_period = :id OR (_period >= lo AND _period < hi)` (pushable)
    pushable = condition.this if temporal_mode == "period" else condition
    parts = []
    for run in _consecutive(periods) if temporal_mode == "period" else [[p] for p in periods]:
        if len(run) == 1:
            parts.append(bind_period(pushable, run[0]))
        else:  # one range of strings instead of a disjunction per period, which Spark evaluates on every row
            column = exp.column("_period", quoted=True)
            parts.append(exp.and_(exp.GTE(this=column, expression=exp.Literal.string(run[0].identifier)),
                                  exp.LT(this=column.copy(), expression=exp.Literal.string(run[-1].identifier + "."))))
    return exp.or_(*[exp.paren(p) for p in parts]) if len(parts) > 1 else parts[0]


def _consecutive(periods: Sequence[Period]) -> list[list[Period]]:
    """``periods`` in runs: consecutive months, or consecutive days, together (what each reads lies between the
    first's identifier and the last's followed by '.', among identifiers that are not periods at all); a
    quarter or year alone (what it reads is two ranges)."""
    runs: list[list[Period]] = []
    for p in sorted(periods, key=lambda x: (x.level, x.start)):
        last = runs[-1][-1] if runs else None
        if (last is not None and p.level == last.level and p.level in ("month", "day")
                and p.start == last.end + datetime.timedelta(days=1)):
            runs[-1].append(p)
        else:
            runs.append([p])
    return runs


# The identifiers a period's filter accepts all begin with its own first characters: a day's 10, a
# month's 7 (the month and its days), a year's or a quarter's 4 (a quarter's months do not begin with
# `2026-Q1`). Equal prefixes are a necessary condition, which Spark joins on by hash; the period
# filter stays as the join's residual, so a row pairs only with the periods it can belong to instead of
# every period of the range (a nested loop over rows x periods, a regular expression each).
_PREFIX = {"day": 10, "month": 7, "quarter": 4, "year": 4}


def _shared_prefix(periods: Sequence[Period], rows: str, p: str) -> exp.Expression:
    """``SUBSTRING(rows._period, 1, k) = SUBSTRING(p.<PERIOD_KEY>, 1, k)``, k the prefix every period of
    ``periods`` shares with the identifiers it reads."""
    k = min(_PREFIX[x.level] for x in periods)

    def prefix(column: exp.Expression) -> exp.Expression:
        return exp.Substring(this=column, start=exp.Literal.number(1), length=exp.Literal.number(k))

    return exp.EQ(this=prefix(quoted_column("_period", rows)), expression=prefix(quoted_column(PERIOD_KEY, p)))


def _reparsed(node: exp.Expression) -> str:
    return sqlglot.parse_one(node.sql("spark"), read="spark").sql("spark")


def location_query(normalised_sql: str, temporal_mode: str, periods: Sequence[Period], subset: bool) -> str:
    """One location's rows for a range: ``normalised_sql`` (what ``loading.normalised_select`` gives for
    it, with or without the period filter) with its period filter replaced by a pushed filter covering
    ``periods`` (before any row id or ordinal is computed: ids depend on the row, never on which rows
    were read, and identical rows pass or fail a period filter together), then each row joined to every
    period of ``periods`` whose own filter it passes, carrying :data:`PERIOD_COLUMNS`. ``subset``: the
    location is read by these periods only, not by every period of :data:`PERIODS_VIEW`."""
    tree = sqlglot.parse_one(normalised_sql, read="spark")
    prefilter = _range_prefilter(temporal_mode, periods)
    per_period = period_filters.period_filter(temporal_mode)
    for select in tree.find_all(exp.Select):
        source = select.args.get("from_") or select.args.get("from")
        where = select.args.get("where")
        if source is not None and source.this.alias == "normalised" and where is not None:
            if per_period is None or where.this.sql("spark") != _reparsed(per_period):
                raise NotFusable("an input read of unexpected shape")
            select.set("where", exp.Where(this=prefilter))
    rows, p = "__lf_rows", "__lf_p"
    condition = period_filters.period_filter(temporal_mode, rows)
    on = substitute(condition, p) if condition is not None else exp.true()
    if temporal_mode == "period":
        on = exp.and_(_shared_prefix(periods, rows, p), exp.paren(on))
    if subset:
        ids = exp.In(this=quoted_column(PERIOD_KEY, p), expressions=[exp.Literal.string(x.identifier) for x in periods])
        on = exp.and_(ids, exp.paren(on)) if condition is not None else ids
    query = exp.select(exp.Column(this=exp.Star(), table=exp.to_identifier(rows)),
                       *period_columns(p)).from_(tree.subquery(exp.to_identifier(rows, quoted=True)))
    query = query.join(exp.Table(this=exp.to_identifier(PERIODS_VIEW, quoted=True),
                                 alias=exp.TableAlias(this=exp.to_identifier(p, quoted=True))), on=on, join_type="INNER")
    return query.sql("spark")

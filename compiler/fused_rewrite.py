"""The rewrite of each step for a fused range (:mod:`.fused`; each operation kind's registry entry names its
rewrite, :mod:`.kinds.operations`): markers become the row's period columns, every relation carries them,
joins match on the period, aggregates group by it. Raises :class:`NotFusable` naming a shape it does not
prove equivalent."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

from sqlglot import exp

from . import periods as period_filters
from .lower_steps import OutputStep, Step
from .periods import Period
from .plan import AggregatePlan, AppendPlan, OperationPlan, UpdatePlan

# marker -> the column carrying its value on every fused row
PERIOD_COLUMNS = {"period_identifier": "__lf_period_identifier", "period_start": "__lf_period_start",
                  "period_end": "__lf_period_end"}
PERIOD_KEY = PERIOD_COLUMNS["period_identifier"]
PERIODS_VIEW = "lf_periods"  # the periods of the range, one row each (periods_query)


class NotFusable(Exception):
    """The rewrite met a construct it does not prove equivalent (the message names it)."""


@dataclass(frozen=True)
class RewriteContext:
    """What a step's rewrite needs beyond the step: the views read once for the range, without periods
    (``fused.invariant_views``) and the join views hinted for broadcast (``FusedProject.broadcast``)."""

    invariant: frozenset[str] = frozenset()
    broadcast: frozenset[str] = frozenset()


# ------------------------------------------------------------------------------------ helpers
def quoted_column(name: str, table: Optional[str] = None) -> exp.Column:
    """The quoted column ``name`` (of ``table`` when given)."""
    return exp.column(name, table=table, quoted=True)


def period_columns(table: Optional[str] = None) -> list[exp.Expression]:
    """The period columns (of ``table`` when given), in the order of :data:`PERIOD_COLUMNS`."""
    return [quoted_column(c, table) for c in PERIOD_COLUMNS.values()]


def period_markers(node: exp.Expression) -> list[exp.Placeholder]:
    """The period parameters (``:period_*``) under ``node``."""
    return [p for p in node.find_all(exp.Placeholder) if p.name in PERIOD_COLUMNS]


def substitute(node: exp.Expression, table: Optional[str] = None) -> exp.Expression:
    """``node`` (in place) with every period marker replaced by the period column of the row (of
    ``table`` when given); ``:run_started_at`` stays."""
    for marker in period_markers(node):
        replacement = quoted_column(PERIOD_COLUMNS[marker.name], table)
        if marker is node:
            return replacement
        marker.replace(replacement)
    return node


def period_literal(value) -> exp.Expression:
    """A period value as a literal: an identifier as a string, a date as ``CAST('...' AS DATE)``."""
    if isinstance(value, str):
        return exp.Literal.string(value)
    return exp.Cast(this=exp.Literal.string(value.isoformat()), to=exp.DataType.build("date"))


def bind_period(node: exp.Expression, period: Period) -> exp.Expression:
    """A copy of ``node`` with the period markers replaced by ``period``'s values (literals)."""
    values = {"period_identifier": period.identifier, "period_start": period.start, "period_end": period.end}
    node = node.copy()
    for marker in period_markers(node):
        literal = period_literal(values[marker.name])
        if marker is node:
            return literal
        marker.replace(literal)
    return node


def _add_columns(select: exp.Select, columns: Iterable[exp.Expression]) -> None:
    if not isinstance(select, exp.Select):
        raise NotFusable(f"a query of unexpected shape ({type(select).__name__})")
    select.set("expressions", [*select.expressions, *columns])


def _from_name(select: exp.Select) -> str:
    source = select.args.get("from_") or select.args.get("from")
    return source.this.name if source is not None else ""


def _set_from(select: exp.Select, relation: exp.Expression) -> None:
    key = "from_" if "from_" in select.arg_types else "from"
    select.set(key, exp.From(this=relation))


def _group(select: exp.Select, columns: list[exp.Expression]) -> None:
    group = select.args.get("group")
    existing = list(group.expressions) if group is not None else []
    select.set("group", exp.Group(expressions=[*existing, *columns]))


def _branches(query: exp.Expression) -> tuple[exp.Select, exp.Select]:
    if not isinstance(query, exp.Union) or query.args.get("distinct"):
        raise NotFusable("a UNION of unexpected shape")
    return query.this, query.expression


def _cte(step: Step, name: str) -> exp.CTE:
    for c in step.ctes:
        if c.alias == name:
            return c
    raise NotFusable(f"operation {step.seq}: no CTE {name}")


# ----------------------------------------------------------------------- per kind of step
def _plain(select: exp.Select, table: Optional[str] = None) -> None:
    """A select over one relation carrying the period columns: markers substituted, columns kept."""
    substitute(select, table)
    _add_columns(select, period_columns(table))


def _global_aggregate(select: exp.Select) -> None:
    """``SELECT aggregates FROM rel WHERE cond`` (no GROUP BY) -> one row per period of the range, even for
    a period without rows: the periods LEFT JOIN the selected rows, every aggregate FILTERed to real rows
    (an empty period's aggregates are then those of no rows, as its own run computes them)."""
    if select.args.get("group") is not None or select.args.get("having") is not None:
        raise NotFusable("an aggregation of unexpected shape")
    source = select.args.get("from_") or select.args.get("from")
    if source is None or select.args.get("joins"):
        raise NotFusable("an aggregation of unexpected shape")
    rows = exp.select(exp.Star()).from_(source.this.copy())
    where = select.args.get("where")
    if where is not None:
        rows = rows.where(where.this.copy())
        select.set("where", None)
    rows_alias, periods_alias = "__lf_rows", "__lf_p"
    real = exp.Not(this=exp.Is(this=quoted_column(PERIOD_KEY, rows_alias), expression=exp.Null()))
    for agg in list(select.find_all(exp.AggFunc)):
        if isinstance(agg.parent, exp.Filter):
            raise NotFusable("an aggregate with a FILTER clause")
        agg.replace(exp.Filter(this=agg.copy(), expression=exp.Where(this=real.copy())))
    joined = exp.Join(this=rows.subquery(exp.to_identifier(rows_alias, quoted=True)), side="LEFT",
                      on=exp.EQ(this=quoted_column(PERIOD_KEY, rows_alias), expression=quoted_column(PERIOD_KEY, periods_alias)))
    _set_from(select, exp.Table(this=exp.to_identifier(PERIODS_VIEW, quoted=True),
                                alias=exp.TableAlias(this=exp.to_identifier(periods_alias, quoted=True))))
    select.set("joins", [joined])
    substitute(select, rows_alias)
    _add_columns(select, period_columns(periods_alias))
    _group(select, period_columns(periods_alias))


def _aggregation(select: exp.Select, grouped: bool) -> None:
    if grouped:
        substitute(select)
        _add_columns(select, period_columns())
        _group(select, period_columns())
    else:
        _global_aggregate(select)


def _without_period_filter(select: exp.Select, temporal_mode: str) -> None:
    """Drop from ``select``'s WHERE the conjuncts of its view's period (or as-of) filter: every row of a fused
    input view carries the period whose filter it passed (``fused_inputs.location_query``), so they hold
    on every row, and evaluating them again costs a regular expression per row."""
    condition = period_filters.period_filter(temporal_mode)
    where = select.args.get("where")
    if condition is None or where is None:
        return
    parts = {p.sql("spark") for p in condition.flatten()}
    kept = [c for c in where.this.flatten() if c.unnest().sql("spark") not in parts and c.sql("spark") not in parts]
    select.set("where", exp.Where(this=exp.and_(*kept)) if kept else None)


def rewrite_input(step: Step, temporal_mode: str) -> None:
    """The input's CTE for a range: its period filter dropped (every fused input row carries its period)."""
    (cte,) = step.ctes
    _without_period_filter(cte.this, temporal_mode)
    _plain(cte.this)


def rewrite_update(plan: UpdatePlan, step: Step, context: RewriteContext) -> None:
    """An update's CTEs for a range: every join matched on the period too (its fan-out counted per period),
    but a join to an invariant view, read once; joins to broadcast views hinted."""
    invariant, broadcast = context.invariant, context.broadcast
    main = _cte(step, plan.writes).this
    hinted = [j.alias for j in plan.joins if j.read.view in broadcast and j.read.view not in invariant]
    if hinted:  # see FusedProject.broadcast
        if main.args.get("hint") is not None:
            raise NotFusable(f"operation {plan.seq}: a query with hints")
        main.set("hint", exp.Hint(expressions=[exp.Anonymous(
            this="BROADCAST", expressions=[exp.to_identifier(a, quoted=True) for a in hinted])]))
    table = plan.working_alias if plan.joins else None
    on_period: list[tuple[str, exp.Expression]] = []
    for j in plan.joins:
        outer = _cte(step, j.writes).this
        inner = outer.args["from_"].this if "from_" in outer.args else outer.args["from"].this
        if not isinstance(inner, exp.Subquery) or not isinstance(inner.this, exp.Select):
            raise NotFusable(f"operation {plan.seq}: join '{j.alias}' of unexpected shape")
        if j.read.view in invariant:  # the same rows in every period: joined on its key alone, counted once
            if period_markers(outer):
                raise NotFusable(f"operation {plan.seq}: join '{j.alias}' depends on the period")
            continue
        _without_period_filter(inner.this, j.read.dataset.temporal_mode)
        _plain(inner.this)
        side = f"{j.alias}__{PERIOD_KEY}"
        windows = [w for w in outer.find_all(exp.Window)]
        if len(windows) != 1:
            raise NotFusable(f"operation {plan.seq}: join '{j.alias}' without its fan-out count")
        windows[0].set("partition_by", [*(windows[0].args.get("partition_by") or []), quoted_column(PERIOD_KEY)])
        substitute(outer)
        _add_columns(outer, [exp.alias_(quoted_column(PERIOD_KEY), side, quoted=True)])
        on_period.append((j.alias, exp.EQ(this=quoted_column(PERIOD_KEY, table), expression=quoted_column(side, j.alias))))
    substitute(main, table)
    _add_columns(main, period_columns(table))
    invariant_aliases = {j.alias for j in plan.joins if j.read.view in invariant}
    for join in main.args.get("joins") or []:
        alias = join.alias_or_name
        match = [c for a, c in on_period if a == alias]
        if alias in invariant_aliases and not match:
            continue
        if len(match) != 1:
            raise NotFusable(f"operation {plan.seq}: a join of unexpected shape")
        join.set("on", exp.and_(exp.paren(join.args["on"].copy()), match[0]))
    if len(main.args.get("joins") or []) != len(plan.joins):
        raise NotFusable(f"operation {plan.seq}: joins of unexpected shape")


def rewrite_aggregate(plan: AggregatePlan, step: Step, context: RewriteContext) -> None:
    """An aggregate's CTEs for a range: its summary grouped by the period too."""
    _aggregation(_cte(step, f"op_{plan.seq:03d}_summary").this, bool(plan.group_by))
    existing, appended = _branches(_cte(step, plan.writes).this)
    _plain(existing)
    _plain(appended)


def rewrite_append(plan: AppendPlan, step: Step, context: RewriteContext) -> None:
    """An append's CTEs for a range: the source rows carry their period, an aggregation groups by it too."""
    _plain(_cte(step, f"op_{plan.seq:03d}_source").this)
    if plan.summary is not None:
        _aggregation(_cte(step, f"op_{plan.seq:03d}_aggregated").this, bool(plan.group_by))
    existing, appended = _branches(_cte(step, plan.writes).this)
    _plain(existing)
    _plain(appended)


def rewrite_delete(plan: OperationPlan, step: Step, context: RewriteContext) -> None:
    """A delete's CTE for a range: the period columns carried through."""
    (cte,) = step.ctes
    _plain(cte.this)


def rewrite_output(plan: OperationPlan, step: OutputStep, context: RewriteContext) -> None:
    """An output's query for a range: it carries the period columns (the runner writes each period's rows)."""
    _plain(step.query)

"""The SQL of checks (docs/checks.md), rendered by sqlglot from the typed :class:`~.plan.CheckPlan`s:
what the runner evaluates (it never builds SQL itself) and what ``compile`` prints after the project's
statements. Column names are quoted identifiers; nothing here is written as SQL text.

For the runner:

- :func:`violation_sql`: a row check's boolean expression over the checked rows' columns, TRUE for a
  violating row (a condition that is NULL violates); :func:`row_metrics_sql` the aggregates to observe.
- :func:`set_check_query`: one query over a view of the checked rows (unique, balanced, row_count).
- :func:`reconcile_query` / :func:`measure_sql`: a reconcile's measures per group over a view of one end.
"""
from __future__ import annotations

from decimal import ROUND_FLOOR, Decimal, localcontext
from typing import Callable, Optional

from sqlglot import exp

from .. import type_rules
from .. import types as T
from ..render import pretty, sql
from .plan import Action, CheckKind, CheckPlan

ROWS = "_lf_rows"  # the number of rows of a group (set checks), or of the view (row_count)
VIOLATIONS = "_lf_violations"  # the number of violating rows (row_metrics_sql)
MAX_DIGITS = type_rules.MAX_PRECISION


def _col(name: str) -> exp.Column:
    return exp.column(name, quoted=True)


def _table(name: str) -> exp.Table:
    return exp.Table(this=exp.to_identifier(name, quoted=True))


def _alias(node: exp.Expression, name: str) -> exp.Alias:
    return exp.alias_(node, exp.to_identifier(name, quoted=True))


def violation(check: CheckPlan) -> exp.Expression:
    """A copy of a row check's violation condition (ValueError for another kind)."""
    if check.violation is None:
        raise ValueError(f"check '{check.name}' is a {check.kind.value} check, not a row check")
    return check.violation.copy()


def violation_sql(check: CheckPlan) -> str:
    """Spark SQL of a row check's violation condition (TRUE: the row violates), over unqualified columns."""
    return sql(violation(check))


def row_metrics(check: CheckPlan, rows: Optional[exp.Expression] = None,
                impact: bool = True) -> list[tuple[str, exp.Expression]]:
    """A row check's aggregates, each (name, node): ``_lf_violations`` = COUNT_IF(violation), then (with
    ``impact``) per decimal column of the rows (``amount_columns``) the SUM over the violating rows (its amount
    impact). ``rows``: a condition that picks the checked rows out of wider ones. Observed in a
    write, a check counts only: a decimal SUM per row costs the write more than reading the impact back from
    the staged rows when there are violations."""
    def bad() -> exp.Expression:
        return violation(check) if rows is None else exp.and_(rows.copy(), exp.Paren(this=violation(check)))
    out: list[tuple[str, exp.Expression]] = [(VIOLATIONS, exp.CountIf(this=bad()))]
    for name in check.amount_columns if impact else ():
        out.append((name, exp.Sum(this=exp.If(this=bad(), true=_col(name), false=exp.Null()))))
    return out


def row_metrics_sql(check: CheckPlan, rows: Optional[exp.Expression] = None,
                    impact: bool = True) -> list[tuple[str, str]]:
    """:func:`row_metrics` as Spark SQL text (what ``DataFrame.observe`` takes via ``F.expr``)."""
    return [(name, sql(node)) for name, node in row_metrics(check, rows, impact)]


def _grouped(columns: tuple[str, ...], select: list[exp.Expression], view: str) -> exp.Select:
    query = exp.select(*[_col(c) for c in columns], *select).from_(_table(view))
    if columns:
        query = query.group_by(*[_col(c) for c in columns])
    return query


def _ordered(query: exp.Select, columns: tuple[str, ...]) -> exp.Select:
    return query.order_by(*[exp.Ordered(this=_col(c), nulls_first=True) for c in columns]) if columns else query


def set_check_tree(check: CheckPlan, view: str) -> exp.Select:
    """The query of a set check over ``view``: see :func:`set_check_query`."""
    count = exp.Count(this=exp.Star())
    if check.kind == CheckKind.ROW_COUNT:
        return exp.select(_alias(count, ROWS)).from_(_table(view))
    keys = check.group_by
    if check.kind == CheckKind.UNIQUE:
        sums = [_alias(exp.Sum(this=_col(c)), c) for c in check.amount_columns if c not in keys]
        query = _grouped(keys, [_alias(count, ROWS), *sums], view).having(exp.GT(this=count.copy(),
                                                                                 expression=exp.Literal.number(1)))
        return _ordered(query, keys)
    if check.kind == CheckKind.BALANCED:
        total = exp.Sum(this=_col(check.amount))
        bound = exp.Literal.number(format(balanced_bound(check), "f"))
        within = exp.LTE(this=exp.Abs(this=total.copy()), expression=bound)
        failing = exp.Not(this=exp.Coalesce(this=within, expressions=[exp.false()]))
        if not keys:  # one overall group: no rows at all is nothing unbalanced
            failing = exp.and_(exp.GT(this=count.copy(), expression=exp.Literal.number(0)), failing)
        query = _grouped(keys, [_alias(count, ROWS), _alias(total, check.amount)], view).having(failing)
        return _ordered(query, keys)
    raise ValueError(f"check '{check.name}' is a {check.kind.value} check, not a set check")


def balanced_bound(check: CheckPlan) -> Decimal:
    """The tolerance a ``balanced`` check's SQL compares |SUM(amount)| with: the tolerance cut down to the
    scale of the sum (a sum of decimal(p,s) values is a multiple of 10^-s, so nothing it passes or fails
    changes) and to the largest value the sum's type holds. Spark compares a decimal(38,s) sum with a
    literal of a finer scale by rounding the literal to fit 38 digits, which could pass a sum over the
    tolerance; and a literal wider than 38 digits is a Spark error."""
    assert check.amount is not None and check.tolerance is not None
    precision, scale = T.decimal_parts(type_rules.summed(check.row_columns[check.amount]).sql)
    with localcontext() as exact:
        exact.prec = 2 * MAX_DIGITS  # a tolerance of 38 digits cut to a scale of 38 (the default keeps 28)
        step = Decimal(1).scaleb(-scale)
        largest = Decimal(1).scaleb(precision - scale) - step
        return min(check.tolerance.quantize(step, rounding=ROUND_FLOOR), largest)


def set_check_query(check: CheckPlan, view: str) -> str:
    """Spark SQL of a set check over the view ``view`` of its rows (the staged output, or the input):

    - ``unique``: one row per duplicated key: the key columns, ``_lf_rows`` (rows with that key, > 1)
      and, under their own names, the SUM of each other decimal column (``amount_columns``);
    - ``balanced``: one row per group out of tolerance (or whose SUM is NULL): the group columns,
      ``_lf_rows`` and the SUM of ``amount`` under its name (the group's imbalance);
    - ``row_count``: one row, ``_lf_rows``; compare it with ``min_rows`` / ``max_rows``.

    Rows are ordered by the key (NULLs first), so the first five are the deterministic sample."""
    return pretty(set_check_tree(check, view))


def _probe_name(kind: str, column: str) -> str:
    return f"{kind}|{column}"


def unique_probe_query(check: CheckPlan, view: str) -> str:
    """The query the runner judges a ``unique`` check by: :func:`set_check_query`'s rows (one per duplicated
    key, ordered by it), but each other decimal column as its MIN, MAX and COUNT (``min|col``, ``max|col``,
    ``count|col``) instead of its SUM. A SUM of a decimal(18,2) buffers a decimal(28,2), held as a
    BigDecimal per row and group; MIN, MAX and COUNT stay in longs, and the key is almost always unique. A
    duplicated key of two rows has SUM = MIN + MAX over its non-NULL values (:func:`probe_sum`); for a
    group of more rows the runner reads :func:`set_check_query` (only when a check fails)."""
    if check.kind != CheckKind.UNIQUE:
        raise ValueError(f"check '{check.name}' is a {check.kind.value} check, not a unique check")
    keys = check.group_by
    count = exp.Count(this=exp.Star())
    select = [_alias(count, ROWS)]
    for c in check.amount_columns:
        if c not in keys:
            select += [_alias(exp.Min(this=_col(c)), _probe_name("min", c)),
                       _alias(exp.Max(this=_col(c)), _probe_name("max", c)),
                       _alias(exp.Count(this=_col(c)), _probe_name("count", c))]
    query = _grouped(keys, select, view).having(exp.GT(this=count.copy(), expression=exp.Literal.number(1)))
    return pretty(_ordered(query, keys))


def probe_sum(row, column: str):
    """The SUM of ``column`` over a group of :func:`unique_probe_query` of at most two rows (``row``: its
    result row, a mapping): None when it has no non-NULL value, like SUM."""
    n = row[_probe_name("count", column)]
    if not n:
        return None
    low, high = row[_probe_name("min", column)], row[_probe_name("max", column)]
    return low if n == 1 else low + high


def measures(check: CheckPlan) -> list[tuple[str, exp.Expression]]:
    """A reconcile's measures, each (name as recorded, aggregate node): ``count`` -> COUNT(*),
    ``SUM(col)`` -> SUM(`col`)."""
    return [(m.name, m.expression.copy()) for m in check.measures]


def measure_sql(check: CheckPlan) -> list[tuple[str, str]]:
    """:func:`measures` as Spark SQL text."""
    return [(name, sql(node)) for name, node in measures(check)]


def reconcile_query(check: CheckPlan, view: str) -> str:
    """Spark SQL of a reconcile's measures per group (``group_by``) over ``view`` (one end): the group
    columns then each measure under its recorded name, ordered by the group."""
    query = _grouped(check.group_by, [_alias(node, name) for name, node in measures(check)], view)
    return pretty(_ordered(query, check.group_by))


def input_rows_query(first_stage_sql: str) -> Optional[str]:
    """Spark SQL of the rows ``on: input`` checks read: the ``input`` CTE (the input after the period filter,
    before operation 1) of the project's first statement, as a query of its own (its parameter markers
    kept); None when that statement has no such CTE."""
    import sqlglot
    tree = sqlglot.parse_one(first_stage_sql, read="spark")
    for cte in tree.find_all(exp.CTE):
        if cte.alias_or_name == "input":
            return sql(cte.this.copy())
    return None


# --------------------------------------------------------------------------------- compile output
def check_view(seq: Optional[int]) -> str:
    """The view a check's query reads for output ``seq`` (``output_NNN``), or for the input (``seq`` None)."""
    return "input" if seq is None else f"output_{seq:03d}"


LIVE_INPUT = "input_live"  # the input rows not deleted: a reconcile's input end when its output leaves them out


def describe(check: CheckPlan) -> str:
    """What a check is, in words: kind, rows, action (and quarantine destination)."""
    if check.kind == CheckKind.RECONCILE:
        end = "input" if check.from_output is None else f"output {check.from_output}"
        text = f"reconcile {end} -> output {check.on}"
        text += f" by {', '.join(check.group_by)}" if check.group_by else ""
        text += f", explained by {', '.join(map(str, check.explained_by))}" if check.explained_by else ""
        text += f", tolerance {check.tolerance}"
    else:
        text = f"{check.kind.value} on " + ("the input" if check.on is None else f"output {check.on}")
        if check.kind == CheckKind.BALANCED:
            text += f", tolerance {check.tolerance}"
        if check.kind == CheckKind.ROW_COUNT:
            text += f", rows {check.min_rows if check.min_rows is not None else 0}.." + (
                str(check.max_rows) if check.max_rows is not None else "")
    action = check.action.value
    if check.action == Action.QUARANTINE and check.quarantine is not None:
        action += f" to path {check.quarantine.path} ({check.quarantine.format})"
    return f"check {check.name}: {text}; on violation: {action}"


def row_statements(check: CheckPlan, view: Callable[[Optional[int]], str] = check_view) -> list[str]:
    """A row check's statement for ``compile``: its violating rows of the view ``view(check.on)``."""
    rows = exp.select(exp.Star()).from_(_table(view(check.on))).where(violation(check))
    return [pretty(rows)]


def reconcile_statements(check: CheckPlan, view: Callable[[Optional[int]], str] = check_view) -> list[str]:
    """A reconcile's statements for ``compile``: its measures at both ends."""
    start = LIVE_INPUT if check.live_input else view(check.from_output)
    return [reconcile_query(check, start), reconcile_query(check, view(check.on))]


def set_statements(check: CheckPlan, view: Callable[[Optional[int]], str] = check_view) -> list[str]:
    """A set check's statement for ``compile``: its one aggregation query."""
    return [set_check_query(check, view(check.on))]

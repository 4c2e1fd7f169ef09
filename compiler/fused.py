"""Fused execution (issue 30): one statement computes a project for a whole list of periods.

A period's run reads its inputs filtered to the period and binds ``:period_identifier``,
``:period_start`` and ``:period_end`` once for the whole statement. The fused statements give every
row the period it belongs to as three columns (:data:`PERIOD_COLUMNS`) instead:

- every input view holds each row once per period whose filter it passes (a period dataset's row
  usually once, a snapshot's once per period, a bitemporal row once per period whose start it is
  valid on), read once for the range (:func:`location_query`: a pushed filter covering the range,
  then a join to the periods, :func:`periods_query`, with each period's own filter, in
  :mod:`.fused_inputs`);
- every ``:period_*`` marker becomes the period column of the row it is evaluated on, so every
  period filter, as-of filter and created ``_period`` is the row's period's;
- every relation carries the period columns, a join matches the working row's period only
  (its fan-out guard counts join rows per key and period), an aggregate groups by the period too,
  and a global aggregate (no ``group_by``) gives one row per period even when a period has no rows,
  as each period's run does (the periods joined, every aggregate restricted to real rows).

``:run_started_at`` stays a parameter: the runs of a fused range share their run start. Generated
``_row_id``s depend on the run start and the row's identity only (docs/row-identity.md), never on
the run id or the period, so the fused rows carry each period's run's ids. Outputs carry the period
columns; the runner writes each period's rows (:data:`PERIOD_COLUMNS` dropped) as that period's run.

:func:`refusal` says why a project cannot be fused (None when it can): fused only where the rewrite
is proven, every other construct is refused by name.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator, Optional, Sequence

from sqlglot import exp

from . import periods as period_filters
from .compile import CompiledProject
from .lower import AnyStep, OutputStep, Step, lower
from .model import OperationKind
from .periods import Period
from .plan import AggregatePlan, AppendPlan, OperationPlan, Role, UpdatePlan
from .render import comment, pretty
from .stage import STAGE_MAX_CTES, Statement, cut_stages

# marker -> the column carrying its value on every fused row
PERIOD_COLUMNS = {"period_identifier": "__lf_period_identifier", "period_start": "__lf_period_start",
                  "period_end": "__lf_period_end"}
PERIOD_KEY = PERIOD_COLUMNS["period_identifier"]
PERIODS_VIEW = "lf_periods"  # the periods of the range, one row each (periods_query)
MAX_PERIODS = 1000


class NotFusable(Exception):
    """The rewrite met a construct it does not prove equivalent (the message names it)."""


# ------------------------------------------------------------------------------------ helpers
def _col(name: str, table: Optional[str] = None) -> exp.Column:
    return exp.column(name, table=table, quoted=True)


def _period_columns(table: Optional[str] = None) -> list[exp.Expression]:
    return [_col(c, table) for c in PERIOD_COLUMNS.values()]


def _markers(node: exp.Expression) -> list[exp.Placeholder]:
    return [p for p in node.find_all(exp.Placeholder) if p.name in PERIOD_COLUMNS]


def substitute(node: exp.Expression, table: Optional[str] = None) -> exp.Expression:
    """``node`` (in place) with every period marker replaced by the period column of the row (of
    ``table`` when given); ``:run_started_at`` stays."""
    for marker in _markers(node):
        replacement = _col(PERIOD_COLUMNS[marker.name], table)
        if marker is node:
            return replacement
        marker.replace(replacement)
    return node


def _literal(value) -> exp.Expression:
    if isinstance(value, str):
        return exp.Literal.string(value)
    return exp.Cast(this=exp.Literal.string(value.isoformat()), to=exp.DataType.build("date"))


def bind_period(node: exp.Expression, period: Period) -> exp.Expression:
    """A copy of ``node`` with the period markers replaced by ``period``'s values (literals)."""
    values = {"period_identifier": period.identifier, "period_start": period.start, "period_end": period.end}
    node = node.copy()
    for marker in _markers(node):
        literal = _literal(values[marker.name])
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
    _add_columns(select, _period_columns(table))


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
    real = exp.Not(this=exp.Is(this=_col(PERIOD_KEY, rows_alias), expression=exp.Null()))
    for agg in list(select.find_all(exp.AggFunc)):
        if isinstance(agg.parent, exp.Filter):
            raise NotFusable("an aggregate with a FILTER clause")
        agg.replace(exp.Filter(this=agg.copy(), expression=exp.Where(this=real.copy())))
    joined = exp.Join(this=rows.subquery(exp.to_identifier(rows_alias, quoted=True)), side="LEFT",
                      on=exp.EQ(this=_col(PERIOD_KEY, rows_alias), expression=_col(PERIOD_KEY, periods_alias)))
    _set_from(select, exp.Table(this=exp.to_identifier(PERIODS_VIEW, quoted=True),
                                alias=exp.TableAlias(this=exp.to_identifier(periods_alias, quoted=True))))
    select.set("joins", [joined])
    substitute(select, rows_alias)
    _add_columns(select, _period_columns(periods_alias))
    _group(select, _period_columns(periods_alias))


def _aggregation(select: exp.Select, grouped: bool) -> None:
    if grouped:
        substitute(select)
        _add_columns(select, _period_columns())
        _group(select, _period_columns())
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


def _input(step: Step, temporal_mode: str) -> None:
    (cte,) = step.ctes
    _without_period_filter(cte.this, temporal_mode)
    _plain(cte.this)


def _update(plan: UpdatePlan, step: Step, invariant: frozenset[str], broadcast: frozenset[str]) -> None:
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
            if _markers(outer):
                raise NotFusable(f"operation {plan.seq}: join '{j.alias}' depends on the period")
            continue
        _without_period_filter(inner.this, j.read.dataset.temporal_mode)
        _plain(inner.this)
        side = f"{j.alias}__{PERIOD_KEY}"
        windows = [w for w in outer.find_all(exp.Window)]
        if len(windows) != 1:
            raise NotFusable(f"operation {plan.seq}: join '{j.alias}' without its fan-out count")
        windows[0].set("partition_by", [*(windows[0].args.get("partition_by") or []), _col(PERIOD_KEY)])
        substitute(outer)
        _add_columns(outer, [exp.alias_(_col(PERIOD_KEY), side, quoted=True)])
        on_period.append((j.alias, exp.EQ(this=_col(PERIOD_KEY, table), expression=_col(side, j.alias))))
    substitute(main, table)
    _add_columns(main, _period_columns(table))
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


def _aggregate(plan: AggregatePlan, step: Step) -> None:
    _aggregation(_cte(step, f"op_{plan.seq:03d}_summary").this, bool(plan.group_by))
    existing, appended = _branches(_cte(step, plan.writes).this)
    _plain(existing)
    _plain(appended)


def _append(plan: AppendPlan, step: Step) -> None:
    _plain(_cte(step, f"op_{plan.seq:03d}_source").this)
    if plan.summary is not None:
        _aggregation(_cte(step, f"op_{plan.seq:03d}_aggregated").this, bool(plan.group_by))
    existing, appended = _branches(_cte(step, plan.writes).this)
    _plain(existing)
    _plain(appended)


def _delete(plan: OperationPlan, step: Step) -> None:
    (cte,) = step.ctes
    _plain(cte.this)


def invariant_views(compiled: CompiledProject, uniform: Iterable[str]) -> frozenset[str]:
    """The input views every period reads identically, which the fused statements therefore read once,
    without the period columns: a snapshot dataset's (no period filter), resolved to the same version and
    locations for every period (``uniform``, the runner's knowledge), read only as runtime joins whose rows
    do not depend on the period (no period parameter in their filter). A join to one is matched on its key
    alone and its fan-out counted once, the same count every period's run makes; where a snapshot of
    100,000 customers would otherwise be joined as 12 copies over a year."""
    plan = compiled.plan
    if plan is None:
        return frozenset()
    views = {v.view for v in compiled.inputs if v.role == Role.JOIN and v.dataset.temporal_mode == "snapshot"}
    views &= set(uniform)
    for op in plan.operations:
        for read in op.reads:
            if read.role != Role.JOIN:
                views.discard(read.view)
        for j in getattr(op, "joins", None) or []:
            if _markers(j.where):
                views.discard(j.read.view)
    return frozenset(views)


def fused_steps(compiled: CompiledProject, invariant: frozenset[str] = frozenset(),
                broadcast: frozenset[str] = frozenset()) -> Iterator[AnyStep]:
    """The lowered steps of ``compiled``'s plan, rewritten for a range (see the module docstring), the
    views of ``invariant`` (:func:`invariant_views`) read without periods, joins to the views of ``broadcast``
    hinted; raises :class:`NotFusable` naming what it cannot rewrite."""
    plan = compiled.plan
    ops = {op.seq: op for op in plan.operations}
    for step in lower(plan):
        if isinstance(step, OutputStep):
            _plain(step.query)
            yield step
            continue
        if step.seq == 0:
            _input(step, next(v.dataset.temporal_mode for v in compiled.inputs if v.role == Role.INPUT))
        else:
            op = ops[step.seq]
            rewrite = {OperationKind.UPDATE: lambda o, st: _update(o, st, invariant, broadcast),
                       OperationKind.AGGREGATE: _aggregate, OperationKind.APPEND: _append,
                       OperationKind.DELETE: _delete}.get(op.kind)
            if rewrite is None:
                raise NotFusable(f"operation {op.seq} of kind {op.kind.value}")
            rewrite(op, step)
        leftover = [p.name for c in step.ctes for p in _markers(c)]
        if leftover:
            raise NotFusable(f"operation {step.seq}: a period parameter in an unexpected place")
        yield step


# ------------------------------------------------------------------------------- provability
def refusal(compiled: CompiledProject, periods: Sequence[Period]) -> Optional[str]:
    """Why ``compiled`` cannot be fused for ``periods`` (one sentence naming the construct), or None when
    the fused statements are proven to write what each period's run writes."""
    plan = compiled.plan
    if plan is None or plan.input is None:
        return "the project has no typed plan"
    ids = [p.identifier for p in periods]
    if len(ids) < 2:
        return "a single period has nothing to fuse"
    if len(set(ids)) != len(ids):
        return "the list of periods names a period twice"
    if len(ids) > MAX_PERIODS:
        return f"more than {MAX_PERIODS} periods"
    if plan.checks:
        names = ", ".join(c.name for c in plan.checks)
        return (f"the project declares checks ({names}): each period's bridge and checks are observed on its "
                "own run, which fused execution does not do yet")
    taken = [c for c in plan.schema if c in PERIOD_COLUMNS.values()]
    if taken:
        return f"the working dataset has a column named {taken[0]}, which fused execution uses for the period"
    try:
        fuse(compiled, periods)
    except NotFusable as exc:
        return f"fused execution does not rewrite {exc}"
    return None


# ------------------------------------------------------------------------------- the fused SQL
@dataclass
class FusedProject:
    """A project's statements for a list of periods: run :attr:`periods_sql` as the view
    :data:`PERIODS_VIEW`, load every input view with :func:`location_query`, then the statements in order;
    each output's rows of period P are those whose :data:`PERIOD_KEY` is P's identifier."""

    compiled: CompiledProject
    periods: tuple[Period, ...]
    statements: list[Statement] = field(default_factory=list)
    invariant: frozenset[str] = frozenset()  # input views read once, without periods (invariant_views)
    # join views broadcast by hint: the runner found each period's side small enough for Spark to broadcast
    # in that period's run; the fused side's size (behind a join to the periods) Spark cannot estimate
    broadcast: frozenset[str] = frozenset()

    @property
    def periods_sql(self) -> str:
        """The query of the periods view."""
        return periods_query(self.periods)

    def script(self) -> str:
        """The fused statements as one script (review and golden files; the runner runs them one by one)."""
        p = self.compiled.project
        lines = [comment(f"project {p.name} (id {p.id}, version {p.version}) fused over "
                         f"{', '.join(x.identifier for x in self.periods)}"),
                 comment("Parameters: :run_started_at; each row carries its period in "
                         + ", ".join(PERIOD_COLUMNS.values())),
                 "", comment(f"{PERIODS_VIEW}: the periods of the range"), self.periods_sql + ";", ""]
        for st in self.statements:
            lines.append(comment(f"{st.name}: operations {', '.join(map(str, st.operations))}"))
            lines.append(st.sql + ";")
            lines.append("")
        return "\n".join(lines)


def fuse(compiled: CompiledProject, periods: Sequence[Period], stage_max_ctes: int = STAGE_MAX_CTES,
         uniform: Iterable[str] = (), broadcast: Iterable[str] = ()) -> FusedProject:
    """The fused statements of ``compiled`` over ``periods``; ``uniform``: the input views resolved alike
    for every period (see :func:`invariant_views`), ``broadcast``: see :attr:`FusedProject.broadcast`.
    Raises :class:`NotFusable`."""
    invariant = invariant_views(compiled, uniform)
    statements = cut_stages(fused_steps(compiled, invariant, frozenset(broadcast)), stage_max_ctes)
    return FusedProject(compiled, tuple(periods), statements, invariant, frozenset(broadcast))


def periods_query(periods: Sequence[Period]) -> str:
    """``SELECT * FROM VALUES (identifier, start, end), ... AS t(<PERIOD_COLUMNS>)``."""
    rows = [exp.Tuple(expressions=[exp.Literal.string(p.identifier), _literal(p.start), _literal(p.end)])
            for p in periods]
    values = exp.Values(expressions=rows, alias=exp.TableAlias(
        this=exp.to_identifier("t"), columns=[exp.to_identifier(c, quoted=True) for c in PERIOD_COLUMNS.values()]))
    return pretty(exp.select(exp.Star()).from_(values))

"""The SQL step of the input and of each operation kind (the lowering each kind's registry entry names,
:mod:`.kinds.operations`): each fills its statement skeleton, ``templates/<kind>.sql.j2``, with SQL
snippets generated from the plan's sqlglot nodes and identifiers quoted by :func:`~.render.ident`, then
parses the result back into CTE nodes (:func:`~.render.parse_ctes`): a template can never pass broken SQL
on, and the stage cut (:mod:`.stage`) counts the CTEs the template really made."""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Optional, Union

from sqlglot import exp

from .bridge_columns import BridgeColumns
from .plan import (FAN_OUT_COUNT, AggregatePlan, AppendPlan, Column, DeletePlan, InputPlan, JoinPlan, OperationPlan, OutputPlan,
                   UpdatePlan)
from .render import Grafts, ident, parse, parse_ctes, render, sql


@dataclass
class Step:
    """The CTEs of the input or of one operation, in order; ``last`` is the relation it produces."""

    seq: int
    ctes: list[exp.CTE]
    last: str
    reads_previous: Optional[str]  # the previous step's ``last``, as this step's SQL names it
    source: Optional[str] = None  # the input view (the input step only)


@dataclass
class OutputStep:
    """An output's query over the working rows as they are after the steps before it."""

    plan: OutputPlan
    query: exp.Expression
    reads_previous: str
    columns: list[tuple[str, str]] = field(default_factory=list)  # (name, Spark type or "")


AnyStep = Union[Step, OutputStep]


@functools.lru_cache(maxsize=4096)
def _column_text(name: str, qualifier: Optional[str]) -> str:
    """The text of a quoted (qualified) column reference, generated once per name: every update lists
    every working column."""
    return sql(exp.column(name, table=qualifier, quoted=True))


def _aliased(node: exp.Expression, name: str, g: Grafts) -> str:
    return f"{g(node)} AS {ident(name)}"


def _select_list(columns: dict[str, Column], g: Grafts) -> list[str]:
    """A column passing through unchanged as its (qualified) name, any other as ``expression AS name``."""
    out = []
    for name, col in columns.items():
        e = col.expression
        if col.identity:
            out.append(_column_text(name, e.table or None))
        else:
            out.append(_aliased(e, name, g))
    return out


def _step(plan: OperationPlan, fragment: str, prev: str, g: Grafts) -> Step:
    return Step(plan.seq, parse_ctes(fragment, f"operation {plan.seq} ({plan.kind.value})", g), plan.writes, prev)


def lower_input(plan: InputPlan, bridge: BridgeColumns) -> Step:
    """The working dataset: the input view filtered to the run's rows (with the bridge's columns)."""
    g = Grafts()
    where = plan.conditions[0].expression if plan.conditions else None
    columns = [ident(c) for c in plan.columns] + [g(e) for e in bridge.initial()]
    frag = render("input", cte=ident(plan.writes), columns=columns,
                  view=ident(plan.read.view), where=g(where) if where is not None else "")
    return Step(0, parse_ctes(frag, "the input", g), plan.writes, None, plan.read.view)


def _join_context(j: JoinPlan, g: Grafts) -> dict:
    """The update template's context of one join, with its fan-out guard."""
    alias, guard = j.alias, j.guard
    return {"cte": ident(j.writes), "alias": ident(alias), "view": ident(j.read.view),
            "side_columns": [ident(n) for n in j.side_columns],
            "columns": [f"{_column_text(n, None)} AS {ident(f'{alias}__{n}')}" for n in j.side_columns],
            "where": g(j.where), "on": g(j.on), "check": f"({g(guard.check)})",
            "fan_out_count": ident(f"{alias}__{FAN_OUT_COUNT}"), "partition_by": [g(k) for k in guard.partition_by]}


def lower_update(plan: UpdatePlan, prev: str, bridge: BridgeColumns, before: dict[str, Column], template: str) -> Step:
    """Left joins (each with its fan-out guard), then every assignment computed from the row as it was."""
    g = Grafts()
    joins = [_join_context(j, g) for j in plan.joins]
    table = plan.working_alias if plan.joins else None
    columns = _select_list(plan.columns, g) + [g(e) for e in bridge.after_update(plan.seq, before, table)]
    frag = render(template, joins=joins, cte=ident(plan.writes), columns=columns,
                  prev=ident(prev), working=ident(plan.working_alias), fan_out_checks=[j["check"] for j in joins])
    return _step(plan, frag, prev, g)


def lower_delete(plan: DeletePlan, prev: str, bridge: BridgeColumns, before: dict[str, Column], template: str) -> Step:
    """A soft delete: every working column, ``_deleted`` and ``_updated_at`` recomputed."""
    g = Grafts()
    columns = _select_list(plan.columns, g) + [g(e) for e in bridge.after_delete(plan.seq, plan.condition)]
    return _step(plan, render(template, cte=ident(plan.writes), columns=columns, prev=ident(prev)), prev, g)


def _summary_list(summary: dict[str, exp.Expression], g: Grafts) -> list[str]:
    return [ident(c) if isinstance(e, exp.Column) and e.name == c else _aliased(e, c, g) for c, e in summary.items()]


def lower_aggregate(plan: AggregatePlan, prev: str, bridge: BridgeColumns, before: dict[str, Column], template: str) -> Step:
    """Summary rows of the selected rows, appended after the existing rows."""
    g = Grafts()
    appended = [ident(n) if n in plan.new_columns else _aliased(c.expression, n, g) for n, c in plan.appended.items()]
    appended += [g(e) for e in bridge.created(plan.seq)]
    existing = [ident(n) if n not in plan.new_columns else _aliased(c.expression, n, g) for n, c in plan.columns.items()]
    existing += [g(e) for e in bridge.passed(plan.seq)]
    summary = _summary_list(plan.summary, g)
    frag = render(template, summary_cte=ident(f"op_{plan.seq:03d}_summary"), summary_columns=summary,
                  prev=ident(prev), where=g(plan.condition), group_by=[ident(c) for c in plan.group_by],
                  cte=ident(plan.writes), existing_columns=existing, appended_columns=appended)
    return _step(plan, frag, prev, g)


def lower_append(plan: AppendPlan, prev: str, bridge: BridgeColumns, before: dict[str, Column], template: str) -> Step:
    """The source rows (optionally aggregated), aligned to the working columns and appended."""
    seq = plan.seq
    g = Grafts()
    agg_ctx = {}
    if plan.summary is not None:
        agg_ctx = {"aggregated_cte": ident(f"op_{seq:03d}_aggregated"), "group_by": [ident(c) for c in plan.group_by],
                   "aggregate_columns": _summary_list(plan.summary, g)}
    where = g(plan.source_where)
    existing = [ident(c) for c in plan.columns] + [g(e) for e in bridge.passed(seq)]
    appended = [_aliased(c.expression, n, g) for n, c in plan.appended.items()] + [g(e) for e in bridge.created(seq)]
    frag = render(template, source_cte=ident(f"op_{seq:03d}_source"),
                  source_columns=[ident(c) for c in plan.source_columns], view=ident(plan.reads[0].view),
                  where=where, aggregated=plan.summary is not None, cte=ident(plan.writes),
                  existing_columns=existing, prev=ident(prev), appended_columns=appended, **agg_ctx)
    return _step(plan, frag, prev, g)


def lower_output(plan: OutputPlan, prev: str, bridge: BridgeColumns, before: dict[str, Column], template: str) -> OutputStep:
    """The output's query (reads ``prev``, which the stage cut points at the stage's view)."""
    text = render(template, columns=[ident(c) for c in plan.columns], stage=ident(prev),
                  where=sql(plan.where) if plan.where is not None else "")
    query = parse(text, f"{plan.operation.name} {plan.writes}")
    return OutputStep(plan, query, prev, [(n, c.type.sql or "") for n, c in plan.columns.items()])

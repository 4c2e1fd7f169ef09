"""Bind an ``update``: its runtime joins (with their fan-out guard), selector and assignments."""
from __future__ import annotations

from typing import Optional

from sqlglot import exp

from .. import periods
from .. import system_columns as sysc
from .. import types as T
from ..codes import JOIN_REFERENCE
from ..dsl.ast import Binary, Node, Paren
from ..dsl.translate import ExprError, JoinScope, Scope, Typed
from ..model import RuntimeJoin, UpdateOperation
from ..plan import (FAN_OUT_COUNT, Column, Condition, ConditionKind, FanOutGuard, JoinPlan, Read, Role, UpdatePlan)
from ..render import data_type
from ..types import SqlType
from .context import IDENTIFIER, BindContext, and_all, cast, conjuncts, loc_of, not_deleted, refs, source_of



def temporal_conditions(temporal_mode: str, applies_to: str) -> list[Condition]:
    """The period or as-of filter of a dataset of ``temporal_mode`` as plan conditions."""
    where = periods.period_filter(temporal_mode)
    if where is None:
        return []
    kind = ConditionKind.AS_OF if temporal_mode == "bitemporal" else ConditionKind.PERIOD
    return [Condition(kind, where, applies_to)]


def changed_columns(schema: dict[str, SqlType], cond: exp.Expression, changes: dict[str, exp.Expression],
                    qualifier: Optional[str] = None) -> dict[str, Column]:
    """The working columns, where rows matching ``cond`` take ``changes`` and ``_updated_at = :run_started_at``;
    other rows keep every value."""
    changes = {**changes, "_updated_at": exp.Placeholder(this="run_started_at")}
    columns = {}
    for name, typ in schema.items():
        ref = exp.column(name, table=qualifier, quoted=True)
        if name in changes:
            value = exp.Case(ifs=[exp.If(this=cond.copy(), true=changes[name])], default=ref)
        else:
            value = ref
        columns[name] = Column(name, typ, value)
    return columns


def bind_update(ctx: BindContext, op: UpdateOperation) -> Optional[UpdatePlan]:
    """The plan of an update (None when it has errors, all recorded in ``ctx``)."""
    seq = op.seq
    if not op.assignments:
        ctx.errors.add("UPD-VR-001", f"update operation {seq} has no assignments", op.location, op.name,
                       "add at least one {column, expression} under arguments.assignments")
    working_alias = ctx.table
    joins, join_scopes = [], {}
    for j in op.joins:
        bound = bind_join(ctx, op, j, working_alias, join_scopes)
        if bound is not None:
            joins.append(bound)
    qualifier = working_alias if op.joins else None
    scope = ctx.working_scope(qualifier, join_scopes)
    codes = {"syntax": "UPD-VR-004", "selector_undefined": "UPD-VR-003", "unknown_alias": "JOIN-VR-008"}
    _, selector = ctx.selector(op, scope, codes)
    cond = ctx.row_condition(selector, qualifier)
    tr = ctx.translator(scope)
    assigned: dict[str, exp.Expression] = {}
    new_types: dict[str, SqlType] = {}
    for a in op.assignments:
        col = str(a.column)
        if not IDENTIFIER.match(col):
            ctx.errors.add("UPD-VR-002", f"invalid column name '{col}'", loc_of(a.column, a.location), col,
                           "column names match ^[a-zA-Z_][a-zA-Z0-9_]*$")
            continue
        if sysc.is_system(col) and col not in sysc.ASSIGNABLE:
            ctx.errors.add("UPD-VR-002", f"system column '{col}' cannot be assigned", loc_of(a.column, a.location),
                           col, "only _labels may be set by an update; use delete for _deleted")
            continue
        if col in assigned or col in new_types:
            ctx.errors.add("UPD-VR-002", f"column '{col}' is assigned twice in operation {seq}",
                           loc_of(a.column, a.location), col, "assign each column once per update")
            continue
        tr.context = f"operation {seq} '{op.name}', column '{col}'"  # what a failing CAST names
        typed = ctx.compile_expr(tr, a.expression, a.location,
                                 {"syntax": "UPD-VR-005", "unknown_alias": "JOIN-VR-008",
                                  "selector_undefined": "UPD-VR-003"})
        if typed is None:
            typed = Typed(exp.Null(), T.UNKNOWN)
        if col in ctx.schema:
            target = ctx.schema[col]
            if not T.compatible(target, typed.type):
                ctx.errors.add("DSL-002", f"cannot assign a {typed.type.kind} to column '{col}' of type {target}",
                               loc_of(a.expression, a.location), str(a.expression),
                               "the column keeps its type; convert the value")
            assigned[col] = cast(typed.sql, target) if typed.type != target else typed.sql
        else:
            new_types[col] = typed.type if typed.type.kind != "null" else T.UNKNOWN
            assigned[col] = typed.sql
    columns = changed_columns(ctx.schema, cond, {c: v for c, v in assigned.items() if c in ctx.schema}, qualifier)
    for name, typ in new_types.items():
        columns[name] = Column(name, typ, exp.Case(ifs=[exp.If(this=cond.copy(), true=assigned[name])]))
    conditions = [Condition(ConditionKind.SELECTOR, selector)] if selector is not None else []
    for j in joins:
        conditions += [Condition(ConditionKind.JOIN, j.on, j.alias)]
    conditions += [c for j in joins for c in j.conditions]
    ctx.schema.update(new_types)
    return UpdatePlan(op, f"op_{seq:03d}_update", columns, reads=[j.plan.read for j in joins], conditions=conditions,
                      condition=cond, joins=[j.plan for j in joins], working_alias=working_alias)


class _BoundJoin:
    """A join's plan and its side conditions (join filters, period/as-of filter)."""

    def __init__(self, plan: JoinPlan, conditions: list[Condition]):
        self.plan, self.conditions, self.on, self.alias = plan, conditions, plan.on, plan.alias


class _AnyColumns(dict):
    """Columns of a join whose dataset could not be found: any name resolves (errors were reported)."""

    def __contains__(self, key) -> bool:
        return True

    def __getitem__(self, key):
        return (f"unknown__{key}", T.UNKNOWN)


def _key_sides(part: Node, alias: str, working_alias: str) -> Optional[tuple[Node, Node]]:
    """For ``a = b`` where exactly one side references only ``alias``: (that side, the other side)."""
    node = part.expr if isinstance(part, Paren) else part
    if not (isinstance(node, Binary) and node.op == "="):
        return None

    def tables(n):
        return {t if t is not None else working_alias for t in refs(n)}
    lt, rt = tables(node.left), tables(node.right)
    if lt == {alias} and alias not in rt:
        return node.left, node.right
    if rt == {alias} and alias not in lt:
        return node.right, node.left
    return None


def _check_alias(ctx: BindContext, j: RuntimeJoin, alias: str, working_alias: str, join_scopes: dict) -> bool:
    loc = loc_of(j.alias, j.location)
    if not IDENTIFIER.match(alias) or "__" in alias:
        ctx.errors.add("JOIN-VR-004", f"join alias '{alias}' is not a valid name", loc, alias,
                       "aliases are letters, digits and single underscores")
    elif alias in join_scopes:
        ctx.errors.add("JOIN-VR-004", f"join alias '{alias}' is already used in this operation", loc, alias,
                       "give each join of an update its own alias")
    elif alias == working_alias:
        ctx.errors.add("JOIN-VR-005", f"join alias '{alias}' conflicts with working dataset table name", loc,
                       alias, "choose another alias, e.g. the dataset's short name")
    else:
        return True
    return False


def bind_join(ctx: BindContext, op: UpdateOperation, j: RuntimeJoin, working_alias: str,
              join_scopes: dict) -> Optional[_BoundJoin]:
    """Validate one runtime join and plan it; registers its alias scope."""
    alias = str(j.alias)
    ok = _check_alias(ctx, j, alias, working_alias, join_scopes)
    ds = ctx.lookup(j.dataset, JOIN_REFERENCE, f"join '{alias}'")
    if ds is None or not ok:
        if ok:  # keep the alias usable so its references do not cascade into more errors
            join_scopes[alias] = JoinScope(alias, _AnyColumns())
        return None
    raw_cols = {c.name: T.from_sql(c.type) for c in ds.columns}
    raw_cols.update({n: T.from_sql(t) for n, t in sysc.TEMPORAL_COLUMNS[ds.temporal_mode]})
    exposed = {name: (f"{alias}__{name}", typ) for name, typ in raw_cols.items()}
    side_scope = Scope(alias, raw_cols, None, {}, what=f"join dataset '{ds.name}'")
    cond_scope_joins = dict(join_scopes)
    cond_scope_joins[alias] = JoinScope(alias, exposed)
    cond_scope = ctx.working_scope(working_alias, cond_scope_joins)
    codes = {"syntax": "JOIN-VR-006", "unknown_column": "JOIN-VR-007", "unknown_alias": "JOIN-VR-007",
             "type": "JOIN-VR-006", "selector_undefined": "JOIN-VR-006"}
    source = source_of(j.on, j.location)
    pushed, keys, looked_up, on_parts = [], [], [], []
    try:
        tree = ctx.translator(cond_scope).parse(source)
        for part in conjuncts(tree):
            tables = {t if t is not None else working_alias for t in refs(part)}
            if tables == {alias}:
                pushed.append(ctx.translator(side_scope).translate_node(part, source, "boolean").sql)
                continue
            if alias in tables:
                key = _key_sides(part, alias, working_alias)
                if key is None:
                    raise ExprError("syntax", "unsupported join condition: use equalities between working "
                                    "and join columns, and filters on the join's own columns, joined by AND",
                                    source, getattr(part, "pos", 0), "",
                                    f"e.g. transactions.currency = {alias}.from_currency AND {alias}.x = \"y\"")
                mine, other = key
                keys.append(ctx.translator(side_scope).translate_node(mine, source).sql)
                looked_up.append(ctx.translator(cond_scope).translate_node(other, source).sql)
            on_parts.append(ctx.translator(cond_scope).translate_node(part, source, "boolean").sql)
    except ExprError as err:
        ctx.errors.extend([err.diagnostic(codes)])
        join_scopes[alias] = JoinScope(alias, exposed)
        return None
    join_scopes[alias] = JoinScope(alias, exposed)
    view = ctx.view_for(ds, j.dataset.dataset_version, Role.JOIN, op.seq, alias, row_ids=False)
    where = and_all([not_deleted(), periods.period_filter(ds.temporal_mode),
                     *[exp.Paren(this=p) if isinstance(p, exp.Or) else p for p in pushed]])
    on = and_all([*on_parts, not_deleted(working_alias)])
    read = Read(view, ds, Role.JOIN, alias, tuple((sql_name, name) for name, (sql_name, _) in exposed.items()))
    conditions = [Condition(ConditionKind.JOIN_FILTER, p, alias) for p in pushed]
    conditions += temporal_conditions(ds.temporal_mode, alias)
    guard = _fan_out_guard(alias, op.seq, ds.name, keys, looked_up)
    plan = JoinPlan(alias, read, list(raw_cols), where, on, guard, f"op_{op.seq:03d}_join_{alias}")
    return _BoundJoin(plan, conditions)


def _fan_out_guard(alias: str, seq: int, dataset: str, keys: list[exp.Expression],
                   looked_up: list[exp.Expression]) -> FanOutGuard:
    """The join fan-out guard: a working row matching more than one join row stops the run with an
    error naming the join and the key values the row looked up (computed keys included)."""
    matches = exp.column(f"{alias}__{FAN_OUT_COUNT}", table=alias, quoted=True)
    key_text = [exp.Cast(this=k.copy(), to=data_type("string")) for k in looked_up]
    message = exp.Anonymous(this="concat", expressions=[
        exp.Literal.string(f"ledgerflow: runtime join '{alias}' of operation {seq} matched "),
        exp.Cast(this=matches.copy(), to=data_type("string")),
        exp.Literal.string(f" rows of dataset '{dataset}' for one working row; join key: "),
        exp.Anonymous(this="concat_ws", expressions=[exp.Literal.string(", "), *key_text])
        if key_text else exp.Literal.string("(none)")])
    check = exp.Or(this=exp.LTE(this=exp.Coalesce(this=matches, expressions=[exp.Literal.number(1)]),
                                expression=exp.Literal.number(1)),
                   expression=exp.Anonymous(this="raise_error", expressions=[message]))
    return FanOutGuard(check, keys)

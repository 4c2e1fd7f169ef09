"""Bind the operations that flag or add rows: ``delete``, ``aggregate``, ``append``."""
from __future__ import annotations

from typing import Optional

from sqlglot import exp

from .. import periods
from .. import system_columns as sysc
from .. import types as T
from ..codes import APPEND_REFERENCE
from ..dsl.translate import Scope
from ..model import AggregateOperation, AppendOperation, DeleteOperation
from ..plan import (AggregatePlan, AppendPlan, Column, Condition, ConditionKind, DeletePlan, Read, Role)
from ..types import SqlType
from .context import BindContext, and_all, cast, not_deleted, typed_null
from .update import changed_columns, temporal_conditions


def created_value(name: str, typ: SqlType, origin: sysc.RowOrigin, carried: set) -> exp.Expression:
    """Value of a column on a row created by aggregate/append: the row's own (``carried``) value,
    else the system column's default for a created row, else a typed NULL."""
    if name in carried:
        return cast(exp.column(name, quoted=True), typ)
    value = sysc.default_value(name, origin)
    return value if value is not None else typed_null(typ)


# ------------------------------------------------------------------ delete
def bind_delete(ctx: BindContext, op: DeleteOperation) -> Optional[DeletePlan]:
    """A soft delete: matching rows get ``_deleted = TRUE`` (and ``_updated_at``)."""
    _, selector = ctx.selector(op, ctx.working_scope(), {})
    cond = ctx.row_condition(selector)
    columns = changed_columns(ctx.schema, cond, {})
    # _deleted is never NULL (loading fills it, created rows get FALSE, updates cannot assign it), so
    # "CASE WHEN cond THEN TRUE ELSE _deleted END" is the smaller expression below, cheaper for
    # Spark's optimizer and per row.
    deleted = exp.or_(exp.column("_deleted", quoted=True), exp.Coalesce(this=cond.copy(), expressions=[exp.false()]))
    columns["_deleted"] = Column("_deleted", ctx.schema["_deleted"], deleted)
    conditions = [Condition(ConditionKind.DELETE, selector if selector is not None else exp.true())]
    return DeletePlan(op, f"op_{op.seq:03d}_delete", columns, conditions=conditions, condition=cond)


# ------------------------------------------------------------------ aggregate
def bind_aggregate(ctx: BindContext, op: AggregateOperation) -> Optional[AggregatePlan]:
    """Summary rows of the selected rows, appended after the existing rows."""
    seq = op.seq
    scope = ctx.working_scope()
    _, selector = ctx.selector(op, scope, {})
    cond = ctx.row_condition(selector)
    group_cols = ctx.group_columns(op, scope, "BR-015")
    keys = set(group_cols) if group_cols is not None else None  # bad group_by: reported, no DSL-005 cascade
    tr = ctx.translator(scope, aggregates=True, group_keys=keys)
    aggs = ctx.aggregations(op, tr, {}, "DSL-006")
    if group_cols is None or aggs is None:
        return None
    new_cols = {c: (t.type if t.type.kind != "null" else T.UNKNOWN) for c, t in aggs.items() if c not in ctx.schema}
    for c, t in aggs.items():
        if c in ctx.schema and not T.compatible(ctx.schema[c], t.type):
            ctx.errors.add("DSL-002", f"aggregation '{c}' gives {t.type.kind} but the column is {ctx.schema[c]}",
                           op.location, c)
    columns = {c: Column(c, t, exp.column(c, quoted=True)) for c, t in ctx.schema.items()}
    columns.update({c: Column(c, t, typed_null(t)) for c, t in new_cols.items()})
    summary = {c: exp.column(c, quoted=True) for c in group_cols}
    summary.update({c: t.sql for c, t in aggs.items()})
    identity = [exp.Literal.number(seq)] + [exp.column(c, quoted=True) for c in group_cols]
    origin = sysc.created_row(ctx.input_ds.id, seq, identity)
    appended = {name: Column(name, typ, created_value(name, typ, origin, set(group_cols) | set(aggs)))
                for name, typ in ctx.schema.items()}
    appended.update({c: Column(c, t, exp.column(c, quoted=True)) for c, t in new_cols.items()})
    conditions = [Condition(ConditionKind.SELECTOR, selector)] if selector is not None else []
    ctx.schema.update(new_cols)
    return AggregatePlan(op, f"op_{seq:03d}_aggregate", columns, conditions=conditions, group_by=list(group_cols),
                         appended=appended, summary=summary, condition=cond, new_columns=new_cols)


# ------------------------------------------------------------------ append
def bind_append(ctx: BindContext, op: AppendOperation) -> Optional[AppendPlan]:
    """Rows of another dataset (optionally aggregated), aligned to the working columns."""
    seq = op.seq
    ref = op.source
    ds = ctx.lookup(ref, APPEND_REFERENCE, f"append source of operation {seq}")
    if ds is None:
        return None
    src_cols = {c.name: T.from_sql(c.type) for c in ds.columns}
    temporal = {n: T.from_sql(t) for n, t in sysc.TEMPORAL_COLUMNS[ds.temporal_mode]}
    scope = Scope(ds.table_name, {**src_cols, **temporal}, None, {}, what=f"source dataset '{ds.name}'")
    codes = {"syntax": "APPEND_004", "unknown_column": "APPEND_006", "unknown_alias": "APPEND_006",
             "function": "APPEND_005", "arity": "APPEND_005"}
    sel = ctx.compile_expr(ctx.translator(scope), op.source_selector, op.location, codes, expect="boolean")
    if op.source_selector is not None and sel is None:
        return None
    view = ctx.view_for(ds, ref.dataset_version, Role.APPEND, seq, None, row_ids=not op.has_aggregation)
    where = and_all([not_deleted(), periods.period_filter(ds.temporal_mode),
                     exp.Paren(this=sel.sql) if sel is not None else None])
    source_columns = [*src_cols, *temporal, "_row_id"]
    summary, group_cols = None, []
    if op.has_aggregation:
        group_cols = ctx.group_columns(op, scope, "APPEND_006")
        tr = ctx.translator(scope, aggregates=True, group_keys=set(group_cols or []))
        aggs = ctx.aggregations(op, tr, {**codes, "column": "APPEND_003"}, "APPEND_005")
        if group_cols is None or aggs is None:
            return None
        appended_types = {c: src_cols.get(c) or temporal[c] for c in group_cols}
        appended_types.update({c: t.type for c, t in aggs.items()})
        summary = {c: exp.column(c, quoted=True) for c in group_cols}
        summary.update({c: t.sql for c, t in aggs.items()})
        identity = [exp.Literal.number(seq)] + [exp.column(c, quoted=True) for c in group_cols]
    else:
        appended_types = {**src_cols}
        identity = [exp.Literal.number(seq), exp.column("_row_id", quoted=True)]
    extra = [c for c in appended_types if c not in ctx.schema and not sysc.is_system(c)]
    for c in extra:
        ctx.errors.add("APPEND_003", f"column '{c}' of the appended rows is not a working column",
                       ref.location, c, "every appended column must exist in the working dataset: aggregate "
                       "into working columns (e.g. amount_local = SUM(amount)) or leave the column out")
    mismatched = [c for c in appended_types if c in ctx.schema and not T.compatible(ctx.schema[c], appended_types[c])]
    for c in mismatched:
        ctx.errors.add("APPEND_003", f"column '{c}' is {appended_types[c]} in the appended rows but "
                       f"{ctx.schema[c]} in the working dataset", ref.location, c, "align the types")
    if extra or mismatched:
        return None
    carried = set(appended_types) | (set() if op.has_aggregation else set(temporal) & set(ctx.schema))
    origin = sysc.created_row(ds.id, seq, identity)
    appended = {name: Column(name, typ, created_value(name, typ, origin, carried)) for name, typ in ctx.schema.items()}
    columns = {c: Column(c, t, exp.column(c, quoted=True)) for c, t in ctx.schema.items()}
    read = Read(view, ds, Role.APPEND, None, tuple((c, c) for c in source_columns))
    conditions = [Condition(ConditionKind.SOURCE_SELECTOR, sel.sql, view)] if sel is not None else []
    conditions += temporal_conditions(ds.temporal_mode, view)
    return AppendPlan(op, f"op_{seq:03d}_append", columns, reads=[read], conditions=conditions, group_by=group_cols,
                      appended=appended, summary=summary, source_where=where, source_columns=source_columns)

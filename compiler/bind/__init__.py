"""Bind a project: resolve names and types operation by operation, check every rule, and build the
typed :class:`~ledgerflow.compiler.plan.Plan` (no SQL text: :mod:`..lower` renders it).

The working schema evolves as operations run: a column added by operation 2 is visible to
operation 3; a join alias is visible only inside its own update. Every problem is collected as a
:class:`~ledgerflow.compiler.errors.Diagnostic`; binding continues past errors so one pass reports
them all. One binder per operation kind (:data:`BINDERS`).
"""
from __future__ import annotations

from typing import Callable

from sqlglot import exp

from .. import system_columns as sysc
from .. import types as T
from ..codes import INPUT_REFERENCE
from ..model import OperationKind, Project, Workspace
from ..plan import Column, InputPlan, OperationPlan, Plan, Read, Role
from .checks import bind_checks
from .context import BindContext
from .output import bind_output
from .rows import bind_aggregate, bind_append, bind_delete
from .update import bind_update, temporal_conditions

BINDERS: dict[OperationKind, Callable] = {
    OperationKind.UPDATE: bind_update,
    OperationKind.AGGREGATE: bind_aggregate,
    OperationKind.APPEND: bind_append,
    OperationKind.DELETE: bind_delete,
    OperationKind.OUTPUT: bind_output,
}


def bind(workspace: Workspace, project: Project) -> Plan:
    """The typed plan of ``project`` with every diagnostic found (operations with errors are left out)."""
    ctx = BindContext(workspace, project)
    ds = ctx.lookup(project.input, INPUT_REFERENCE, "input dataset")
    ctx.input_ds = ds
    input_plan = None
    operations: list[OperationPlan] = []
    if ds is not None:
        ctx.table = ds.table_name
        ctx.schema = {c.name: T.from_sql(c.type) for c in ds.columns}
        ctx.schema.update(sysc.system_types(ds.temporal_mode))
        view = ctx.view_for(ds, project.input.dataset_version, Role.INPUT, 0, None, row_ids=True)
        read = Read(view, ds, Role.INPUT, None, tuple((c, c) for c in ctx.schema))
        columns = {c: Column(c, t, exp.column(c, quoted=True)) for c, t in ctx.schema.items()}
        input_plan = InputPlan(read, columns, temporal_conditions(ds.temporal_mode, view))
        for op in project.operations:
            if op.kind is None:
                continue
            planned = BINDERS[op.kind](ctx, op)
            if planned is not None:
                operations.append(planned)
    checks = bind_checks(ctx, input_plan, operations)
    return Plan(project, ds, list(ctx.inputs.values()), input_plan, operations, ctx.schema,
                ctx.errors.diagnostics, checks)

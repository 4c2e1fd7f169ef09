"""Bind a project (:mod:`.bind`): the input dataset read, then each operation by the binder of its kind's
registry entry (:mod:`.kinds.registry`), then the project's checks, into the typed :class:`~.plan.Plan`."""
from __future__ import annotations

from sqlglot import exp

from . import system_columns as sysc
from . import types as T
from .check_binding import bind_checks
from .bind.context import BindContext
from .bind.update import temporal_conditions
from .codes import INPUT_REFERENCE
from .kinds.registry import operation_kind
from .model import Project, Workspace
from .plan import Column, InputPlan, OperationPlan, Plan, Read, Role


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
            planned = operation_kind(op.kind).binder(ctx, op)
            if planned is not None:
                operations.append(planned)
    checks = bind_checks(ctx, input_plan, operations)
    return Plan(project, ds, list(ctx.inputs.values()), input_plan, operations, ctx.schema,
                ctx.errors.diagnostics, checks)

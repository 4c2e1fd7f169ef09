"""Registered datasets known at compile time: their columns come from the producing project's plan.

An output with ``register_as_dataset: NAME`` makes ``NAME`` a dataset other projects may read (input,
join, append source). Its columns and types are that output's columns, so a consumer compiles and
validates on a fresh clone, before anything ran. :func:`derive_registered` binds the producing
projects in dependency order (:mod:`.graph`), each against the datasets its upstream registered, and
adds one :class:`~.model.Dataset` (``registered=True``, temporal mode ``period``: an output writes
``_period`` partitions) per registered name.

What only a run can know stays with the run store (``adapters/runstore.py``): the versions, their
locations and periods. A dataset the store already knows keeps those versions; the plan gives its
columns. A type the plan does not know exactly (a computed number: Spark decides its precision) is
taken from the newest registered version when there is one, else written ``number`` (the DSL checks
it as a number; a run always reads a registered version, whose written schema gives the exact type).

A producer with errors registers nothing: its consumers get one ``GRAPH-003`` each (the producer's
own errors are reported once, with the producer), unless the run store knows the dataset already.
"""
from __future__ import annotations

import uuid
from typing import Optional

from .model import ColumnDef, Dataset, OutputOperation, Project, Workspace

REGISTERED_NAMESPACE = uuid.UUID("6f1c1c8e-6a57-4b8e-9d43-2f1b0c9d7a11")
INEXACT_NUMBER = "number"  # a computed number whose exact Spark type only a run knows
INEXACT = "unknown"  # a value of unknown type (e.g. an assigned NULL)


def stand_in_type(column_type: str) -> str:
    """A Spark type for a declared column type, with a stand-in for the inexact ones (``decimal(38,10)``,
    the bare ``decimal``, for a number; ``string`` for an unknown): for tools that build empty or given
    rows of a registered dataset before any run registered it (e.g. the analyzer check of the tests)."""
    return {INEXACT_NUMBER: "decimal(38,10)", INEXACT: "string"}.get(column_type, column_type)


def registered_id(name: str) -> str:
    """The stable dataset id of a registered dataset (a UUIDv5 of its name)."""
    return str(uuid.uuid5(REGISTERED_NAMESPACE, name))


def derive_registered(ws: Workspace) -> None:
    """Add (or complete) every dataset an output of ``ws`` registers, in place (see the module docstring).

    The graph must be free of cycles (checked by the caller): producers are bound upstream first."""
    from .bind import bind  # binding needs the full compiler; a workspace without registrations never loads it
    from .graph import WorkspaceGraph, registrations

    regs = registrations(ws)
    if not regs:
        return
    producers = {p.name for outputs in regs.values() for p, _ in outputs}
    graph = WorkspaceGraph(ws)
    for name in graph.project_order():
        if name not in producers:
            continue
        project = ws.find_project(name)
        plan = bind(ws, project)
        for op_plan in plan.operations:
            op = op_plan.operation
            if not isinstance(op, OutputOperation) or not op.register_as_dataset:
                continue
            reg = str(op.register_as_dataset)
            if reg not in regs or regs[reg][0][0] is not project or regs[reg][0][1] is not op:
                continue  # a declared name, or a second registration (GRAPH-002)
            if plan.diagnostics:
                continue
            columns = [(n, c.type.sql or (INEXACT_NUMBER if c.type.kind == "number" else INEXACT))
                       for n, c in op_plan.columns.items()]
            _put(ws, _dataset(reg, columns, ws.find_dataset(reg), project, op))
        if plan.diagnostics:
            for reg, outputs in regs.items():
                if outputs[0][0] is project and ws.find_dataset(reg) is None:
                    ws.unavailable[reg] = project.name


def _dataset(name: str, columns: list[tuple[str, str]], stored: Optional[Dataset], project: Project,
             op: OutputOperation) -> Dataset:
    """The catalog entry of a registered dataset: the output's user columns (system columns are implied)."""
    stored_types = {c.name: c.type for c in stored.columns} if stored is not None and stored.registered else {}
    cols = []
    for col, typ in columns:
        if col.startswith("_"):
            continue
        if typ in (INEXACT_NUMBER, INEXACT):
            typ = stored_types.get(col, typ)
        cols.append(ColumnDef(col, typ))
    loc = op.register_as_dataset.location() if hasattr(op.register_as_dataset, "location") else op.location
    return Dataset(id=registered_id(name), name=name, status="active", table_name=name, temporal_mode="period",
                   columns=cols, versions=list(stored.versions) if stored is not None and stored.registered else [],
                   description=f"registered by project {project.name}, output {op.seq}", file=project.file,
                   location=loc, registered=True)


def _put(ws: Workspace, ds: Dataset) -> None:
    """Replace the run store's entry of ``ds.name`` by ``ds``, or add it."""
    for i, d in enumerate(ws.datasets):
        if d.name == ds.name:
            ws.datasets[i] = ds
            return
    ws.datasets.append(ds)

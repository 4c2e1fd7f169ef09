"""The registered-datasets pass, between loading a workspace and compiling its projects: the datasets
outputs register, with the columns of their producing projects' plans.

An output with ``register_as_dataset: NAME`` makes ``NAME`` a dataset other projects may read (input,
join, append source). Its columns and types are that output's columns, so a consumer compiles and
validates on a fresh clone, before anything ran. :func:`derive_registered` checks the workspace graph
(:mod:`.graph`: ``GRAPH-001`` a cycle, ``GRAPH-002`` a name registered twice), then binds the producing
projects in dependency order, each against the datasets its upstream registered, and adds one
:class:`~.model.Dataset` (``registered=True``, temporal mode ``period``: an output writes ``_period``
partitions) per registered name.

What only a run can know stays with the run store (``adapters/runstore.py``): the versions, their
locations and periods. A dataset the store already knows keeps those versions; the plan gives its
columns. A type the plan does not know exactly (a computed number: Spark decides its precision) is
taken from the newest registered version when there is one, else written ``number`` (the DSL checks
it as a number; a run always reads a registered version, whose written schema gives the exact type).

A producer with errors registers nothing: its consumers get one ``GRAPH-003`` each (the producer's
own errors are reported once, with the producer), unless the run store knows the dataset already.

A producer's plan without errors is kept on the workspace (:attr:`~.model.Workspace.producer_plans`):
compiling or planning that project of that workspace reuses it instead of binding it again. It is
exactly what a fresh bind gives: every dataset the producer reads is upstream of it, so registered
before it was bound, and nothing the pass adds later changes a plan without errors (a plan with errors
is not kept: its "did you mean" hints name every dataset, later ones included).
"""
from __future__ import annotations

from typing import Optional

from .binding import bind
from .errors import CompileError
from .graph import WorkspaceGraph, registrations
from .model import ColumnDef, Dataset, OutputOperation, Project, Workspace
from .registered import INEXACT, INEXACT_NUMBER, registered_id


def derive_registered(ws: Workspace) -> None:
    """Check the graph of ``ws`` (:class:`CompileError` on a cycle or a name registered twice), add (or
    complete) every dataset an output registers, in place, and keep the producers' plans without errors
    as ``ws.producer_plans`` by project name. See the module docstring."""
    regs = registrations(ws)
    if not regs:
        return
    graph = WorkspaceGraph(ws)
    problems = graph.problems()
    if problems:
        raise CompileError(problems)
    producers = {p.name for outputs in regs.values() for p, _ in outputs}
    positions: dict[str, int] = {}  # dataset name -> its first place in ws.datasets (what _put replaces)
    for i, d in enumerate(ws.datasets):
        positions.setdefault(d.name, i)
    for name in graph.project_order():
        if name not in producers:
            continue
        project = ws.find_project(name)
        plan = bind(ws, project)
        if plan.diagnostics:
            for reg, outputs in regs.items():
                if outputs[0][0] is project and ws.find_dataset(reg) is None:
                    ws.unavailable[reg] = project.name
            continue
        ws.producer_plans[name] = plan
        for op_plan in plan.operations:
            op = op_plan.operation
            if not isinstance(op, OutputOperation) or not op.register_as_dataset:
                continue
            reg = str(op.register_as_dataset)
            if reg not in regs or regs[reg][0][0] is not project or regs[reg][0][1] is not op:
                continue  # a declared name, or a second registration (GRAPH-002)
            columns = [(n, c.type.sql or (INEXACT_NUMBER if c.type.kind == "number" else INEXACT))
                       for n, c in op_plan.columns.items()]
            if any(t in (INEXACT_NUMBER, INEXACT) for n, t in columns if not n.startswith("_")):
                ws.inexact_registered.add(reg)
            _put(ws, _dataset(reg, columns, ws.find_dataset(reg), project, op), positions)


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


def _put(ws: Workspace, ds: Dataset, positions: dict[str, int]) -> None:
    """Replace the run store's entry of ``ds.name`` by ``ds``, or add it; ``positions`` (name -> place in
    ``ws.datasets``) is kept up to date, so a thousand registrations do not each walk the list."""
    i = positions.get(ds.name)
    if i is not None:
        ws.datasets[i] = ds
        return
    positions[ds.name] = len(ws.datasets)
    ws.datasets.append(ds)

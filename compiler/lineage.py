"""Column lineage of a project's outputs, read from the typed plan (``ledgerflow lineage``, docs/lineage.md).

For every column an output writes: the input dataset columns it comes from, each with the
OpenLineage column-lineage subtype that says how. Pure: no Spark, no files; :mod:`.lineage_formats`
renders the result as text, JSON, an OpenLineage facet, dot or mermaid.

The walk through one plan, and how each kind is decided, is :mod:`.lineage_walk`.

Across projects
---------------
An input dataset that another project's output registers (``register_as_dataset``) is followed
into that output's lineage (:func:`registering_output`), so the inputs are the original source
columns; each input remembers the registered datasets it went through (:attr:`Input.via`). A column
the registering output does not write (``_period`` comes from the partition, ``_deleted`` when the
output lists its columns) stays a column of the registered dataset. The row inputs of the upstream
output keep their kind downstream (its join is a join input of whatever reads the dataset).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from .compile import find_project, plan_project
from .errors import CompileError, LedgerflowError, did_you_mean
from .graph import registrations
from .lineage_walk import KINDS, Key, column_edges, compose
from .model import OutputOperation, Project, Workspace
from .plan import OutputPlan, Plan


class LineageError(LedgerflowError):
    """A lineage question that names no output or column of the project (exit 1)."""


@dataclass(frozen=True)
class Input:
    """One input of an output column: a dataset column, how it reaches the output, and the registered
    datasets the path went through (``project.seq -> dataset`` steps, nearest first)."""

    dataset: str
    column: str
    kind: str
    via: tuple[str, ...] = ()


@dataclass
class ColumnLineage:
    """The inputs of one column of one output."""

    output: int
    column: str
    inputs: list[Input] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)  # the checks on this output reading this column


# ------------------------------------------------------------------------------ across projects
def registering_output(ws: Workspace, dataset_name: str) -> Optional[tuple[Project, OutputOperation]]:
    """The project and output operation of ``ws`` that register ``dataset_name`` (the workspace graph's
    :func:`~.graph.registrations`: a declared dataset of that name wins; GRAPH-002 refuses two)."""
    found = registrations(ws).get(dataset_name)
    return found[0] if found else None


Planner = Callable[[Workspace, Project], Plan]


def _order(inputs: list[Input]) -> list[Input]:
    """Deduplicated (``via`` paths merged) and sorted by kind, dataset, column."""
    # the least path of each input (one path, deterministic), kept as the inputs come: a set of paths would hash
    # each path whole, and a path through a chain of a thousand registered datasets is a thousand steps long
    merged: dict[tuple[str, str, str], tuple] = {}
    for i in inputs:
        key = (i.dataset, i.column, i.kind)
        best = merged.get(key)
        if best is None or (i.via and i.via is not best and (not best or i.via < best)):
            merged[key] = i.via
    out = []
    for (ds, col, kind), via in merged.items():
        out.append(Input(ds, col, kind, via))
    return sorted(out, key=lambda i: (KINDS.index(i.kind), i.dataset, i.column))


class _Lineage:
    """Lineage of every output of one or more plans, following registered datasets upstream."""

    def __init__(self, ws: Optional[Workspace], planner: Optional[Planner]):
        self.ws, self.planner = ws, planner
        self.cache: dict[tuple[str, int], Optional[dict[str, list[Input]]]] = {}
        self.active: set[tuple[str, int]] = set()
        self.plans: dict[str, Optional[Plan]] = {}
        self.registrations: Optional[dict] = None
        self.edges: dict[int, tuple[Plan, list]] = {}
        self.paths: dict[tuple[str, int], tuple[tuple, tuple]] = {}  # (step, id of a path) -> (the path, step + path)

    def of_plan(self, plan: Plan) -> list[ColumnLineage]:
        """Every output column of ``plan`` with its inputs, registered datasets followed upstream."""
        result = [ColumnLineage(seq, name, _order(self.upstream(edges))) for seq, name, edges in self._edges(plan)]
        _attach_checks(result, plan)
        return sorted(result, key=lambda c: c.output)  # stable: column order kept within an output

    def upstream(self, edges: list[tuple[Key, str]]) -> list[Input]:
        """Inputs, with columns of registered datasets replaced by their own inputs."""
        out: list[Input] = []
        for (ds, col), kind in edges:
            found = self._registered(ds)
            if found is None:
                out.append(Input(ds, col, kind))
                continue
            project, op = found
            columns = self._output(project, op.seq)
            if columns is None or col not in columns:
                out.append(Input(ds, col, kind))
                continue
            step = f"{project.name}.{op.seq} -> {ds}"
            for i in columns[col]:
                out.append(Input(i.dataset, i.column, compose(kind, i.kind), self._path(step, i.via)))
        return out

    def _path(self, step: str, via: tuple) -> tuple:
        """``(step,) + via``, made once per step and path: the inputs sharing a path share one tuple, so a chain
        of a thousand registered datasets copies each path once per step, not once per input column."""
        key = (step, id(via))
        kept = self.paths.get(key)
        if kept is None or kept[0] is not via:
            kept = self.paths[key] = (via, (step,) + via)
        return kept[1]

    def _registered(self, name: str) -> Optional[tuple[Project, OutputOperation]]:
        if self.ws is None or self.planner is None:
            return None
        if self.registrations is None:  # the workspace's registrations, found once (not once per column)
            self.registrations = registrations(self.ws)
        found = self.registrations.get(name)
        return found[0] if found else None

    def _output(self, project: Project, seq: int) -> Optional[dict[str, list[Input]]]:
        """The lineage of output ``seq`` of ``project`` by column. The registering outputs upstream of it are
        found first (an explicit stack, not recursion: a chain of a thousand projects is as deep as a chain of
        two) and computed upstream first, so each one's inputs are already known when it is computed."""
        key = (project.name, seq)
        if key in self.cache:
            return self.cache[key]
        if key in self.active:  # a cycle (a validation error of its own): stop here
            return None
        for p, s in self._upstream_order(project, seq):
            k = (p.name, s)
            if k in self.cache or k in self.active:
                continue
            self.active.add(k)
            try:
                plan = self._plan(p)
                cols = None if plan is None else {c.column: c.inputs for c in self.of_plan(plan) if c.output == s}
            finally:
                self.active.discard(k)
            self.cache[k] = cols
        return self.cache.get(key)

    def _edges(self, plan: Plan) -> list:
        """:func:`~.lineage_walk.column_edges` of ``plan``, walked once (the plan kept with them, so its id stays its
        own)."""
        kept = self.edges.get(id(plan))
        if kept is None or kept[0] is not plan:
            kept = self.edges[id(plan)] = (plan, column_edges(plan))
        return kept[1]

    def _plan(self, project: Project) -> Optional[Plan]:
        """``project``'s plan (planned once), None when it has errors."""
        if project.name not in self.plans:
            plan = self.planner(self.ws, project)
            self.plans[project.name] = None if plan.diagnostics else plan
        return self.plans[project.name]

    def _upstream_order(self, project: Project, seq: int) -> list[tuple[Project, int]]:
        """The registering outputs ``project``'s output ``seq`` reads through, transitively, upstream first, and
        itself last (a depth-first walk with an explicit stack)."""
        order: list[tuple[Project, int]] = []
        seen: set[tuple[str, int]] = set()
        stack: list[tuple[Project, int, bool]] = [(project, seq, False)]
        while stack:
            p, s, ready = stack.pop()
            if ready:
                order.append((p, s))
                continue
            if (p.name, s) in seen or (p.name, s) in self.cache:
                continue
            seen.add((p.name, s))
            stack.append((p, s, True))
            plan = self._plan(p)
            for ds in sorted({ds for _seq, _name, edges in self._edges(plan) for (ds, _col), _kind in edges}
                             if plan is not None else ()):
                found = self._registered(ds)
                if found is not None:
                    stack.append((found[0], found[1].seq, False))
        return order


def _attach_checks(columns: list[ColumnLineage], plan: Plan) -> None:
    """Name, on each output column, the checks on that output that read it (docs/checks.md), in the
    order written; a check on the input reads no output column."""
    by_key = {(c.output, c.column): c for c in columns}
    for check in plan.checks:
        for name in check.columns if check.on is not None else ():
            found = by_key.get((check.on, name))
            if found is not None and check.name not in found.checks:
                found.checks.append(check.name)


def plan_lineage(plan: Plan, ws: Optional[Workspace] = None, planner: Optional[Planner] = None,
                 walker: Optional["LineageWalker"] = None) -> list[ColumnLineage]:
    """Every column of every output of ``plan`` with its inputs (output seq order, then column order).

    With ``ws`` and ``planner`` (e.g. :func:`~.compile.plan_project`), inputs that are columns of a
    dataset registered by a project of ``ws`` are followed into that project's output. ``walker``: a
    :class:`LineageWalker` of the same ``ws`` and ``planner`` kept across calls, so that many projects' lineage
    (the docs site's) plans and walks each upstream project once, not once per project downstream of it."""
    return (walker or _Lineage(ws, planner)).of_plan(plan)


LineageWalker = _Lineage  # the walk of many projects' lineage sharing what it found (see plan_lineage)


def select(columns: list[ColumnLineage], plan: Plan, column: Optional[str] = None,
           output: Optional[int] = None) -> list[ColumnLineage]:
    """The lineage of one output and/or one column; :class:`LineageError` naming what exists otherwise."""
    outputs = [o.seq for o in plan.operations if isinstance(o, OutputPlan)]
    name = plan.project.name
    if output is not None and output not in outputs:
        raise LineageError(f"project '{name}' has no output operation {output}; outputs: "
                           f"{', '.join(map(str, outputs)) or 'none'}.")
    chosen = [c for c in columns if output is None or c.output == output]
    if column is not None:
        known = list(dict.fromkeys(c.column for c in chosen))
        chosen = [c for c in chosen if c.column == column]
        if not chosen:
            where = f"output {output}" if output is not None else "any output"
            hint = did_you_mean(column, known)
            raise LineageError(f"project '{name}' writes no column '{column}' in {where}; "
                               + (hint or f"columns: {', '.join(known)}."))
    return chosen


def project_lineage(ws: Workspace, ref: str, output: Optional[int] = None) -> tuple[Plan, list[ColumnLineage]]:
    """``ledgerflow lineage PROJECT[.COLUMN] [--output SEQ]``: the plan of the project and the lineage
    asked for. ``ref`` is a project (name, id or YAML path), optionally followed by ``.COLUMN``."""
    project, column = find_project(ws, ref), None
    if project is None and "." in ref:
        head, column = ref.rsplit(".", 1)
        project = find_project(ws, head)
    if project is None:
        raise LineageError(f"no project '{ref}'; projects: {', '.join(sorted(p.name for p in ws.projects))}.")
    plan = plan_project(ws, project)
    if plan.diagnostics:
        raise CompileError(plan.diagnostics)
    return plan, select(plan_lineage(plan, ws, plan_project), plan, column, output)

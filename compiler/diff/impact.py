"""Impact of a change beyond the projects it touches (``impact`` in docs/diff.md).

A changed output column of project P that P registers as dataset R (``register_as_dataset``)
reaches every project Q of the head workspace that reads R: Q's output columns whose column lineage
(:mod:`..lineage`, docs/lineage.md) has an input ``R.<changed column>`` are impacted; when P's output
can change its row set (``rows_changed``), every Q output column with any input from R is. An
impacted column of an output that Q itself registers is a changed column of that dataset in turn,
so the walk continues downstream until nothing new is reached (the graph has no cycles: GRAPH-001).
"""
from __future__ import annotations

from collections import deque

from ..compile import plan_project
from ..graph import dataset_name, project_reads, registrations
from ..lineage import plan_lineage
from ..model import Project, Workspace
from .result import Impact, ProjectDiff, Status


def _registered_names(ws: Workspace) -> dict[tuple[str, int], str]:
    """(project, output seq) -> the dataset that output registers in ``ws``."""
    return {(p.name, op.seq): name for name, found in registrations(ws).items() for p, op in found}


def _lineage_by_dataset(ws: Workspace, project: Project) -> list[tuple[int, str, set[tuple[str, str, str]]]]:
    """(output seq, column, {(dataset, column, kind)}) of every output column of ``project``, one step
    deep (registered datasets are not followed upstream: they are what the walk matches)."""
    plan = plan_project(ws, project)
    if plan.diagnostics:
        return []
    return [(c.output, c.column, {(i.dataset, i.column, i.kind) for i in c.inputs}) for c in plan_lineage(plan)]


def impact_of(base: Workspace, head: Workspace, changes: list[ProjectDiff]) -> list[Impact]:
    """The output columns of other projects that read a changed output column through a registered
    dataset, transitively (see the module docstring), in the order they are reached."""
    # registered dataset -> (changed columns, whether rows can change, why)
    frontier: list[tuple[str, set[str], bool, str]] = []
    registered = _registered_names(head)
    for change in changes:
        if change.status not in (Status.MODIFIED, Status.ADDED):
            continue
        for out in change.outputs:
            name = registered.get((change.name, out.seq))
            if name is None:
                continue
            columns = {c.column for c in out.columns}
            if columns or out.rows_changed:
                frontier.append((name, columns, out.rows_changed, f"{change.name} output {out.seq}"))
    if not frontier:
        return []
    # dataset -> the projects reading it (from their YAML, in name order); a project's lineage is computed when
    # the walk first reaches a dataset it reads, so a change reaching a few projects plans only those
    regs = registrations(head)
    reading: dict[str, list[Project]] = {}
    for p in sorted(head.projects, key=lambda p: p.name):
        for ref, _role, _loc in project_reads(p):
            readers_of_ref = reading.setdefault(dataset_name(head, str(ref), regs) or str(ref), [])
            if p not in readers_of_ref:
                readers_of_ref.append(p)
    lineage: dict[str, list] = {}

    def readers(dataset: str) -> list[tuple[str, int, str, set]]:
        """The output columns reading ``dataset``, in project then output order."""
        out = []
        for p in reading.get(dataset, ()):
            if p.name not in lineage:
                lineage[p.name] = _lineage_by_dataset(head, p)
            out += [(p.name, seq, column, inputs) for seq, column, inputs in lineage[p.name]
                    if any(d == dataset for d, _c, _k in inputs)]
        return out

    found: list[Impact] = []
    seen: set[tuple[str, int, str]] = set()
    queue = deque(frontier)
    while queue:
        dataset, columns, rows, origin = queue.popleft()
        reached: dict[tuple[str, int], set[str]] = {}
        for project, seq, column, inputs in readers(dataset):
            reasons = sorted(f"{d}.{c} ({k})" for d, c, k in inputs if d == dataset and (rows or c in columns))
            if not reasons or (project, seq, column) in seen:
                continue
            seen.add((project, seq, column))
            direct = any(d == dataset and c in columns for d, c, _ in inputs)
            what = "changed" if direct else "its rows can change"
            found.append(Impact(project, seq, column,
                                f"reads {', '.join(reasons)}; {dataset} is written by {origin} ({what})"))
            reached.setdefault((project, seq), set()).add(column)
        for (project, seq), cols in reached.items():
            name = registered.get((project, seq))
            if name is not None:
                queue.append((name, cols, False, f"{project} output {seq}"))
    return found

"""Impact of a change beyond the projects it touches (``impact`` in docs/diff.md).

A changed output column of project P that P registers as dataset R (``register_as_dataset``)
reaches every project Q of the head workspace that reads R: Q's output columns whose column lineage
(:mod:`..lineage`, docs/lineage.md) has an input ``R.<changed column>`` are impacted; when P's output
can change its row set (``rows_changed``, a quarantine check on it, or R now registered by another output
than before), every Q output column with any input from R is. An impacted column of an output that Q itself
registers is a changed column of that dataset in turn; and that output's row set can change too when what
reached it decides rows there (a ``join``, ``filter`` or ``group_by`` input: a changed grouping key changes
how many groups there are, a changed row set of Q's input changes Q's), so ``COUNT(1)`` two steps down is
reached. The walk continues downstream until nothing new is reached (the graph has no cycles: GRAPH-001).
"""
from __future__ import annotations

from collections import deque

from ..compile import plan_project
from ..graph import dataset_name, project_reads, registrations
from ..lineage import plan_lineage
from ..lineage_walk import ROW_KINDS
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


def _seeds(base: Workspace, head: Workspace, changes: list[ProjectDiff]) -> list[tuple[str, set[str], bool, str]]:
    """(registered dataset, its changed columns, whether its rows can change, why) of each changed output that
    registers a dataset in ``head``."""
    registered, before = _registered_names(head), _registered_names(base)
    out = []
    for change in changes:
        if change.status not in (Status.MODIFIED, Status.ADDED):
            continue
        base_seq = {o.seq: o.base_seq for o in change.operations}
        for o in change.outputs:
            name = registered.get((change.name, o.seq))
            if name is None:
                continue
            columns = {c.column for c in o.columns}
            # the dataset is registered by another output than before: its readers read other rows
            moved = o.destination_changed and before.get((change.name, base_seq.get(o.seq))) != name
            if columns or o.rows_changed or moved:
                out.append((name, columns, o.rows_changed or moved, f"{change.name} output {o.seq}"))
    return out


def impact_of(base: Workspace, head: Workspace, changes: list[ProjectDiff]) -> list[Impact]:
    """The output columns of other projects that read a changed output column through a registered
    dataset, transitively (see the module docstring), in the order they are reached."""
    frontier = _seeds(base, head, changes)
    if not frontier:
        return []
    registered = _registered_names(head)
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
    passed: dict[tuple[str, int], tuple[set[str], bool]] = {}  # what each registering output passed on so far
    queue = deque(frontier)
    while queue:
        dataset, columns, rows, origin = queue.popleft()
        reached: dict[tuple[str, int], tuple[set[str], bool]] = {}
        for project, seq, column, inputs in readers(dataset):
            read = [(d, c, k) for d, c, k in inputs if d == dataset and (rows or c in columns)]
            if not read:
                continue
            cols, rows_here = reached.get((project, seq), (set(), False))
            reached[(project, seq)] = (cols | {column}, rows_here or any(k in ROW_KINDS for _d, _c, k in read))
            if (project, seq, column) in seen:
                continue
            seen.add((project, seq, column))
            direct = any(d == dataset and c in columns for d, c, _ in inputs)
            what = "changed" if direct else "its rows can change"
            found.append(Impact(project, seq, column,
                                f"reads {', '.join(sorted(f'{d}.{c} ({k})' for d, c, k in read))}; {dataset} is "
                                f"written by {origin} ({what})"))
        for (project, seq), (cols, rows_here) in reached.items():
            name = registered.get((project, seq))
            if name is None:
                continue
            before_cols, before_rows = passed.get((project, seq), (set(), False))
            if cols <= before_cols and (before_rows or not rows_here):
                continue  # nothing new to pass on (each output's set only grows: the walk ends)
            passed[(project, seq)] = (before_cols | cols, before_rows or rows_here)
            queue.append((name, before_cols | cols, before_rows or rows_here, f"{project} output {seq}"))
    return found

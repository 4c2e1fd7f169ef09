"""The result of a diff (docs/diff.md) as dataclasses, and its JSON form (:func:`to_json`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Optional


class Status(str, Enum):
    """Whether a project, operation or dataset exists on each side and changed."""

    ADDED = "added"
    REMOVED = "removed"
    MODIFIED = "modified"
    UNCHANGED = "unchanged"


class Category(str, Enum):
    """How a change can affect what a project writes, in increasing order of severity."""

    NO_OP = "no_op"
    NON_BREAKING = "non_breaking"
    BREAKING = "breaking"

    @property
    def rank(self) -> int:
        """0 (no_op) .. 2 (breaking)."""
        return list(Category).index(self)


class ColumnChangeKind(str, Enum):
    """What changed about one output column."""

    ADDED = "added"
    REMOVED = "removed"
    EXPRESSION = "expression"
    TYPE = "type"


@dataclass
class OperationChange:
    """One operation, matched across sides (``seq`` and ``name`` of head, or of base when removed)."""

    seq: int
    name: str
    status: Status
    kind: str = ""
    base_seq: Optional[int] = None  # where it was (an operation renumbered keeps its identity)


@dataclass
class ColumnChange:
    """One changed column of an output; ``detail`` says how (for text and markdown, not in JSON)."""

    column: str
    change: ColumnChangeKind
    detail: str = ""


@dataclass
class OutputChange:
    """One output that exists on either side and changed."""

    seq: int
    name: str
    rows_changed: bool
    columns: list[ColumnChange] = field(default_factory=list)
    status: Status = Status.MODIFIED
    destination_changed: bool = False


@dataclass
class CheckChange:
    """One check added, removed or modified (docs/checks.md); ``quarantine``: it quarantines on either side."""

    name: str
    status: Status
    quarantine: bool = False


@dataclass
class ProjectDiff:
    """One project: its status, category, operations, changed outputs and SQL diff."""

    name: str
    status: Status
    category: Optional[Category]
    operations: list[OperationChange] = field(default_factory=list)
    outputs: list[OutputChange] = field(default_factory=list)
    sql_diff: str = ""
    reasons: list[str] = field(default_factory=list)  # why the category (text and markdown only)
    checks: list[CheckChange] = field(default_factory=list)


@dataclass
class DatasetDiff:
    """One declared dataset and what changed in its declaration (or in the resolver that locates it)."""

    name: str
    status: Status
    changes: list[str] = field(default_factory=list)


@dataclass
class Impact:
    """An output column of another project that reads a changed output column (through a registered dataset)."""

    project: str
    output: int
    column: str
    because: str


@dataclass
class WorkspaceDiff:
    """Everything ``ledgerflow diff`` reports."""

    base: str
    head: str
    projects: list[ProjectDiff] = field(default_factory=list)
    datasets: list[DatasetDiff] = field(default_factory=list)
    impact: list[Impact] = field(default_factory=list)
    selection_impacted: bool = False  # `--project`: a change outside the selection reaches it (breaking)

    def worst(self) -> Optional[Category]:
        """The most severe category of any project (None when nothing changed); breaking when a change outside
        a ``--project`` selection reaches a selected project."""
        found = [p.category for p in self.projects if p.category is not None]
        found += [Category.BREAKING] if self.selection_impacted else []
        return max(found, key=lambda c: c.rank) if found else None


def to_json(diff: WorkspaceDiff) -> dict[str, Any]:
    """The JSON document of docs/diff.md (stable: exactly these keys, in this order)."""
    return {
        "base": diff.base,
        "head": diff.head,
        "projects": [{
            "name": p.name,
            "status": p.status.value,
            "category": p.category.value if p.category is not None else None,
            "operations": [{"seq": o.seq, "name": o.name, "status": o.status.value} for o in p.operations],
            "outputs": [{"seq": o.seq, "name": o.name, "rows_changed": o.rows_changed,
                         "columns": [{"column": c.column, "change": c.change.value} for c in o.columns]}
                        for o in p.outputs],
            "checks": [{"name": c.name, "status": c.status.value} for c in p.checks],
            "sql_diff": p.sql_diff,
        } for p in diff.projects],
        "datasets": [{"name": d.name, "status": d.status.value, "changes": list(d.changes)} for d in diff.datasets],
        "impact": [{"project": i.project, "output": i.output, "column": i.column, "because": i.because}
                   for i in diff.impact],
    }

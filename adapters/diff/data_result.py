"""What ``ledgerflow diff --data`` found (and what ``restate`` records as its ``data_diff``): dataclasses
that serialise to JSON (:meth:`DataDiff.to_json`, :meth:`WorkspaceDataDiff.to_json`; docs/commands.md).

Money stays exact: totals are :class:`~decimal.Decimal` and JSON carries them as strings
(``"2537000.00"``), as the run record carries decimals.
"""
from __future__ import annotations

import datetime
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Optional

# Columns never compared: the key rows are matched by, and the system columns whose value says when or
# by which operation a row was written rather than what it holds. `_updated_at` is the run start on every
# row an update touched: a row one side's update matched and the other's did not differs there, and its
# value columns say how. `_operation_seq` changes when operations are renumbered, no amount moving.
KEY = "_row_id"
IGNORED_COLUMNS = ("_updated_at", "_operation_seq")
SAMPLE_ROWS = 10  # rows shown per output
MAX_GROUPS = 1000  # --by groups kept per output (the largest changes first); the rest are counted


def json_value(value: Any) -> Any:
    """A value read from Spark as JSON: decimals as exact strings, dates and times in ISO form."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    return value


@dataclass
class ColumnCount:
    """How many matched rows changed their value of ``column``."""

    column: str
    changed_rows: int


@dataclass
class DecimalTotal:
    """A decimal column's sum on each side (every row of the output) and the change, HEAD − BASE."""

    column: str
    base: Decimal
    head: Decimal
    gross: Optional[Decimal] = None  # the sum of every row's absolute change (added and removed rows: whole value)

    @property
    def change(self) -> Decimal:
        """HEAD sum − BASE sum: the net change."""
        return self.head - self.base


@dataclass
class GroupChange:
    """One ``--by`` group with a difference: its key (HEAD's values, BASE's for a removed row)."""

    key: dict[str, Any]
    added: int
    removed: int
    changed: int
    changes: dict[str, Decimal]  # decimal column -> HEAD sum − BASE sum in the group
    gross: dict[str, Decimal] = field(default_factory=dict)  # decimal column -> its gross change in the group

    @property
    def rows(self) -> int:
        """Rows added, removed or changed in the group."""
        return self.added + self.removed + self.changed


@dataclass
class SampleRow:
    """A row that differs: ``values`` maps a column to (BASE value, HEAD value); a changed row lists the
    columns that changed, an added or removed row every compared column."""

    row_id: Optional[str]  # None when rows are matched otherwise (key columns, whole rows)
    status: str  # added | removed | changed
    values: dict[str, tuple]
    key: Optional[dict] = None  # the match key's values (group-by keys or --key), HEAD's or BASE's


@dataclass
class OutputDataDiff:
    """One output compared: BASE's rows against HEAD's, matched by ``_row_id``, by key columns or as whole rows."""

    name: str
    status: str = "compared"  # compared | added (HEAD only) | removed (BASE only)
    # how rows were matched: _row_id; group_by (an aggregate output's group-by keys); key (--key); or rows (whole
    # rows: no _row_id and no key)
    match: str = "_row_id"
    seq: Optional[int] = None
    base_rows: int = 0
    head_rows: int = 0
    added: int = 0
    removed: int = 0
    changed: int = 0
    columns: list[ColumnCount] = field(default_factory=list)  # every compared column, changed or not
    columns_added: list[str] = field(default_factory=list)  # HEAD only: not compared
    columns_removed: list[str] = field(default_factory=list)  # BASE only: not compared
    totals: list[DecimalTotal] = field(default_factory=list)
    by: list[str] = field(default_factory=list)
    groups: list[GroupChange] = field(default_factory=list)
    groups_left_out: int = 0
    samples: list[SampleRow] = field(default_factory=list)
    key: list[str] = field(default_factory=list)  # the match's columns (group_by, key); [_row_id]; [] for rows
    match_note: str = ""  # why rows were matched as they were when the plain rule did not apply
    copied: list[str] = field(default_factory=list)  # decimal columns copied from a join: per row, never totalled

    @property
    def rows_differing(self) -> int:
        """Rows added, removed or changed."""
        return self.added + self.removed + self.changed

    @property
    def found(self) -> bool:
        """Whether anything differs (rows, or the output or a column exists on one side only)."""
        return bool(self.rows_differing or self.status != "compared" or self.columns_added or self.columns_removed)

    def to_json(self) -> dict:
        """The output's JSON object."""
        return {
            "name": self.name, "seq": self.seq, "status": self.status, "match": self.match,
            "rows": {"base": self.base_rows, "head": self.head_rows, "added": self.added, "removed": self.removed,
                     "changed": self.changed},
            "columns": [{"column": c.column, "changed_rows": c.changed_rows} for c in self.columns],
            "columns_added": list(self.columns_added), "columns_removed": list(self.columns_removed),
            "key": list(self.key), "match_note": self.match_note, "copied_columns": list(self.copied),
            "totals": [{"column": t.column, "base": str(t.base), "head": str(t.head), "change": str(t.change),
                        "gross": None if t.gross is None else str(t.gross)} for t in self.totals],
            "by": list(self.by),
            "groups": [{"key": {k: json_value(v) for k, v in g.key.items()}, "rows": g.rows, "added": g.added,
                        "removed": g.removed, "changed": g.changed,
                        "changes": {c: str(v) for c, v in g.changes.items()},
                        "gross": {c: str(v) for c, v in g.gross.items()}} for g in self.groups],
            "groups_left_out": self.groups_left_out,
            "samples": [{"row_id": s.row_id, "status": s.status,
                         "key": None if s.key is None else {k: json_value(v) for k, v in s.key.items()},
                         "values": {c: {"base": json_value(b), "head": json_value(h)} for c, (b, h) in s.values.items()}}
                        for s in self.samples],
        }


@dataclass
class DataDiff:
    """The data diff of one project's outputs (what :func:`.data_diff.data_diff` returns)."""

    outputs: list[OutputDataDiff] = field(default_factory=list)
    ignored_columns: list[str] = field(default_factory=lambda: list(IGNORED_COLUMNS))

    @property
    def found(self) -> bool:
        """Whether any output differs."""
        return any(o.found for o in self.outputs)

    def to_json(self) -> dict:
        """``{"outputs": [...], "ignored_columns": [...]}``."""
        return {"outputs": [o.to_json() for o in self.outputs], "ignored_columns": list(self.ignored_columns)}


@dataclass
class ProjectDataDiff:
    """A project's data diff, or why it was not run (``note``: same SQL, added, removed)."""

    name: str
    status: str  # compared | unchanged | added | removed
    diff: Optional[DataDiff] = None
    note: str = ""


@dataclass
class Restated:
    """What a restatement's data diff is about: the project, period, reason, who, the run it supersedes and
    the restating run (None for a dry run)."""

    project: str
    period: str
    reason: str
    by: str
    supersedes_run_id: Optional[str]
    run_id: Optional[str] = None

    def to_json(self) -> dict:
        """``{project, period, reason, by, supersedes_run_id, run_id, dry_run}``."""
        return {"project": self.project, "period": self.period, "reason": self.reason, "by": self.by,
                "supersedes_run_id": self.supersedes_run_id, "run_id": self.run_id, "dry_run": self.run_id is None}


@dataclass
class WorkspaceDataDiff:
    """What ``ledgerflow diff --data`` prints."""

    base: str
    head: str
    period: str
    by: list[str]
    projects: list[ProjectDataDiff] = field(default_factory=list)
    key: list[str] = field(default_factory=list)  # --key
    restatement: Optional[Restated] = None  # set when the report is a restatement's

    @property
    def found(self) -> bool:
        """Whether a compared project's outputs differ (exit 4)."""
        return any(p.diff is not None and p.diff.found for p in self.projects)

    def to_json(self) -> dict:
        """The JSON document (docs/commands.md, "The data diff")."""
        return {"base": self.base, "head": self.head, "period": self.period, "by": list(self.by),
                "key": list(self.key),
                "restatement": None if self.restatement is None else self.restatement.to_json(),
                "ignored_columns": list(IGNORED_COLUMNS),
                "projects": [{"name": p.name, "status": p.status, "note": p.note,
                              "outputs": [o.to_json() for o in p.diff.outputs] if p.diff else []}
                             for p in self.projects]}


def output_labels(outputs) -> dict[int, str]:
    """Output seq -> the name a data diff (``diff --data``, a restatement's) compares and reports it under, from
    ``outputs`` (``(seq, name)`` pairs of one project): its name, or ``NAME (output SEQ)`` when another output has
    that name too (names need not be unique: keyed by name alone, one output's rows would go uncompared)."""
    outputs = list(outputs)
    counts = Counter(name for _, name in outputs)
    return {seq: name if counts[name] == 1 else f"{name} (output {seq})" for seq, name in outputs}

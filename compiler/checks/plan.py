"""The typed plan of a check (docs/checks.md): what it reads, what it asserts, what a violation does.

:func:`ledgerflow.compiler.check_binding.bind_checks` builds one :class:`CheckPlan` per check of a
project into ``Plan.checks``; :mod:`.sql` renders the SQL the runner evaluates from it. Expressions
are sqlglot nodes over the checked rows' columns, unqualified (``exp.Column(name)``): the columns the
output writes, or the input's columns for ``on: input``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from enum import Enum
from typing import TYPE_CHECKING, Optional

from ..model import Check
from ..types import SqlType

if TYPE_CHECKING:
    from sqlglot import exp

INPUT = "input"


ROW, SET, RECONCILE = "row", "set", "reconcile"  # how a kind is judged (its family)


class CheckKind(str, Enum):
    """What a check asserts, and how it is judged (its family): each member is written once, with its family;
    everything else about it is its registry entry (:mod:`ledgerflow.compiler.kinds.checks`)."""

    def __new__(cls, value: str, family: str):
        member = str.__new__(cls, value)
        member._value_ = value
        member.family = family
        return member

    BALANCED = "balanced", SET
    UNIQUE = "unique", SET
    EXPECT = "expect", ROW
    ROW_COUNT = "row_count", SET
    NOT_NULL = "not_null", ROW
    ACCEPTED_VALUES = "accepted_values", ROW
    RECONCILE = "reconcile", RECONCILE

    @property
    def row_check(self) -> bool:
        """Judged row by row (a violation is a row; may quarantine)."""
        return self.family == ROW

    @property
    def set_check(self) -> bool:
        """Judged over the rows together by one aggregation query (:func:`.sql.set_check_query`)."""
        return self.family == SET


class Action(str, Enum):
    """What a violation does: fail the run (exit 4, nothing published), warn, or quarantine the rows."""

    FAIL = "fail"
    WARN = "warn"
    QUARANTINE = "quarantine"


@dataclass(frozen=True)
class Quarantine:
    """Where a quarantine check writes the violating rows: a folder below the workspace (a path template
    resolved like an output's ``{path: ...}``), partitioned by ``_period``; rows gain ``_check``, ``_run_id``."""

    path: str
    format: str = "parquet"


@dataclass(frozen=True)
class Measure:
    """A measure of a ``reconcile``: ``count`` (rows) or ``SUM(column)`` of a decimal column."""

    name: str  # as written and recorded: "count" or "SUM(amount_local)"
    column: Optional[str]  # None for count
    expression: exp.Expression  # COUNT(*) or SUM(`column`), over the rows at either end


@dataclass
class CheckPlan:
    """One check, bound: see the module docstring. Fields not of the check's kind keep their defaults."""

    check: Check
    kind: CheckKind
    on: Optional[int]  # the checked output's seq; None: the input (after the period filter); reconcile: `to`
    action: Action
    severity: str  # fail | warn, as recorded in the run record (a quarantine check records warn)
    row_columns: dict[str, SqlType]  # the checked rows' columns and types
    columns: tuple[str, ...] = ()  # the checked rows' columns the check reads (lineage)
    violation: Optional[exp.Expression] = None  # row checks: TRUE for a violating row (NULL counts as one)
    group_by: tuple[str, ...] = ()  # unique: its columns; balanced: group_by; reconcile: by
    amount: Optional[str] = None  # balanced: the summed column
    tolerance: Optional[Decimal] = None  # balanced, reconcile
    min_rows: Optional[int] = None  # row_count
    max_rows: Optional[int] = None
    measures: tuple[Measure, ...] = ()  # reconcile
    from_output: Optional[int] = None  # reconcile: None = the input
    explained_by: tuple[int, ...] = ()  # reconcile: operation seqs
    key: tuple[str, ...] = ()  # a violation sample's identifying columns
    amount_columns: tuple[str, ...] = ()  # decimal columns of the checked rows: amount_impact
    quarantine: Optional[Quarantine] = None
    reads: dict[Optional[int], tuple[str, ...]] = field(default_factory=dict)  # reconcile: columns per end
    # reconcile from the input to an output that leaves deleted rows out: its input end is the input rows not
    # deleted, as the run's bridge counts them (a registered input may hold rows that arrive deleted)
    live_input: bool = False

    @property
    def name(self) -> str:
        """The check's name (unique in its project)."""
        return str(self.check.name)

    @property
    def target(self) -> str:
        """``on`` as the run record writes it: the output's seq, or ``input``."""
        return INPUT if self.on is None else str(self.on)

    @property
    def on_input(self) -> bool:
        """Whether the check reads the input rows (after the period filter, before operation 1)."""
        return self.on is None and self.kind != CheckKind.RECONCILE

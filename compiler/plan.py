"""The typed plan of a project: what every operation reads, writes and computes, as sqlglot nodes.

:func:`ledgerflow.compiler.bind.bind` builds a :class:`Plan`; :mod:`.lower` renders it into CTEs,
:mod:`.stage` cuts them into statements and :mod:`.emit` writes the script: the SQL is emitted from
this plan, so a question asked of the plan is answered about the SQL that runs.

Shape
-----
``Plan.input`` (:class:`InputPlan`) is the working dataset as read (seq 0); ``Plan.operations`` holds
one :class:`OperationPlan` per operation, in seq order, of the subclass of its kind
(:class:`UpdatePlan`, :class:`AggregatePlan`, :class:`AppendPlan`, :class:`DeletePlan`,
:class:`OutputPlan`). Every operation plan has:

- ``kind`` (:class:`~ledgerflow.compiler.model.OperationKind`) and ``operation`` (the model object);
- ``reads``: the datasets it reads besides the working rows, as :class:`Read` (view, dataset, role
  ``input | join | append``, join alias); ``writes``: the CTE it produces (``op_003_update``) or,
  for an output, the output statement (``output_005``);
- ``columns``: per working column after the operation, a :class:`Column` (type and the sqlglot
  expression computing it on the rows that flow through the operation). Expressions are written
  over the working columns *before* the operation (``exp.Column`` without table; inside an update
  with joins, qualified by ``working_alias``) and, in an update, over join columns
  (``exp.Column(table=<alias>, name=<alias>__<column>)``; ``Read.columns`` maps each such name to
  the dataset column). An unchanged column is its identity: ``exp.Column(name)``.
- ``appended`` (aggregate, append): the rows the operation adds, per working column. Their
  expressions read ``summary`` when it is set (aggregate: group keys and aggregate functions over
  the selected working rows; append with ``aggregation``: the same over the source rows), else the
  source dataset's columns (plain append).
- ``conditions``: the row-level conditions, as :class:`Condition` (kind ``selector``, ``delete``,
  ``join``, ``join_filter``, ``period``, ``as_of``, ``source_selector``), each with the read it
  applies to (a view or join alias; None for the working rows);
- ``group_by``: the grouping column names (aggregate, append with aggregation).

``Plan.checks`` holds one :class:`~.checks.plan.CheckPlan` per check of the project (docs/checks.md).

Queries
-------
:func:`output_columns` chains the operations: per output seq, per column, the fully expanded
expressions over input dataset columns (``exp.Column(table=<view>, name=<dataset column>)``), one
per origin of rows (the input's rows, and the rows each aggregate or append adds).
:func:`operation` finds an operation plan by seq.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Optional

from sqlglot import exp

from .checks.plan import CheckPlan
from .model import Dataset, Operation, OperationKind, Project
from .errors import Diagnostic
from .types import SqlType


class Role(str, Enum):
    """Why an operation reads a dataset."""

    INPUT = "input"
    JOIN = "join"
    APPEND = "append"


class ConditionKind(str, Enum):
    """What a row-level condition of an operation is."""

    SELECTOR = "selector"  # the operation's (or output's) selector: which working rows it acts on
    DELETE = "delete"  # a delete's condition: the rows it flags _deleted
    JOIN = "join"  # a join's ON condition between working and join rows
    JOIN_FILTER = "join_filter"  # a predicate on the join's own columns, pushed into the join side
    PERIOD = "period"  # a temporal_mode period dataset's period filter
    AS_OF = "as_of"  # a bitemporal dataset's as-of filter
    SOURCE_SELECTOR = "source_selector"  # an append's filter of the source rows


@dataclass
class InputView:
    """A dataset the compiled SQL reads, under the logical view name the runner creates."""

    view: str
    dataset: Dataset
    pinned_version: Optional[int]
    role: Role
    uses: list = field(default_factory=list)  # (operation seq, alias or None)
    # whether the SQL reads the view's _row_id (the input, a plain append): a view that is only joined
    # or aggregated never passes it on, so the runner need not derive ids from file positions for it
    row_ids: bool = False


@dataclass(frozen=True)
class Read:
    """A dataset an operation reads, through the view ``view``."""

    view: str
    dataset: Dataset
    role: Role
    alias: Optional[str] = None  # join alias
    columns: tuple[tuple[str, str], ...] = ()  # (name in the operation's expressions, dataset column)

    def column(self, name: str) -> Optional[str]:
        """The dataset column behind ``name`` as the operation's expressions write it."""
        return dict(self.columns).get(name)


@dataclass
class Condition:
    """A row-level condition; ``applies_to`` is a view or join alias, None for the working rows."""

    kind: ConditionKind
    expression: exp.Expression
    applies_to: Optional[str] = None


@dataclass
class Column:
    """A produced column: its type and the expression computing it."""

    name: str
    type: SqlType
    expression: exp.Expression

    @property
    def identity(self) -> bool:
        """Whether the column passes through unchanged."""
        e = self.expression
        return isinstance(e, exp.Column) and e.name == self.name


@dataclass
class InputPlan:
    """The working dataset as read: the input view filtered to the run's rows."""

    read: Read
    columns: dict[str, Column]
    conditions: list[Condition]
    writes: str = "input"
    seq: int = 0


@dataclass
class OperationPlan:
    """What one operation reads, writes and computes (see the module docstring)."""

    operation: Operation
    writes: str
    columns: dict[str, Column]
    reads: list[Read] = field(default_factory=list)
    conditions: list[Condition] = field(default_factory=list)
    group_by: list[str] = field(default_factory=list)
    appended: Optional[dict[str, Column]] = None
    summary: Optional[dict[str, exp.Expression]] = None

    @property
    def seq(self) -> int:
        """The operation's seq."""
        return self.operation.seq

    @property
    def kind(self) -> OperationKind:
        """The operation's kind."""
        return self.operation.kind

    def conditions_of(self, kind: ConditionKind) -> list[exp.Expression]:
        """The expressions of this operation's conditions of ``kind``."""
        return [c.expression for c in self.conditions if c.kind == kind]


FAN_OUT_COUNT = "_lf_matches"  # the fan-out guard's count of join rows per key, column <alias>__<this>


@dataclass
class FanOutGuard:
    """The join fan-out guard of one join: a working row matching more than one join row fails the run.

    The join side carries, on every row, the number of join rows with its key (a window over the
    join side, ``partition_by`` its key expressions); ``check`` holds where that number is above 1."""

    check: exp.Expression  # TRUE, or raise_error(...) naming the join and the key values looked up
    partition_by: list[exp.Expression]


@dataclass
class JoinPlan:
    """One runtime join of an update."""

    alias: str
    read: Read
    side_columns: list[str]  # the join dataset's columns, exposed as <alias>__<column>
    where: exp.Expression  # the join side's rows: not deleted, period/as-of filter, pushed predicates
    on: exp.Expression
    guard: FanOutGuard
    writes: str


@dataclass
class UpdatePlan(OperationPlan):
    """``update``: ``condition`` is ``NOT _deleted AND (selector)``."""

    condition: Optional[exp.Expression] = None
    joins: list[JoinPlan] = field(default_factory=list)
    working_alias: str = ""


@dataclass
class DeletePlan(OperationPlan):
    """``delete``: rows matching ``condition`` get ``_deleted = TRUE``."""

    condition: Optional[exp.Expression] = None


@dataclass
class AggregatePlan(OperationPlan):
    """``aggregate``: ``summary`` over the rows matching ``condition``, appended as new rows."""

    condition: Optional[exp.Expression] = None
    new_columns: dict[str, SqlType] = field(default_factory=dict)


@dataclass
class AppendPlan(OperationPlan):
    """``append``: rows of ``reads[0]`` where ``source_where`` holds, optionally aggregated."""

    source_where: Optional[exp.Expression] = None
    source_columns: list[str] = field(default_factory=list)


@dataclass
class OutputPlan(OperationPlan):
    """``output``: ``columns`` of the working rows where ``where`` holds."""

    where: Optional[exp.Expression] = None


@dataclass
class Plan:
    """The result of binding: the typed plan, the inputs, the final schema and every diagnostic."""

    project: Project
    input_dataset: Optional[Dataset]
    inputs: list[InputView]
    input: Optional[InputPlan]
    operations: list[OperationPlan]
    schema: dict[str, SqlType]
    diagnostics: list[Diagnostic]
    checks: list[CheckPlan] = field(default_factory=list)  # one per check of the project (docs/checks.md)


def operation(plan: Plan, seq: int) -> Optional[OperationPlan]:
    """The plan of operation ``seq``, if it was planned."""
    return next((o for o in plan.operations if o.seq == seq), None)


# ----------------------------------------------------------------------------------- expansion
Branch = dict[str, exp.Expression]  # working column -> expression over input dataset columns


def _substitute(node: exp.Expression, working: Branch, reads: dict[str, Read],
                working_alias: Optional[str] = None) -> exp.Expression:
    """``node`` with working columns replaced by their ``working`` expressions and join columns by
    their dataset columns (qualified by the join's view)."""
    node = node.copy()
    for col in list(node.find_all(exp.Column)):
        table = col.table or None
        if table is None or table == working_alias:
            new = working[col.name].copy() if col.name in working else col
        elif table in reads:
            read = reads[table]
            new = exp.column(read.column(col.name) or col.name, table=read.view, quoted=True)
        else:
            continue
        if col is node:
            return new
        col.replace(new)
    return node


def _unique(expressions: list[exp.Expression]) -> list[exp.Expression]:
    out: list[exp.Expression] = []
    for e in expressions:
        if not any(e == o for o in out):
            out.append(e)
    return out


def output_types(plan: Plan) -> dict[int, list[tuple[str, str]]]:
    """Per output seq, its columns in order with their Spark types (as the compiled SQL writes them)."""
    return {op.seq: [(name, str(col.type)) for name, col in op.columns.items()] for op in plan.operations
            if isinstance(op, OutputPlan)}


def output_columns(plan: Plan) -> dict[int, dict[str, list[exp.Expression]]]:
    """Per output seq, per written column: its expressions over input dataset columns.

    Each expression is written over ``exp.Column(table=<input view>, name=<dataset column>)``; there
    is one per origin of the output's rows (the input dataset's rows, and the rows each earlier
    aggregate or append added), identical ones merged. An aggregate's rows are expanded once per
    origin of the rows it summarises.
    """
    if plan.input is None:
        return {}
    view = plan.input.read.view
    branches: list[Branch] = [{n: exp.column(n, table=view, quoted=True) for n in plan.input.columns}]
    out: dict[int, dict[str, list[exp.Expression]]] = {}
    for op in plan.operations:
        reads = {r.alias: r for r in op.reads if r.alias}
        alias = op.working_alias if isinstance(op, UpdatePlan) else None
        if isinstance(op, OutputPlan):
            out[op.seq] = {n: _unique([b[n] for b in branches if n in b]) for n in op.columns}
            continue
        added: list[Branch] = []
        if op.appended is not None:
            if isinstance(op, AppendPlan):
                read = op.reads[0]
                sources = [{n: exp.column(n, table=read.view, quoted=True) for n in op.source_columns}]
            else:
                sources = branches
            for source in sources:
                rows = {n: _substitute(e, source, reads) for n, e in op.summary.items()} if op.summary else source
                added.append({n: _substitute(c.expression, rows, reads) for n, c in op.appended.items()})
        branches = [{n: _substitute(c.expression, b, reads, alias) for n, c in op.columns.items()} for b in branches]
        branches += added
    return out

"""The run's bridge, planned (docs/checks.md, "The bridge"): per output, which measures move from the
input to the output, and the aggregates that tell them from the working rows at the end of a stage.

Per output the measures are ``count`` and ``SUM(column)`` of every decimal column the input and the output
both have, plus the measures of the ``reconcile`` checks that end (or start) at that output. They are
taken over the rows the output would write (``NOT _deleted``, or every row with ``include_deleted``), at
*points*: the input after the period filter (seq 0) and after each operation that can change a measure
(a delete, an aggregate, an append, an update that assigns a measured column). An update that assigns
none changes nothing by construction (it keeps every row, and a join matching two rows fails the run),
so its change is recorded as zero.

Every working row carries the bridge's columns (:mod:`ledgerflow.compiler.bridge_columns`): where it came
from, which delete marked it, what each update changed. So every point's value is one aggregate over the
rows at the end of the stage an output reads (:func:`stage_metrics`), which the runner
(``adapters/run/bridge.py``) observes with ``DataFrame.observe`` in the pass that computes the stage: the
plan is never cut and nothing is read twice. :func:`output_metrics` is observed on the output's own rows;
a ``reconcile`` with ``by`` reads :func:`grouped_query` over the stage and over the output once.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from sqlglot import exp

from ..bridge_columns import BridgeColumns, decimal_parts, existed_at, live_at, value_at
from ..model import OperationKind
from ..plan import Column, OutputPlan, Plan
from ..render import pretty
from .plan import CheckKind

LIVE = "live"  # the rows not deleted
ALL = "all"  # every row (an include_deleted output)
COUNT = "count"


@dataclass(frozen=True)
class BridgeMeasure:
    """``count`` or ``SUM(column)`` of a decimal column."""

    name: str
    column: Optional[str] = None
    scale: int = 0  # of the decimal column: a sum over no rows is recorded as 0 at that scale


@dataclass
class OutputBridge:
    """The bridge of one output: its measures over the rows it would write, from the input on."""

    seq: int
    rows: str  # LIVE or ALL
    measures: tuple[BridgeMeasure, ...]
    steps: tuple[int, ...]  # every operation before the output that changes the working rows, in order
    operations: tuple[int, ...]  # those of them observed (the others change no measure by construction)
    selector: bool  # the output's own selector removes rows (recorded as the output's own change)
    groups: tuple[tuple[str, ...], ...] = ()  # `by` of the reconciles at this output: bridged per group too


@dataclass
class BridgePlan:
    """Every output's bridge, and the bridge columns the working rows carry."""

    outputs: list[OutputBridge]
    columns: BridgeColumns = field(default_factory=BridgeColumns)

    def output(self, seq: int) -> Optional[OutputBridge]:
        """The bridge of output ``seq``."""
        return next((o for o in self.outputs if o.seq == seq), None)


def metric_name(point: int, rows: str, measure: str) -> str:
    """The name under which a stage's observation holds ``measure`` over ``rows`` after operation ``point``."""
    return f"{point}|{rows}|{measure}"


def _decimal_columns(columns: dict[str, Column]) -> dict[str, int]:
    out = {}
    for name, col in columns.items():
        if col.type.is_decimal:
            out[name] = decimal_parts(col.type.sql)[1]
        # a column of another type is never summed
    return out


def _changes(op, measured: set[str]) -> bool:
    """Whether operation ``op`` (a plan) can change a measure of the working rows."""
    kind = op.kind
    if kind in (OperationKind.DELETE, OperationKind.AGGREGATE, OperationKind.APPEND):
        return True
    if kind == OperationKind.UPDATE:
        return any(not c.identity for n, c in op.columns.items() if n in measured)
    return False


def bridge_plan(plan: Plan) -> BridgePlan:
    """The bridge of every output of ``plan`` (see the module docstring); empty without an input plan."""
    if plan.input is None:
        return BridgePlan([])
    decimals_in = _decimal_columns(plan.input.columns)
    extra: dict[int, list] = {}  # output seq -> reconcile measures; output seq -> groups
    groups: dict[int, list[tuple[str, ...]]] = {}
    for check in plan.checks:
        if check.kind == CheckKind.RECONCILE and check.on is not None:
            for end in (check.on, check.from_output):
                if end is not None:
                    extra.setdefault(end, []).extend(check.measures)
                    if check.group_by and tuple(check.group_by) not in groups.get(end, []):
                        groups.setdefault(end, []).append(tuple(check.group_by))
    outputs: list[OutputBridge] = []
    before: list = []  # the non-output operations so far
    for op in plan.operations:
        if not isinstance(op, OutputPlan):
            before.append(op)
            continue
        decimals_out = _decimal_columns(op.columns)
        measures = [BridgeMeasure(COUNT)]
        for name in decimals_out:
            if name in decimals_in:
                measures.append(BridgeMeasure(f"SUM({name})", name, decimals_out[name]))
        for m in extra.get(op.seq, []):
            if m.name not in {x.name for x in measures}:
                scale = decimals_out.get(m.column, decimals_in.get(m.column, 0)) if m.column else 0
                measures.append(BridgeMeasure(m.name, m.column, scale))
        measured = {m.column for m in measures if m.column}
        outputs.append(OutputBridge(
            op.seq, ALL if op.operation.include_deleted else LIVE, tuple(measures), tuple(o.seq for o in before),
            tuple(o.seq for o in before if _changes(o, measured)), bool(op.conditions), tuple(groups.get(op.seq, ()))))
    return BridgePlan(outputs, _bridge_columns(plan, outputs))


def _bridge_columns(plan: Plan, outputs: list[OutputBridge]) -> BridgeColumns:
    """A delta column per update and measured decimal column it assigns (measured by an output after it)."""
    measured: dict[int, set[str]] = {}
    for o in outputs:
        for seq in o.steps:
            measured.setdefault(seq, set()).update(m.column for m in o.measures if m.column)
    deltas: dict[int, dict[str, str]] = {}
    for op in plan.operations:
        if op.kind != OperationKind.UPDATE:
            continue
        for name in sorted(measured.get(op.seq, ())):
            col = op.columns.get(name)
            if col is None or col.identity or not col.type.is_decimal:
                continue
            precision, scale = decimal_parts(col.type.sql)
            deltas.setdefault(op.seq, {})[name] = f"decimal({min(precision + 1, 38)},{scale})"
    return BridgeColumns(deltas)


def bridge_columns(plan: Plan) -> BridgeColumns:
    """The bridge columns of ``plan``'s working rows (the lowering adds them to every step)."""
    return bridge_plan(plan).columns


def _col(name: str) -> exp.Column:
    return exp.column(name, quoted=True)


def _rows_condition(rows: str) -> Optional[exp.Expression]:
    return exp.Not(this=_col("_deleted")) if rows == LIVE else None


def _aggregate(measure: BridgeMeasure, rows: str) -> exp.Expression:
    cond = _rows_condition(rows)
    if measure.column is None:
        return exp.CountIf(this=cond) if cond is not None else exp.Count(this=exp.Star())
    value = _col(measure.column)
    return exp.Sum(this=exp.If(this=cond, true=value, false=exp.Null()) if cond is not None else value)


def _point_aggregate(columns: BridgeColumns, point: int, m: BridgeMeasure, rows: str, last: int) -> exp.Expression:
    """``m`` over ``rows`` after operation ``point``, from the working rows at the end of a stage whose last
    operation is before ``last``."""
    cond = existed_at(point)
    if rows == LIVE:
        cond = exp.and_(cond, live_at(point))
    if m.column is None:
        return exp.CountIf(this=cond)
    return exp.Sum(this=exp.If(this=cond, true=value_at(columns, point, m.column, last), false=exp.Null()))


def stage_metrics(bridge: BridgePlan, seqs: list[int]) -> list[tuple[str, str]]:
    """The aggregates to observe on the working rows at the end of the stage outputs ``seqs`` read:
    (name, Spark SQL), one per point, rows kind and measure of their bridges."""
    out: dict[str, str] = {}
    for seq in seqs:
        o = bridge.output(seq)
        if o is None:
            continue
        for point in (0, *o.operations):
            for m in o.measures:
                name = metric_name(point, o.rows, m.name)
                if name not in out:
                    out[name] = pretty(_point_aggregate(bridge.columns, point, m, o.rows, o.seq))
    return list(out.items())


def output_metrics(bridge: BridgePlan, seq: int) -> list[tuple[str, str]]:
    """The aggregates to observe on output ``seq``'s rows (before any quarantine): one per measure."""
    o = bridge.output(seq)
    return [] if o is None else [(m.name, pretty(_aggregate(m, ALL))) for m in o.measures]


def grouped_query(bridge: BridgePlan, seq: int, by: tuple[str, ...], view: str, stage: bool) -> str:
    """Output ``seq``'s measures per group ``by`` over ``view``: with ``stage`` the working rows at the end of
    the stage it reads, one column ``<point>|<measure>`` per point and measure; else the output's own rows, one
    column per measure. Ordered by the group. (The group of a row is its value at the end: a reconcile never
    groups by a column an update before its output assigns, CHK-013.)"""
    o = bridge.output(seq)
    keys = [_col(c) for c in by]
    if stage:
        select = [exp.alias_(_point_aggregate(bridge.columns, p, m, o.rows, o.seq),
                             exp.to_identifier(f"{p}|{m.name}", quoted=True))
                  for p in (0, *o.operations) for m in o.measures]
    else:
        select = [exp.alias_(_aggregate(m, ALL), exp.to_identifier(m.name, quoted=True)) for m in o.measures]
    query = exp.select(*[exp.alias_(k, exp.to_identifier(c, quoted=True)) for k, c in zip(keys, by)], *select)
    query = query.from_(exp.Table(this=exp.to_identifier(view, quoted=True)))
    if by:
        query = query.group_by(*[k.copy() for k in keys])
    return pretty(query)

"""The run's bridge, planned (docs/checks.md, "The bridge"): per output, which measures move from the
input to the output, where the runner observes them and the aggregates it observes there.

Per output the measures are ``count`` and ``SUM(column)`` of every decimal column the input and the output
both have, plus the measures of the ``reconcile`` checks that end (or start) at that output. They are
taken over the rows the output would write (``NOT _deleted``, or every row with ``include_deleted``), at
*points*: the input after the period filter (seq 0) and after each operation that can change a measure
(a delete, an aggregate, an append, an update that assigns a measured column). An update that assigns
none changes nothing by construction (it keeps every row, and a join matching two rows fails the run),
so it is not observed and its change is recorded as zero.

The runner (``adapters/run/bridge.py``) observes :func:`point_metrics` on each point's rows and
:func:`output_metrics` on each output's rows with ``DataFrame.observe``, in the pass that computes the
output; a ``reconcile`` with ``by`` reads :func:`grouped_query` once per point and output.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from sqlglot import exp

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
    """Every output's bridge and the points the runner observes (seq -> the rows' columns there)."""

    outputs: list[OutputBridge]
    points: dict[int, dict[str, Column]] = field(default_factory=dict)

    def output(self, seq: int) -> Optional[OutputBridge]:
        """The bridge of output ``seq``."""
        return next((o for o in self.outputs if o.seq == seq), None)

    def bridges_at(self, point: int) -> list[OutputBridge]:
        """The outputs whose bridge reads ``point`` (it lies before them)."""
        return [o for o in self.outputs if point == 0 or point in o.operations]


def metric_name(rows: str, measure: str) -> str:
    """The name under which a point observes ``measure`` over ``rows``."""
    return f"{rows}|{measure}"


def _decimal_columns(columns: dict[str, Column]) -> dict[str, int]:
    out = {}
    for name, col in columns.items():
        if col.type.is_decimal:
            inner = col.type.sql[len("decimal"):].strip("()")
            out[name] = int(inner.split(",")[1]) if "," in inner else 0
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
    points: dict[int, dict[str, Column]] = {}
    if outputs:
        points[0] = plan.input.columns
        for op in plan.operations:
            if any(op.seq in o.operations for o in outputs):
                points[op.seq] = op.columns
    return BridgePlan(outputs, points)


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


def _point_aggregates(bridge: BridgePlan, point: int) -> list[tuple[str, exp.Expression]]:
    columns = bridge.points.get(point, {})
    out: dict[str, exp.Expression] = {}
    for o in bridge.bridges_at(point):
        for m in o.measures:
            name = metric_name(o.rows, m.name)
            if name not in out and (m.column is None or m.column in columns):
                out[name] = _aggregate(m, o.rows)
    return list(out.items())


def point_metrics(bridge: BridgePlan, point: int) -> list[tuple[str, str]]:
    """The aggregates to observe on the working rows at ``point`` (seq 0: the input after the period
    filter): (name, Spark SQL), one per rows kind and measure of the outputs after it. A measure whose
    column does not exist there yet is left out (its value there is recorded as zero)."""
    return [(name, pretty(node)) for name, node in _point_aggregates(bridge, point)]


def output_metrics(bridge: BridgePlan, seq: int) -> list[tuple[str, str]]:
    """The aggregates to observe on output ``seq``'s rows (before any quarantine): one per measure."""
    o = bridge.output(seq)
    return [] if o is None else [(m.name, pretty(_aggregate(m, ALL))) for m in o.measures]


def grouped_query(bridge: BridgePlan, point: Optional[int], seq: int, by: tuple[str, ...], view: str) -> str:
    """Output ``seq``'s measures per group ``by`` over ``view``: the working rows at ``point`` (the
    output's rows themselves when ``point`` is None), ordered by the group. A ``by`` column or a measured
    column that does not exist at ``point`` reads as NULL there."""
    o = bridge.output(seq)
    available = None if point is None else bridge.points.get(point, {})  # None: the output has them all

    def has(column: Optional[str]) -> bool:
        return column is None or available is None or column in available

    keys = [_col(c) if has(c) else exp.Null() for c in by]
    rows = ALL if point is None else o.rows
    select = [exp.alias_(_aggregate(m, rows) if has(m.column) else exp.Null(), exp.to_identifier(m.name, quoted=True))
              for m in o.measures]
    query = exp.select(*[exp.alias_(k, exp.to_identifier(c, quoted=True)) for k, c in zip(keys, by)], *select)
    query = query.from_(exp.Table(this=exp.to_identifier(view, quoted=True)))
    if by:
        query = query.group_by(*[k.copy() for k in keys])
    return pretty(query)

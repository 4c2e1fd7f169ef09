"""The run's bridge, planned (docs/checks.md, "The bridge"): per output, which measures move from the
input to the output, and the aggregates that tell them from the working rows at the end of a stage.

Per output the measures are ``count`` and ``SUM(column)`` of every decimal column the input and the output
both have, plus the measures of the ``reconcile`` checks that end (or start) at that output. They are
taken over the rows the output would write (``NOT _deleted``, or every row with ``include_deleted``): the
value after the period filter, the change of each operation that can change a measure (a delete, an
aggregate, an append, an update that assigns a measured column) and the value at the end. An update that
assigns none changes nothing by construction (it keeps every row, and a join matching two rows fails the
run), so its change is recorded as zero.

Every working row carries the bridge's columns (:mod:`ledgerflow.compiler.bridge_columns`): where it came
from, which delete marked it, its value before each update. So each change and the value at the end is one
aggregate over the rows at the end of the stage an output reads (:func:`stage_metrics`), and the value after
the period filter is the end's less every change (:func:`input_value`). The runner (``adapters/run/bridge.py``)
observes them with ``DataFrame.observe`` in the pass that computes the stage: nothing is read twice.
:func:`output_metrics` (the value at the end) is observed on the rows of each output, under its write (and on the
rows a quarantine moved out); a ``reconcile`` with ``by`` reads :func:`grouped_query` over the stage and over the output once.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from sqlglot import exp

from .bridge_columns import DELETED_BY, ORIGIN, BridgeColumns, before_name, bridgeable, decimal_parts, value_after
from .checks.plan import Action, CheckKind, CheckPlan
from .checks.sql import row_metrics
from .kinds.entry import BridgeEffect, IncompleteKind
from .kinds.registry import operation_kind
from .model import OperationKind
from .plan import Column, OutputPlan, Plan
from .render import pretty

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
    kinds: dict[int, OperationKind] = field(default_factory=dict)  # operation seq -> its kind

    def output(self, seq: int) -> Optional[OutputBridge]:
        """The bridge of output ``seq``."""
        return next((o for o in self.outputs if o.seq == seq), None)


INPUT = "input"  # the value after the period filter
END = "end"  # the value at the end of the stage: the rows an output without a selector writes


def metric_name(what, rows: str, measure: str) -> str:
    """The name under which a stage's observation holds ``measure`` over ``rows``: ``what`` is :data:`INPUT`,
    :data:`END` or an operation seq (the change that operation made)."""
    return f"{what}|{rows}|{measure}"


def _decimal_columns(columns: dict[str, Column]) -> dict[str, int]:
    out = {}
    for name, col in columns.items():
        if col.type.is_decimal and bridgeable(col.type.sql):
            out[name] = decimal_parts(col.type.sql)[1]
        # a column of another type is never summed
    return out


def _changes(op, measured: set[str]) -> bool:
    """Whether operation ``op`` (a plan) can change a measure of the working rows (its kind's bridge effect)."""
    effect = operation_kind(op.kind).bridge
    if effect in (BridgeEffect.MARKS_DELETED, BridgeEffect.CREATES_ROWS):
        return True
    if effect == BridgeEffect.ASSIGNS:
        return any(not c.identity for n, c in op.columns.items() if n in measured)
    if effect == BridgeEffect.NONE:
        return False
    raise IncompleteKind(f"the bridge effect {effect} of the kind {op.kind} is not known to the bridge")


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
    return BridgePlan(outputs, _bridge_columns(plan, outputs), {op.seq: op.kind for op in plan.operations})


def _bridge_columns(plan: Plan, outputs: list[OutputBridge]) -> BridgeColumns:
    """A value-before column per update and measured decimal column it assigns (measured by an output after it)."""
    measured: dict[int, set[str]] = {}
    for o in outputs:
        for seq in o.steps:
            measured.setdefault(seq, set()).update(m.column for m in o.measures if m.column)
    befores: dict[int, dict[str, str]] = {}
    for op in plan.operations:
        if operation_kind(op.kind).bridge != BridgeEffect.ASSIGNS:
            continue
        for name in sorted(measured.get(op.seq, ())):
            col = op.columns.get(name)
            if col is None or col.identity or not col.type.is_decimal:
                continue
            befores.setdefault(op.seq, {})[name] = col.type.sql
    return BridgeColumns(befores)


def recorded(plan: Optional[Plan], config) -> bool:
    """Whether a run of ``plan`` observes and records its bridge, by ``bridge:`` in the workspace's
    ``ledgerflow.yml`` (``config``, or None for the default): ``always`` (the default) every run; ``with_checks``
    a run of a project that declares checks; ``off`` none (validation refuses a ``reconcile`` then, CHK-014).
    Without it, Spark prunes the bridge's columns and the run costs what it did before checks."""
    if plan is None or plan.input is None:
        return False
    setting = getattr(config, "bridge", None) or "always"
    return setting == "always" or (setting == "with_checks" and bool(plan.checks))


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


def _sum(cond: Optional[exp.Expression], value: exp.Expression) -> exp.Expression:
    return exp.Sum(this=value if cond is None else exp.If(this=cond, true=value, false=exp.Null()))


def _eq(column: str, seq: int) -> exp.Expression:
    return exp.EQ(this=_col(column), expression=exp.Literal.number(seq))


def _zero_null(node: exp.Expression) -> exp.Expression:
    return exp.Coalesce(this=node, expressions=[exp.Literal.number(0)])


def _update_change(bridge: BridgePlan, seq: int, column: str, last: int) -> exp.Expression:
    """What update ``seq`` changed in ``SUM(column)`` over the rows at the end of the stage ending with operation
    ``last``: the sum of the values just after it less the sum of the values just before it, both over the rows
    that existed then (a row an aggregate or an append creates later has no value before it, and is left out of
    the values after it). NULL values count as 0."""
    after = value_after(bridge.columns, seq, column, last)
    created_later = any(seq < s < last and operation_kind(k).bridge == BridgeEffect.CREATES_ROWS
                        for s, k in bridge.kinds.items())
    existed = exp.LT(this=_col(ORIGIN), expression=exp.Literal.number(seq)) if created_later else None
    # one aggregate of each row's difference, not two sums: each aggregate an observation holds costs the
    # run about a percent at 10M rows (BENCHMARKS.md section 4); a row created later has no value before it
    # (NULL), and is left out by `existed`
    moved = exp.Sub(this=_zero_null(exp.paren(after)), expression=_zero_null(_col(before_name(seq, column))))
    return _zero_null(_sum(existed, moved))


def _stage_aggregate(bridge: BridgePlan, what, m: BridgeMeasure, o: OutputBridge) -> Optional[exp.Expression]:
    """``m`` over ``o``'s rows kind from the working rows at the end of the stage ``o`` reads: the value after
    the period filter (``what`` :data:`INPUT`), at the end (:data:`END`) or the change operation ``what`` made
    (None: that operation cannot change ``m``). Each reads the bridge's columns (compiler/bridge_columns.py):
    a delete's change is minus the rows it marked (never changed after), an aggregate's or an append's the rows
    it created as they were then, an update's the values after it less the values before it."""
    live = o.rows == LIVE
    columns = bridge.columns
    if what == END:
        cond = exp.Not(this=_col("_deleted")) if live else None
        value = _col(m.column) if m.column else None
    else:
        effect = operation_kind(bridge.kinds[what]).bridge
        if effect == BridgeEffect.ASSIGNS:
            if m.column is None or m.column not in columns.befores.get(what, {}):
                return None
            return _update_change(bridge, what, m.column, o.seq)
        if effect == BridgeEffect.MARKS_DELETED:
            if not live:
                return None  # every row, deleted or not: a delete removes none
            cond, value = _eq(DELETED_BY, what), (_col(m.column) if m.column else None)
            return exp.Neg(this=exp.CountIf(this=cond) if value is None else _sum(cond, value))
        if effect != BridgeEffect.CREATES_ROWS:
            raise IncompleteKind(f"operation {what} changes no working row: it has no change to observe")
        # an aggregate's or an append's rows, as they were then
        return created_figure(ORIGIN, what, m, value_after(columns, what, m.column, o.seq) if m.column else None)
    if value is None:
        return exp.CountIf(this=cond) if cond is not None else exp.Count(this=exp.Star())
    return _sum(cond, value)


def created_figure(column: str, seq: int, m: BridgeMeasure, value: Optional[exp.Expression] = None) -> exp.Expression:
    """``m`` over the rows whose ``column`` is ``seq`` (the rows operation ``seq`` created): a count, or the sum of
    ``value`` (the measure's column when None), a NULL counted as 0."""
    cond = _eq(column, seq)
    if m.column is None:
        return exp.CountIf(this=cond)
    return _sum(cond, _zero_null(value if value is not None else _col(m.column)))


def _stage_items(bridge: BridgePlan, o: OutputBridge, end: bool = True):
    """(what, measure, aggregate) of every figure of ``o``'s bridge told by the stage it reads: each
    operation's change, and with ``end`` the value at the end. The value after the period filter is the end's
    less every change (:func:`input_value`): summing it over every row again would double the rows' cost."""
    for what in (*o.operations, *((END,) if end else ())):
        for m in o.measures:
            node = _stage_aggregate(bridge, what, m, o)
            if node is not None:
                yield what, m, node


def input_value(figures: dict, operations: tuple[int, ...]):
    """The value after the period filter from a stage's ``figures`` (END and each operation's change, None
    when nothing was summed): the end's less every change."""
    value = figures.get(END) or 0
    for seq in operations:
        value -= figures.get(seq) or 0
    return value


def stage_metrics(bridge: BridgePlan, seqs: list[int], skip: tuple[int, ...] = ()) -> list[tuple[str, str]]:
    """The aggregates to observe on the working rows at the end of the stage outputs ``seqs`` read:
    (name, Spark SQL): per rows kind and measure of their bridges, the change of each operation that can
    change it and the value at the end; but the changes of the operations ``skip`` (taken elsewhere:
    :mod:`.bridge_written`)."""
    out: dict[str, str] = {}
    for seq in seqs:
        o = bridge.output(seq)
        if o is None:
            continue
        # the value at the end of an output without a selector is its written rows': observed under its write
        # (:func:`output_metrics`), where it costs next to nothing; an output with a selector needs
        # the stage's too, for the rows its selector leaves out
        for what, m, node in _stage_items(bridge, o, end=o.selector):
            if what not in skip:
                out.setdefault(metric_name(what, o.rows, m.name), pretty(node))
    return list(out.items())


def check_prefix(check: CheckPlan) -> str:
    """The prefix of a row check's metrics in an output's observation (:func:`output_check_metrics`)."""
    return f"check|{check.name}|"


def output_check_metrics(bridge: BridgePlan, seq: int, checks: list[CheckPlan]) -> list[tuple[str, str]]:
    """The row checks of output ``seq`` (of ``checks``) as aggregates over the output's rows, each named
    :func:`check_prefix` + its metric (:func:`..sql.row_metrics`; the violations counted, their amount impact
    read from the staged rows only when there are some): observed with the output's value at the end, in the
    ``CollectMetrics`` under its write, instead of one more of their own. None (``[]``) for an output with a
    quarantine check (its other row checks are judged on the rows it keeps)."""
    o = bridge.output(seq)
    row = [c for c in checks if c.on == seq and c.kind.row_check]
    if o is None or not row or any(c.action == Action.QUARANTINE for c in row):
        return []
    return [(check_prefix(c) + name, pretty(node)) for c in row for name, node in row_metrics(c, impact=False)]


def output_metrics(bridge: BridgePlan, seq: int) -> list[tuple[str, str]]:
    """Output ``seq``'s measures over its rows (or over some of them, such as those a quarantine moved out):
    one aggregate per measure. Observed under each output's write, it is the output's value at the end: there
    the filter of its live rows and its projection sit below the observation, as without a bridge, and the
    measures are plain ``count`` and sums; measured on pipeline P at 10M rows, such an observation costs
    nothing measurable, where each aggregate of the stage's rows costs about a percent."""
    o = bridge.output(seq)
    return [] if o is None else [(m.name, pretty(_aggregate(m, ALL))) for m in o.measures]


def grouped_query(bridge: BridgePlan, seq: int, by: tuple[str, ...], view: str, stage: bool) -> str:
    """Output ``seq``'s measures per group ``by`` over ``view``: with ``stage`` the working rows at the end of
    the stage it reads, one column ``<what>|<measure>`` per figure (see :func:`stage_metrics`); else the output's own rows, one
    column per measure. Ordered by the group. (The group of a row is its value at the end: a reconcile never
    groups by a column an update before its output assigns, CHK-013.)"""
    o = bridge.output(seq)
    keys = [_col(c) for c in by]
    if stage:
        select = [exp.alias_(node, exp.to_identifier(f"{what}|{m.name}", quoted=True))
                  for what, m, node in _stage_items(bridge, o)]
    else:
        select = [exp.alias_(_aggregate(m, ALL), exp.to_identifier(m.name, quoted=True)) for m in o.measures]
    query = exp.select(*[exp.alias_(k, exp.to_identifier(c, quoted=True)) for k, c in zip(keys, by)], *select)
    query = query.from_(exp.Table(this=exp.to_identifier(view, quoted=True)))
    if by:
        query = query.group_by(*[k.copy() for k in keys])
    return pretty(query)

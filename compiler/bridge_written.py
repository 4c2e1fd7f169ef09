"""The figures of created rows a fused range takes from an output's written rows (docs/fused.md, "The bridge").

A fused range takes every period's bridge after its statements ran, grouped by period: the changes told by a
stage over the stage's rows (computed again when only the output's write computed them), the output's value at
the end over its written rows (a column-pruned read of the files just written). The rows an ``aggregate`` or an
``append`` creates are such a stage's costly part: each is computed from every input row again (the aggregate
of pipeline P reads the whole range's lines a second time). When nothing after the operation changes or
removes the rows it created, they are written as they were created, each saying so in ``_operation_seq``, and
their figures are the written rows' with that ``_operation_seq``: the grouped read of the output takes them at
no extra cost, and the stage's figures leave those rows out, so Spark prunes the branch that computes them.

That holds when every row the operation creates is stamped with its seq (:func:`stamped`: an aggregate, an
append's aggregated rows, never a column it copies) and no other written row carries that seq: an input row
may carry an ``_operation_seq`` of its own (the output of an upstream ledgerflow project), so the stage's
figures count the live rows that would be mistaken for created ones (:data:`MISTAKEN`), and the caller takes
the figures from the stage, as before, for a range where any period has one.
"""
from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from .bridge import LIVE, BridgePlan, created_figure, metric_name
from .bridge_columns import ORIGIN
from .kinds.entry import BridgeEffect
from .kinds.registry import operation_kind
from .plan import OutputPlan, Plan
from .render import pretty

OPERATION_SEQ = "_operation_seq"
MISTAKEN = "written|mistaken"  # live rows of the stage, other than those left out, carrying a left-out seq


@dataclass(frozen=True)
class Stamps:
    """What :func:`stamped` found in a plan."""

    creates: frozenset[int] = frozenset()  # the operations whose every created row says so in _operation_seq
    outputs: frozenset[int] = frozenset()  # the outputs that write _operation_seq


def _col(name: str) -> exp.Column:
    return exp.column(name, quoted=True)


def stamped(plan: Plan) -> Stamps:
    """The operations of ``plan`` whose every created row has ``_operation_seq`` = their seq (a literal, never
    a value copied from the rows they read), and the outputs that write that column."""
    creates, outputs = set(), set()
    for op in plan.operations:
        if isinstance(op, OutputPlan) and OPERATION_SEQ in op.columns:
            outputs.add(op.seq)
        if operation_kind(op.kind).bridge != BridgeEffect.CREATES_ROWS or not op.appended:
            continue
        column = op.appended.get(OPERATION_SEQ)
        value = column.expression if column is not None else None
        if isinstance(value, exp.Literal) and not value.is_string and value.this == str(op.seq):
            creates.add(op.seq)
    return Stamps(frozenset(creates), frozenset(outputs))


def written_creates(bridge: BridgePlan, stamps: Stamps, seq: int) -> tuple[int, ...]:
    """The creating operations whose figures in output ``seq``'s bridge are its written rows' with their seq:
    stamped, written by the output (its columns hold ``_operation_seq``), and nothing after them up to the
    output changes or removes a row (the output writes every live row: no selector, no include_deleted, no
    group of a reconcile)."""
    o = bridge.output(seq)
    if o is None or o.rows != LIVE or o.selector or o.groups or seq not in stamps.outputs:
        return ()
    effects = {k: operation_kind(bridge.kinds[k]).bridge for k in o.operations}
    return tuple(k for k in o.operations if effects[k] == BridgeEffect.CREATES_ROWS and k in stamps.creates
                 and not any(s > k and effects[s] in (BridgeEffect.ASSIGNS, BridgeEffect.MARKS_DELETED)
                             for s in o.operations))


def written_names(bridge: BridgePlan, seq: int, creates: tuple[int, ...]) -> list[str]:
    """The names of the created rows' figures of ``creates`` in output ``seq``'s bridge, as the stage names them."""
    o = bridge.output(seq)
    return [metric_name(k, o.rows, m.name) for k in creates for m in o.measures]


def written_metrics(bridge: BridgePlan, seq: int, creates: tuple[int, ...]) -> list[tuple[str, str]]:
    """The created rows' figures of ``creates`` over output ``seq``'s written rows, named as the stage names
    them (:func:`..bridge.stage_metrics`): ``count`` and ``SUM`` of each measure, a NULL counted as 0."""
    o = bridge.output(seq)
    return [(metric_name(k, o.rows, m.name), pretty(created_figure(OPERATION_SEQ, k, m))) for k in creates
            for m in o.measures]


def _left_out(creates: tuple[int, ...]) -> exp.Expression:
    return exp.Not(this=exp.In(this=_col(ORIGIN), expressions=[exp.Literal.number(k) for k in creates]))


def left_out(creates: tuple[int, ...]) -> str:
    """The condition keeping a stage's rows other than those ``creates`` made (Spark SQL)."""
    return pretty(_left_out(creates))


def mistaken(creates: tuple[int, ...], kept: bool = True) -> tuple[str, str]:
    """:data:`MISTAKEN`: the live rows carrying one of ``creates``' seqs, over the rows :func:`left_out` keeps
    (``kept``: the rows observed are those already; else the condition is part of the count)."""
    conditions = [exp.Not(this=_col("_deleted")),
                  exp.In(this=_col(OPERATION_SEQ), expressions=[exp.Literal.number(k) for k in creates])]
    return MISTAKEN, pretty(exp.CountIf(this=exp.and_(*conditions, *(() if kept else (_left_out(creates),)))))

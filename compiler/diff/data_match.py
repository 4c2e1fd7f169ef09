"""How a data diff (``diff --data``, a restatement's) reads each output of a compiled project: which columns
match its rows when it writes no ``_row_id``, and which decimal columns are copied values (a rate) rather than
amounts. Pure: decided from the typed plan and its column lineage (:mod:`..lineage_walk`), no Spark.

- **Group-by keys.** An output that leaves ``_row_id`` out but writes every group-by column of the last
  ``aggregate`` (or aggregating ``append``) before it holds rows keyed by those columns (a trial balance by
  account): its rows are matched by them. (An output that writes ``_row_id`` is matched by it: the rows an
  aggregate adds have an id derived from its group-by values, so that is the same match.)
- **Copied from a join.** A decimal column whose every value input is ``identity`` (copied unchanged, no
  arithmetic, no aggregate) and at least one of them a column of a dataset the project reads as a runtime
  join (an update's ``fx_rate = fx.rate``) holds a rate or a price, not an amount: adding it up over rows
  means nothing, so its rows are compared one by one and it is never totalled.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

from ..lineage_walk import VALUE_KINDS, column_edges
from ..plan import AggregatePlan, AppendPlan, OutputPlan, Plan, Role

ROW_ID = "_row_id"


@dataclass(frozen=True)
class OutputMatch:
    """What the plan says about one output's rows: the group-by keys to match them by (empty: none), and the
    columns copied from a join."""

    group_by: tuple[str, ...] = ()
    copied: frozenset = field(default_factory=frozenset)


def output_matches(plan: Optional[Plan]) -> dict[int, OutputMatch]:
    """Output seq -> its :class:`OutputMatch`, for every output of ``plan`` (empty without a plan)."""
    if plan is None:
        return {}
    copied = copied_columns(plan)
    out = {}
    keys: tuple[str, ...] = ()
    for op in plan.operations:
        if isinstance(op, AggregatePlan) or (isinstance(op, AppendPlan) and op.summary is not None):
            keys = tuple(op.group_by)
        elif isinstance(op, OutputPlan):
            written = set(op.columns)
            matched = keys if keys and ROW_ID not in written and set(keys) <= written else ()
            out[op.seq] = OutputMatch(matched, frozenset(copied.get(op.seq, ())))
    return out


def copied_columns(plan: Plan) -> dict[int, set]:
    """Output seq -> the columns it writes copied unchanged from a runtime join's dataset (module docstring)."""
    input_name = plan.input_dataset.name if plan.input_dataset is not None else None
    joined = {r.dataset.name for op in plan.operations for r in op.reads if r.role == Role.JOIN} - {input_name}
    out: dict[int, set] = {}
    for seq, name, edges in column_edges(plan):
        values = [(key, kind) for key, kind in edges if kind in VALUE_KINDS and kind != "conditional"]
        if values and all(kind == "identity" for _, kind in values) and any(ds in joined for (ds, _), _ in values):
            out.setdefault(seq, set()).add(name)
    return out


def match_words(kind: str, columns: Sequence[str]) -> str:
    """How rows were matched, in words: ``by _row_id``, ``by the group-by keys a, b``, ``by --key a``, ``as whole
    rows``."""
    if kind == "group_by":
        return f"by the group-by keys {', '.join(columns)}"
    if kind == "key":
        return f"by --key {', '.join(columns)}"
    if kind == ROW_ID:
        return "by _row_id"
    return "as whole rows (no _row_id, no key)"

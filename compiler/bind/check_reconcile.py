"""Bind a ``reconcile`` check (docs/checks.md): ``from`` (the input or an output) and ``to`` (a later
output), groups ``by`` columns present at both ends, measures ``count`` or ``SUM(col)`` of a decimal
column present at both ends, ``explained_by`` operations between the two ends, a tolerance."""
from __future__ import annotations

import re
from typing import Optional

from sqlglot import exp

from ..bridge_columns import bridgeable, bridgeable_text
from ..checks.plan import CheckPlan, Measure
from ..errors import Location
from ..model import OperationKind
from ..operation_yaml import located_list
from ..yaml_reader import text_of
from .check_kinds import names_of, tolerance
from .context import BindContext, loc_of

_SUM = re.compile(r"\s*SUM\s*\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*", re.IGNORECASE)
MEASURE_HINT = 'write count or SUM(column) of a decimal column written at both ends, e.g. measures: [count, "SUM(amount_local)"]'


def _measure(ctx: BindContext, plan: CheckPlan, text: object, loc: Location, ends: list[tuple[str, dict]]
             ) -> Optional[Measure]:
    if isinstance(text, str) and text.strip().lower() == "count":
        return Measure("count", None, exp.Count(this=exp.Star()))
    m = _SUM.fullmatch(text) if isinstance(text, str) else None
    problem = None if m else "is neither count nor SUM(column)"
    if m:
        col = m.group(1)
        for what, columns in ends:
            typ = columns.get(col)
            if typ is None:
                problem = f"sums '{col}', which {what} do not have"
            elif not typ.is_decimal:
                problem = f"sums '{col}', which is {typ} in {what}, not a decimal"
            elif not bridgeable(typ.sql):
                problem = f"sums '{col}', a {typ} in {what}: the bridge sums {bridgeable_text()} exactly"
            if problem:
                break
    if problem:
        ctx.errors.add("CHK-010", f"the measure '{text}' of check '{plan.name}' {problem}", loc_of(text, loc)
                       if isinstance(text, str) else loc, text_of(text), MEASURE_HINT)
        return None
    col = m.group(1)
    return Measure(f"SUM({col})", col, exp.Sum(this=exp.column(col, quoted=True)))


def _explained(ctx: BindContext, plan: CheckPlan, value: object, loc: Optional[Location]) -> Optional[tuple[int, ...]]:
    low, high = plan.from_output or 0, plan.on
    kinds = {op.seq: op.kind for op in ctx.project.operations if op.kind is not None}
    between = [s for s, k in sorted(kinds.items()) if low < s < high and k != OperationKind.OUTPUT]
    hint = (f"operations that change rows between {'the input' if not low else f'output {low}'} and output {high}: "
            f"{', '.join(map(str, between)) or 'none'}")
    if value is None:
        return ()
    items = located_list(value)
    if not items and value != []:
        ctx.errors.add("CHK-011", f"'explained_by' of check '{plan.name}' must be a list of operation seqs",
                       loc or Location("?"), text_of(value), hint)
        return None
    out, ok = [], True
    for seq, iloc in items:
        if isinstance(seq, bool) or not isinstance(seq, int) or seq not in between:
            ok = False
            what = (f"operation {seq} is an output, which changes no rows" if kinds.get(seq) == OperationKind.OUTPUT
                    else f"{seq!r} is not an operation between the two ends" if seq not in kinds or isinstance(seq, bool)
                    else f"operation {seq} is not between the two ends")
            ctx.errors.add("CHK-011", f"check '{plan.name}' is explained_by {what}", iloc, text_of(seq), hint)
            continue
        out.append(seq)
    return tuple(dict.fromkeys(out)) if ok else None


def bind_reconcile(ctx: BindContext, plan: CheckPlan, from_columns: dict, from_output: Optional[int]) -> bool:
    """Fill ``plan`` (whose ``on`` and ``row_columns`` are the ``to`` output's) from the reconcile's arguments."""
    args, where = plan.check.args, plan.check.where
    plan.from_output = from_output
    if ctx.ws.config is not None and ctx.ws.config.bridge == "off":
        ctx.errors.add("CHK-014", f"check '{plan.name}' reconciles the run's bridge, which 'bridge: off' in "
                       "ledgerflow.yml says no run records", plan.check.location,
                       plan.name, "set 'bridge: always' (the default) or 'with_checks' in ledgerflow.yml, or "
                       "remove the check")
        return False
    ends = [("the input rows" if from_output is None else f"the rows output {from_output} writes", from_columns),
            (f"the rows output {plan.on} writes", plan.row_columns)]
    by, ok = [], True
    for what, columns in ends:
        found = names_of(ctx, plan, args.get("by"), where.get("by"), "by", columns, what)
        ok = ok and found is not None
        by = found or by
    measures = []
    written = args.get("measures")
    items = located_list(written) if written is not None else [("count", where.get("measures"))]
    if written is not None and not items:
        ctx.errors.add("CHK-010", f"'measures' of check '{plan.name}' must be a non-empty list", where.get("measures"),
                       text_of(written), MEASURE_HINT)
        ok = False
    for text, loc in items:
        m = _measure(ctx, plan, text, loc, ends)
        ok = ok and m is not None
        if m is not None and all(m.name != x.name for x in measures):
            measures.append(m)
    explained = _explained(ctx, plan, args.get("explained_by"), where.get("explained_by"))
    plan.tolerance = tolerance(ctx, plan, args.get("tolerance"), where.get("tolerance"))
    if not ok or explained is None or plan.tolerance is None:
        return False
    plan.group_by, plan.measures, plan.explained_by = tuple(by), tuple(measures), explained
    read = tuple(dict.fromkeys([*by, *(m.column for m in measures if m.column)]))
    plan.columns = read
    plan.reads = {from_output: read, plan.on: read}
    return True


def stable_groups(ctx: BindContext, plan: CheckPlan, operations: list) -> bool:
    """Whether no update before either end of reconcile ``plan`` assigns one of its ``by`` columns (else
    CHK-013): the bridge groups a row by its value at the end of the stage, which must be its group at
    every point before too."""
    ends = [e for e in (plan.from_output, plan.on) if e is not None]
    for op in operations:
        if op.kind != OperationKind.UPDATE or op.seq >= max(ends, default=0):
            continue
        changed = [c for c in plan.group_by if c in op.columns and not op.columns[c].identity]
        if changed:
            where = plan.check.where.get("by")
            ctx.errors.add("CHK-013", f"check '{plan.name}' reconciles by '{changed[0]}', which operation {op.seq} "
                           "(an update before the output) assigns, so a row's group before it is not its group "
                           "after", where or Location("?"), changed[0],
                           "group the reconcile by columns no update before its output changes (e.g. a key the "
                           "rows keep), or reconcile without 'by'")
            return False
    return True


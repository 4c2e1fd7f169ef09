"""Column lineage of one typed plan: which input columns each output column reads, and how (the walk
of :mod:`.lineage`, which follows registered datasets across projects).

How each kind is decided
------------------------
Values (what the column holds), from the expressions of :class:`~.plan.Column`:

- ``identity``: the expression is the input column, possibly through a ``CAST`` or the value
  branch of a ``CASE`` (an update's unmatched rows keep the value as is);
- ``transformation``: the column is read by any other computation (``amount_local * rate``);
- ``aggregation``: the column is read inside an aggregate function (``SUM``, ``COUNT`` ...);
- ``conditional``: the column is read only in the condition of a ``CASE``/``IF`` (an update's
  selector, ``IF(cond, a, b)``): the value depends on it, but is not computed from it. Reported only
  when the same input column is not also a value or a row input of that output column.

Chained operations compose: identity of a transformation is a transformation, anything of an
aggregation is an aggregation, anything read only conditionally stays conditional. Per input
column one value kind is kept, the strongest: aggregation > transformation > identity.

Rows (which rows the output holds; an input of every column of those rows):

- ``join``: every column of a runtime join's ``on`` condition (working and join side, join
  filters such as ``fx.rate_type = "closing"`` included) of every update the rows went through;
- ``filter``: the columns of an output's selector, of an aggregate's selector (for the rows it
  adds), of an append's ``source_selector`` (for the rows it adds), the period/as-of filter columns
  (``_period``, ``_period_from``, ``_period_to``) of the input, of every join side and append
  source, and ``_deleted`` with everything a ``delete`` condition read: an output keeps the rows
  whose ``_deleted`` is false, so the delete's columns reach it through ``_deleted`` (an output with
  ``include_deleted: true`` has no such filter: there the delete's columns are inputs of the
  ``_deleted`` column only). An update's selector does not filter rows (unmatched rows stay): it is
  ``conditional`` for the columns the update assigns;
- ``group_by``: the columns an aggregate (or an aggregating append) groups by, for the rows it adds.

The soft-delete guard ``NOT _deleted`` that the compiler puts in front of every update's
condition is left out for outputs that drop deleted rows (a row visible there was never deleted,
deletion being permanent), so ``amount_reporting`` of a converted line does not list its own old
value; outputs with ``include_deleted: true`` keep it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from sqlglot import exp

from .plan import AggregatePlan, AppendPlan, ConditionKind, OutputPlan, Plan, Read, UpdatePlan

VALUE_KINDS = ("identity", "transformation", "aggregation", "conditional")
ROW_KINDS = ("join", "filter", "group_by")
KINDS = VALUE_KINDS + ROW_KINDS
_STRENGTH = {"identity": 0, "transformation": 1, "aggregation": 2}

Key = tuple[str, str]  # (dataset name, dataset column)
Edges = dict[Key, set]  # input column -> kinds


# ------------------------------------------------------------------------------ expression roles
def _strip(node: exp.Expression) -> exp.Expression:
    while isinstance(node, (exp.Cast, exp.TryCast, exp.Paren)):
        node = node.this
    return node


def _is_guard(node: exp.Expression) -> bool:
    """``NOT _deleted`` (of any qualifier): the soft-delete guard the compiler adds."""
    node = _strip(node)
    return isinstance(node, exp.Not) and isinstance(_strip(node.this), exp.Column) and _strip(node.this).name == "_deleted"


def _without_guard(node: exp.Expression) -> Optional[exp.Expression]:
    """``node`` without its top-level ``NOT _deleted`` conjuncts (None when nothing else is left)."""
    parts = list(node.flatten()) if isinstance(node, exp.And) else [node]
    kept = [p for p in parts if not _is_guard(p)]
    if not kept:
        return None
    return kept[0] if len(kept) == 1 else exp.and_(*kept)  # copies: the plan stays untouched


def value_roles(node: exp.Expression, visible: bool, top: bool = True, agg: bool = False,
                cond: bool = False) -> list[tuple[exp.Column, str]]:
    """The columns ``node`` reads, each with its value kind (see the module docstring).

    ``visible``: the rows are known not to be deleted, so ``NOT _deleted`` guards are TRUE."""
    if top:
        node = _strip(node)
    if isinstance(node, exp.Column):
        kind = "conditional" if cond else "aggregation" if agg else "identity" if top else "transformation"
        return [(node, kind)]
    out: list[tuple[exp.Column, str]] = []
    if isinstance(node, exp.Case):
        for branch in node.args.get("ifs") or []:
            test = _without_guard(branch.this) if visible else branch.this
            if test is not None:
                out += value_roles(test, visible, False, agg, True)
            out += value_roles(branch.args["true"], visible, top, agg, cond)
            if test is None:
                return out  # always taken: later branches and the default are unreachable
        if node.args.get("default") is not None:
            out += value_roles(node.args["default"], visible, top, agg, cond)
        return out
    if isinstance(node, exp.If):  # IF(cond, a, b)
        out += value_roles(node.this, visible, False, agg, True)
        for key in ("true", "false"):
            if node.args.get(key) is not None:
                out += value_roles(node.args[key], visible, top, agg, cond)
        return out
    inner_agg = agg or isinstance(node, exp.AggFunc)
    for child in node.iter_expressions():
        out += value_roles(child, visible, False, inner_agg, cond)
    return out


def compose(outer: str, inner: str) -> str:
    """The kind of an input reached through ``inner`` and then ``outer``.

    An inner row kind stays (an upstream join decides which rows a registered dataset holds, whatever
    reads them); an outer row kind takes any value kind (a filter on a computed column filters on
    what it is computed from)."""
    if inner in ROW_KINDS:
        return inner
    if outer in ROW_KINDS:
        return outer
    if "conditional" in (outer, inner):
        return "conditional"
    if outer == "identity":
        return inner
    return "aggregation" if "aggregation" in (outer, inner) else "transformation"


def _add(edges: Edges, key: Key, kind: str) -> None:
    edges.setdefault(key, set()).add(kind)


# ------------------------------------------------------------------------------ the chain walk
@dataclass
class _Branch:
    """Rows at one point of the chain (the input's, the rows an aggregate or append adds, or their
    union, see :func:`_union`): per working column its value inputs, and the row inputs that hold for
    every column of these rows."""

    columns: dict[str, Edges]
    rows: Edges


class _Scope:
    """How the column references of one operation's expressions map to inputs."""

    def __init__(self, branch: _Branch, reads: dict[str, Read], working_alias: Optional[str] = None,
                 side: Optional[Read] = None):
        self.branch, self.reads, self.working_alias, self.side = branch, reads, working_alias, side

    def inputs(self, col: exp.Column) -> Edges:
        """The inputs (with their kinds) behind one column reference."""
        table = col.table or None
        if table is not None and table in self.reads and table != self.working_alias:
            read = self.reads[table]
            return {(read.dataset.name, read.column(col.name) or col.name): {"identity"}}
        if self.side is not None and table is None:  # a join side's or source's own column
            return {(self.side.dataset.name, self.side.column(col.name) or col.name): {"identity"}}
        return self.branch.columns.get(col.name, {})

    def value(self, node: exp.Expression, visible: bool) -> Edges:
        """Value inputs of an expression."""
        out: Edges = {}
        for col, outer in value_roles(node, visible):
            for key, kinds in self.inputs(col).items():
                for inner in kinds:
                    _add(out, key, compose(outer, inner))
        return out

    def rows(self, node: exp.Expression, kind: str, into: Edges) -> None:
        """Every input a row condition reads, as ``kind``, added to ``into``."""
        for col in node.find_all(exp.Column):
            for key in self.inputs(col):
                _add(into, key, kind)


def _merge(a: Edges, b: Edges) -> Edges:
    out = {k: set(v) for k, v in a.items()}
    for k, v in b.items():
        out.setdefault(k, set()).update(v)
    return out


def _identity_branch(read: Read, names) -> dict[str, Edges]:
    return {n: {(read.dataset.name, read.column(n) or n): {"identity"}} for n in names}


def _side_filters(op, reads: dict[str, Read], branch: _Branch, into: Edges) -> None:
    """Join conditions (``join``) and the join sides' period/as-of filters (``filter``) of an update."""
    for c in op.conditions:
        if c.kind == ConditionKind.JOIN:
            test = _without_guard(c.expression)
            if test is not None:
                _Scope(branch, reads).rows(test, "join", into)
        elif c.kind in (ConditionKind.JOIN_FILTER, ConditionKind.PERIOD, ConditionKind.AS_OF):
            side = reads.get(c.applies_to)
            kind = "join" if c.kind == ConditionKind.JOIN_FILTER else "filter"
            _Scope(branch, {}, side=side).rows(c.expression, kind, into)


def _source_branch(op: AppendPlan) -> _Branch:
    """An append's source rows: its columns as is, filtered by its selector, period/as-of and ``_deleted``."""
    read = op.reads[0]
    rows: Edges = {(read.dataset.name, "_deleted"): {"filter"}}
    branch = _Branch(_identity_branch(read, op.source_columns), rows)
    for c in op.conditions:
        if c.kind in (ConditionKind.SOURCE_SELECTOR, ConditionKind.PERIOD, ConditionKind.AS_OF):
            _Scope(branch, {}, side=read).rows(c.expression, "filter", rows)
    return branch


def _added_rows(op, source: _Branch, visible: bool, reads: dict[str, Read]) -> _Branch:
    """The rows an aggregate or append adds from the rows of ``source``."""
    rows = dict((k, set(v)) for k, v in source.rows.items())
    scope = _Scope(source, reads)
    if isinstance(op, AggregatePlan) and op.condition is not None:
        scope.rows(op.condition, "filter", rows)  # the rows it summarises: selector and not deleted
    for g in op.group_by:
        for key in source.columns.get(g, {}):
            _add(rows, key, "group_by")
    if op.summary:
        summary = {n: scope.value(e, visible) for n, e in op.summary.items()}
        source = _Branch(summary, rows)
    else:
        source = _Branch(source.columns, rows)
    added = _Scope(source, reads)
    return _Branch({n: added.value(c.expression, visible) for n, c in op.appended.items()}, rows)


def _walk(plan: Plan, visible: bool) -> dict[int, list[_Branch]]:
    """Per output seq, its branches with the output's own filter added to their row inputs."""
    if plan.input is None:
        return {}
    read = plan.input.read
    rows: Edges = {}
    first = _Branch(_identity_branch(read, plan.input.columns), rows)
    for c in plan.input.conditions:
        _Scope(first, {}, side=read).rows(c.expression, "filter", rows)
    branches = [first]
    out: dict[int, list[_Branch]] = {}
    for op in plan.operations:
        reads = {r.alias: r for r in op.reads if r.alias}
        alias = op.working_alias if isinstance(op, UpdatePlan) else None
        if isinstance(op, OutputPlan):
            wanted = visible == (not op.operation.include_deleted)
            if wanted:
                result = []
                for b in branches:
                    filtered = {k: set(v) for k, v in b.rows.items()}
                    if op.where is not None:
                        _Scope(b, {}).rows(op.where, "filter", filtered)
                    result.append(_Branch({n: b.columns.get(n, {}) for n in op.columns}, filtered))
                out[op.seq] = result
            continue
        added: list[_Branch] = []
        if op.appended is not None:
            sources = [_source_branch(op)] if isinstance(op, AppendPlan) else branches
            added = [_added_rows(op, s, visible, reads) for s in sources]
        moved = []
        for b in branches:
            scope = _Scope(b, reads, alias)
            rows = {k: set(v) for k, v in b.rows.items()}
            if isinstance(op, UpdatePlan):
                _side_filters(op, reads, b, rows)
            columns = {}
            for n, c in op.columns.items():
                e = c.expression
                if isinstance(e, exp.Column) and e.name == n and (e.table or None) in (None, alias):
                    columns[n] = b.columns.get(n, {})  # unchanged: shared, never mutated
                else:
                    columns[n] = scope.value(e, visible)
            moved.append(_Branch(columns, rows))
        branches = [_union(moved + added)]
    return out


def _union(branches: list[_Branch]) -> _Branch:
    """One branch standing for several: lineage is a union over the origins of the rows (a column's
    inputs are its value inputs and the row inputs of every origin), and composing is linear, so
    merging loses nothing; it keeps the walk linear where expanding per origin doubles at each aggregate."""
    if len(branches) == 1:
        return branches[0]
    names = dict.fromkeys(n for b in branches for n in b.columns)
    columns = {n: {} for n in names}
    rows: Edges = {}
    for b in branches:
        for n, edges in b.columns.items():
            columns[n] = _merge(columns[n], edges)
        rows = _merge(rows, b.rows)
    return _Branch(columns, rows)


def _reduce(edges: Edges) -> list[tuple[Key, str]]:
    """One value kind per input column (the strongest), conditional only when nothing else, row kinds all."""
    out: list[tuple[Key, str]] = []
    for key, kinds in edges.items():
        values = [k for k in kinds if k in _STRENGTH]
        if values:
            out.append((key, max(values, key=_STRENGTH.get)))
        rows = [k for k in ROW_KINDS if k in kinds]
        out += [(key, k) for k in rows]
        if "conditional" in kinds and not values and not rows:
            out.append((key, "conditional"))
    return out


def column_edges(plan: Plan) -> list[tuple[int, str, list[tuple[Key, str]]]]:
    """(output seq, column, its input columns with their kinds) for every column of every output of
    ``plan``: outputs that drop deleted rows first, then those with ``include_deleted``; column order kept."""
    out = []
    for visible in (True, False):
        for seq, branches in _walk(plan, visible).items():
            names = list(dict.fromkeys(n for b in branches for n in b.columns))
            for name in names:
                edges: Edges = {}
                for b in branches:
                    if name in b.columns:
                        edges = _merge(edges, _merge(b.columns[name], b.rows))
                out.append((seq, name, _reduce(edges)))
    return out

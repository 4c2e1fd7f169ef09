"""Fingerprints of a typed plan: what each operation is, and what each output column computes.

Two plans are compared through these prints, never through SQL text. A print is a short hash of the
normalised sqlglot AST of an expression (:func:`_shape`: node types and arguments, no comments) in
which every column reference has been replaced by the print of what it stands for, down to the input datasets' columns. Comparing two prints
is therefore comparing two fully expanded expressions (what :func:`..plan.output_columns` builds), but
built as a hash chain (a Merkle DAG) instead of a tree: in a chain of updates where each step reads a
column twice (``acc_b = acc_b * 2 - acc_b``) the expanded tree doubles at every step, the chain does not.

A dataset column's print (its *leaf*) holds the dataset's name, id, table name, temporal mode, the
version the project reads (its pin, else the latest active one), the resolver that locates it with
that resolver's rules, and the column's declared type: a change to any of them changes every
expression that reads the column, wherever it reaches. View names never enter a print, so a renamed
view of the same dataset is no change.

Row sets get prints too: an output's ``rows`` print holds, per origin of rows (the input, each
aggregate's and append's added rows), the origin's print and the print of the output's ``WHERE``
(deleted rows, selector) over that origin.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Callable, Optional

from sqlglot import exp

from ..kinds.operations.output import output_definition
from ..kinds.registry import operation_kind
from ..model import Dataset, Project, Workspace
from ..plan import (AggregatePlan, AppendPlan, OperationPlan, OutputPlan, Plan, UpdatePlan)
from ..resolver import resolver_precedence


def digest(*parts: object) -> str:
    """A short, stable hash of ``parts`` (an identifier-safe string: it stands in for a column in SQL)."""
    h = hashlib.blake2b(digest_size=10)
    for p in parts:
        h.update(str(p).encode("utf-8"))
        h.update(b"\x1f")
    return "h" + h.hexdigest()


@dataclass
class OperationPrint:
    """An operation as written, whatever its seq and name: ``local`` is the print of its own definition
    (kind, reads, expressions over the working columns, conditions, grouping, destination)."""

    seq: int
    name: str
    kind: str
    local: str


@dataclass
class OutputPrint:
    """What an output writes: per column its type and the print of its fully expanded expression(s),
    the print of its row set, and the print of where and how it writes (destination, registration)."""

    seq: int
    name: str
    columns: dict[str, tuple[str, str]]  # column -> (spark type, print)
    rows: str
    definition: str


@dataclass
class PlanPrints:
    """Every print of one plan."""

    operations: list[OperationPrint] = field(default_factory=list)
    outputs: dict[int, OutputPrint] = field(default_factory=dict)


Resolve = Callable[[exp.Column], str]


def _shape(node: exp.Expression, resolve: Resolve) -> str:
    """A canonical text of the AST under ``node``: its node types and arguments in order, comments and
    absent arguments left out, every column replaced by ``resolve(column)``. Two expressions have the
    same shape exactly when they are the same normalised AST (what ``exp.sql()`` of both would show),
    but the tree is neither copied nor generated: walking it is several times cheaper."""
    if isinstance(node, exp.Column):
        return resolve(node)
    parts = [node.key]
    for key, value in node.args.items():
        if value is None or value is False or (isinstance(value, list) and not value):
            continue
        if isinstance(value, exp.Expression):
            parts.append(f"{key}={_shape(value, resolve)}")
        elif isinstance(value, list):
            parts.append(f"{key}=[" + ",".join(_shape(v, resolve) if isinstance(v, exp.Expression) else repr(v)
                                               for v in value) + "]")
        else:
            parts.append(f"{key}={value!r}")
    return "(" + " ".join(parts) + ")"


def expression_print(node: Optional[exp.Expression], resolve: Resolve) -> str:
    """The print of ``node`` with every column replaced by ``resolve(column)`` (``-`` for no node)."""
    if node is None:
        return "-"
    if isinstance(node, exp.Column):
        return resolve(node)
    return digest(_shape(node, resolve))


def _local_shape(node: Optional[exp.Expression], views: dict[str, str]) -> str:
    """The shape of an expression as an operation writes it, views named by their dataset."""
    if node is None:
        return "-"

    def resolve(col: exp.Column) -> str:
        return f"`{views.get(col.table, col.table)}`.`{col.name}`"
    return _shape(node, resolve)


def resolver_print(workspace: Workspace, name: Optional[str]) -> str:
    """A resolver's rules as data (locations in ledgerflow.yml left out: moving a rule is no change)."""
    resolver = workspace.config.resolvers.get(name) if name else None
    if resolver is None:
        return f"{name}:undefined"
    return repr([(r.name, r.data_level, r.when, r.strategy) for r in resolver.rules])


def dataset_state(workspace: Workspace, project: Project, ds: Dataset, pinned: Optional[int]) -> str:
    """What reading ``ds`` means for ``project`` beyond its columns: identity, temporal mode, the version
    read, and the resolver (with its rules) that locates it."""
    version = pinned if pinned is not None else ds.latest_active_version()
    resolver, _ = resolver_precedence(workspace, project, ds)
    return digest(ds.id, ds.name, ds.table_name, ds.temporal_mode, version, resolver,
                  resolver_print(workspace, resolver))


class _Walker:
    """Walks a plan's operations in order, keeping per origin of rows the print of every working column."""

    def __init__(self, workspace: Workspace, plan: Plan):
        self.plan = plan
        self.states = {v.view: dataset_state(workspace, plan.project, v.dataset, v.pinned_version) for v in plan.inputs}
        self.datasets = {v.view: v.dataset for v in plan.inputs}
        self.view_names = {v.view: f"dataset:{v.dataset.name}" for v in plan.inputs}
        self._leaves: dict[tuple[str, str], str] = {}

    def leaf(self, view: str, column: str) -> str:
        """The print of ``column`` of the dataset behind ``view``."""
        key = (view, column)
        found = self._leaves.get(key)
        if found is None:
            ds = self.datasets.get(view)
            declared = ds.column(column) if ds is not None else None
            found = self._leaves[key] = digest("leaf", self.states.get(view, view), column,
                                               declared.type if declared else "system")
        return found

    # ------------------------------------------------------------------ operations as written
    def local(self, op: OperationPlan) -> str:
        """The print of an operation's own definition (no seq, no name)."""
        v = self.view_names
        parts: list[object] = [op.kind.value]
        parts += [(r.role.value, r.alias, r.view, r.columns) for r in op.reads]  # view: dataset name and pin
        parts += [(n, c.type, _local_shape(c.expression, v)) for n, c in op.columns.items() if not c.identity]
        parts += [(c.kind.value, v.get(c.applies_to, c.applies_to), _local_shape(c.expression, v)) for c in op.conditions]
        parts.append(tuple(op.group_by))
        for n, c in (op.appended or {}).items():
            if not _typed_null(c.expression):  # a working column the added rows do not carry: not part of it
                parts.append(("appended", n, c.type, _local_shape(c.expression, v)))
        for n, e in (op.summary or {}).items():
            parts.append(("summary", n, _local_shape(e, v)))
        parts += operation_kind(op.kind).fingerprint(op, lambda node: _local_shape(node, v))  # its own arguments
        return digest(*parts)


def _typed_null(node: exp.Expression) -> bool:
    return isinstance(node, exp.Null) or (isinstance(node, exp.Cast) and isinstance(node.this, exp.Null))


@dataclass
class _Branch:
    """One origin of rows: its print and, per working column, the print of its value."""

    origin: str
    columns: dict[str, str]


def plan_prints(workspace: Workspace, plan: Plan) -> PlanPrints:
    """The prints of every operation and output of ``plan`` (see the module docstring)."""
    out = PlanPrints()
    if plan.input is None:
        return out
    w = _Walker(workspace, plan)
    view = plan.input.read.view
    leaves = {n: w.leaf(view, n) for n in plan.input.columns}
    origin = digest("input", w.states.get(view), *[expression_print(c.expression, _unqualified(leaves))
                                                   for c in plan.input.conditions])
    branches = [_Branch(origin, leaves)]
    for op in plan.operations:
        out.operations.append(OperationPrint(op.seq, op.operation.name, op.kind.value, w.local(op)))
        if isinstance(op, OutputPlan):
            out.outputs[op.seq] = _output_print(op, branches)
            continue
        added = _added_branches(w, op, branches)
        branches = [_Branch(b.origin, _columns(w, op, b)) for b in branches] + added
    return out


def _unqualified(columns: dict[str, str]) -> Resolve:
    def resolve(col: exp.Column) -> str:
        return columns.get(col.name) or digest("unknown", col.table, col.name)
    return resolve


def _columns(w: _Walker, op: OperationPlan, branch: _Branch) -> dict[str, str]:
    """Per working column after ``op``, the print of its value on the rows of ``branch``."""
    working = branch.columns
    alias = op.working_alias if isinstance(op, UpdatePlan) else None
    joins: dict[str, tuple[str, object]] = {}  # alias -> (join context print, read)
    if isinstance(op, UpdatePlan):
        for j in op.joins:
            read = j.read

            def on_resolve(col: exp.Column, read=read) -> str:
                if not col.table or col.table == alias:
                    return working.get(col.name) or digest("unknown", col.name)
                other = joins.get(col.table)
                if other is not None:
                    ctx, r = other
                    return digest(ctx, w.leaf(r.view, r.column(col.name) or col.name))
                return w.leaf(read.view, read.column(col.name) or col.name)

            side = expression_print(j.where, lambda c, read=read: w.leaf(read.view, c.name))
            joins[j.alias] = (digest("join", expression_print(j.on, on_resolve), side), read)

    def resolve(col: exp.Column) -> str:
        if not col.table or col.table == alias:
            return working.get(col.name) or digest("unknown", col.name)
        found = joins.get(col.table)
        if found is None:
            return digest("unknown", col.table, col.name)
        ctx, read = found
        return digest(ctx, w.leaf(read.view, read.column(col.name) or col.name))

    out = {}
    for name, column in op.columns.items():
        e = column.expression
        if isinstance(e, exp.Column) and e.name in working and (not e.table or e.table == alias):
            out[name] = working[e.name]  # identity: the common case, no hashing
        else:
            out[name] = expression_print(e, resolve)
    return out


def _added_branches(w: _Walker, op: OperationPlan, branches: list[_Branch]) -> list[_Branch]:
    """The origins of rows an aggregate or append adds."""
    if op.appended is None:
        return []
    added = []
    if isinstance(op, AppendPlan):
        read = op.reads[0]
        source = {n: w.leaf(read.view, n) for n in op.source_columns}
        context = digest("append", w.states.get(read.view), expression_print(op.source_where, _unqualified(source)),
                         tuple(op.group_by))
        sources = [(context, source)]
    else:
        condition = op.condition if isinstance(op, AggregatePlan) else None
        sources = [(digest("aggregate", b.origin, expression_print(condition, _unqualified(b.columns)),
                           *[b.columns.get(g) for g in op.group_by]), b.columns) for b in branches]
    for context, source in sources:
        if op.summary:
            rows = {n: digest(context, expression_print(e, _unqualified(source))) for n, e in op.summary.items()}
        else:
            rows = source
        columns = {n: expression_print(c.expression, _unqualified(rows)) for n, c in op.appended.items()}
        added.append(_Branch(context, columns))
    return added


def _output_print(op: OutputPlan, branches: list[_Branch]) -> OutputPrint:
    columns = {}
    for name, column in op.columns.items():
        prints = list(dict.fromkeys(b.columns[name] for b in branches if name in b.columns))
        columns[name] = (column.type.sql or str(column.type), prints[0] if len(prints) == 1 else digest(*prints))
    rows = digest(*[(b.origin, expression_print(op.where, _unqualified(b.columns))) for b in branches])
    return OutputPrint(op.seq, op.operation.name, columns, rows, digest(output_definition(op)))

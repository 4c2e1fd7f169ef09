"""Plan a project: resolve names and types operation by operation, check every rule, and emit
one CTE step per operation (rendered from its template), cut into stages the runner materialises.

The working schema evolves as operations run: a column added by operation 2 is visible to
operation 3; a join alias is visible only inside its own update. Every problem is collected as a
:class:`Diagnostic`; planning continues past errors so one pass reports them all.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Optional

from sqlglot import exp

from . import periods, system_columns as sysc
from . import types as T
from .codes import APPEND_REFERENCE, INPUT_REFERENCE, JOIN_REFERENCE, ReferenceCodes
from .dsl.ast import Binary, ColumnRef, Expanded, Node, Paren, Source, Unary, Call
from .dsl.translate import ExprError, JoinScope, Scope, Translator, Typed
from .errors import Diagnostic, DiagnosticCollector, Location, did_you_mean
from .model import Dataset, DatasetRef, Operation, Project, Workspace
from .render import data_type, ident, render, sql
from .resolver import is_absolute_or_uri
from .types import SqlType

IDENTIFIER = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
STAGE_MAX_CTES = 40  # Spark's analyzer gives up at ~97 dependent CTEs in one statement; stay well below
MATCHES = "_lf_matches"


@dataclass
class InputView:
    """A dataset the compiled SQL reads, under the logical view name the runner creates."""

    view: str
    dataset: Dataset
    pinned_version: Optional[int]
    role: str  # input | join | append
    uses: list = field(default_factory=list)  # (operation seq, alias or None)


@dataclass
class Statement:
    """One statement of the compiled script: a stage to materialise, or an output's query."""

    kind: str  # stage | output
    name: str
    sql: str
    operations: list[int]
    reads: list[str]
    operation: Optional[Operation] = None
    columns: list[tuple[str, str]] = field(default_factory=list)  # output: (name, spark type or "")


@dataclass
class Plan:
    """The result of planning: inputs, statements in execution order, and the final schema."""

    project: Project
    input_dataset: Optional[Dataset]
    inputs: list[InputView]
    statements: list[Statement]
    schema: dict[str, SqlType]
    diagnostics: list[Diagnostic]


def source_of(text: str, fallback: Optional[Location]) -> Source:
    """The :class:`Source` of an expression string read from YAML."""
    loc_fn = getattr(text, "location", None)
    if loc_fn is not None:
        loc = loc_fn()
        return Source(str(text), loc.file, loc.line, loc.column)
    fb = fallback or Location("<expression>", 1, 1)
    return Source(str(text), fb.file, fb.line, fb.column)


def _loc(text: str, fallback: Optional[Location]) -> Location:
    loc_fn = getattr(text, "location", None)
    return loc_fn() if loc_fn is not None else (fallback or Location("<project>"))


def _refs(node: Node) -> set[Optional[str]]:
    """Table qualifiers referenced by a node (None = bare working column)."""
    if isinstance(node, ColumnRef):
        return {node.table}
    if isinstance(node, Expanded):
        return _refs(node.body)
    if isinstance(node, Paren):
        return _refs(node.expr)
    if isinstance(node, Unary):
        return _refs(node.operand)
    if isinstance(node, Binary):
        return _refs(node.left) | _refs(node.right)
    if isinstance(node, Call):
        out: set = set()
        for a in node.args:
            out |= _refs(a)
        return out
    return set()


def _conjuncts(node: Node) -> list[Node]:
    if isinstance(node, Binary) and node.op == "AND":
        return _conjuncts(node.left) + _conjuncts(node.right)
    if isinstance(node, Paren) and isinstance(node.expr, Binary) and node.expr.op == "AND":
        return _conjuncts(node.expr)
    return [node]


def _and(parts: list[exp.Expression]) -> Optional[exp.Expression]:
    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    out = _group(parts[0])
    for p in parts[1:]:
        out = exp.And(this=out, expression=_group(p))
    return out


def _group(node: exp.Expression) -> exp.Expression:
    return exp.Paren(this=node) if isinstance(node, exp.Or) else node


def _not_deleted(qualifier: Optional[str] = None) -> exp.Expression:
    return exp.Not(this=exp.column("_deleted", table=qualifier, quoted=True))


def _cast(node: exp.Expression, typ: SqlType) -> exp.Expression:
    return exp.Cast(this=node, to=data_type(typ.sql, "spark")) if typ.sql else node


def _null_of(typ: SqlType) -> exp.Expression:
    return _cast(exp.Null(), typ)


@functools.lru_cache(maxsize=4096)
def _column_text(name: str, qualifier: Optional[str]) -> str:
    """The text of a quoted (qualified) column reference, generated once per name: every update lists
    every working column."""
    return sql(exp.column(name, table=qualifier, quoted=True))


def _aliased(node: exp.Expression, name: str) -> str:
    return f"{sql(node)} AS {ident(name)}"


class Planner:
    """Plans one project against a workspace's catalog."""

    def __init__(self, workspace: Workspace, project: Project, stage_max_ctes: int = STAGE_MAX_CTES):
        self.ws = workspace
        self.project = project
        self.errors = DiagnosticCollector()
        self.inputs: dict[str, InputView] = {}
        self.statements: list[Statement] = []
        self.stage_max = stage_max_ctes
        self.selectors = {name: source_of(text, project.location) for name, text in project.selectors.items()}
        self.schema: dict[str, SqlType] = {}
        self.table = ""
        self.input_ds: Optional[Dataset] = None
        # current stage
        self.fragments: list[str] = []
        self.stage_ops: list[int] = []
        self.stage_reads: list[str] = []
        self.stage_ctes = 0
        self.prev = ""

    # ------------------------------------------------------------------ catalog
    def lookup(self, ref: DatasetRef, codes: ReferenceCodes, what: str) -> Optional[Dataset]:
        """Find a referenced dataset and check it is active, the pinned version exists and a resolver applies."""
        not_found, disabled, no_version = codes.not_found, codes.disabled, codes.no_version
        ds = self.ws.find_dataset(ref.dataset_id)
        if ds is None:
            self.errors.add(not_found, f"{what}: dataset '{ref.dataset_id}' not found in the workspace", ref.location,
                            ref.dataset_id, did_you_mean(ref.dataset_id, [d.name for d in self.ws.datasets]))
            return None
        if ds.status != "active":
            self.errors.add(disabled, f"{what}: dataset '{ds.name}' is disabled and cannot be used", ref.location,
                            ref.dataset_id, "enable it (status: active) or reference another dataset")
            return None
        if ref.dataset_version is not None:
            v = ds.version(ref.dataset_version)
            if v is None or v.status != "active":
                state = "does not exist" if v is None else "is disabled"
                self.errors.add(no_version, f"{what}: dataset '{ds.name}' version {ref.dataset_version} {state}",
                                ref.version_location or ref.location, str(ref.dataset_version),
                                f"active versions: {', '.join(str(x.version) for x in ds.versions if x.status == 'active') or 'none'}")
                return None
        elif ds.latest_active_version() is None:
            self.errors.add(no_version, f"{what}: dataset '{ds.name}' has no active version", ref.location,
                            ref.dataset_id, "mark a version active")
            return None
        self.check_resolver(ds, ref, codes.no_resolver, what)
        return ds

    def check_resolver(self, ds: Dataset, ref: DatasetRef, code: str, what: str) -> None:
        """A resolver must be determinable: project override -> dataset resolver_id -> default."""
        overrides = self.project.resolver_overrides
        chosen = overrides.get(ds.id) or overrides.get(ds.name) or ds.resolver_id or self.ws.config.default_resolver
        if not chosen:
            self.errors.add(code, f"{what}: no resolver for dataset '{ds.name}' (ResolverNotFound)", ref.location,
                            ref.dataset_id, "set default_resolver in ledgerflow.yml, resolver_id on the dataset, or "
                            "a project resolver_overrides entry")

    def view_for(self, ds: Dataset, pin: Optional[int], role: str, seq: int, alias: Optional[str]) -> str:
        """The logical view name for ``ds`` at ``pin`` (shared by every use of the same dataset+pin)."""
        name = f"ds_{ds.name}" + (f"_v{pin}" if pin is not None else "")
        view = self.inputs.get(name)
        if view is None:
            view = self.inputs[name] = InputView(name, ds, pin, role)
        view.uses.append((seq, alias))
        return name

    # ------------------------------------------------------------------ stages
    def make_room(self, count: int) -> str:
        """Cut a new stage if ``count`` more CTEs would overfill this one; returns the relation to read."""
        if self.stage_ctes and self.stage_ctes + count > self.stage_max:
            self.cut_stage()
        return ident(self.prev)

    def add_ctes(self, fragment: str, count: int, last: str, seq: int) -> None:
        """Append an operation's CTEs (rendered after :meth:`make_room`) to the current stage."""
        self.fragments.append(fragment)
        self.stage_ctes += count
        self.stage_ops.append(seq)
        self.prev = last

    def cut_stage(self) -> None:
        """Close the current stage: its last CTE becomes the view ``lf_stage_N``."""
        if not self.fragments:
            return
        name = f"lf_stage_{sum(1 for s in self.statements if s.kind == 'stage') + 1}"
        text = render("stage", ctes=self.fragments, last=ident(self.prev))
        self.statements.append(Statement("stage", name, text, list(self.stage_ops), list(self.stage_reads)))
        self.fragments, self.stage_ops, self.stage_ctes = [], [], 0
        self.stage_reads = [name]
        self.prev = name

    # ------------------------------------------------------------------ helpers
    def translator(self, scope: Scope, **kw) -> Translator:
        return Translator(scope, self.selectors, **kw)

    def compile_expr(self, tr: Translator, text: Optional[str], fallback: Optional[Location], codes: dict,
                     expect: Optional[str] = None) -> Optional[Typed]:
        """Translate one expression; on error record it with the context's code and return None."""
        if text is None:
            return None
        source = source_of(text, fallback)
        try:
            return tr.translate(source, expect)
        except ExprError as err:
            self.errors.extend([err.diagnostic(codes)])
            return None

    def working_scope(self, qualifier: Optional[str] = None, joins: Optional[dict] = None) -> Scope:
        return Scope(self.table, dict(self.schema), qualifier, joins or {})

    def selector_condition(self, op: Operation, scope: Scope, codes: dict) -> Optional[exp.Expression]:
        """``NOT _deleted AND (selector)`` for the rows an operation acts on."""
        typed = self.compile_expr(self.translator(scope), op.selector, op.location, codes, expect="boolean")
        sel = exp.Paren(this=typed.sql) if typed is not None else None
        return _and([_not_deleted(scope.qualifier), sel])

    # ------------------------------------------------------------------ plan
    def plan(self) -> Plan:
        """Plan every operation; returns the plan with all diagnostics found."""
        p = self.project
        ds = self.lookup(p.input, INPUT_REFERENCE, "input dataset")
        self.input_ds = ds
        if ds is not None:
            self.table = ds.table_name
            self.schema = {c.name: T.from_sql(c.type) for c in ds.columns}
            self.schema.update(sysc.system_types(ds.temporal_mode))
            view = self.view_for(ds, p.input.dataset_version, "input", 0, None)
            where = periods.period_filter(ds.temporal_mode)
            frag = render("input", cte=ident("input"), columns=[ident(c) for c in self.schema], view=ident(view),
                          where=sql(where) if where is not None else "")
            self.stage_reads = [view]
            self.add_ctes(frag, 1, "input", 0)
        for op in p.operations:
            if ds is None or not op.type:
                continue
            getattr(self, f"plan_{op.type}")(op)
        if ds is not None and self.fragments:
            self.cut_stage()
        return Plan(p, ds, list(self.inputs.values()), self.statements, self.schema, self.errors.diagnostics)

    # ------------------------------------------------------------------ update
    def plan_update(self, op: Operation) -> None:
        seq = op.seq
        if not op.assignments:
            self.errors.add("UPD-VR-001", f"update operation {seq} has no assignments", op.location, op.name,
                            "add at least one {column, expression} under arguments.assignments")
        working_alias = self.table
        joins_ctx, join_scopes = [], {}
        for j in op.joins:
            ctx = self.plan_join(op, j, working_alias, join_scopes)
            if ctx is not None:
                joins_ctx.append(ctx)
        has_joins = bool(op.joins)
        qualifier = working_alias if has_joins else None
        scope = self.working_scope(qualifier, join_scopes)
        codes = {"syntax": "UPD-VR-004", "selector_undefined": "UPD-VR-003", "unknown_alias": "JOIN-VR-008"}
        cond = self.selector_condition(op, scope, codes)
        tr = self.translator(scope)
        assigned: dict[str, exp.Expression] = {}
        new_types: dict[str, SqlType] = {}
        for a in op.assignments:
            col = str(a.column)
            if not IDENTIFIER.match(col):
                self.errors.add("UPD-VR-002", f"invalid column name '{col}'", _loc(a.column, a.location), col,
                                "column names match ^[a-zA-Z_][a-zA-Z0-9_]*$")
                continue
            if sysc.is_system(col) and col not in sysc.ASSIGNABLE:
                self.errors.add("UPD-VR-002", f"system column '{col}' cannot be assigned", _loc(a.column, a.location),
                                col, "only _labels may be set by an update; use delete for _deleted")
                continue
            if col in assigned or col in new_types:
                self.errors.add("UPD-VR-002", f"column '{col}' is assigned twice in operation {seq}",
                                _loc(a.column, a.location), col, "assign each column once per update")
                continue
            typed = self.compile_expr(tr, a.expression, a.location,
                                      {"syntax": "UPD-VR-005", "unknown_alias": "JOIN-VR-008",
                                       "selector_undefined": "UPD-VR-003"})
            if typed is None:
                typed = Typed(exp.Null(), T.UNKNOWN)
            if col in self.schema:
                target = self.schema[col]
                if not T.compatible(target, typed.type):
                    self.errors.add("DSL-002", f"cannot assign a {typed.type.kind} to column '{col}' of type {target}",
                                    _loc(a.expression, a.location), str(a.expression),
                                    "the column keeps its type; convert the value")
                assigned[col] = _cast(typed.sql, target) if typed.type != target else typed.sql
            else:
                new_types[col] = typed.type if typed.type.kind != "null" else T.UNKNOWN
                assigned[col] = typed.sql
        if cond is None:
            return
        columns = self.changed_columns(cond, {c: v for c, v in assigned.items() if c in self.schema}, qualifier)
        when = sql(cond)
        for name in new_types:  # exp.Case(ifs=[exp.If(this=cond, true=value)]), as text (see changed_columns)
            columns.append(f"CASE WHEN {when} THEN {sql(assigned[name])} END AS {ident(name)}")
        cte = f"op_{seq:03d}_update"
        n_ctes = 1 + sum(2 if j["duplicates"] else 1 for j in joins_ctx)
        frag = render("update", joins=joins_ctx, cte=ident(cte), columns=columns, prev=self.make_room(n_ctes),
                      working=ident(working_alias), multiplicity_checks=[j["check"] for j in joins_ctx])
        self.schema.update(new_types)
        self.add_ctes(frag, n_ctes, cte, seq)

    def plan_join(self, op: Operation, j, working_alias: str, join_scopes: dict) -> Optional[dict]:
        """Validate one runtime join and build its template context; registers its alias scope."""
        alias = str(j.alias)
        loc = _loc(j.alias, j.location)
        ok = True
        if not IDENTIFIER.match(alias) or "__" in alias:
            self.errors.add("JOIN-VR-004", f"join alias '{alias}' is not a valid name", loc, alias,
                            "aliases are letters, digits and single underscores")
            ok = False
        elif alias in join_scopes:
            self.errors.add("JOIN-VR-004", f"join alias '{alias}' is already used in this operation", loc, alias,
                            "give each join of an update its own alias")
            ok = False
        elif alias == working_alias:
            self.errors.add("JOIN-VR-005", f"join alias '{alias}' conflicts with working dataset table name", loc,
                            alias, "choose another alias, e.g. the dataset's short name")
            ok = False
        ds = self.lookup(j.dataset, JOIN_REFERENCE, f"join '{alias}'")
        if ds is None or not ok:
            if ok:  # keep the alias usable so its references do not cascade into more errors
                join_scopes[alias] = JoinScope(alias, _AnyColumns())
            return None
        raw_cols = {c.name: T.from_sql(c.type) for c in ds.columns}
        raw_cols.update({n: T.from_sql(t) for n, t in sysc.TEMPORAL_COLUMNS[ds.temporal_mode]})
        exposed = {name: (f"{alias}__{name}", typ) for name, typ in raw_cols.items()}
        side_scope = Scope(alias, raw_cols, None, {}, what=f"join dataset '{ds.name}'")
        cond_scope_joins = dict(join_scopes)
        cond_scope_joins[alias] = JoinScope(alias, exposed)
        cond_scope = self.working_scope(working_alias, cond_scope_joins)
        codes = {"syntax": "JOIN-VR-006", "unknown_column": "JOIN-VR-007", "unknown_alias": "JOIN-VR-007",
                 "type": "JOIN-VR-006", "selector_undefined": "JOIN-VR-006"}
        source = source_of(j.on, j.location)
        pushed, keys, looked_up, on_parts = [], [], [], []
        try:
            tree = self.translator(cond_scope).parse(source)
            for part in _conjuncts(tree):
                tables = {t if t is not None else working_alias for t in _refs(part)}
                if tables == {alias}:
                    pushed.append(self.translator(side_scope).translate_node(part, source, "boolean").sql)
                    continue
                if alias in tables:
                    key = _key_sides(part, alias, working_alias)
                    if key is None:
                        raise ExprError("syntax", "unsupported join condition: use equalities between working "
                                        "and join columns, and filters on the join's own columns, joined by AND",
                                        source, getattr(part, "pos", 0), "",
                                        f"e.g. transactions.currency = {alias}.from_currency AND {alias}.x = \"y\"")
                    mine, other = key
                    side = self.translator(side_scope).translate_node(mine, source)
                    keys.append(side.sql)
                    looked_up.append(self.translator(cond_scope).translate_node(other, source).sql)
                    on_parts.append(self.translator(cond_scope).translate_node(part, source, "boolean").sql)
                else:
                    on_parts.append(self.translator(cond_scope).translate_node(part, source, "boolean").sql)
        except ExprError as err:
            self.errors.extend([err.diagnostic(codes)])
            join_scopes[alias] = JoinScope(alias, exposed)
            return None
        join_scopes[alias] = JoinScope(alias, exposed)
        view = self.view_for(ds, j.dataset.dataset_version, "join", op.seq, alias)
        cte = f"op_{op.seq:03d}_join_{alias}"
        period = periods.period_filter(ds.temporal_mode)
        where = _and([_not_deleted(), period, *[exp.Paren(this=p) if isinstance(p, exp.Or) else p for p in pushed]])
        matches = exp.column(f"{alias}__{MATCHES}", table=alias, quoted=True)
        # the error names the key values the working row looked up (computed keys included)
        key_text = [exp.Cast(this=k.copy(), to=data_type("string")) for k in looked_up]
        message = exp.Anonymous(this="concat", expressions=[
            exp.Literal.string(f"ledgerflow: runtime join '{alias}' of operation {op.seq} matched "),
            exp.Cast(this=matches.copy(), to=data_type("string")),
            exp.Literal.string(f" rows of dataset '{ds.name}' for one working row; join key: "),
            exp.Anonymous(this="concat_ws", expressions=[exp.Literal.string(", "), *key_text])
            if key_text else exp.Literal.string("(none)")])
        check = exp.Or(this=exp.LTE(this=exp.Coalesce(this=matches, expressions=[exp.Literal.number(1)]),
                                    expression=exp.Literal.number(1)),
                       expression=exp.Anonymous(this="raise_error", expressions=[message]))
        on = _and([*on_parts, _not_deleted(working_alias)])
        side_columns = [_aliased(exp.column(n, quoted=True), f"{alias}__{n}") for n in raw_cols]
        ctx = {"cte": ident(cte), "alias": ident(alias), "view": ident(view), "columns": side_columns,
               "where": sql(where), "on": sql(on), "check": f"({sql(check)})", "matches": ident(f"{alias}__{MATCHES}"),
               "partition_by": [sql(k) for k in keys], "duplicates": None}
        group_keys = list(dict.fromkeys(k.name for k in keys)) if keys and all(
            isinstance(k, exp.Column) for k in keys) else []
        if group_keys:
            # When every join key is a plain column, the join side stays the filtered rows, broadcast
            # as they are, and the check joins a second, tiny side: the keys held by more than one
            # join row (GROUP BY ... HAVING COUNT(*) > 1 over the keys alone, in one task: a join side
            # is a dimension small enough to broadcast, and without a shuffle the check adds no stage
            # that the operation waits for; Spark's adaptive execution drops the join when it is
            # empty). A working row finding its key there fails the run in the same WHERE that every
            # row of the operation passes, so the duplicated rows the plain join makes for such a
            # key can never reach an output. Computed keys keep a window over the join side.
            dups = f"{alias}__duplicates"  # "__" is refused in user aliases: no clash possible
            ctx["check"] = f"({sql(check.transform(_requalify(alias, dups)))})"
            ctx["duplicates"] = {"cte": ident(f"{cte}_duplicates"), "alias": ident(dups),
                                 "key_columns": [_aliased(exp.column(k, quoted=True), f"{alias}__{k}")
                                                 for k in group_keys],
                                 "group_by": [ident(k) for k in group_keys],
                                 "on": sql(on.transform(_requalify(alias, dups)))}
        return ctx

    def changed_columns(self, cond: exp.Expression, changes: dict[str, exp.Expression],
                        qualifier: Optional[str] = None) -> list[str]:
        """The working columns, where rows matching ``cond`` take ``changes`` and ``_updated_at = :run_started_at``;
        other rows keep every value."""
        changes = {**changes, "_updated_at": exp.Placeholder(this="run_started_at")}
        # The text of exp.Case(ifs=[exp.If(this=cond, true=change)], default=ref), written directly:
        # the condition is generated once, not copied and generated again for every changed column.
        when = sql(cond)
        columns = []
        for name in self.schema:
            ref = _column_text(name, qualifier)
            if name in changes:
                columns.append(f"CASE WHEN {when} THEN {sql(changes[name])} ELSE {ref} END AS {ident(name)}")
            else:
                columns.append(ref)
        return columns

    # ------------------------------------------------------------------ delete
    def plan_delete(self, op: Operation) -> None:
        cond = self.selector_condition(op, self.working_scope(), {})
        if cond is None:
            return
        columns = self.changed_columns(cond, {})
        # _deleted is never NULL (loading fills it, created rows get FALSE, updates cannot assign it), so
        # "CASE WHEN cond THEN TRUE ELSE _deleted END" is the smaller expression below, cheaper for
        # Spark's optimizer and per row.
        deleted = exp.or_(exp.column("_deleted", quoted=True), exp.Coalesce(this=cond.copy(), expressions=[exp.false()]))
        columns[list(self.schema).index("_deleted")] = _aliased(deleted, "_deleted")
        cte = f"op_{op.seq:03d}_delete"
        self.add_ctes(render("delete", cte=ident(cte), columns=columns, prev=self.make_room(1)), 1, cte, op.seq)

    # ------------------------------------------------------------------ aggregate
    def plan_aggregate(self, op: Operation) -> None:
        seq = op.seq
        scope = self.working_scope()
        cond = self.selector_condition(op, scope, {})
        group_cols = self.group_columns(op, scope, "BR-015")
        keys = set(group_cols) if group_cols is not None else None  # bad group_by: reported, no DSL-005 cascade
        tr = self.translator(scope, aggregates=True, group_keys=keys)
        aggs = self.aggregations(op, tr, {}, "DSL-006")
        if cond is None or group_cols is None or aggs is None:
            return
        summary = f"op_{seq:03d}_summary"
        summary_cols = [ident(c) for c in group_cols] + [_aliased(t.sql, c) for c, t in aggs.items()]
        new_cols = {c: (t.type if t.type.kind != "null" else T.UNKNOWN) for c, t in aggs.items() if c not in self.schema}
        for c, t in aggs.items():
            if c in self.schema and not T.compatible(self.schema[c], t.type):
                self.errors.add("DSL-002", f"aggregation '{c}' gives {t.type.kind} but the column is {self.schema[c]}",
                                op.location, c)
        existing = [ident(c) for c in self.schema] + [_aliased(_null_of(t), c) for c, t in new_cols.items()]
        identity = [exp.Literal.number(seq)] + [exp.column(c, quoted=True) for c in group_cols]
        appended = []
        for name, typ in self.schema.items():
            if name in group_cols or name in aggs:
                appended.append(_aliased(_cast(exp.column(name, quoted=True), typ), name))
            else:
                appended.append(_aliased(self.generated_value(name, typ, seq, identity, self.input_ds.id), name))
        appended += [ident(c) for c in new_cols]
        cte = f"op_{seq:03d}_aggregate"
        frag = render("aggregate", summary_cte=ident(summary), summary_columns=summary_cols, prev=self.make_room(2),
                      where=sql(cond), group_by=[ident(c) for c in group_cols], cte=ident(cte),
                      existing_columns=existing, appended_columns=appended)
        self.schema.update(new_cols)
        self.add_ctes(frag, 2, cte, seq)

    def generated_value(self, name: str, typ: SqlType, seq: int, identity: list, source_id: str,
                        carried: Optional[set] = None) -> exp.Expression:
        """Value of a column on a row created by aggregate/append that the row does not carry itself."""
        if carried and name in carried:
            return _cast(exp.column(name, quoted=True), typ)
        if name == "_row_id":
            return sysc.uuidv7(identity)
        if name == "_deleted":
            return exp.false()
        if name == "_updated_at":
            return exp.Placeholder(this="run_started_at")
        if name == "_period":
            return exp.Placeholder(this="period_identifier")
        if name == "_labels":
            return exp.Literal.string("")
        if name == "_source_dataset":
            return exp.Literal.string(source_id)
        if name == "_operation_seq":
            return exp.Literal.number(seq)
        return _null_of(typ)

    def group_columns(self, op: Operation, scope: Scope, code: str) -> Optional[list[str]]:
        """Column names of ``group_by`` (``table.column`` or ``column``) resolved in ``scope``."""
        out, ok = [], True
        for g in op.group_by:
            m = re.fullmatch(r"\s*(?:([A-Za-z_][A-Za-z0-9_]*)\.)?([A-Za-z_][A-Za-z0-9_]*)\s*", str(g))
            if not m:
                self.errors.add(code, f"group_by entry '{g}' is not a column reference", _loc(g, op.location), str(g),
                                "write table.column or column")
                ok = False
                continue
            ref = ColumnRef(m.group(1), m.group(2), 0)
            try:
                scope.resolve(ref, source_of(g, op.location))
            except ExprError as err:
                self.errors.extend([Diagnostic(code, err.message, _loc(g, op.location), str(g), err.hint)])
                ok = False
                continue
            if ref.name in out:
                continue
            out.append(ref.name)
        return out if ok else None

    def aggregations(self, op: Operation, tr: Translator, codes: dict, no_agg_code: str) -> Optional[dict]:
        """Translate ``aggregations``; each must aggregate and name a valid column."""
        out: dict[str, Typed] = {}
        ok = True
        for a in op.aggregations:
            col = str(a.column)
            if not IDENTIFIER.match(col) or sysc.is_system(col):
                self.errors.add(codes.get("column", "UPD-VR-002"), f"invalid aggregation column name '{col}'",
                                _loc(a.column, a.location), col, "use a name like total_amount (no leading '_')")
                ok = False
                continue
            if col in out:
                self.errors.add(codes.get("column", "UPD-VR-002"), f"aggregation column '{col}' is defined twice",
                                _loc(a.column, a.location), col)
                ok = False
                continue
            typed = self.compile_expr(tr, a.expression, a.location, codes)
            if typed is None:
                ok = False
                continue
            if not typed.aggregate:
                self.errors.add(no_agg_code, f"aggregation '{col}' does not use an aggregate function",
                                _loc(a.expression, a.location), str(a.expression),
                                "use SUM, AVG, MIN_AGG, MAX_AGG, COUNT or COUNT_ALL")
                ok = False
                continue
            out[col] = typed
        return out if ok else None

    # ------------------------------------------------------------------ append
    def plan_append(self, op: Operation) -> None:
        seq = op.seq
        ref = op.source
        ds = self.lookup(ref, APPEND_REFERENCE, f"append source of operation {seq}")
        if ds is None:
            return
        src_cols = {c.name: T.from_sql(c.type) for c in ds.columns}
        temporal = {n: T.from_sql(t) for n, t in sysc.TEMPORAL_COLUMNS[ds.temporal_mode]}
        scope = Scope(ds.table_name, {**src_cols, **temporal}, None, {}, what=f"source dataset '{ds.name}'")
        codes = {"syntax": "APPEND_004", "unknown_column": "APPEND_006", "unknown_alias": "APPEND_006",
                 "function": "APPEND_005", "arity": "APPEND_005"}
        sel = self.compile_expr(self.translator(scope), op.source_selector, op.location, codes, expect="boolean")
        if op.source_selector is not None and sel is None:
            return
        view = self.view_for(ds, ref.dataset_version, "append", seq, None)
        where = _and([_not_deleted(), periods.period_filter(ds.temporal_mode),
                      exp.Paren(this=sel.sql) if sel is not None else None])
        source_cte = f"op_{seq:03d}_source"
        source_columns = [ident(c) for c in [*src_cols, *temporal, "_row_id"]]
        agg_ctx = {}
        if op.has_aggregation:
            group_cols = self.group_columns(op, scope, "APPEND_006")
            tr = self.translator(scope, aggregates=True, group_keys=set(group_cols or []))
            aggs = self.aggregations(op, tr, {**codes, "column": "APPEND_003"}, "APPEND_005")
            if group_cols is None or aggs is None:
                return
            appended_types = {c: src_cols.get(c) or temporal[c] for c in group_cols}
            appended_types.update({c: t.type for c, t in aggs.items()})
            agg_cte = f"op_{seq:03d}_aggregated"
            agg_ctx = {"aggregated_cte": ident(agg_cte), "group_by": [ident(c) for c in group_cols],
                       "aggregate_columns": [ident(c) for c in group_cols] + [_aliased(t.sql, c) for c, t in aggs.items()]}
            identity = [exp.Literal.number(seq)] + [exp.column(c, quoted=True) for c in group_cols]
            n_ctes = 3
        else:
            appended_types = {**src_cols}
            identity = [exp.Literal.number(seq), exp.column("_row_id", quoted=True)]
            n_ctes = 2
        extra = [c for c in appended_types if c not in self.schema and not sysc.is_system(c)]
        for c in extra:
            self.errors.add("APPEND_003", f"column '{c}' of the appended rows is not a working column",
                            ref.location, c, "every appended column must exist in the working dataset: aggregate "
                            "into working columns (e.g. amount_local = SUM(amount)) or leave the column out")
        mismatched = [c for c in appended_types if c in self.schema and not T.compatible(self.schema[c], appended_types[c])]
        for c in mismatched:
            self.errors.add("APPEND_003", f"column '{c}' is {appended_types[c]} in the appended rows but "
                            f"{self.schema[c]} in the working dataset", ref.location, c, "align the types")
        if extra or mismatched:
            return
        carried = set(appended_types) | (set() if op.has_aggregation else set(temporal) & set(self.schema))
        appended = [_aliased(self.generated_value(name, typ, seq, identity, ds.id, carried), name)
                    for name, typ in self.schema.items()]
        cte = f"op_{seq:03d}_append"
        frag = render("append", source_cte=ident(source_cte), source_columns=source_columns, view=ident(view),
                      where=sql(where), aggregated=op.has_aggregation, cte=ident(cte),
                      existing_columns=[ident(c) for c in self.schema], prev=self.make_room(n_ctes),
                      appended_columns=appended, **agg_ctx)
        self.add_ctes(frag, n_ctes, cte, seq)

    # ------------------------------------------------------------------ output
    def plan_output(self, op: Operation) -> None:
        scope = self.working_scope()
        typed = self.compile_expr(self.translator(scope), op.selector, op.location, {}, expect="boolean")
        if op.selector is not None and typed is None:
            return
        cols = list(self.schema) if op.columns is None else list(op.columns)  # keep YStr locations
        bad = [c for c in cols if c not in self.schema]
        for c in bad:
            self.errors.add("BR-015", f"output column '{c}' is not a working column", _loc(c, op.location), c,
                            did_you_mean(c, self.schema))
        if op.columns is not None and len(set(cols)) != len(cols):
            self.errors.add("BR-015", "output columns list a column twice", op.location, ", ".join(cols))
        if op.register_as_dataset is not None and not IDENTIFIER.match(str(op.register_as_dataset)):
            self.errors.add("YAML-005", f"register_as_dataset '{op.register_as_dataset}' is not a valid name",
                            _loc(op.register_as_dataset, op.location), str(op.register_as_dataset))
        if op.register_as_dataset and self.input_ds and str(op.register_as_dataset) == self.input_ds.name \
                and not self.input_ds.registered:
            self.errors.add("YAML-005", f"register_as_dataset '{op.register_as_dataset}' is a declared dataset",
                            _loc(op.register_as_dataset, op.location), str(op.register_as_dataset),
                            "registered datasets need their own name")
        self.check_destination_path(op)
        if op.register_as_dataset:
            self.check_version_folder(op)
        if bad:
            return
        self.cut_stage()
        conds = [] if op.include_deleted else [_not_deleted()]
        if typed is not None:
            conds.append(exp.Paren(this=typed.sql))
        where = _and(conds)
        text = render("output", columns=[ident(c) for c in cols], stage=ident(self.prev),
                      where=sql(where) if where is not None else "")
        self.statements.append(Statement("output", f"output_{op.seq:03d}", text, [op.seq], [self.prev], op,
                                         [(c, self.schema[c].sql or "") for c in cols]))

    def check_destination_path(self, op: Operation) -> None:
        """OUT-VR-002: an inline destination path of a project stays inside the workspace.

        CONTRACT §3: absolute paths and URIs are the workspace owner's choice, written in
        ledgerflow.yml's resolver rules; a project file (the thing a pull request changes) may only
        name a folder below the workspace, so ``validate`` refuses what ``run`` would write elsewhere."""
        d = op.destination
        if d is None or d.kind != "path" or d.path is None:
            return
        path = str(d.path)
        where = _loc(d.path, d.location)
        hint = ("write a path relative to the workspace (e.g. 'out/name'), or name a table whose resolver rule "
                "in ledgerflow.yml gives the location: destination: {table: NAME, resolver: R}")
        if is_absolute_or_uri(path) or path.startswith("\\"):
            self.errors.add("OUT-VR-002", f"output {op.seq} writes to the absolute path or URI '{path}'; a project "
                            "may only write inside its workspace", where, path, hint)
            return
        parts = [p for p in re.split(r"[/\\]", path) if p not in ("", ".")]
        depth = 0
        for part in parts:
            depth += -1 if part == ".." else 1
            if depth < 0:
                break
        if depth <= 0:
            what = "leaves the workspace" if depth < 0 else "is the workspace folder itself"
            self.errors.add("OUT-VR-002", f"output {op.seq} writes to '{path}', which {what}", where, path, hint)

    def check_version_folder(self, op: Operation) -> None:
        """OUT-VR-001: an output registering a dataset needs ``{{version}}`` in its destination path.

        A registered version is immutable and stays readable by runs that pinned it, so each version
        needs a folder of its own. Refusing a path without ``{{version}}`` (rather than inventing a
        version folder under it) keeps the data where the user's path says it is; for ``{table: T}``
        every path rule of the destination's resolver is checked, as any of them may match a period."""
        d, name = op.destination, str(op.register_as_dataset)
        hint = "put {{version}} in the path so that each registered version gets a folder of its own"
        if d is None:
            return
        if d.kind == "path" and d.path and "{{version}}" not in d.path:
            self.errors.add("OUT-VR-001", f"output {op.seq} registers dataset '{name}' at the path '{d.path}', "
                            "which has no {{version}}: a new version would replace the previous one",
                            _loc(d.path, d.location), str(d.path), hint + ", e.g. 'out/" + name + "/v{{version}}'")
        elif d.kind == "table":
            rid = d.resolver or self.ws.config.default_resolver
            resolver = self.ws.config.resolvers.get(rid) if rid else None
            for rule in resolver.rules if resolver else []:
                st = rule.strategy
                if st.type == "path" and st.path is not None and "{{version}}" not in st.path:
                    self.errors.add("OUT-VR-001", f"output {op.seq} registers dataset '{name}' through resolver "
                                    f"'{rid}', whose rule '{rule.name}' ({rule.location or 'ledgerflow.yml'}) gives "
                                    f"the path '{st.path}' without {{{{version}}}}: a new version would replace the "
                                    "previous one", _loc(d.table, d.location), str(d.table),
                                    hint + " (in that rule), or write the output through another resolver")


class _AnyColumns(dict):
    """Columns of a join whose dataset could not be found: any name resolves (errors were reported)."""

    def __contains__(self, key) -> bool:
        return True

    def __getitem__(self, key):
        return (f"unknown__{key}", T.UNKNOWN)


def _key_sides(part: Node, alias: str, working_alias: str) -> Optional[tuple[Node, Node]]:
    """For ``a = b`` where exactly one side references only ``alias``: (that side, the other side)."""
    node = part.expr if isinstance(part, Paren) else part
    if not (isinstance(node, Binary) and node.op == "="):
        return None
    def tables(n):
        return {t if t is not None else working_alias for t in _refs(n)}
    lt, rt = tables(node.left), tables(node.right)
    if lt == {alias} and alias not in rt:
        return node.left, node.right
    if rt == {alias} and alias not in lt:
        return node.right, node.left
    return None


def _requalify(old: str, new: str):
    """A sqlglot transform moving columns qualified by ``old`` to the table alias ``new``."""
    def move(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column) and node.table == old:
            return exp.column(node.name, table=new, quoted=True)
        return node
    return move

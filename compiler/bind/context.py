"""The binding context: the catalog, the working schema as it evolves, and every diagnostic.

One :class:`BindContext` lives for the binding of one project. The per-kind binders
(:mod:`.update`, :mod:`.rows`, :mod:`.output`) read and extend it; nothing here emits SQL.
"""
from __future__ import annotations

import re
from typing import Optional

from sqlglot import exp

from .. import resolver as resolution
from ..codes import ReferenceCodes
from ..dsl.ast import Binary, Call, ColumnRef, Expanded, Node, Paren, Source, Unary
from ..dsl.translate import ExprError, Scope, Translator, Typed
from ..errors import Diagnostic, DiagnosticCollector, Location, did_you_mean
from ..model import Dataset, DatasetRef, Operation, Project, Workspace
from ..plan import InputView, Role
from ..registered import registered_id
from ..render import data_type
from ..system_columns import is_system
from ..table_names import HINT as TABLE_HINT
from ..types import SqlType

IDENTIFIER = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


def source_of(text: str, fallback: Optional[Location]) -> Source:
    """The :class:`Source` of an expression string read from YAML."""
    loc_fn = getattr(text, "location", None)
    if loc_fn is not None:
        loc = loc_fn()
        return Source(str(text), loc.file, loc.line, loc.column)
    fb = fallback or Location("<expression>", 1, 1)
    return Source(str(text), fb.file, fb.line, fb.column)


def loc_of(text: str, fallback: Optional[Location]) -> Location:
    """Where a YAML string was written (``fallback`` when it carries no location)."""
    loc_fn = getattr(text, "location", None)
    return loc_fn() if loc_fn is not None else (fallback or Location("<project>"))


def refs(node: Node) -> set[Optional[str]]:
    """Table qualifiers referenced by a DSL node (None = bare working column)."""
    if isinstance(node, ColumnRef):
        return {node.table}
    if isinstance(node, Expanded):
        return refs(node.body)
    if isinstance(node, Paren):
        return refs(node.expr)
    if isinstance(node, Unary):
        return refs(node.operand)
    if isinstance(node, Binary):
        return refs(node.left) | refs(node.right)
    if isinstance(node, Call):
        out: set = set()
        for a in node.args:
            out |= refs(a)
        return out
    return set()


def conjuncts(node: Node) -> list[Node]:
    """The parts of a DSL condition joined by top-level ANDs."""
    if isinstance(node, Binary) and node.op == "AND":
        return conjuncts(node.left) + conjuncts(node.right)
    if isinstance(node, Paren) and isinstance(node.expr, Binary) and node.expr.op == "AND":
        return conjuncts(node.expr)
    return [node]


def and_all(parts: list[Optional[exp.Expression]]) -> Optional[exp.Expression]:
    """``p1 AND p2 AND ...`` of the parts that are set (an OR part in parentheses); None if none."""
    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    out = _group(parts[0])
    for p in parts[1:]:
        out = exp.And(this=out, expression=_group(p))
    return out


def _group(node: exp.Expression) -> exp.Expression:
    return exp.Paren(this=node) if isinstance(node, exp.Or) else node


def not_deleted(qualifier: Optional[str] = None) -> exp.Expression:
    """``NOT _deleted`` (of ``qualifier``)."""
    return exp.Not(this=exp.column("_deleted", table=qualifier, quoted=True))


def cast(node: exp.Expression, typ: SqlType) -> exp.Expression:
    """``CAST(node AS typ)`` (``node`` itself for a type without SQL name)."""
    return exp.Cast(this=node, to=data_type(typ.sql, "spark")) if typ.sql else node


def typed_null(typ: SqlType) -> exp.Expression:
    """``CAST(NULL AS typ)``."""
    return cast(exp.Null(), typ)


class BindContext:
    """Binds one project against a workspace's catalog: lookups, scopes, expressions, diagnostics."""

    def __init__(self, workspace: Workspace, project: Project):
        self.ws = workspace
        self.project = project
        self.errors = DiagnosticCollector()
        self.inputs: dict[str, InputView] = {}
        self.selectors = {name: source_of(text, project.location) for name, text in project.selectors.items()}
        self.schema: dict[str, SqlType] = {}
        self.table = ""
        self.input_ds: Optional[Dataset] = None

    # ------------------------------------------------------------------ catalog
    def lookup(self, ref: DatasetRef, codes: ReferenceCodes, what: str) -> Optional[Dataset]:
        """Find a referenced dataset and check it is active, the pinned version exists and a resolver applies."""
        not_found, disabled, no_version = codes.not_found, codes.disabled, codes.no_version
        ds = self.ws.find_dataset(ref.dataset_id)
        producer = self._unavailable(ref.dataset_id) if ds is None else None
        if producer is not None:
            self.errors.add("GRAPH-003", f"{what}: dataset '{producer[0]}' is registered by project '{producer[1]}', "
                            "which has errors (reported with it), so its columns are unknown", ref.location,
                            ref.dataset_id, f"fix project '{producer[1]}' first")
            return None
        if ds is None:
            self.errors.add(not_found, f"{what}: dataset '{ref.dataset_id}' not found in the workspace", ref.location,
                            ref.dataset_id, did_you_mean(ref.dataset_id, [d.name for d in self.ws.datasets]))
            return None
        if ds.status != "active":
            self.errors.add(disabled, f"{what}: dataset '{ds.name}' is disabled and cannot be used", ref.location,
                            ref.dataset_id, "enable it (status: active) or reference another dataset")
            return None
        unregistered = ds.registered and not ds.versions  # known from its producer's plan; no run registered it yet
        if ref.dataset_version is not None and not unregistered:
            v = ds.version(ref.dataset_version)
            if v is None or v.status != "active":
                state = "does not exist" if v is None else "is disabled"
                self.errors.add(no_version, f"{what}: dataset '{ds.name}' version {ref.dataset_version} {state}",
                                ref.version_location or ref.location, str(ref.dataset_version),
                                f"active versions: {', '.join(str(x.version) for x in ds.versions if x.status == 'active') or 'none'}")
                return None
        elif ds.latest_active_version() is None and not unregistered:
            self.errors.add(no_version, f"{what}: dataset '{ds.name}' has no active version", ref.location,
                            ref.dataset_id, "mark a version active")
            return None
        self.check_resolver(ds, ref, codes.no_resolver, what)
        return ds

    def _unavailable(self, ref: str) -> Optional[tuple[str, str]]:
        """(dataset, producing project) when ``ref`` names a dataset whose producer has errors."""
        for name, project in self.ws.unavailable.items():
            if ref in (name, registered_id(name)):
                return name, project
        return None

    def check_resolver(self, ds: Dataset, ref: DatasetRef, code: str, what: str) -> None:
        """A resolver must be determinable (the precedence is :func:`resolver.resolver_precedence`)."""
        chosen, _ = resolution.resolver_precedence(self.ws, self.project, ds)
        if not chosen:
            self.errors.add(code, f"{what}: no resolver for dataset '{ds.name}' (ResolverNotFound)", ref.location,
                            ref.dataset_id, "set default_resolver in ledgerflow.yml, resolver_id on the dataset, or "
                            "a project resolver_overrides entry")
            return
        resolver = self.ws.config.resolvers.get(chosen)
        for rule in resolver.rules if resolver and not ds.registered else []:  # registered: read where registered
            problem = resolution.rule_table_problem(rule, ds, ref.dataset_version or 1)
            if problem:
                self.errors.add("TABLE-001", f"{what}: dataset '{ds.name}' is read through resolver '{chosen}', whose "
                                f"{resolution.rule_where(rule)} {problem}", ref.location, ref.dataset_id,
                                TABLE_HINT + "; the dataset's table_name fills the rule's {{table_name}}")

    def view_for(self, ds: Dataset, pin: Optional[int], role: Role, seq: int, alias: Optional[str],
                 row_ids: bool) -> str:
        """The logical view name for ``ds`` at ``pin`` (shared by every use of the same dataset+pin).

        ``row_ids``: this use passes the rows' ``_row_id`` on (see :attr:`InputView.row_ids`)."""
        name = f"ds_{ds.name}" + (f"_v{pin}" if pin is not None else "")
        view = self.inputs.get(name)
        if view is None:
            view = self.inputs[name] = InputView(name, ds, pin, role)
        view.uses.append((seq, alias))
        view.row_ids = view.row_ids or row_ids
        return name

    # ------------------------------------------------------------------ expressions
    def translator(self, scope: Scope, **kw) -> Translator:
        """A DSL translator over ``scope`` that knows the project's named selectors."""
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
        """The working columns as they are now (``qualifier``: their table alias inside a join)."""
        return Scope(self.table, dict(self.schema), qualifier, joins or {})

    def selector(self, op: Operation, scope: Scope, codes: dict) -> tuple[bool, Optional[exp.Expression]]:
        """(ok, the translated selector or None when the operation has none)."""
        typed = self.compile_expr(self.translator(scope), op.selector, op.location, codes, expect="boolean")
        return (op.selector is None or typed is not None), (typed.sql if typed is not None else None)

    def row_condition(self, selector: Optional[exp.Expression], qualifier: Optional[str] = None) -> exp.Expression:
        """``NOT _deleted AND (selector)``: the rows an operation acts on."""
        return and_all([not_deleted(qualifier), exp.Paren(this=selector.copy()) if selector is not None else None])

    def group_columns(self, op: Operation, scope: Scope, code: str) -> Optional[list[str]]:
        """Column names of ``group_by`` (``table.column`` or ``column``) resolved in ``scope``."""
        out, ok = [], True
        for g in op.group_by:
            m = re.fullmatch(r"\s*(?:([A-Za-z_][A-Za-z0-9_]*)\.)?([A-Za-z_][A-Za-z0-9_]*)\s*", str(g))
            if not m:
                self.errors.add(code, f"group_by entry '{g}' is not a column reference", loc_of(g, op.location),
                                str(g), "write table.column or column")
                ok = False
                continue
            ref = ColumnRef(m.group(1), m.group(2), 0)
            try:
                scope.resolve(ref, source_of(g, op.location))
            except ExprError as err:
                self.errors.extend([Diagnostic(code, err.message, loc_of(g, op.location), str(g), err.hint)])
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
            if not IDENTIFIER.match(col) or is_system(col):
                self.errors.add(codes.get("column", "UPD-VR-002"), f"invalid aggregation column name '{col}'",
                                loc_of(a.column, a.location), col, "use a name like total_amount (no leading '_')")
                ok = False
                continue
            if col in out:
                self.errors.add(codes.get("column", "UPD-VR-002"), f"aggregation column '{col}' is defined twice",
                                loc_of(a.column, a.location), col)
                ok = False
                continue
            tr.context = f"operation {op.seq} '{op.name}', column '{a.column}'"  # what a failing CAST names
            typed = self.compile_expr(tr, a.expression, a.location, codes)
            if typed is None:
                ok = False
                continue
            if not typed.aggregate:
                self.errors.add(no_agg_code, f"aggregation '{col}' does not use an aggregate function",
                                loc_of(a.expression, a.location), str(a.expression),
                                "use SUM, AVG, MIN_AGG, MAX_AGG, COUNT or COUNT_ALL")
                ok = False
                continue
            out[col] = typed
        return out if ok else None

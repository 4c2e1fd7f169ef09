"""Turn DSL ASTs into typed sqlglot expressions against a :class:`Scope`.

Names are resolved against the working schema as it is at the operation being compiled (plus the
operation's join aliases); named selectors are expanded recursively and parenthesised; every
function goes through :data:`functions.FUNCTIONS`. Errors are :class:`ExprError` carrying a code
chosen by the caller's context (an update's assignment, a join condition, an append source...).
"""
from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field, replace
from typing import Optional

from sqlglot import exp

from .. import type_rules as R
from .. import types as T
from ..codes import EXPRESSION_DEFAULTS
from ..errors import did_you_mean
from ..types import SqlType
from ..render import data_type
from . import casts, functions
from .ast import Binary, Call, ColumnRef, Expanded, Literal, Node, Paren, SelectorRef, Source, Unary
from .typed import ExprError, Typed, source_location  # noqa: F401 (source_location: re-exported)
from .parser import DslSyntaxError, parse_expression

MAX_SELECTOR_DEPTH = 10
MAX_NESTING = 32  # parentheses, calls and unary operators inside each other; sqlglot's parser overflows near 45
_PRECEDENCE = {"OR": 1, "AND": 2, "NOT": 3, "=": 4, "<>": 4, "<": 4, "<=": 4, ">": 4, ">=": 4,
               "+": 5, "-": 5, "*": 6, "/": 6, "NEG": 7}
_COMPARE = {"=": exp.EQ, "<>": exp.NEQ, "<": exp.LT, "<=": exp.LTE, ">": exp.GT, ">=": exp.GTE}
_ARITH = {"+": exp.Add, "-": exp.Sub, "*": exp.Mul}

# Default codes (the registry's); callers override per context (e.g. {"syntax": "UPD-VR-005"}).
DEFAULT_CODES = EXPRESSION_DEFAULTS


@dataclass
class JoinScope:
    """Columns a join alias offers inside its update: DSL name -> (SQL column name, type)."""

    alias: str
    columns: dict[str, tuple[str, SqlType]]


@dataclass
class Scope:
    """What names mean where an expression is compiled."""

    table: str  # the logical table name accepted as a prefix (working dataset, or an append source)
    columns: dict[str, SqlType]
    qualifier: Optional[str] = None  # SQL alias to qualify working columns with (in join steps)
    joins: dict[str, JoinScope] = field(default_factory=dict)
    what: str = "working dataset"

    def resolve(self, ref: ColumnRef, source: Source) -> tuple[exp.Expression, SqlType]:
        """SQL column and type of ``ref``; raises :class:`ExprError` when it names nothing."""
        if ref.table is None or ref.table == self.table:
            if ref.name in self.columns:
                return exp.column(ref.name, table=self.qualifier, quoted=True), self.columns[ref.name]
            hint = did_you_mean(ref.name, self.columns)
            raise ExprError("unknown_column", f"unknown column '{ref.text}' in the {self.what}", source, ref.pos,
                            ref.text, hint)
        if ref.table in self.joins:
            join = self.joins[ref.table]
            if ref.name in join.columns:
                sql_name, typ = join.columns[ref.name]
                return exp.column(sql_name, table=join.alias, quoted=True), typ
            raise ExprError("unknown_alias", f"unknown column '{ref.text}' of join alias '{ref.table}'", source,
                            ref.pos, ref.text, did_you_mean(ref.name, join.columns))
        known = [self.table, *self.joins]
        raise ExprError("unknown_column", f"unknown table or join alias '{ref.table}' in '{ref.text}'", source,
                        ref.pos, ref.text, did_you_mean(ref.table, known))


class Translator:
    """Translates expressions of one context (scope, selectors, aggregate rules)."""

    def __init__(self, scope: Scope, selectors: dict[str, Source] | None = None, *, aggregates: bool = False,
                 group_keys: Optional[set[str]] = None):
        self.scope = scope
        self.selectors = selectors or {}
        self.aggregates = aggregates
        self.group_keys = group_keys  # column names allowed outside aggregate functions
        self._parsed: dict[str, Node] = {}
        self.context = ""  # the operation and column being translated, named by a CAST that fails at run time

    # ------------------------------------------------------------------ entry points
    def parse(self, source: Source) -> Node:
        """Parse and expand named selectors; syntax errors become :class:`ExprError`."""
        try:
            node = parse_expression(source.text)
        except DslSyntaxError as err:
            raise ExprError("syntax", err.message, source, err.pos, err.text,
                            "check quotes, parentheses and operators") from None
        try:
            expanded = self._expand(node, source, ())
        except RecursionError:
            raise _too_deep(source) from None
        _check_nesting(expanded, source)
        return expanded

    def translate(self, source: Source, expect: Optional[str] = None) -> Typed:
        """Translate ``source``; ``expect='boolean'`` checks a selector or condition."""
        return self.translate_node(self.parse(source), source, expect)

    def translate_node(self, node: Node, source: Source, expect: Optional[str] = None) -> Typed:
        """Translate an already parsed (and expanded) node."""
        try:
            typed = self._tr(node, source, in_aggregate=False)
        except RecursionError:
            raise _too_deep(source) from None
        if expect and typed.type.kind not in (expect, "null", "unknown"):
            raise ExprError("type", f"expected a {expect} expression, got {typed.type.kind}", source, 0,
                            source.text, "a selector or condition must be true/false, e.g. amount > 0")
        if expect == "boolean" and typed.type.kind == "null":  # Spark rejects a VOID filter/condition
            typed = Typed(_as_boolean(typed.sql), T.BOOLEAN, typed.aggregate)
        return typed

    # ------------------------------------------------------------------ selectors
    def _expand(self, node: Node, source: Source, stack: tuple) -> Node:
        if isinstance(node, SelectorRef):
            if node.name not in self.selectors:
                raise ExprError("selector_undefined", f"named selector '{{{{{node.name}}}}}' is not defined", source,
                                node.pos, f"{{{{{node.name}}}}}",
                                did_you_mean(node.name, self.selectors) or "define it under the project's selectors")
            if node.name in stack:
                chain = " -> ".join([*stack, node.name])
                raise ExprError("selector_cycle", f"named selectors refer to each other in a cycle: {chain}", source,
                                node.pos, f"{{{{{node.name}}}}}", "break the cycle")
            if len(stack) >= MAX_SELECTOR_DEPTH:
                raise ExprError("selector_depth", f"named selectors nest deeper than {MAX_SELECTOR_DEPTH} levels",
                                source, node.pos, f"{{{{{node.name}}}}}", "flatten the selector definitions")
            body_source = self.selectors[node.name]
            try:
                body = parse_expression(body_source.text)
            except DslSyntaxError as err:
                raise ExprError("syntax", f"in named selector '{node.name}': {err.message}", body_source, err.pos,
                                err.text) from None
            return Expanded(node.name, self._expand(body, body_source, (*stack, node.name)), body_source, node.pos)
        if isinstance(node, Unary):
            return Unary(node.op, self._expand(node.operand, source, stack), node.pos)
        if isinstance(node, Binary):
            return Binary(node.op, self._expand(node.left, source, stack), self._expand(node.right, source, stack),
                          node.pos)
        if isinstance(node, Paren):
            return Paren(self._expand(node.expr, source, stack), node.pos)
        if isinstance(node, Call):
            return replace(node, args=tuple(self._expand(a, source, stack) for a in node.args))
        return node

    # ------------------------------------------------------------------ translation
    def _tr(self, node: Node, source: Source, in_aggregate: bool) -> Typed:
        if isinstance(node, Literal):
            return _literal(node, source)
        if isinstance(node, ColumnRef):
            sql, typ = self.scope.resolve(node, source)
            if self.group_keys is not None and not in_aggregate and node.name not in self.group_keys:
                raise ExprError("not_grouped", f"'{node.text}' is neither grouped by nor inside an aggregate function",
                                source, node.pos, node.text, "add it to group_by or wrap it in SUM/MIN_AGG/...")
            sql.meta[casts.WRITTEN] = node.text  # how a failing CAST names the column in its sample row
            return Typed(_tag(sql, typ), typ)
        if isinstance(node, Paren):
            inner = self._tr(node.expr, source, in_aggregate)
            return Typed(exp.Paren(this=inner.sql), inner.type, inner.aggregate, inner.literal)
        if isinstance(node, Expanded):
            inner = self._tr(node.body, node.source, in_aggregate)
            return Typed(exp.Paren(this=inner.sql), inner.type, inner.aggregate, inner.literal)
        if isinstance(node, Unary):
            return self._unary(node, source, in_aggregate)
        if isinstance(node, Binary):
            return self._binary(node, source, in_aggregate)
        if isinstance(node, Call):
            return self._call(node, source, in_aggregate)
        raise ExprError("syntax", f"unsupported expression {type(node).__name__}", source, 0)  # pragma: no cover

    def _unary(self, node: Unary, source: Source, in_aggregate: bool) -> Typed:
        if node.op == "-" and isinstance(node.operand, Literal) and node.operand.kind == "number":
            return _literal(node.operand, source, negative=True)  # Spark reads -2 as one literal
        operand = self._tr(node.operand, source, in_aggregate)
        if node.op == "NOT":
            _require(operand, "boolean", source, node.pos, "NOT")
            return Typed(exp.Not(this=_paren_if(operand.sql, node.operand, 3)), T.BOOLEAN, operand.aggregate)
        _require(operand, "number", source, node.pos, "unary '-'")
        # Spark casts an untyped NULL to DOUBLE for unary minus: -NULL is a double, not a NULL
        return Typed(exp.Neg(this=_paren_if(operand.sql, node.operand, 7)), R.negated(operand.type), operand.aggregate)

    def _binary(self, node: Binary, source: Source, in_aggregate: bool) -> Typed:
        left = self._tr(node.left, source, in_aggregate)
        right = self._tr(node.right, source, in_aggregate)
        agg = left.aggregate or right.aggregate
        prec = _PRECEDENCE[node.op]
        lsql = _paren_if(left.sql, node.left, prec)
        rsql = _paren_if(right.sql, node.right, prec + (0 if node.op in ("AND", "OR", "+", "*") else 1))
        if node.op in ("AND", "OR"):
            _require(left, "boolean", source, node.pos, node.op)
            _require(right, "boolean", source, node.pos, node.op)
            cls = exp.And if node.op == "AND" else exp.Or
            return Typed(cls(this=lsql, expression=rsql), T.BOOLEAN, agg)
        if node.op in _COMPARE:
            if not T.compatible(left.type, right.type):
                dated = {left.type.kind, right.type.kind} & {"date", "timestamp"}
                hint = ("write dates as DATE(\"2026-01-31\")" if dated
                        else "compare values of the same type")
                raise ExprError("type", f"cannot compare {left.type.kind} with {right.type.kind}", source, node.pos,
                                node.op, hint)
            return Typed(_COMPARE[node.op](this=lsql, expression=rsql), T.BOOLEAN, agg)
        for side in (left, right):
            _require(side, "number", source, node.pos, f"'{node.op}'")
        if node.op == "/":
            sql = exp.Anonymous(this="try_divide", expressions=[left.sql, right.sql])
        else:
            sql = _ARITH[node.op](this=lsql, expression=rsql)
        return Typed(sql, R.arithmetic(node.op, left.type, right.type, left.literal, right.literal), agg)

    def _call(self, node: Call, source: Source, in_aggregate: bool) -> Typed:
        if node.name == "DATE":  # takes a literal only, checked here rather than in Spark
            return _date_call(node, source)
        if node.name == "CAST":
            return casts.translate_cast(node, self._tr(node.args[0], source, in_aggregate), source,
                                      self.context)
        fn = functions.lookup(node.name)
        if fn is None:
            raise ExprError("function", f"unknown function '{node.name}'", source, node.pos, node.name,
                            did_you_mean(node.name, functions.FUNCTIONS))
        if fn.aggregate:
            if not self.aggregates:
                raise ExprError("aggregate", f"aggregate function {fn.name} is not allowed here", source, node.pos,
                                fn.name, "aggregate functions are allowed only in 'aggregate' operations and in "
                                "'append' with 'aggregation'")
            if in_aggregate:
                raise ExprError("aggregate", f"aggregate function {fn.name} cannot be nested in another aggregate",
                                source, node.pos, fn.name)
        if node.star and fn.name != "COUNT":
            raise ExprError("syntax", "'*' is only valid in COUNT(*)", source, node.pos, node.name)
        nargs = len(node.args)
        if fn.name == "COUNT" and not node.star and nargs == 0:
            raise ExprError("arity", "COUNT needs an argument or *", source, node.pos, "COUNT()",
                            "use COUNT(x) for non-NULL values or COUNT(*) for all rows")
        if nargs < fn.min_args or (fn.max_args is not None and nargs > fn.max_args):
            hint = f"use {fn.signature}"
            if fn.name in ("MIN", "MAX") and nargs == 1:
                hint = f"{fn.name}(a, b) compares two values; use {fn.name}_AGG(x) to aggregate"
            raise ExprError("arity", f"{fn.name} takes {_arity(fn)} argument(s), got {nargs}", source, node.pos,
                            fn.name, hint)
        args = [self._tr(a, source, in_aggregate or fn.aggregate) for a in node.args]
        for i, (arg, argnode) in enumerate(zip(args, node.args)):
            want = fn.arg_kinds[min(i, len(fn.arg_kinds) - 1)] if fn.arg_kinds else "any"
            if want != "any" and arg.type.kind not in (want, "null", "unknown") and not (
                    want == "date" and arg.type.kind == "timestamp"):
                raise ExprError("type", f"argument {i + 1} of {fn.name} must be {want}, got {arg.type.kind}", source,
                                getattr(argnode, "pos", node.pos), fn.signature)
        types = [a.type for a in args]
        if fn.name == "ROUND":
            _round_places(args[1], node.args[1], source)
        if fn.name == "IF" and types[0].kind == "null":  # CASE WHEN NULL is a Spark analysis error
            args[0] = Typed(_as_boolean(args[0].sql), T.BOOLEAN, args[0].aggregate)
        if fn.name == "IF" and not T.compatible(types[1], types[2]):
            raise ExprError("type", f"IF branches have incompatible types {types[1].kind} and {types[2].kind}",
                            source, node.pos, "IF", "both branches must have the same type")
        if fn.name == "COALESCE" and not all(T.compatible(types[0], t) for t in types):
            raise ExprError("type", "COALESCE arguments have incompatible types", source, node.pos, "COALESCE")
        sql = fn.build([a.sql for a in args])
        typ = fn.result(types, [a.literal for a in args])
        return Typed(_tag(sql, typ), typ, fn.aggregate or any(a.aggregate for a in args))


def _too_deep(source: Source) -> ExprError:
    return ExprError("syntax", "expression is nested too deeply", source, 0, source.text[:20],
                     "split it into several steps or named selectors")


def _check_nesting(root: Node, source: Source) -> None:
    """Reject expressions nested deeper than :data:`MAX_NESTING` (iteratively, so any depth is safe)."""
    stack = [(root, 0, source)]
    while stack:
        node, depth, src = stack.pop()
        if isinstance(node, (Paren, Call, Unary, Expanded)):
            depth += 1
            if depth > MAX_NESTING:
                raise ExprError("syntax", f"expression nests more than {MAX_NESTING} levels of parentheses, function "
                                "calls and unary operators", src, node.pos, src.text[node.pos:node.pos + 20],
                                "split it into several steps or named selectors")
        if isinstance(node, Expanded):
            stack.append((node.body, depth, node.source))
        elif isinstance(node, Paren):
            stack.append((node.expr, depth, src))
        elif isinstance(node, Unary):
            stack.append((node.operand, depth, src))
        elif isinstance(node, Binary):
            stack.extend([(node.left, depth, src), (node.right, depth, src)])
        elif isinstance(node, Call):
            stack.extend((arg, depth, src) for arg in node.args)


def _as_boolean(sql: exp.Expression) -> exp.Expression:
    return exp.Cast(this=sql, to=data_type("boolean"))


def _arity(fn) -> str:
    if fn.max_args is None:
        return f"at least {fn.min_args}"
    return str(fn.min_args) if fn.min_args == fn.max_args else f"{fn.min_args}-{fn.max_args}"


def _require(typed: Typed, kind: str, source: Source, pos: int, what: str) -> None:
    if typed.type.kind not in (kind, "null", "unknown"):
        raise ExprError("type", f"{what} needs {kind} operands, got {typed.type.kind}", source, pos, what,
                        "convert the value or compare it first")


def _paren_if(sql: exp.Expression, node: Node, min_prec: int) -> exp.Expression:
    """Parenthesise an operand whose own precedence is looser than its parent's."""
    if isinstance(node, Binary) and _PRECEDENCE[node.op] < min_prec:
        return exp.Paren(this=sql)
    if isinstance(node, Unary) and _PRECEDENCE["NOT" if node.op == "NOT" else "NEG"] < min_prec:
        return exp.Paren(this=sql)
    # AND(...), OR(...), NOT(...) and ISNULL(...) build loose SQL: OR(a, b) AND c must not become a OR b AND c
    if isinstance(node, Call) and _SQL_PRECEDENCE.get(type(sql), 99) < min_prec:
        return exp.Paren(this=sql)
    return sql


_SQL_PRECEDENCE = {exp.Or: 1, exp.And: 2, exp.Not: 3, exp.Is: 3}


def _round_places(places: Typed, node: Node, source: Source) -> None:
    """ROUND's places: Spark takes a constant int only, and the result's scale depends on it."""
    if places.literal is None or places.type != T.INTEGER:
        raise ExprError("type", "the places of ROUND must be a whole number written as it is, e.g. 2 or -3",
                        source, getattr(node, "pos", 0), source.text[getattr(node, "pos", 0):][:20],
                        "write ROUND(x, 2)")


def _tag(sql: exp.Expression, typ: SqlType) -> exp.Expression:
    sql.meta["lf_kind"] = typ.kind
    return sql


def _literal(node: Literal, source: Source, negative: bool = False) -> Typed:
    if node.kind == "number":
        text = str(node.value)
        typ = R.literal_type(text, negative)
        if typ is None:
            raise ExprError("type", f"the number {text} has more than {R.MAX_PRECISION} digits, more than Spark "
                            "holds exactly", source, node.pos, text, "write it with at most 38 digits")
        sql = exp.Literal.number(text)
        value = None if "." in text else int(text.lstrip("0") or "0") * (-1 if negative else 1)  # 5000 zeros: fine
        return Typed(exp.Neg(this=sql) if negative else sql, typ, literal=value)
    if node.kind == "string":
        return Typed(_tag(exp.Literal.string(str(node.value)), T.STRING), T.STRING)
    if node.kind == "boolean":
        return Typed(exp.Boolean(this=bool(node.value)), T.BOOLEAN)
    return Typed(exp.Null(), T.NULL)


_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def date_literal(text: str) -> Optional[exp.Expression]:
    """``DATE 'YYYY-MM-DD'`` as a cast of a validated ISO string, or None if not a date."""
    if not _ISO_DATE.fullmatch(text):  # fromisoformat also takes 2026-W01-1, which Spark cannot cast
        return None
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return None
    return exp.Cast(this=exp.Literal.string(text), to=data_type("date"))


def _date_call(node: Call, source: Source) -> Typed:
    if len(node.args) != 1 or not (isinstance(node.args[0], Literal) and node.args[0].kind == "string"):
        raise ExprError("arity", "DATE takes one ISO date string literal", source, node.pos, "DATE",
                        'write DATE("2026-01-31")')
    sql = date_literal(str(node.args[0].value))
    if sql is None:
        raise ExprError("type", f"'{node.args[0].value}' is not a valid ISO date (YYYY-MM-DD)", source,
                        node.args[0].pos, str(node.args[0].value))
    return Typed(_tag(sql, T.DATE), T.DATE)

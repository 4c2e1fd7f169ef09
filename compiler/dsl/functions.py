"""The one table that maps DSL functions to Spark SQL (as sqlglot nodes) and types them.

Anything not in :data:`FUNCTIONS` is a located compile error, never guessed SQL. Division and
MOD use Spark's ``try_`` forms so that a zero divisor gives NULL even under ANSI mode.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from sqlglot import exp

from .. import type_rules as R
from .. import types as T
from ..types import SqlType
from ..render import data_type

Builder = Callable[[list[exp.Expression]], exp.Expression]


@dataclass(frozen=True)
class Function:
    """A DSL function: arity, accepted argument kinds, result type, and its SQL builder."""

    name: str
    min_args: int
    max_args: Optional[int]
    arg_kinds: tuple  # kinds accepted for each argument ("any" = anything); the last repeats
    result: Callable[[list[SqlType], list], SqlType]  # (argument types, integer literal values or None)
    build: Builder
    aggregate: bool = False
    signature: str = ""


def _anon(name: str) -> Builder:
    return lambda args: exp.Anonymous(this=name, expressions=args)


def _fixed(t: SqlType):
    return lambda _types, _literals: t


def _first(rule: Callable[[SqlType], SqlType]):
    return lambda types, _literals: rule(types[0])


def _same_as_first(types: list[SqlType], _literals) -> SqlType:
    return types[0]


def _mod(types: list[SqlType], literals: list) -> SqlType:
    return R.arithmetic("%", types[0], types[1], literals[0], literals[1])


def _round(types: list[SqlType], literals: list) -> SqlType:
    # the translator has checked that the places are an integer literal
    return R.rounded(types[0], literals[1] if literals[1] is not None else 0)


def _wider(types: list[SqlType], _literals) -> SqlType:
    return R.wider(types)


def _if_result(types: list[SqlType], _literals) -> SqlType:
    return R.wider(types[1:])


def _both_or_null(fn: str) -> Builder:
    # LEAST/GREATEST skip NULLs in Spark; the DSL's MIN/MAX of two scalars is NULL if either is NULL.
    def build(args):
        a, b = args
        return exp.Case(ifs=[exp.If(this=exp.or_(_is_null([a.copy()]), _is_null([b.copy()])),
                                    true=exp.Null())],
                        default=exp.Anonymous(this=fn, expressions=[a, b]))
    return build


def _concat(args):
    cast = [a if _is_string(a) else exp.Cast(this=a, to=data_type("string")) for a in args]
    return exp.Anonymous(this="concat", expressions=cast)


def _is_string(node: exp.Expression) -> bool:
    return bool(node.meta.get("lf_kind") == "string")


def _trim(args):
    return exp.Trim(this=args[0], expression=exp.Literal.string(" \t\r\n"), position="BOTH")


def _is_null(args):
    # Spark's IS NULL binds tighter than NOT/AND/OR/comparisons: ISNULL(a AND b) must not become a AND (b IS NULL).
    this = args[0]
    if isinstance(this, (exp.Binary, exp.Not)):
        this = exp.Paren(this=this)
    return exp.Is(this=this, expression=exp.Null())


def _date_add(args):
    # Spark's date_add takes INT days only (a BIGINT or DECIMAL argument is an analysis error).
    days = args[1]
    if not (isinstance(days, exp.Literal) and days.is_int and len(days.name) < 10):
        days = exp.Cast(this=days, to=data_type("int"))
    return exp.Anonymous(this="date_add", expressions=[args[0], days])


def _if(args):
    return exp.Case(ifs=[exp.If(this=args[0], true=args[1])], default=args[2])


def _count(args):
    return exp.Count(this=args[0] if args else exp.Star())


F = Function
FUNCTIONS: dict[str, Function] = {f.name: f for f in [
    # conditional
    F("IF", 3, 3, ("boolean", "any", "any"), _if_result, _if, signature="IF(condition, then, else)"),
    F("AND", 2, None, ("boolean",), _fixed(T.BOOLEAN), lambda a: _fold(exp.And, a), signature="AND(x, y, ...)"),
    F("OR", 2, None, ("boolean",), _fixed(T.BOOLEAN), lambda a: _fold(exp.Or, a), signature="OR(x, y, ...)"),
    # NOT(x) where an operand is expected (a = NOT(b)); elsewhere the parser reads it as the NOT operator
    F("NOT", 1, 1, ("boolean",), _fixed(T.BOOLEAN), lambda a: exp.Not(this=exp.Paren(this=a[0])), signature="NOT(x)"),
    F("ISNULL", 1, 1, ("any",), _fixed(T.BOOLEAN), lambda a: _is_null(a), signature="ISNULL(x)"),
    F("COALESCE", 1, None, ("any",), _wider, lambda a: exp.Coalesce(this=a[0], expressions=a[1:]),
      signature="COALESCE(x, ...)"),
    # math
    F("ABS", 1, 1, ("number",), _first(R.negated), lambda a: exp.Abs(this=a[0]), signature="ABS(x)"),
    F("FLOOR", 1, 1, ("number",), _first(R.floored), lambda a: exp.Floor(this=a[0]), signature="FLOOR(x)"),
    F("CEIL", 1, 1, ("number",), _first(R.floored), lambda a: exp.Ceil(this=a[0]), signature="CEIL(x)"),
    F("ROUND", 2, 2, ("number", "number"), _round, lambda a: exp.Round(this=a[0], decimals=a[1]),
      signature="ROUND(x, n)"),
    F("MOD", 2, 2, ("number", "number"), _mod, _anon("try_mod"), signature="MOD(a, b)"),
    F("MIN", 2, 2, ("number", "number"), _wider, _both_or_null("least"), signature="MIN(a, b)"),
    F("MAX", 2, 2, ("number", "number"), _wider, _both_or_null("greatest"), signature="MAX(a, b)"),
    # string
    F("CONCAT", 1, None, ("any",), _fixed(T.STRING), _concat, signature="CONCAT(s, ...)"),
    F("UPPER", 1, 1, ("string",), _fixed(T.STRING), lambda a: exp.Upper(this=a[0]), signature="UPPER(s)"),
    F("LOWER", 1, 1, ("string",), _fixed(T.STRING), lambda a: exp.Lower(this=a[0]), signature="LOWER(s)"),
    F("TRIM", 1, 1, ("string",), _fixed(T.STRING), _trim, signature="TRIM(s)"),
    F("LEFT", 2, 2, ("string", "number"), _fixed(T.STRING), _anon("left"), signature="LEFT(s, n)"),
    F("RIGHT", 2, 2, ("string", "number"), _fixed(T.STRING), _anon("right"), signature="RIGHT(s, n)"),
    F("LEN", 1, 1, ("string",), _fixed(T.INTEGER), _anon("char_length"), signature="LEN(s)"),
    F("CONTAINS", 2, 2, ("string", "string"), _fixed(T.BOOLEAN), _anon("contains"), signature="CONTAINS(s, sub)"),
    F("REPLACE", 3, 3, ("string", "string", "string"), _fixed(T.STRING), _anon("replace"),
      signature="REPLACE(s, old, new)"),
    # date
    F("TODAY", 0, 0, (), _fixed(T.DATE),
      lambda a: exp.Cast(this=exp.Placeholder(this="run_started_at"), to=data_type("date")),
      signature="TODAY()"),
    F("YEAR", 1, 1, ("date",), _fixed(T.INTEGER), _anon("year"), signature="YEAR(d)"),
    F("MONTH", 1, 1, ("date",), _fixed(T.INTEGER), _anon("month"), signature="MONTH(d)"),
    F("DAY", 1, 1, ("date",), _fixed(T.INTEGER), _anon("day"), signature="DAY(d)"),
    F("DATEDIFF", 2, 2, ("date", "date"), _fixed(T.INTEGER), _anon("datediff"), signature="DATEDIFF(end, start)"),
    F("DATEADD", 2, 2, ("date", "number"), _fixed(T.DATE), lambda a: _date_add(a), signature="DATEADD(date, n_days)"),
    # aggregate
    F("SUM", 1, 1, ("number",), _first(R.summed), lambda a: exp.Sum(this=a[0]), aggregate=True, signature="SUM(x)"),
    F("AVG", 1, 1, ("number",), _first(R.averaged), lambda a: exp.Avg(this=a[0]), aggregate=True, signature="AVG(x)"),
    F("MIN_AGG", 1, 1, ("any",), _same_as_first, lambda a: exp.Min(this=a[0]), aggregate=True,
      signature="MIN_AGG(x)"),
    F("MAX_AGG", 1, 1, ("any",), _same_as_first, lambda a: exp.Max(this=a[0]), aggregate=True,
      signature="MAX_AGG(x)"),
    F("COUNT", 0, 1, ("any",), _fixed(T.BIGINT), _count, aggregate=True, signature="COUNT(x) or COUNT(*)"),
    F("COUNT_ALL", 0, 0, (), _fixed(T.BIGINT), _count, aggregate=True, signature="COUNT_ALL()"),
]}
ALIASES = {"IS_NULL": "ISNULL"}


def _fold(cls, args):
    out = args[0]
    for arg in args[1:]:
        out = cls(this=_wrap(out), expression=_wrap(arg))
    return out


def _wrap(node):
    return exp.Paren(this=node) if isinstance(node, (exp.Connector, exp.Not)) else node


def lookup(name: str) -> Optional[Function]:
    """The function called ``name`` (case-insensitive, aliases resolved), or None."""
    upper = name.upper()
    return FUNCTIONS.get(ALIASES.get(upper, upper))

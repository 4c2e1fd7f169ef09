"""``CAST(x AS type)`` in the DSL: the types it takes, the conversions Spark's ANSI mode allows, and SQL that
stops the run on a value that does not convert.

Spark's ANSI ``CAST`` already fails on such a value (``NUMERIC_VALUE_OUT_OF_RANGE``, ``CAST_INVALID_INPUT``),
but its message names a fragment of generated SQL. The DSL's CAST is ``TRY_CAST`` (NULL exactly where
the ANSI cast would fail) and, for a non-NULL value it turns into NULL, ``raise_error`` with a message
naming the CAST as written, where it is written and the value: never a silent NULL.
"""
from __future__ import annotations

import re
from typing import Optional

from sqlglot import exp

from .. import types as T
from ..render import data_type
from ..types import SqlType
from .ast import Call, Source
from .typed import ExprError, Typed, source_location

TYPE_NAMES = {"integer": "int", "int": "int", "bigint": "bigint", "double": "double", "string": "string",
              "date": "date", "timestamp": "timestamp", "boolean": "boolean"}
TYPES_HINT = "CAST takes decimal(p,s), integer, bigint, double, string, date, timestamp or boolean"
_DECIMAL = re.compile(r"decimal\((\d{1,3}),(\d{1,3})\)")
MAX_NESTED = 3  # each checked CAST writes its operand three times: CASTs nested deeper grow the SQL too fast
_NESTED = "lf_casts"
WRITTEN = "lf_written"  # a column reference's meta: the reference as the DSL text wrote it

# Conversions Spark's ANSI CAST refuses (kind of the value -> kinds it cannot become), measured on Spark 4.
_REFUSED = {"date": {"number", "boolean"}, "timestamp": {"boolean"}, "boolean": {"date", "timestamp"},
            "number": {"date"}}


def target_type(text: str) -> Optional[SqlType]:
    """The DSL type a CAST's type name means (None: not one CAST takes)."""
    name = text.strip().lower()
    if name in TYPE_NAMES:
        return T.from_sql(TYPE_NAMES[name])
    m = _DECIMAL.fullmatch(name)
    if m and 1 <= int(m.group(1)) <= 38 and 0 <= int(m.group(2)) <= int(m.group(1)):
        return T.from_sql(f"decimal({int(m.group(1))},{int(m.group(2))})")
    return None


def translate_cast(node: Call, operand: Typed, source: Source, context: str = "") -> Typed:
    """The checked SQL of ``CAST(x AS type)`` with ``x`` already translated into ``operand``; ``context`` (the
    operation and column, when known) goes into the message of a value that does not convert."""
    target = target_type(node.target or "")
    if target is None:
        hint = "write decimal(p,s) with 1 <= p <= 38 and s <= p" if (node.target or "").lower().startswith(
            "decimal") else TYPES_HINT
        raise ExprError("type", f"CAST cannot make a '{node.target}'", source, node.target_pos, node.target or "",
                        hint)
    if target.kind in _REFUSED.get(operand.type.kind, ()):
        raise ExprError("type", f"CAST cannot turn {operand.type} values into {target}", source, node.pos, "CAST",
                        "Spark converts dates only to and from strings and timestamps, and booleans only to and "
                        "from numbers and strings")
    nested = 1 + max((n.meta.get(_NESTED, 0) for n in operand.sql.walk()), default=0)
    if nested > MAX_NESTED:
        raise ExprError("syntax", f"CASTs nest more than {MAX_NESTED} deep", source, node.pos, "CAST",
                        "cast once to the type you need, or in several steps")
    dtype = data_type(target.sql, "spark")
    if operand.type.kind == "null":
        sql: exp.Expression = exp.Cast(this=operand.sql, to=dtype)
    else:
        sql = _checked(operand.sql, dtype, _message(node, source, target, context))
    sql.meta[_NESTED] = nested
    sql.meta["lf_kind"] = target.kind
    return Typed(sql, target, operand.aggregate)


def _message(node: Call, source: Source, target: SqlType, context: str) -> tuple[str, str]:
    """The message of a value that does not convert: the text before the value and the text after it."""
    loc = source_location(source, node.pos)
    where = f"{context} ({loc.file} line {loc.line})" if context else f"{loc.file} line {loc.line}, column {loc.column}"
    return f"ledgerflow: {_written(node, source)} in {where}: the value '", f" does not convert to {target}"


def _written(node: Call, source: Source) -> str:
    """The CAST as written (up to its closing parenthesis), or a short form when it came from elsewhere."""
    text = source.text[node.pos:]
    depth = 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if ch == ")" and depth == 0:
            return " ".join(text[:i + 1].split())[:200]
    return f"CAST(... AS {node.target})"


def _checked(value: exp.Expression, dtype: exp.DataType, message: tuple[str, str]) -> exp.Expression:
    """``COALESCE(TRY_CAST(v AS t), CASE WHEN v IS NULL THEN NULL ELSE raise_error(...) END)``; the message holds
    the value and the row's values of the columns ``v`` reads (:func:`_sample_row`)."""
    before, after = message
    text = exp.Anonymous(this="concat", expressions=[
        exp.Literal.string(before), exp.Cast(this=value.copy(), to=data_type("string")), exp.Literal.string("'"),
        *_sample_row(value),
        exp.Literal.string(after)])
    fail = exp.Cast(this=exp.Anonymous(this="raise_error", expressions=[text]), to=dtype.copy())
    guard = exp.Case(ifs=[exp.If(this=exp.Is(this=_operand(value.copy()), expression=exp.Null()), true=exp.Null())],
                     default=fail)
    return exp.Coalesce(this=exp.TryCast(this=value, to=dtype, safe=True), expressions=[guard])


def _as_text(value: exp.Expression) -> exp.Expression:
    """``v`` as a string, ``NULL`` written out when it is NULL (CONCAT of a NULL is NULL)."""
    return exp.Coalesce(this=exp.Cast(this=value.copy(), to=data_type("string")),
                        expressions=[exp.Literal.string("NULL")])


def _sample_row(value: exp.Expression) -> list[exp.Expression]:
    """The failing row as far as the CAST reads it: `` (in a row where a = ', a, ', b = ', b, ')'`` for each column
    ``v`` reads (as written in the DSL), once each; none inside an aggregate function, which a grouped query
    cannot name outside one. These columns are already the CAST's inputs, so lineage stays as it is."""
    seen: dict[str, exp.Expression] = {}
    for column in value.find_all(exp.Column):
        written = column.meta.get(WRITTEN)
        if written and written not in seen and column.find_ancestor(exp.AggFunc) is None:
            seen[written] = column
    parts: list[exp.Expression] = []
    for i, (written, column) in enumerate(seen.items()):
        parts += [exp.Literal.string((" (in a row where " if i == 0 else ", ") + f"{written} = "), _as_text(column)]
    return parts + [exp.Literal.string(")")] if parts else parts


def _operand(value: exp.Expression) -> exp.Expression:
    # IS NULL binds tighter than most operators: (a + b) IS NULL, not a + (b IS NULL)
    return value if isinstance(value, (exp.Column, exp.Literal, exp.Paren, exp.Func)) else exp.Paren(this=value)

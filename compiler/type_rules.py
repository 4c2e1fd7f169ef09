"""The result types Spark gives DSL expressions, worked out before any run.

Spark (ANSI mode, ``spark.sql.decimalOperations.allowPrecisionLoss`` at its default, true) types:

- ``+ - * /`` and ``MOD`` of decimals by its decimal result rules, capped at 38 digits: a result
  wider than that keeps its integer digits and gives up fraction digits, down to 6 (:func:`_adjusted`);
- an int as ``decimal(10,0)`` and a bigint as ``decimal(20,0)`` next to a decimal, except an integer
  literal, which counts only its own digits (``amount * 2`` is ``decimal(p+2,s)``);
- ``/`` of two integers as a double, and a double with anything as a double;
- the branches of ``IF`` and ``COALESCE`` (and ``MIN``/``MAX`` of two values) by widening: the
  integer digits and the scale of the widest; past 38 digits the integer digits are kept and
  fraction digits dropped (no literal rule there);
- a NULL next to a typed operand as that operand's type (NULL with NULL, and NULL / x, as a double).

Every function here takes and gives :class:`~ledgerflow.compiler.types.SqlType`; a type only a run
knows (``sql`` None) makes the result such a type too. ``tests/test_types_spark.py`` compares these
rules with Spark's own ``typeof`` on random expressions.
"""
from __future__ import annotations

from typing import Optional

from . import types as T
from .types import SqlType

MAX_PRECISION = 38
MIN_ADJUSTED_SCALE = 6  # the fraction digits a decimal result keeps at least when it is cut to 38 digits
DOUBLE = SqlType("number", "double")
INTEGRAL_DIGITS = {"int": 10, "bigint": 20}


def decimal(precision: int, scale: int) -> SqlType:
    """The DSL type ``decimal(precision,scale)``."""
    return SqlType("number", f"decimal({precision},{scale})")


def _bounded(precision: int, scale: int) -> SqlType:
    return decimal(min(precision, MAX_PRECISION), min(scale, MAX_PRECISION))


def _adjusted(precision: int, scale: int) -> SqlType:
    """Spark's cut of a result wider than 38 digits: integer digits first, at least 6 fraction digits kept."""
    if precision <= MAX_PRECISION:
        return decimal(precision, scale)
    int_digits = precision - scale
    return decimal(MAX_PRECISION, max(MAX_PRECISION - int_digits, min(scale, MIN_ADJUSTED_SCALE)))


def literal_type(text: str, negative: bool = False) -> Optional[SqlType]:
    """The type Spark gives a number literal as written (``1`` int, ``1.50`` decimal(3,2), a whole number
    beyond a bigint decimal(n,0)); None when it has more than 38 digits, which Spark refuses."""
    whole, _, fraction = text.partition(".")
    digits = (whole + fraction).lstrip("0")
    if not fraction and "." not in text:
        if len(digits) > MAX_PRECISION:
            return None
        value = -int(digits or "0") if negative else int(digits or "0")
        if -2 ** 31 <= value < 2 ** 31:
            return T.INTEGER
        if -2 ** 63 <= value < 2 ** 63:
            return T.BIGINT
        return decimal(len(digits), 0)
    scale = len(fraction)
    precision = max(len(digits) or 1, scale)
    return decimal(precision, scale) if precision <= MAX_PRECISION else None


def literal_digits(value: int) -> tuple[int, int]:
    """(precision, scale) Spark gives an integer literal next to a decimal: its own digits."""
    return len(str(abs(value))), 0


def _parts(t: SqlType, literal: Optional[int]) -> tuple[int, int]:
    if t.is_decimal:
        return T.decimal_parts(t.sql)
    if literal is not None:
        return literal_digits(literal)
    return INTEGRAL_DIGITS[t.sql], 0


def _inexact(*types: SqlType) -> bool:
    return any(t.sql is None and t.kind != "null" for t in types)


def arithmetic(op: str, a: SqlType, b: SqlType, a_literal: Optional[int] = None,
               b_literal: Optional[int] = None) -> SqlType:
    """The type of ``a op b`` for ``op`` one of ``+ - * /`` and ``%`` (MOD); ``*_literal`` is the value of
    an operand that is an integer literal (Spark types those by their own digits next to a decimal)."""
    if _inexact(a, b):
        return T.NUMBER
    if a.kind == "null" or b.kind == "null":
        if a.kind == b.kind or (op == "/" and a.kind == "null"):  # NULL / x is a double, x / NULL is x / x
            return DOUBLE
        a, b = (b, b) if a.kind == "null" else (a, a)
        a_literal = b_literal = None
    if "double" in (a.sql, b.sql):
        return DOUBLE
    if not a.is_decimal and not b.is_decimal:
        if op == "/":
            return DOUBLE
        return T.BIGINT if "bigint" in (a.sql, b.sql) else T.INTEGER
    lit_a = a_literal if b.is_decimal else None
    lit_b = b_literal if a.is_decimal else None
    (p1, s1), (p2, s2) = _parts(a, lit_a), _parts(b, lit_b)
    if op in "+-":
        scale = max(s1, s2)
        return _adjusted(max(p1 - s1, p2 - s2) + scale + 1, scale)
    if op == "*":
        return _adjusted(p1 + p2 + 1, s1 + s2)
    if op == "/":
        scale = max(MIN_ADJUSTED_SCALE, s1 + p2 + 1)
        return _adjusted(p1 - s1 + s2 + scale, scale)
    scale = max(s1, s2)
    return _adjusted(min(p1 - s1, p2 - s2) + scale, scale)


def _wider_two(a: SqlType, b: SqlType) -> SqlType:
    if a == b:
        return a
    if {a.kind, b.kind} == {"date", "timestamp"}:
        return T.TIMESTAMP
    if a.kind != "number" or b.kind != "number":
        return SqlType(a.kind)
    if "double" in (a.sql, b.sql):
        return DOUBLE
    if not a.is_decimal and not b.is_decimal:
        return T.BIGINT if "bigint" in (a.sql, b.sql) else T.INTEGER
    (p1, s1), (p2, s2) = _parts(a, None), _parts(b, None)
    scale = max(s1, s2)
    precision = max(p1 - s1, p2 - s2) + scale
    # past 38 digits Spark keeps the integer digits and drops fraction digits, down to none
    return decimal(min(precision, MAX_PRECISION), max(0, scale - max(0, precision - MAX_PRECISION)))


def wider(types: list[SqlType]) -> SqlType:
    """The common type of IF's branches, COALESCE's arguments or MIN/MAX's two values (NULLs take the
    others' type; only NULLs: the NULL type)."""
    concrete = [t for t in types if t.kind not in ("null", "unknown")]
    if not concrete:
        return T.UNKNOWN if any(t.kind == "unknown" for t in types) else T.NULL
    if _inexact(*concrete):
        return concrete[0] if all(t == concrete[0] for t in concrete) else SqlType(concrete[0].kind)
    out = concrete[0]
    for t in concrete[1:]:
        out = _wider_two(out, t)
    return out


def negated(t: SqlType) -> SqlType:
    """The type of ``-x`` and ``ABS(x)`` (a NULL is negated as a double)."""
    return DOUBLE if t.kind == "null" else t


def rounded(t: SqlType, places: int) -> SqlType:
    """The type of ``ROUND(x, places)``: of a decimal(p,s) a decimal of scale min(s, places) with one more
    integer digit for the carry (places < 0: scale 0 and at least 1 - places digits); others keep theirs."""
    if t.kind == "null":
        return DOUBLE
    if not t.is_decimal:
        return t
    p, s = T.decimal_parts(t.sql)
    if places < 0:
        return decimal(min(max(p - s + 1, 1 - places), MAX_PRECISION), 0)
    scale = min(s, places)
    return decimal(min(p - s + 1 + scale, MAX_PRECISION), scale)


def floored(t: SqlType) -> SqlType:
    """The type of ``FLOOR(x)`` and ``CEIL(x)``: of a decimal(p,s) with s > 0 a decimal(p-s+1,0), of a
    decimal(p,0) itself, of anything else a bigint."""
    if t.sql is None and t.kind != "null":
        return t
    if not t.is_decimal:
        return T.BIGINT
    p, s = T.decimal_parts(t.sql)
    return t if s == 0 else decimal(min(p - s + 1, MAX_PRECISION), 0)


def summed(t: SqlType) -> SqlType:
    """The type of ``SUM(x)``: of a decimal(p,s) a decimal(min(38, p+10), s), of an integer a bigint, else a double."""
    if t.is_decimal:
        p, s = T.decimal_parts(t.sql)
        return decimal(min(MAX_PRECISION, p + 10), s)
    if t.sql in ("int", "bigint"):
        return T.BIGINT
    return T.NUMBER if _inexact(t) else DOUBLE


def averaged(t: SqlType) -> SqlType:
    """The type of ``AVG(x)``: of a decimal(p,s) a decimal(p+4, s+4) (capped at 38), else a double."""
    if t.is_decimal:
        p, s = T.decimal_parts(t.sql)
        return _bounded(p + 4, s + 4)
    return T.NUMBER if _inexact(t) else DOUBLE

"""Types of the DSL and their Spark SQL spellings.

A :class:`SqlType` has a coarse ``kind`` used for type checking (boolean, number, string, date,
timestamp, null, unknown) and the exact Spark ``sql`` type. Declarations and system columns give it,
and every DSL expression has the type Spark gives it (:mod:`ledgerflow.compiler.type_rules`);
``sql=None`` is left for a NULL, a value of unknown type, and a registered column recorded before
types were exact. ``str()`` of a type is the one spelling every command and page shows.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

KINDS = ("boolean", "number", "string", "date", "timestamp", "null", "unknown")


@dataclass(frozen=True)
class SqlType:
    """A DSL type: coarse kind plus the exact Spark type when known."""

    kind: str
    sql: Optional[str] = None

    def __str__(self) -> str:
        return self.sql or self.kind

    @property
    def is_decimal(self) -> bool:
        """True for an exactly known decimal type."""
        return bool(self.sql and self.sql.startswith("decimal"))


BOOLEAN = SqlType("boolean", "boolean")
STRING = SqlType("string", "string")
DATE = SqlType("date", "date")
TIMESTAMP = SqlType("timestamp", "timestamp")
NUMBER = SqlType("number")
INTEGER = SqlType("number", "int")
BIGINT = SqlType("number", "bigint")
NULL = SqlType("null")
UNKNOWN = SqlType("unknown")


def decimal_parts(sql: str) -> tuple[int, int]:
    """(precision, scale) of a Spark decimal type's text (``decimal`` alone: Spark's ``decimal(10,0)``)."""
    inner = sql[len("decimal"):].strip("()")
    precision, _, scale = inner.partition(",")
    return (int(precision) if precision.strip() else 10), (int(scale) if scale.strip() else 0)


def from_sql(sql: str) -> SqlType:
    """The DSL type of a normalised Spark type name."""
    if sql in ("int", "bigint", "double") or sql.startswith("decimal"):
        return SqlType("number", sql)
    if sql in ("string", "boolean", "date", "timestamp"):
        return SqlType(sql, sql)
    if sql in ("number", "unknown"):  # a registered column whose exact type only a run knows (registered.py)
        return SqlType(sql)
    return SqlType("unknown", sql)


def compatible(a: SqlType, b: SqlType) -> bool:
    """Whether values of ``a`` and ``b`` can be compared or mixed in IF/COALESCE branches (their common type
    is :func:`ledgerflow.compiler.type_rules.wider`)."""
    if "null" in (a.kind, b.kind) or "unknown" in (a.kind, b.kind):
        return True
    if {a.kind, b.kind} <= {"date", "timestamp"}:
        return True
    return a.kind == b.kind

"""The bridge's working columns (docs/checks.md, "The bridge"): what every row carries so that the run's
bridge is told by one observation of the rows at the end of each stage, never by cutting the plan.

The rows of a stage never lose one: a delete only marks it (``_deleted``), an aggregate or an append adds
rows, an update changes values of live rows. So the working rows at the end of a stage hold every row that
was live at any point before, provided each row says

- ``_lf_origin``: 0 for an input row, the seq of the ``aggregate``/``append`` that created it;
- ``_lf_deleted_by``: the seq of the ``delete`` that marked it (NULL: not deleted by this run; a row that
  arrives deleted is ``_deleted`` with no ``_lf_deleted_by``);
- ``_lf_before_<seq>_<column>``: for an ``update`` that assigns a measured decimal column, that row's value
  of the column just before it (a copy, never computed; NULL where the row did not exist yet).

A deleted row is never changed again (updates and deletes act on live rows only), and no row is ever dropped,
so what an update changed is the sum of the values after it less the sum of the values before it, over the
rows that existed then; the value after it is the value before the next update of that column, or the value
at the end (:func:`value_after`). Which figures are summed from them is
:mod:`ledgerflow.compiler.bridge`'s. Copying a value costs nothing per row, where a per-row difference
was computed with one more digit (a wider decimal, off Spark's fast path) and computed the update's value a
second time. The output statements name their
columns, so these columns are never written.
"""
from __future__ import annotations

import decimal
from dataclasses import dataclass, field
from typing import Optional

from sqlglot import exp

from .plan import Column
from .types import decimal_parts

# the widest decimals the bridge sums (bridgeable): Spark sums a decimal(p, s) as decimal(p + 10, s) (at most 38
# digits) and the bridge subtracts such sums. Up to 27 digits the difference fits 38 digits; at 28 it is cut to 38,
# which keeps the scale when it is at most 6 (Spark's minimum adjusted scale) and drops it (rounds) above. A sum
# of values under 10^(28 - s) overflows 38 digits only past 10^10 rows. Wider decimals (a SUM of a decimal(18,2)
# is a decimal(28,2); of that, a decimal(38,2)) are counted, not summed.
MAX_PRECISION = 27
MAX_PRECISION_SCALED = (28, 6)  # ... and 28 digits with a scale of at most 6

# the bridge's arithmetic in Python (a value from the end's less every change, a reconcile's difference): Spark's
# sums have up to 38 digits, and Python's default decimal context keeps 28 (it would round, or fail to quantize)
EXACT = decimal.Context(prec=80)

ORIGIN = "_lf_origin"
DELETED_BY = "_lf_deleted_by"


def before_name(seq: int, column: str) -> str:
    """The working column holding a row's value of ``column`` just before update ``seq``."""
    return f"_lf_before_{seq}_{column}"


def _col(name: str, table: Optional[str] = None) -> exp.Column:
    return exp.column(name, table=table, quoted=True)


def bridgeable(sql: str) -> bool:
    """Whether the bridge sums a decimal column of Spark type ``sql`` exactly (see :data:`MAX_PRECISION`)."""
    precision, scale = decimal_parts(sql)
    return precision <= MAX_PRECISION or (precision <= MAX_PRECISION_SCALED[0] and scale <= MAX_PRECISION_SCALED[1])


def bridgeable_text() -> str:
    """The bridge's decimal limit in words, for messages and docs."""
    return (f"decimals of at most {MAX_PRECISION} digits, or {MAX_PRECISION_SCALED[0]} with a scale of at most "
            f"{MAX_PRECISION_SCALED[1]}")


@dataclass
class BridgeColumns:
    """Which bridge columns the steps of one plan carry (see the module docstring)."""

    befores: dict[int, dict[str, str]] = field(default_factory=dict)  # update seq -> column -> its Spark type

    def carried(self, before: int) -> list[tuple[str, str]]:
        """(name, Spark type) of the value-before columns that exist before operation ``before`` (in seq order)."""
        return [(before_name(seq, c), t) for seq, cols in sorted(self.befores.items()) if seq < before
                for c, t in cols.items()]

    def passed(self, before: int, table: Optional[str] = None) -> list[exp.Expression]:
        """Every bridge column as it is, for a step of operation ``before`` that keeps the rows' values."""
        return [_col(ORIGIN, table), _col(DELETED_BY, table), *[_col(n, table) for n, _ in self.carried(before)]]

    def created(self, seq: int) -> list[exp.Expression]:
        """The bridge columns of a row operation ``seq`` creates (an aggregate's or an append's row)."""
        return [exp.alias_(exp.Literal.number(seq), ORIGIN, quoted=True),
                exp.alias_(exp.cast(exp.Null(), "INT"), DELETED_BY, quoted=True),
                *[exp.alias_(exp.cast(exp.Null(), exp.DataType.build(t, dialect="spark")), n, quoted=True)
                  for n, t in self.carried(seq)]]

    def initial(self) -> list[exp.Expression]:
        """The bridge columns of an input row."""
        return [exp.alias_(exp.Literal.number(0), ORIGIN, quoted=True),
                exp.alias_(exp.cast(exp.Null(), "INT"), DELETED_BY, quoted=True)]

    def after_update(self, seq: int, before: dict[str, Column], table: Optional[str]) -> list[exp.Expression]:
        """An update's bridge columns: those before it as they are, then a copy of each measured column it
        assigns as the row held it before (``before``: the columns before the update)."""
        out = self.passed(seq, table)
        for name, spark_type in self.befores.get(seq, {}).items():
            old = _col(name, table) if name in before else exp.Null()
            copy = exp.cast(old, exp.DataType.build(spark_type, dialect="spark"))
            out.append(exp.alias_(copy, before_name(seq, name), quoted=True))
        return out

    def after_delete(self, seq: int, condition: Optional[exp.Expression]) -> list[exp.Expression]:
        """A delete's bridge columns: ``_lf_deleted_by`` set on the rows it marks (its row ``condition``,
        which holds for live rows only; every live row without one), the others as they are."""
        marks: exp.Expression = exp.Not(this=_col("_deleted"))
        if condition is not None:
            marks = exp.Coalesce(this=condition.copy(), expressions=[exp.false()])
        by = exp.Case(ifs=[exp.If(this=marks, true=exp.Literal.number(seq))], default=_col(DELETED_BY))
        carried = [_col(n) for n, _ in self.carried(seq)]
        return [_col(ORIGIN), exp.alias_(by, DELETED_BY, quoted=True), *carried]


def value_after(columns: BridgeColumns, point: int, column: str, last: int) -> exp.Expression:
    """A row's value of ``column`` just after operation ``point``, for a row that existed then: its value before
    the next update of ``column`` after ``point`` (up to ``last``, the stage's last operation), else its value
    at the end of the stage."""
    for seq, cols in sorted(columns.befores.items()):
        if point < seq <= last and column in cols:
            return _col(before_name(seq, column))
    return _col(column)

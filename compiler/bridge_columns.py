"""The bridge's working columns (docs/checks.md, "The bridge"): what every row carries so that the run's
bridge is told by one observation of the rows at the end of each stage, never by cutting the plan.

The rows of a stage never lose one: a delete only marks it (``_deleted``), an aggregate or an append adds
rows, an update changes values of live rows. So the working rows at the end of a stage hold every row that
was live at any point before, provided each row says

- ``_lf_origin``: 0 for an input row, the seq of the ``aggregate``/``append`` that created it;
- ``_lf_deleted_by``: the seq of the ``delete`` that marked it (NULL: not deleted by this run; a row that
  arrives deleted is ``_deleted`` with no ``_lf_deleted_by``);
- ``_lf_delta_<seq>_<column>``: for an ``update`` that assigns a measured decimal column, the change it made
  to that row's value (new − old, NULL counting as 0; NULL where the row did not exist yet).

A deleted row is never changed again (updates and deletes act on live rows only), so a row's value at
point *p* is its value at the end less the deltas of the updates after *p* (:func:`value_at`); which
figures are summed from them is :mod:`ledgerflow.compiler.checks.bridge`'s. The output statements name their
columns, so these columns are never written.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from sqlglot import exp

from .plan import Column

# the widest decimal the bridge sums: an update's delta is one digit wider, and Spark subtracts up to 11
# deltas from it within its 38 digits without rounding (beyond 38 it would drop scale)
MAX_PRECISION = 26

ORIGIN = "_lf_origin"
DELETED_BY = "_lf_deleted_by"


def delta_name(seq: int, column: str) -> str:
    """The working column holding the change update ``seq`` made to ``column``."""
    return f"_lf_delta_{seq}_{column}"


def _col(name: str, table: Optional[str] = None) -> exp.Column:
    return exp.column(name, table=table, quoted=True)


def decimal_parts(sql: str) -> tuple[int, int]:
    """(precision, scale) of a Spark decimal type's text."""
    inner = sql[len("decimal"):].strip("()")
    precision, _, scale = inner.partition(",")
    return (int(precision) if precision.strip() else 10), (int(scale) if scale.strip() else 0)


@dataclass
class BridgeColumns:
    """Which bridge columns the steps of one plan carry (see the module docstring)."""

    deltas: dict[int, dict[str, str]] = field(default_factory=dict)  # update seq -> column -> delta's Spark type

    def carried(self, before: int) -> list[tuple[str, str]]:
        """(name, Spark type) of the delta columns that exist before operation ``before`` (in seq order)."""
        return [(delta_name(seq, c), t) for seq, cols in sorted(self.deltas.items()) if seq < before
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

    def after_update(self, seq: int, columns: dict[str, Column], before: dict[str, Column],
                     table: Optional[str]) -> list[exp.Expression]:
        """An update's bridge columns: those before it as they are, then its own deltas."""
        out = self.passed(seq, table)
        for name, spark_type in self.deltas.get(seq, {}).items():
            new = columns[name].expression.copy()
            old = _col(name, table) if name in before else exp.Literal.number(0)
            when = None
            default = new.args.get("default") if isinstance(new, exp.Case) else None
            keeps_old = default is None or (isinstance(default, exp.Column) and default.name == name)
            if isinstance(new, exp.Case) and len(new.args.get("ifs") or []) == 1 and keeps_old:
                # CASE WHEN <the rows it updates> THEN <value> ELSE <old> END: the delta only on those rows
                # (NULL elsewhere: the sums skip it), computed from the value alone
                when, new = new.args["ifs"][0].this, new.args["ifs"][0].args["true"]
            change = exp.cast(exp.Sub(this=exp.Coalesce(this=new, expressions=[exp.Literal.number(0)]),
                                      expression=exp.Coalesce(this=old, expressions=[exp.Literal.number(0)])),
                              exp.DataType.build(spark_type, dialect="spark"))
            if when is not None:
                change = exp.Case(ifs=[exp.If(this=when, true=change)])
            out.append(exp.alias_(change, delta_name(seq, name), quoted=True))
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


def value_at(columns: BridgeColumns, point: int, column: str, last: int) -> exp.Expression:
    """A row's value of ``column`` after operation ``point``: its value at the end of the stage (which ends
    with operation ``last``) less the deltas of the updates after ``point``."""
    value: exp.Expression = exp.Coalesce(this=_col(column), expressions=[exp.Literal.number(0)])
    for seq, cols in sorted(columns.deltas.items()):
        if point < seq <= last and column in cols:
            value = exp.Sub(this=value, expression=exp.Coalesce(this=_col(delta_name(seq, column)),
                                                                expressions=[exp.Literal.number(0)]))
    return value

"""Bind the arguments of each kind of check (docs/checks.md) onto its :class:`CheckPlan`: the columns it
reads, its row condition or grouping, its tolerance or bounds. Each binder returns whether the check
is valid; every problem is a located ``CHK-00x`` diagnostic in the context (one pass, all of them)."""
from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any, Optional

from sqlglot import exp

from ..checks.plan import CheckPlan
from ..dsl.translate import Scope, date_literal
from ..errors import Location, did_you_mean
from ..operation_yaml import located_list
from ..type_rules import MAX_PRECISION
from ..yaml_reader import text_of
from .context import BindContext, loc_of

# An expect's expression errors: a name the rows lack is CHK-001, anything that is not a row condition CHK-002.
EXPECT_CODES = {"unknown_column": "CHK-001", "unknown_alias": "CHK-001", "syntax": "CHK-002", "type": "CHK-002",
                "aggregate": "CHK-002", "no_aggregate": "CHK-002", "not_grouped": "CHK-002"}


def rows_of(plan: CheckPlan) -> str:
    """The checked rows in words."""
    return "the input rows" if plan.on is None else f"the rows output {plan.on} writes"


def column(ctx: BindContext, plan: CheckPlan, name: Any, fallback: Optional[Location],
           columns: Optional[dict] = None, rows: str = "") -> bool:
    """CHK-001 unless ``name`` is a column of the checked rows (or of ``columns``)."""
    columns = plan.row_columns if columns is None else columns
    if isinstance(name, str) and name in columns:
        return True
    ctx.errors.add("CHK-001", f"check '{plan.name}' reads the column '{name}', which {rows or rows_of(plan)} "
                   "do not have", loc_of(name, fallback) if isinstance(name, str) else fallback or Location("?"),
                   text_of(name), did_you_mean(str(name), columns))
    return False


def all_columns(ctx: BindContext, plan: CheckPlan, names: list, fallback: Optional[Location]) -> bool:
    """:func:`column` of each of ``names`` (every unknown one reported)."""
    return all([column(ctx, plan, n, fallback) for n in names])


def names_of(ctx: BindContext, plan: CheckPlan, value: Any, loc: Optional[Location], what: str,
             columns: Optional[dict] = None, rows: str = "") -> Optional[list[str]]:
    """A list of column names of the checked rows (or of ``columns``); None after reporting a problem.
    Absent (None) is an empty list."""
    if value is None:
        return []
    items = located_list(value)
    if not items or not all(isinstance(v, str) for v, _ in items):
        ctx.errors.add("YAML-005", f"'{what}' of check '{plan.name}' must be a non-empty list of column names",
                       loc or Location("?"), text_of(value), "e.g. [journal_id]")
        return None
    ok = all([column(ctx, plan, v, vloc, columns, rows) for v, vloc in items])
    return list(dict.fromkeys(str(v) for v, _ in items)) if ok else None


def _digits(value: Decimal) -> int:
    """How many digits ``value`` has written out in full (1e3: 4, 0.001: 4 counting the 0 before the point)."""
    _, digits, exponent = value.as_tuple()
    return len(digits) + exponent if exponent >= 0 else max(len(digits), -exponent)


def tolerance(ctx: BindContext, plan: CheckPlan, value: Any, loc: Optional[Location]) -> Optional[Decimal]:
    """The tolerance as an exact Decimal ("0.00" when not given); CHK-005 when it is not a non-negative decimal
    a Spark decimal holds (at most 38 digits written out in full)."""
    if value is None:
        return Decimal("0.00")
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        try:
            found = Decimal(str(value).strip())
        except InvalidOperation:
            found = None
        if found is not None and found.is_finite() and found >= 0 and _digits(found) <= MAX_PRECISION:
            return found
        if found is not None and found.is_finite() and found >= 0:
            ctx.errors.add("CHK-005", f"the tolerance of check '{plan.name}' has {_digits(found)} digits written out "
                           f"in full, more than the {MAX_PRECISION} a Spark decimal holds",
                           loc_of(value, loc) if isinstance(value, str) else loc or Location("?"), text_of(value),
                           'write a decimal of at most 38 digits, e.g. tolerance: "0.01"')
            return None
    hint = ('quote it, e.g. tolerance: "0.01": a YAML number is binary floating point, not an exact decimal'
            if isinstance(value, float) else 'write a non-negative decimal as a string, e.g. tolerance: "0.00"')
    ctx.errors.add("CHK-005", f"the tolerance of check '{plan.name}' is not a non-negative decimal",
                   loc_of(value, loc) if isinstance(value, str) else loc or Location("?"), text_of(value), hint)
    return None


def _read(node: exp.Expression) -> tuple[str, ...]:
    return tuple(dict.fromkeys(c.name for c in node.find_all(exp.Column)))


def bind_expect(ctx: BindContext, plan: CheckPlan) -> bool:
    """``expect``: a DSL condition every row meets; a row where it is FALSE or NULL violates."""
    text, loc = plan.check.args["condition"], plan.check.where.get("condition")
    if text is None:
        return False
    scope = Scope(ctx.table, dict(plan.row_columns), what=rows_of(plan)[4:])
    typed = ctx.compile_expr(ctx.translator(scope), text, loc, EXPECT_CODES, expect="boolean")
    if typed is None:
        return False
    plan.columns = _read(typed.sql)
    plan.violation = exp.Not(this=exp.Coalesce(this=exp.Paren(this=typed.sql.copy()), expressions=[exp.false()]))
    return True


def _is_null(name: str) -> exp.Expression:
    return exp.Is(this=exp.column(name, quoted=True), expression=exp.Null())


def bind_not_null(ctx: BindContext, plan: CheckPlan) -> bool:
    """``not_null``: a row with NULL in any listed column violates."""
    names = plan.check.args["columns"]
    if not names or not all_columns(ctx, plan, names, plan.check.where.get("columns")):
        return False
    plan.columns = tuple(dict.fromkeys(str(n) for n in names))
    plan.violation = exp.or_(*[_is_null(n) for n in plan.columns])
    return True


def _value(kind: str, value: Any) -> Optional[exp.Expression]:
    """The SQL literal of an accepted value for a column of DSL type ``kind`` (None: wrong type)."""
    if kind == "string" and isinstance(value, str):
        return exp.Literal.string(str(value))
    if kind == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return exp.Literal.number(str(value))
    if kind == "boolean" and isinstance(value, bool):
        return exp.true() if value else exp.false()
    if kind == "date" and isinstance(value, str):
        return date_literal(str(value))
    return None


def bind_accepted_values(ctx: BindContext, plan: CheckPlan) -> bool:
    """``accepted_values``: a row whose column is NULL or not one of the values violates."""
    args, where = plan.check.args, plan.check.where
    name = args.get("column")
    if name is None or not column(ctx, plan, name, where.get("column")):
        return False
    typ = plan.row_columns[name]
    items = located_list(args.get("values"))
    if not items:
        ctx.errors.add("CHK-009", f"the values of check '{plan.name}' must be a non-empty list", where.get("values"),
                       text_of(args.get("values")), "e.g. values: [EUR, USD]")
        return False
    literals, ok = [], True
    for value, loc in items:
        lit = _value(typ.kind, value)
        if lit is None:
            ok = False
            want = {"string": "a string", "number": "a number", "boolean": "true or false",
                    "date": "a date 'YYYY-MM-DD'"}.get(typ.kind)
            ctx.errors.add("CHK-009", f"the value {value!r} of check '{plan.name}' is not of the type of column "
                           f"'{name}' ({typ})", loc, text_of(value),
                           f"write {want}" + (" (quote codes that look like numbers)" if typ.kind == "string" else "")
                           if want else "accepted_values takes a string, number, boolean or date column")
        literals.append(lit)
    if not ok:
        return False
    col = exp.column(str(name), quoted=True)
    plan.columns = (str(name),)
    plan.violation = exp.or_(_is_null(str(name)), exp.Not(this=exp.In(this=col, expressions=literals)))
    return True


def bind_unique(ctx: BindContext, plan: CheckPlan) -> bool:
    """``unique``: no two rows share the listed columns' values (NULLs are equal, as in GROUP BY)."""
    names = plan.check.args["columns"]
    if not names or not all_columns(ctx, plan, names, plan.check.where.get("columns")):
        return False
    plan.columns = plan.group_by = tuple(dict.fromkeys(str(n) for n in names))
    return True


def bind_balanced(ctx: BindContext, plan: CheckPlan) -> bool:
    """``balanced``: per group, SUM(amount) is within tolerance of zero (an all-NULL group violates); without
    ``group_by``, the sum over all the checked rows."""
    args, where = plan.check.args, plan.check.where
    group = names_of(ctx, plan, args.get("group_by"), where.get("group_by"), "group_by")
    amount = args.get("amount")
    ok = group is not None and amount is not None and column(ctx, plan, amount, where.get("amount"))
    if ok and not plan.row_columns[amount].is_decimal:
        ctx.errors.add("CHK-010", f"the amount '{amount}' of check '{plan.name}' is not a decimal column "
                       f"({plan.row_columns[amount]})", loc_of(amount, where.get("amount")), str(amount),
                       "balance a decimal(p,s) column: sums of decimals are exact")
        ok = False
    plan.tolerance = tolerance(ctx, plan, args.get("tolerance"), where.get("tolerance"))
    if not ok or plan.tolerance is None:
        return False
    plan.group_by, plan.amount = tuple(group), str(amount)
    plan.columns = tuple(dict.fromkeys([*plan.group_by, plan.amount]))
    return True


def _bound(value: Any) -> Optional[int]:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def bind_row_count(ctx: BindContext, plan: CheckPlan) -> bool:
    """``row_count``: min <= rows <= max (either bound may be left out, not both)."""
    args, where = plan.check.args, plan.check.where
    ok = True
    for key in ("min", "max"):
        if args.get(key) is not None and _bound(args[key]) is None:
            ctx.errors.add("CHK-008", f"'{key}' of check '{plan.name}' is not a non-negative integer",
                           where.get(key), text_of(args[key]), "e.g. row_count: {min: 1, max: 5000000}")
            ok = False
    low, high = _bound(args.get("min")), _bound(args.get("max"))
    if ok and low is None and high is None:
        ctx.errors.add("CHK-008", f"check '{plan.name}' gives neither min nor max", plan.check.where.get("@name"),
                       plan.name, "e.g. row_count: {min: 1}")
        ok = False
    if ok and low is not None and high is not None and low > high:
        ctx.errors.add("CHK-008", f"check '{plan.name}' asks for at least {low} and at most {high} rows",
                       where.get("min"), f"min {low}, max {high}", "min may not exceed max")
        ok = False
    plan.min_rows, plan.max_rows = low, high
    return ok

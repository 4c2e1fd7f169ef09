"""SQL that normalises what a location holds into a dataset's declared shape.

Every input view the compiled SQL reads (``ds_<name>``) has exactly the declared columns, cast to
their declared types, plus the system columns. A value that cannot be cast, or that the cast would
change (digits beyond the declared scale, a fraction into an integer, a time of day into a date),
stops the run with an error naming dataset, column, location and value; a missing declared column
is an error before Spark runs anything. System columns the data lacks are filled (docs/workspace.md, datasets).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

import sqlglot
from sqlglot import exp

from . import periods
from . import system_columns as sysc
from .errors import ResolutionError
from .model import Dataset


def _fn(name: str, *args: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this=name, expressions=list(args))


def _checked_cast(column: str, target: str, present: str, dataset: str, where: str) -> exp.Expression:
    """Cast ``column`` (of Spark type ``present``, ``""`` when unknown) to ``target``.

    A non-NULL value that does not convert, or that converts only by losing digits (see
    :func:`_loss`), raises a located error naming dataset, column, location and value.
    """
    col = exp.column(column, quoted=True)
    if present == target or present == JSON_TEXT and target == "string":
        return col
    dtype = exp.DataType.build(target, dialect="spark")
    converted = exp.TryCast(this=col.copy(), to=dtype, safe=True)
    if present == JSON_TEXT and _kind(target) == "integral":
        # a JSON number as written: 2.0 is the integer 2 (Spark's string -> int cast refuses it)
        whole = exp.TryCast(this=col.copy(), to=exp.DataType.build("decimal(38,0)"), safe=True)
        converted = exp.TryCast(this=whole, to=dtype, safe=True)

    def fail(reason: str) -> exp.Expression:
        message = _fn("concat", exp.Literal.string(f"ledgerflow: dataset '{dataset}', column '{column}' at {where}: "
                                                   "value '"),
                      exp.Cast(this=col.copy(), to=exp.DataType.build("string")),
                      exp.Literal.string(f"' cannot be read as {target}{reason}"))
        return exp.Cast(this=_fn("raise_error", message), to=dtype.copy())

    bad = exp.and_(exp.Not(this=exp.Is(this=col.copy(), expression=exp.Null())),
                   exp.Is(this=converted.copy(), expression=exp.Null()))
    ifs = [exp.If(this=bad, true=fail(""))]
    loss = _loss(col, present, target, converted)
    if loss is not None:
        condition, reason = loss
        ifs.append(exp.If(this=condition, true=fail(reason)))
    return exp.Case(ifs=ifs, default=converted.copy())


# --------------------------------------------------------------------------------- lost digits
# A cast that succeeds can still drop information: 15000.005 read as decimal(18,2) is 15000.01.
# `_loss` gives the condition (tested after the failed-cast one; never true for NULL) under which
# the value read differs from the value stored, or None when the pair of types cannot lose anything (same
# type, widening, integral to decimal: overflow is caught by the NULL check). Declared `double`
# columns are approximate by declaration and never checked.

# The "type" of a JSON column ledgerflow read as text (adapters/inputs/loaders.py): a string holding the
# value as written in the file; an integer column accepts 2.0 from it, as it does from a JSON double.
JSON_TEXT = "json_text"
_DECIMAL = re.compile(r"^decimal\((\d+),(\d+)\)$")
_INTEGRAL = ("tinyint", "smallint", "int", "bigint")
_FLOATING = ("float", "double")
_DIGITS_LOST = " without losing digits"
_TIME_LOST = " without losing its time of day"
# Java's BigDecimal (Spark's string -> decimal parser) after String.trim(), which drops chars <= U+0020.
_NUMBER = r"^[\x00-\x20]*[+-]?([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?[\x00-\x20]*$"


def _plain_number(scale: int) -> str:
    """A number without exponent and with at most ``scale`` fraction digits: never loses digits."""
    return rf"^[\x00-\x20]*[+-]?[0-9]*(?:\.[0-9]{{0,{scale}}})?[\x00-\x20]*$"


def _kind(spark_type: str) -> str:
    """decimal | integral | floating | string | date | timestamp | timestamp_ntz | unknown | other."""
    if not spark_type:
        return "unknown"
    if _DECIMAL.match(spark_type):
        return "decimal"
    if spark_type in _INTEGRAL:
        return "integral"
    if spark_type in _FLOATING:
        return "floating"
    if spark_type in ("string", JSON_TEXT) or spark_type.startswith(("char(", "varchar(")):
        return "string"
    if spark_type in ("date", "timestamp", "timestamp_ntz"):
        return spark_type
    return "other"


def _scale(spark_type: str) -> int:
    m = _DECIMAL.match(spark_type)
    return int(m.group(2)) if m else 0


def _loss(col: exp.Expression, present: str, target: str,
          converted: exp.Expression) -> Optional[tuple[exp.Expression, str]]:
    """(condition, reason) when casting ``col`` from ``present`` to ``target`` can lose digits, else None.

    Per source type, for decimal(p,s) and integral targets:
    - decimal with more fraction digits, float, double: the value read, cast back to the source's
      type, differs from the value stored (so the double 0.1 read as 0.10 is 0.1 again, while the
      double 15000.005 read as 15000.01 is not);
    - string: the digits written (:func:`_string_loss`); a string -> integral cast already refuses
      any fraction, so only decimals are checked;
    - unknown (a table or a file not peeked at): the value's string form, as for strings.
    Date targets: a timestamp or a string with a time of day other than midnight loses it.
    Timestamp targets: a string with non-zero digits beyond microseconds loses them.
    """
    source, to = _kind(present), _kind(target)
    if to == "decimal" or to == "integral":
        scale = _scale(target)
        if source == "decimal" and _scale(present) > scale or source == "floating":
            # Back in the source's own type the comparison is exact (Spark's common type of two wide
            # decimals may round); a value rounded up past the source's digits does not fit: NULL.
            back = exp.TryCast(this=converted.copy(), to=exp.DataType.build(present, dialect="spark"), safe=True)
            return exp.Not(this=exp.NullSafeEQ(this=back, expression=col.copy())), _DIGITS_LOST
        if source == "string" and (to == "decimal" or present == JSON_TEXT) or source == "unknown":
            text = col.copy() if source == "string" else exp.Cast(this=col.copy(), to=exp.DataType.build("string"))
            return _string_loss(text, scale, _wide_decimal(target), converted), _DIGITS_LOST
        return None
    if to == "date":
        if source in ("timestamp", "timestamp_ntz"):
            back = exp.Cast(this=converted.copy(), to=exp.DataType.build(present, dialect="spark"))
            return exp.NEQ(this=back, expression=col.copy()), _TIME_LOST
        if source in ("string", "unknown"):
            text = col.copy() if source == "string" else exp.Cast(this=col.copy(), to=exp.DataType.build("string"))
            return _date_string_loss(text, converted), _TIME_LOST
        return None
    if to == "timestamp" and source in ("string", "unknown"):
        text = col.copy() if source == "string" else exp.Cast(this=col.copy(), to=exp.DataType.build("string"))
        return exp.RegexpLike(this=text, expression=exp.Literal.string(r"[.][0-9]{6}[0-9]*[1-9]")), _DIGITS_LOST
    return None


def _wide_decimal(target: str) -> exp.DataType:
    """The target's integer digits with every other of Spark's 38 digits after the point."""
    m = _DECIMAL.match(target)
    whole = int(m.group(1)) - int(m.group(2)) if m else 19  # bigint has 19 digits
    return exp.DataType.build(f"decimal(38,{38 - whole})", dialect="spark")


def _string_loss(text: exp.Expression, scale: int, wide: exp.DataType, converted: exp.Expression) -> exp.Expression:
    """True when the number written in ``text`` has non-zero digits beyond ``scale`` after the point.

    Exact for any length: the digits are counted, not parsed into a (bounded) decimal. With
    I = the integer digits, F = the fraction digits and E = the exponent as written, the value is
    the digits I||F without trailing zeros (D) times 10^(len(I) + E - len(D)), so its scale is
    len(D) - len(I) - E (zero has no digits to lose). The common plain form with few enough
    fraction digits is settled by one RLIKE. Digits Spark accepts but the pattern does not (other
    scripts' digits) are compared against a parse into the widest decimal instead.
    """
    number = exp.Literal.string(_NUMBER)

    def group(i: int) -> exp.Expression:
        return exp.RegexpExtract(this=text.copy(), expression=number.copy(), group=exp.Literal.number(i))

    whole = group(1)
    digits = exp.Trim(this=_fn("concat", whole, group(2)), expression=exp.Literal.string("0"), position="TRAILING")
    power = exp.Coalesce(this=exp.TryCast(this=group(3), to=exp.DataType.build("int"), safe=True),
                         expressions=[exp.Literal.number(0)])
    digits_scale = exp.Sub(this=exp.Sub(this=exp.Length(this=digits.copy()), expression=exp.Length(this=whole.copy())),
                           expression=power)
    counted = exp.and_(exp.NEQ(this=digits, expression=exp.Literal.string("")),
                       exp.GT(this=digits_scale, expression=exp.Literal.number(scale)))
    parsed = exp.NEQ(this=exp.TryCast(this=text.copy(), to=wide, safe=True), expression=converted.copy())
    plain = exp.RegexpLike(this=text.copy(), expression=exp.Literal.string(_plain_number(scale)))
    written = exp.RegexpLike(this=text.copy(), expression=number.copy())
    return exp.Case(ifs=[exp.If(this=plain, true=exp.false()), exp.If(this=written, true=counted)], default=parsed)


def _date_string_loss(text: exp.Expression, converted: exp.Expression) -> exp.Expression:
    """True when a string read as a date has a time part that is not midnight (Spark ignores it).

    A bare date has at most 10 characters; a longer string must read as a timestamp (without
    zone) equal to the date's midnight.
    """
    ntz = exp.DataType.build("timestamp_ntz", dialect="spark")
    same = exp.NullSafeEQ(this=exp.TryCast(this=text.copy(), to=ntz, safe=True),
                          expression=exp.Cast(this=converted.copy(), to=ntz.copy()))
    return exp.and_(exp.GT(this=exp.Length(this=text.copy()), expression=exp.Literal.number(10)), exp.Not(this=same))


# ------------------------------------------------------------------------------- row identity
# A row that arrives without `_row_id` gets a UUIDv7 from the row's identity, its random part a hash of it
# (system_columns.input_row_uuidv7, derivation system_columns.ROW_IDENTITY unless a replay asks for the one
# its run used) except for a scenario test's given rows (below): dataset id, version, location index, and
# - where the reader tells each row's position (Parquet: `_metadata.row_index`), the file's path
#   relative to the location plus that row index: no shuffle, computed in the scan's projection
#   after the period filter is pushed into it;
# - in-memory data that carries its rows' positions (a POSITION_COLUMN: the given data of a scenario
#   test, numbered by its place in the test or its fixture file), that position, written into the id
#   as it is (system_columns.positioned_row_uuidv7): no shuffle, no hash;
# - elsewhere (CSV, JSON, ORC, catalog tables, other in-memory DataFrames) the row's content (its raw
#   declared columns and the system columns it carries) plus an ordinal among identical rows:
#   a ROW_NUMBER over the content hash, after the period filter (one shuffle of the run's rows).
#   Identical rows are interchangeable, so which one gets which ordinal does not matter.
FILE_COLUMN = "__lf_file"
ROW_INDEX_COLUMN = "__lf_row_index"
CONTENT_COLUMN = "__lf_content"
ORDINAL_COLUMN = "__lf_ordinal"
METADATA_COLUMN = "_metadata"  # Spark's hidden file-metadata struct (its name when no data column takes it)
FILE_METADATA_COLUMN = "__lf_file_metadata"  # that struct, selected into the raw relation under this name
POSITION_COLUMN = "__lf_position"  # a BIGINT an in-memory relation may carry: each row's distinct, stable position


def spark_metadata_name(columns) -> str:
    """The name under which Spark offers a Parquet relation's hidden ``_metadata`` struct when the data has
    ``columns``: one more leading underscore while a data column (compared case-insensitively) takes the
    name, as Spark 4 renames it (``_metadata`` -> ``__metadata``; checked in tests/test_row_identity.py).
    Names are compared as Spark does by default (``spark.sql.caseSensitive`` false)."""
    taken = {c.lower() for c in columns}
    name = METADATA_COLUMN
    while name in taken:
        name = "_" + name
    return name


def _relative_file(root: str, as_bytes: bool) -> exp.Expression:
    """The ``file_path`` of :data:`FILE_METADATA_COLUMN` relative to the location ``root`` (Spark's URI form
    of it), so that a moved workspace keeps its ids; the whole path when the file is not under that
    prefix. As UTF-8 bytes when ``as_bytes`` (derivation 4 hashes them): a byte substring is about half
    the cost of a string one per row, which counts characters first."""
    path = exp.Dot(this=exp.column(FILE_METADATA_COLUMN, quoted=True), expression=exp.to_identifier("file_path"))
    under = _fn("startswith", path.copy(), exp.Literal.string(root))
    if as_bytes:
        path = exp.Cast(this=path, to=exp.DataType.build("binary"))
    start = len(root.encode("utf-8")) if as_bytes else len(root)
    rest = exp.Substring(this=path.copy(), start=exp.Literal.number(start + 1))
    return exp.Case(ifs=[exp.If(this=under, true=rest)], default=path)


@dataclass(frozen=True)
class RowRules:
    """Which rows a normalised SELECT (:func:`normalised_select`) keeps, and how it gives a row without
    ``_row_id`` its id.

    ``period_rows``: keep only the run's rows (``periods.period_filter`` of the dataset's temporal mode,
    with its parameter markers) before any row id is computed; the compiled SQL applies the same filter
    again on the view, which costs nothing.
    ``file_root`` (Parquet only): the relation also has Spark's ``_metadata`` struct as
    :data:`FILE_METADATA_COLUMN`, and this is the location's URI prefix of its ``file_path``; rows without
    ``_row_id`` then get an id from their file and position instead of their content.
    ``row_identity``: how generated ``_row_id``s are derived (``system_columns.ROW_IDENTITIES``; a replay
    passes the one its run recorded).
    ``row_ids`` False: no statement reads the view's ``_row_id`` (``plan.InputView.row_ids``: a join side or
    an aggregated append's source, whose expressions cannot name it), so rows without one get NULL instead
    of a derived id: Spark would prune the id, but every analysis of a plan reading the view still walks
    its expressions and window.
    ``positioned`` (in-memory data only): the relation has a :data:`POSITION_COLUMN`, each row's distinct
    and stable position, and rows without ``_row_id`` get their id from it (no window):
    ``system_columns.positioned_row_uuidv7``, whatever ``row_identity`` says."""

    period_rows: bool = False
    file_root: Optional[str] = None
    row_identity: int = sysc.ROW_IDENTITY
    row_ids: bool = True
    positioned: bool = False


def normalised_select(dataset: Dataset, version: int, relation: str, present: dict[str, str], where: str,
                      location_period: Optional[str], location_index: int = 0, rows: RowRules = RowRules()) -> str:
    """A SELECT over ``relation`` (a view name) giving the dataset's declared + system columns.

    ``present`` maps the columns the location actually has to their Spark types (simple strings);
    ``where`` names the location in messages, ``location_period`` is its period (None: not
    period-specific) and ``location_index`` its place among the dataset's locations (a part of the ids
    generated); ``rows``: which rows are kept and how their ids are derived (:class:`RowRules`).
    """
    missing = [c.name for c in dataset.columns if c.name not in present]
    if missing:
        raise ResolutionError(f"dataset '{dataset.name}' version {version}: the data at {where} lacks the declared "
                              f"column(s) {', '.join(missing)} (it has: {', '.join(sorted(present)) or 'nothing'}).")
    cols = [exp.alias_(_checked_cast(c.name, c.type, present[c.name], dataset.name, where), c.name, quoted=True)
            for c in dataset.columns]
    generate_id = "_row_id" not in present and rows.row_ids
    hashed_as_text = rows.row_identity == sysc.SHA256_ROW_IDENTITY  # else the fields hashed as they are
    system = sysc.system_columns(dataset.temporal_mode)
    origin = sysc.loaded_row(dataset.id, location_period)
    for name, typ in system:
        if name in present:
            value = _checked_cast(name, typ, present[name], dataset.name, where)
            fill = sysc.null_fill(name)
            if fill is not None:
                value = exp.Coalesce(this=value, expressions=[fill])
        elif name == "_row_id" and generate_id:
            continue  # generated below, after the period filter
        elif name == "_row_id":  # read by no statement (rows.row_ids False)
            value = exp.cast(exp.null(), exp.DataType.build(typ, dialect="spark"))
        else:
            value = sysc.default_value(name, origin)
        if value is None and name == "_period":
            raise ResolutionError(f"dataset '{dataset.name}' (temporal_mode period): the data at {where} has no "
                                  "_period column and its location is not period-specific, so its rows cannot "
                                  "be assigned to a period; add a _period column or use a resolver rule with "
                                  "period tokens or a data_level.")
        if value is None:  # _period_from, _period_to
            raise ResolutionError(f"dataset '{dataset.name}' (temporal_mode bitemporal): the data at {where} has no "
                                  f"{name} column.")
        cols.append(exp.alias_(value, name, quoted=True))
    helpers: list[str] = []
    by_position = generate_id and rows.file_root is None and rows.positioned
    if generate_id and rows.file_root is not None:
        cols.append(exp.alias_(_relative_file(rows.file_root, as_bytes=not hashed_as_text), FILE_COLUMN, quoted=True))
        cols.append(exp.alias_(exp.Dot(this=exp.column(FILE_METADATA_COLUMN, quoted=True),
                                       expression=exp.to_identifier("row_index")), ROW_INDEX_COLUMN, quoted=True))
        helpers = [FILE_COLUMN, ROW_INDEX_COLUMN]
    elif by_position:
        cols.append(exp.alias_(exp.column(POSITION_COLUMN, quoted=True), ROW_INDEX_COLUMN, quoted=True))
        helpers = [ROW_INDEX_COLUMN]
    elif generate_id:
        raw = [c.name for c in dataset.columns] + [n for n, _ in system if n in present]
        content = _fn("sha2", _fn("to_json", exp.Struct(expressions=[exp.column(n, quoted=True) for n in raw])),
                      exp.Literal.number(256))
        cols.append(exp.alias_(content, CONTENT_COLUMN, quoted=True))
        helpers = [CONTENT_COLUMN]
    query: exp.Select = exp.select(*cols).from_(exp.Table(this=exp.to_identifier(relation, quoted=True)))
    condition = periods.period_filter(dataset.temporal_mode) if rows.period_rows else None
    if condition is not None:
        query = exp.select(exp.Star()).from_(query.subquery("normalised")).where(condition)
    if not generate_id:
        return query.sql("spark")
    if helpers == [CONTENT_COLUMN]:
        # Identical rows get distinct, still deterministic, _row_ids.
        content = exp.column(CONTENT_COLUMN, quoted=True)
        ordinal = exp.Window(this=exp.RowNumber(), partition_by=[content],
                             order=exp.Order(expressions=[exp.Ordered(this=content.copy(), nulls_first=True)]))
        query = exp.select(exp.Star(), exp.alias_(ordinal, ORDINAL_COLUMN, quoted=True)).from_(query.subquery("run_rows"))
        position = [CONTENT_COLUMN, ORDINAL_COLUMN]
    else:
        position = helpers
    if by_position:  # given data: the position itself, written out (no replay derives it)
        row_id = sysc.positioned_row_uuidv7(dataset.id, version, location_index,
                                            exp.column(ROW_INDEX_COLUMN, quoted=True))
    else:
        if not hashed_as_text:  # the digit table once in the text; Spark folds it into the id's lookups
            query = exp.select(exp.Star(), exp.alias_(sysc.hex_table(), sysc.HEX_TABLE_COLUMN, quoted=True)).from_(
                query.subquery("positioned"))
        row_id = sysc.input_row_uuidv7(dataset.id, version, location_index,
                                       [exp.column(n, quoted=True) for n in position], rows.row_identity)
    names = [c.name for c in dataset.columns] + [n for n, _ in system]
    out = [exp.alias_(row_id, n, quoted=True) if n == "_row_id" else exp.column(n, quoted=True) for n in names]
    return exp.select(*out).from_(query.subquery("identified")).sql("spark")


def union_all(selects: list[str]) -> str:
    """One query over every location of a dataset (the normalised SELECTs unioned)."""
    if len(selects) == 1:
        return selects[0]
    return exp.union(*(sqlglot.parse_one(s, read="spark").subquery() for s in selects), distinct=False).sql("spark")

"""The one place that knows the system and lineage columns, and how generated ones are computed."""
from __future__ import annotations

from sqlglot import exp

from .types import SqlType, from_sql

ROW_COLUMNS = (("_row_id", "string"), ("_deleted", "boolean"), ("_updated_at", "timestamp"))
TEMPORAL_COLUMNS = {
    "period": (("_period", "string"),),
    "bitemporal": (("_period_from", "date"), ("_period_to", "date")),
    "snapshot": (),
}
LINEAGE_COLUMNS = (("_labels", "string"), ("_source_dataset", "string"), ("_operation_seq", "int"))
ASSIGNABLE = frozenset({"_labels"})  # the only system column an update may set
ALL_NAMES = frozenset(n for n, _ in ROW_COLUMNS + LINEAGE_COLUMNS + sum(TEMPORAL_COLUMNS.values(), ()))


def system_columns(temporal_mode: str) -> list[tuple[str, str]]:
    """System columns (name, Spark type) of a working dataset or normalised input of ``temporal_mode``."""
    return [*ROW_COLUMNS, *TEMPORAL_COLUMNS[temporal_mode], *LINEAGE_COLUMNS]


def system_types(temporal_mode: str) -> dict[str, SqlType]:
    """Like :func:`system_columns`, as DSL types."""
    return {name: from_sql(t) for name, t in system_columns(temporal_mode)}


def is_system(name: str) -> bool:
    """Whether ``name`` is reserved for a system column."""
    return name.startswith("_")


def uuidv7(identity: list[exp.Expression]) -> exp.Expression:
    """A UUIDv7 string: 48-bit ms timestamp of ``:run_started_at``, version 7, variant 8, the rest from
    a SHA-256 of ``identity``. Deterministic for a given run start and row identity, so a replay
    writes the same ``_row_id``.
    """
    def fn(name, *args):
        return exp.Anonymous(this=name, expressions=list(args))

    num, s = exp.Literal.number, exp.Literal.string
    fields = [exp.PropertyEQ(this=exp.to_identifier(f"k{i}"), expression=e) for i, e in enumerate(identity)]
    digest = fn("sha2", fn("to_json", exp.Struct(expressions=fields)), num(256))
    ts = fn("lpad", fn("hex", fn("unix_millis", exp.Placeholder(this="run_started_at"))), num(12), s("0"))
    hex32 = fn("concat", ts, s("7"), fn("overlay", fn("substr", digest, num(1), num(18)), s("8"), num(4), num(0)))
    return exp.Lower(this=fn("regexp_replace", hex32, s("^(.{8})(.{4})(.{4})(.{4})(.{12})$"), s("$1-$2-$3-$4-$5")))


def _fn(name: str, *args: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this=name, expressions=list(args))


def input_row_uuidv7(prefix: str, parts: list[exp.Expression]) -> exp.Expression:
    """The UUIDv7 of an input row that arrives without ``_row_id`` (millions of rows per run): the
    :func:`uuidv7` layout, its random part from a SHA-256 of ``prefix`` followed by ``parts`` joined
    by ``|``, formatted with substrings. About a third of :func:`uuidv7`'s cost per row, which builds
    a JSON text per row and formats with a regular expression (issue 9's measurements).

    Unambiguous when ``prefix`` is and every part after the first is never NULL and never holds a
    ``|`` (a row index, an ordinal, a hex digest): the first part is whatever lies between.
    """
    num, s = exp.Literal.number, exp.Literal.string
    text: list[exp.Expression] = [s(prefix)]
    for i, part in enumerate(parts):
        text += [s("|")] if i else []
        text.append(exp.Cast(this=part, to=exp.DataType.build("string")))
    digest = _fn("sha2", _fn("concat", *text), num(256))
    ts = exp.Lower(this=_fn("lpad", _fn("hex", _fn("unix_millis", exp.Placeholder(this="run_started_at"))),
                            num(12), s("0")))  # constant: folded by Spark

    def sub(value: exp.Expression, start: int, length: int) -> exp.Expression:
        return _fn("substr", value.copy(), num(start), num(length))

    # the 8-4-4-4-12 groups of ts(12) + "7" + digest[0:3] + "8" + digest[3:18], as uuidv7 writes them
    return _fn("concat", sub(ts, 1, 8), s("-"), sub(ts, 9, 4), s("-7"), sub(digest, 1, 3), s("-8"),
               sub(digest, 4, 3), s("-"), sub(digest, 7, 12))

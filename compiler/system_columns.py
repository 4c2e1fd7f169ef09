"""The one place that knows the system and lineage columns, and how generated ones are computed.

A row that lacks a system column gets its value from :func:`default_value`, given the row's
:class:`RowOrigin`: a row loaded from a location that lacks the column (``loading.py``), or a row an
``aggregate`` or ``append`` creates (the binders). ``_deleted`` and ``_labels`` are never NULL
(:func:`null_fill`).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Optional

from sqlglot import exp

from .row_identities import ROW_IDENTITIES, ROW_IDENTITY, SHA256_ROW_IDENTITY, reproducible_row_identity  # noqa: F401
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


def _fn(name: str, *args: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this=name, expressions=list(args))


def _lower_hex(value: exp.Expression, digits: int) -> exp.Expression:
    """A non-negative BIGINT ``value`` below 16**``digits`` as ``digits`` lower-case hex digits.

    Lower-cased with ``translate``, not ``lower``: Spark 4's ``lower`` loads ICU's case mappings the
    first time a process evaluates it, about 2 s of a cold run (issue 9)."""
    s = exp.Literal.string
    return _fn("translate", _fn("lpad", _fn("hex", value), exp.Literal.number(digits), s("0")),
               s("ABCDEF"), s("abcdef"))


def _time_groups() -> list[exp.Expression]:
    """The first two groups of a UUIDv7 and the dash between them: the 48-bit ms timestamp of
    ``:run_started_at`` as 8 + 4 lower-case hex digits (a constant, folded by Spark)."""
    num = exp.Literal.number
    ts = _lower_hex(_fn("unix_millis", exp.Placeholder(this="run_started_at")), 12)
    return [_fn("substr", ts.copy(), num(1), num(8)), exp.Literal.string("-"), _fn("substr", ts, num(9), num(4))]


def _identity_text(dataset_id: str, version: int, location_index: int) -> str:
    """The constant part of an input row's identity as unambiguous text (the id's length first)."""
    return f"{len(dataset_id)}:{dataset_id}|{version}|{location_index}"


def _uuidv7_text(digest: exp.Expression) -> exp.Expression:
    """The UUIDv7 text of the run start and a lower-case hex ``digest`` (at least 18 digits): the 8-4-4-4-12
    groups of time(12) + "7" + digest[0:3] + "8" + digest[3:18], placed with substrings."""
    num, s = exp.Literal.number, exp.Literal.string

    def sub(value: exp.Expression, start: int, length: int) -> exp.Expression:
        return _fn("substr", value.copy(), num(start), num(length))

    return _fn("concat", *_time_groups(), s("-7"), sub(digest, 1, 3), s("-8"), sub(digest, 4, 3), s("-"),
               sub(digest, 7, 12))


def uuidv7(identity: list[exp.Expression]) -> exp.Expression:
    """A UUIDv7 string: 48-bit ms timestamp of ``:run_started_at``, version 7, variant 8, the rest from
    a SHA-256 of ``identity``. Deterministic for a given run start and row identity, so a replay
    writes the same ``_row_id``.
    """
    fields = [exp.PropertyEQ(this=exp.to_identifier(f"k{i}"), expression=e) for i, e in enumerate(identity)]
    return _uuidv7_text(_fn("sha2", _fn("to_json", exp.Struct(expressions=fields)), exp.Literal.number(256)))


@dataclass(frozen=True)
class RowOrigin:
    """What a row that lacks system columns gets them from."""

    source_dataset: str  # _source_dataset: the dataset id the row comes from
    operation_seq: int  # _operation_seq: 0 for loaded rows, the creating operation's seq otherwise
    updated_at: exp.Expression  # _updated_at
    period: Optional[exp.Expression] = None  # _period (None: the row cannot be given one)
    row_id: Optional[exp.Expression] = None  # _row_id (None: computed elsewhere)


def loaded_row(dataset_id: str, location_period: Optional[str]) -> RowOrigin:
    """A row read from a location: never updated, period of its location (when it has one)."""
    return RowOrigin(dataset_id, 0, exp.Cast(this=exp.Null(), to=exp.DataType.build("timestamp")),
                     exp.Literal.string(location_period) if location_period is not None else None)


def created_row(dataset_id: str, seq: int, identity: list[exp.Expression]) -> RowOrigin:
    """A row created by operation ``seq`` (aggregate, append) in this run: ``_row_id`` from ``identity``."""
    return RowOrigin(dataset_id, seq, exp.Placeholder(this="run_started_at"),
                     exp.Placeholder(this="period_identifier"), uuidv7(identity))


def null_fill(name: str) -> Optional[exp.Expression]:
    """The value replacing NULL in a carried system column that is never NULL (None: NULL stays)."""
    if name == "_deleted":
        return exp.false()
    if name == "_labels":
        return exp.Literal.string("")
    return None


def default_value(name: str, origin: RowOrigin) -> Optional[exp.Expression]:
    """The value of system column ``name`` on a row of ``origin`` that lacks it; None when the origin
    cannot give one (``_row_id`` computed elsewhere, ``_period`` of a location without period,
    bitemporal validity, which a location must hold) or ``name`` is not a system column."""
    fill = null_fill(name)
    if fill is not None:
        return fill
    if name == "_row_id":
        return origin.row_id
    if name == "_updated_at":
        return origin.updated_at
    if name == "_period":
        return origin.period
    if name == "_source_dataset":
        return exp.Literal.string(origin.source_dataset)
    if name == "_operation_seq":
        return exp.Literal.number(origin.operation_seq)
    return None


HEX_TABLE_COLUMN = "__lf_hex"  # hex_table(), a column of the query that computes derivation 4
_ONE_DIGIT = 257  # hex_table()'s index of '0'; the entries 1..256 are '00'..'ff'


def hex_table() -> exp.Expression:
    """``SPLIT('00,...,ff,0,...,f', ',')``: lower-case hex digits by lookup (derivation 4). Spark's
    ``hex`` writes upper case, and its ``lower`` costs ~2 s of a cold process the first time it runs
    (Spark 4 builds a title-case table over every Unicode code point when it first lower-cases).
    One literal, not an ``ARRAY`` of 272: the optimizer folds either into the same constant array, but
    every analysis of a plan reading the input walks 272 nodes (~50 ms of each scenario test)."""
    digits = [f"{i:02x}" for i in range(256)] + [f"{i:x}" for i in range(16)]
    # Anonymous: sqlglot's own Split node is written for Spark as a quoted regex (\\Q,\\E), whose
    # backslashes would mean something else under spark.sql.parser.escapedStringLiterals.
    return _fn("SPLIT", exp.Literal.string(",".join(digits)), exp.Literal.string(","))


def input_row_uuidv7(dataset_id: str, version: int, location_index: int, parts: list[exp.Expression],
                     derivation: int = ROW_IDENTITY) -> exp.Expression:
    """The UUIDv7 of an input row that arrives without ``_row_id`` (millions of rows per run), from its
    identity: the dataset id, version and location index, then ``parts`` (file and row index, or
    content hash and ordinal). ``derivation`` is one of :data:`ROW_IDENTITIES`:

    - 4: the 74 random bits of UUIDv7 from two xxhash64 of the identity (differently seeded; each
      field hashed on its own, chained, so no delimiter is needed), written with digits looked up in
      :func:`hex_table`, which must be a column named :data:`HEX_TABLE_COLUMN` of the query this
      expression is evaluated on; about half of 3's cost per row (``bench/row_id_cost.py``);
    - 3: the random bits from a SHA-256 of the identity as delimited text, placed with substrings.
    """
    if derivation == SHA256_ROW_IDENTITY:
        return _sha256_input_row_uuidv7(_identity_text(dataset_id, version, location_index) + "|", parts)
    if derivation != ROW_IDENTITY:
        raise ValueError(f"unknown row identity derivation {derivation}")
    num, s = exp.Literal.number, exp.Literal.string
    # the constant fields hashed once (Spark folds the inner hash), then each row's parts
    seeds = (_fn("xxhash64", num(n), s(dataset_id), num(version), num(location_index)) for n in (1, 2))
    first, second = (_fn("xxhash64", seed, *[p.copy() for p in parts]) for seed in seeds)

    def lookup(h: exp.Expression, shift: int, bits: int, base: int) -> exp.Expression:
        """hex_table()[base + (``bits`` bits of ``h`` from bit ``shift``)] (1-based)."""
        value = exp.BitwiseAnd(this=_fn("shiftrightunsigned", h.copy(), num(shift)), expression=num((1 << bits) - 1))
        index = exp.Add(this=exp.Cast(this=value, to=exp.DataType.build("int")), expression=num(base))
        return _fn("element_at", exp.column(HEX_TABLE_COLUMN, quoted=True), index)

    def pair(h: exp.Expression, shift: int) -> exp.Expression:
        return lookup(h, shift, 8, 1)

    def digit(h: exp.Expression, shift: int) -> exp.Expression:
        return lookup(h, shift, 4, _ONE_DIGIT)

    variant = lookup(first, 12, 2, _ONE_DIGIT + 8)  # 8, 9, a or b: the variant bits 10, then 2 random bits
    # tttttttt-tttt-7aaa-Vbbb-cccccccccccc: 12 + 2 + 12 + 48 = 74 random bits
    return _fn("concat", *_time_groups(), s("-7"), digit(first, 0), pair(first, 4), s("-"), variant,
               digit(first, 16), pair(first, 20), s("-"), *[pair(second, shift) for shift in range(0, 48, 8)])


def positioned_row_uuidv7(dataset_id: str, version: int, location_index: int,
                          position: exp.Expression) -> exp.Expression:
    """The UUIDv7 of a row given to a scenario test without ``_row_id``, from its ``position`` in the given
    data (a BIGINT, distinct per row, from 0 up: far below 2**48 for any fixture):
    ``tttttttt-tttt-7ddd-8ddd-pppppppppppp``, the run start, six hex digits of a SHA-256 of the dataset
    id, version and location index (computed here, a literal), and the position in 12 hex digits.
    Distinct for distinct positions of one location, and a given row's id ends with its position; rows
    of two datasets differ in those 24 bits of digest. A handful of nodes where
    :func:`input_row_uuidv7` has ~200: every analysis of a test's plans walks them (issue 13).
    """
    digest = hashlib.sha256(_identity_text(dataset_id, version, location_index).encode()).hexdigest()
    return _fn("concat", *_time_groups(), exp.Literal.string(f"-7{digest[:3]}-8{digest[3:6]}-"),
               _lower_hex(position, 12))


def _sha256_input_row_uuidv7(prefix: str, parts: list[exp.Expression]) -> exp.Expression:
    """Derivation 3 of :func:`input_row_uuidv7`: the :func:`uuidv7` layout, its random part from a
    SHA-256 of ``prefix`` followed by ``parts`` joined by ``|``.

    Unambiguous when ``prefix`` is and every part after the first is never NULL and never holds a
    ``|`` (a row index, an ordinal, a hex digest): the first part is whatever lies between.
    """
    s = exp.Literal.string
    text: list[exp.Expression] = [s(prefix)]
    for i, part in enumerate(parts):
        text += [s("|")] if i else []
        text.append(exp.Cast(this=part, to=exp.DataType.build("string")))
    return _uuidv7_text(_fn("sha2", _fn("concat", *text), exp.Literal.number(256)))

"""The given data of a test as in-memory DataFrames, registered for the normal loaders.

Inline rows become a DataFrame with the declared types, made by Spark from one JSON parameter (the
values were converted exactly by :mod:`.prepare`, so the loader's checked casts have nothing to
do); a CSV or Parquet fixture is read as a resolved location of that format is read (CSV columns as
text from the header line, then the loader's checked casts: a value that does not fit stops the
test, naming the file). Either way the loader then adds the system columns, the period filter and
the row ids as in a run, with one difference: every row carries its position in the given data
(``loading.POSITION_COLUMN``: its index under ``rows:``, its record's place in a CSV fixture, its
row index in a Parquet fixture), which the loader writes into the ids of rows given without
``_row_id`` (``system_columns.positioned_row_uuidv7``): deterministic, distinct for identical rows,
and without the window over a content hash that other in-memory data needs (a fifth of the sample
suite's time, bench/results/history.md 0c) or a hash of the position. Nothing is written.
"""
from __future__ import annotations

import datetime
import decimal
import json
from typing import Any, Optional

from sqlglot import exp

from ...compiler.loading import METADATA_COLUMN, POSITION_COLUMN
from ...compiler.resolver import ResolvedLocation
from ..inputs import loaders
from .prepare import GivenData, GivenTable


# The rows travel as one JSON parameter (text values, JSON nulls) and Spark casts each column to its
# declared type: no SQL text is made from a value, and no Python worker process is started. A
# DataFrame made by ``spark.createDataFrame`` from Python rows is computed by Python workers, whose
# first start in a process takes ~1.5 s (and a VALUES clause of literals costs 5 s to analyse at
# 1,000 rows).
_ROWS_PARAMETER = "given_rows"
_ROW = "__lf_row"


def inline_rows_sql(columns: list[tuple[str, str]]) -> str:
    """The SELECT that makes the typed rows of ``columns`` ([(name, spark type)]) from the JSON text bound
    as ``:given_rows`` (see :func:`rows_json`): every value a string or null, cast to its column's type,
    and each row's index in the list as its :data:`POSITION_COLUMN`."""
    row = exp.column(_ROW, quoted=True)
    selected = []
    for i, (name, typ) in enumerate(columns):
        value = exp.Bracket(this=row.copy(), expressions=[exp.Literal.number(i)], offset=0)
        if typ.lower() == "float":  # as a Python float becomes a FLOAT: the double first, then rounded
            value = exp.cast(value, exp.DataType.build("double"))
        target = "string" if typ.lower().startswith(("varchar", "char")) else typ
        selected.append(exp.alias_(exp.cast(value, exp.DataType.build(target, dialect="spark")), name, quoted=True))
    position = exp.to_identifier(POSITION_COLUMN, quoted=True)
    selected.append(exp.alias_(exp.cast(exp.column(position), exp.DataType.build("bigint")), POSITION_COLUMN,
                               quoted=True))
    rows = exp.Posexplode(this=exp.func("from_json", exp.Placeholder(this=_ROWS_PARAMETER),
                                        exp.Literal.string("ARRAY<ARRAY<STRING>>")))
    numbered = exp.Aliases(this=rows, expressions=[position.copy(), exp.to_identifier(_ROW, quoted=True)])
    source = exp.select(numbered).subquery("given_rows")
    return exp.select(*selected).from_(source).sql(dialect="spark")


def rows_json(columns: list[tuple[str, str]], rows: list[tuple]) -> str:
    """The rows as a JSON array of arrays of text, each value written as Spark's CAST from a string reads
    it back exactly: decimals in plain notation, doubles by ``repr`` (shortest round trip), TIMESTAMP
    values as the UTC instant (``Z``: whatever the session's time zone), TIMESTAMP_NTZ as written."""
    return json.dumps([[_text(value, typ.lower()) for value, (_, typ) in zip(row, columns)] for row in rows])


def _text(value: Any, typ: str) -> Optional[str]:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, datetime.datetime):
        return value.isoformat(sep=" ") + ("Z" if typ == "timestamp" else "")
    if isinstance(value, datetime.date):
        return value.isoformat()
    return str(value)


def frame(spark, data: GivenData, period):
    """The DataFrame of one given dataset (no Spark job runs for it)."""
    if isinstance(data, GivenTable):
        return spark.sql(inline_rows_sql(data.columns), args={_ROWS_PARAMETER: rows_json(data.columns, data.rows)})
    from pyspark.sql import functions as F
    # A CSV fixture is read without its dataset, whose declared columns a data file must all have: a
    # declared column the fixture lacks is NULL, as in an inline row (prepare refused unknown columns).
    raw = loaders.read_raw(spark, ResolvedLocation("path", data.path, data.file_format, period.identifier),
                           None if data.file_format == "csv" else data.dataset)
    position = _file_position(raw, data.file_format)
    for column in data.dataset.columns:  # as for inline rows: a column the file does not have is NULL
        if column.name not in raw.columns:
            raw = raw.withColumn(column.name, F.lit(None).cast(column.type))
    if data.dataset.temporal_mode == "bitemporal":  # as for inline rows: valid from the period's start
        if "_period_from" not in raw.columns:
            raw = raw.withColumn("_period_from", F.lit(period.start))
        if "_period_to" not in raw.columns:
            raw = raw.withColumn("_period_to", F.lit(None).cast("date"))
    return raw.withColumn(POSITION_COLUMN, position)


def _file_position(raw, file_format: str):
    """Each row's position in its fixture file, read as ``raw``: Parquet's row index (from the ``_metadata``
    struct Spark offers even when a data column takes its name); for CSV (Spark gives no row index) the
    row's number in the file's one read partition, the order of its records: the test session never
    splits a file (``suite.WHOLE_FILES_CONF``)."""
    from pyspark.sql import functions as F
    if file_format == "parquet":
        return raw.metadataColumn(METADATA_COLUMN)["row_index"]
    return F.monotonically_increasing_id()


def register(spark, prepared, key_prefix: str) -> tuple[list, list[str]]:
    """Register every given dataset of ``prepared`` in memory; returns (the loader's inputs as
    ``(view, dataset, version, [location])``, the memory keys to release after the test)."""
    inputs, keys, frames = [], [], {}
    period = prepared.period
    for view, data in prepared.inputs:
        ds = view.dataset
        if ds.name not in frames:
            name = f"{key_prefix}{data.source}"  # named in load errors: the file, or the test and dataset
            frames[ds.name] = loaders.register_memory(name, frame(spark, data, period), period.identifier)
            keys.append(name)
        version = view.pinned_version or ds.latest_active_version() or 1
        inputs.append(loaders.InputLoad(view.view, ds, version, [frames[ds.name]], view.row_ids, positioned=True))
    return inputs, keys


def release(keys: list[str]) -> None:
    """Forget the in-memory data of a finished test."""
    for key in keys:
        loaders.MEMORY.pop(key, None)

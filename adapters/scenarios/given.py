"""The given data of a test as in-memory DataFrames, registered for the normal loaders.

Inline rows become a DataFrame with the declared types (the values were converted exactly by
:mod:`.prepare`, so the loader's checked casts have nothing to do); a CSV or Parquet fixture is read
as a resolved location of that format is read (CSV columns as text from the header line, then the
loader's checked casts: a value that does not fit stops the test, naming the file). Either way the
loader then adds the system columns, the period filter and the row ids exactly as in a run.
Nothing is written.
"""
from __future__ import annotations

from ...compiler.parameters import utc_aware
from ...compiler.resolver import ResolvedLocation
from .. import loaders
from .prepare import GivenData, GivenTable


def _ddl(columns: list[tuple[str, str]]) -> str:
    return ", ".join(f"`{name.replace('`', '``')}` {typ}" for name, typ in columns)


def _utc_rows(data: GivenTable) -> list[tuple]:
    """The rows with TIMESTAMP values as UTC instants (a test writes the UTC wall clock; PySpark would
    read a naive value in the local time zone). TIMESTAMP_NTZ values have no zone and stay as written."""
    zoned = [i for i, (_, typ) in enumerate(data.columns) if typ.lower() == "timestamp"]
    if not zoned:
        return data.rows
    return [tuple(utc_aware(v) if i in zoned and v is not None else v for i, v in enumerate(row))
            for row in data.rows]


def frame(spark, data: GivenData, period):
    """The DataFrame of one given dataset (no Spark job runs for it)."""
    if isinstance(data, GivenTable):
        return spark.createDataFrame(_utc_rows(data), schema=_ddl(data.columns), verifySchema=False)
    from pyspark.sql import functions as F
    raw = loaders.read_raw(spark, ResolvedLocation("path", data.path, data.file_format, period.identifier),
                           data.dataset)
    for column in data.dataset.columns:  # as for inline rows: a column the file does not have is NULL
        if column.name not in raw.columns:
            raw = raw.withColumn(column.name, F.lit(None).cast(column.type))
    if data.dataset.temporal_mode == "bitemporal":  # as for inline rows: valid from the period's start
        if "_period_from" not in raw.columns:
            raw = raw.withColumn("_period_from", F.lit(period.start))
        if "_period_to" not in raw.columns:
            raw = raw.withColumn("_period_to", F.lit(None).cast("date"))
    return raw


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
        inputs.append(loaders.InputLoad(view.view, ds, version, [frames[ds.name]]))
    return inputs, keys


def release(keys: list[str]) -> None:
    """Forget the in-memory data of a finished test."""
    for key in keys:
        loaders.MEMORY.pop(key, None)

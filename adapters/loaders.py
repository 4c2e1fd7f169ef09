"""Load resolved locations into Spark as the normalised input views the compiled SQL reads.

Each location is read raw (parquet, csv with header, json, orc, a catalog table, or an in-memory
DataFrame registered by tests and the Python API), then :func:`normalised_select` casts it to the
declared schema and fills system columns; several locations are unioned.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Optional

from ..compiler.errors import ResolutionError
from ..compiler.loading import (FILE_METADATA_COLUMN, JSON_TEXT, METADATA_COLUMN, POSITION_COLUMN,
                                normalised_select, union_all)
from ..compiler import parameters, system_columns as sysc
from ..compiler.model import Dataset
from ..compiler.resolver import ResolvedLocation

# In-memory data for the "memory" location kind: name -> pyspark DataFrame (tests, Python API).
MEMORY: dict[str, Any] = {}


def register_memory(name: str, frame: Any, period: Optional[str] = None) -> ResolvedLocation:
    """Make a DataFrame loadable as ``memory:<name>`` and return its location (of ``period`` if given)."""
    MEMORY[name] = frame
    return ResolvedLocation("memory", name, "memory", period)


def check_exists(location: ResolvedLocation, dataset: Dataset) -> None:
    """Fail before Spark starts when a local path location does not exist."""
    if location.kind != "path" or ":" in location.target.split("/")[0]:
        return
    if not os.path.exists(location.target):
        raise ResolutionError(f"dataset '{dataset.name}': no data at {location.target} (period "
                              f"{location.period or 'any'}); check the resolver rule or the data folder.")
    if os.path.isdir(location.target) and not has_data_files(location.target):
        raise ResolutionError(f"dataset '{dataset.name}': no data files at {location.target} (period "
                              f"{location.period or 'any'}): the folder is empty or holds only hidden files "
                              "(names starting with '.' or '_'); check the resolver rule or the data folder.")


def _hidden(name: str) -> bool:
    """Spark's rule for names a file source skips (``_SUCCESS``, ``.crc``, ...; ``_period=x`` is a partition)."""
    return (name.startswith("_") and "=" not in name) or name.startswith(".") or name.endswith("._COPYING_")


def has_data_files(folder: str) -> bool:
    """Whether ``folder`` (or a visible subfolder) holds a file Spark would read; stops at the first.
    Symbolic links are followed, as Spark does (a written ``_period=P`` partition is one)."""
    for parent, dirs, files in os.walk(folder, followlinks=True):
        dirs[:] = [d for d in dirs if not _hidden(d)]
        if any(not _hidden(f) for f in files):
            return True
    return False


# ------------------------------------------------------------------ schemas without an inference pass
# Without a schema Spark runs a job before the pipeline's own: CSV reads the header line of a file,
# JSON reads every line to infer types. For local files ledgerflow reads what it needs itself: the
# header line of every CSV file (the schema is its columns, all strings, as Spark would read them
# without inferSchema), the keys of the first JSON lines (the declared columns and the system
# columns found, as strings: a JSON number keeps the digits it was written with, and the checked
# cast of loading.py then reads it exactly or fails, located). Anything unusual (other reader
# options, compressed or non-UTF-8 files, headers that differ between files, a declared JSON column
# not seen in the sample) leaves the schema to Spark, as before, so its errors stay the same.
_PEEK_BYTES = 1 << 20
_PEEK_FILES = 1000
_COMPRESSED = (".gz", ".bz2", ".deflate", ".lz4", ".snappy", ".zst", ".zstd", ".xz", ".br")


def _local_files(target: str) -> Optional[tuple[list[str], list[str]]]:
    """(data files Spark reads, partition column names) of a local location; None if not local."""
    if ":" in target.split("/")[0] or not os.path.exists(target):
        return None
    if os.path.isfile(target):
        return [target], []
    files, partitions = [], []
    for parent, dirs, names in os.walk(target, followlinks=True):
        dirs[:] = sorted(d for d in dirs if not _hidden(d))
        for d in dirs:
            if "=" in d and d.split("=", 1)[0] not in partitions:
                partitions.append(d.split("=", 1)[0])
        files += [os.path.join(parent, n) for n in sorted(names) if not _hidden(n)]
    return files, partitions


def _first_bytes(path: str, size: int) -> Optional[str]:
    if path.endswith(_COMPRESSED):
        return None
    with open(path, "rb") as fh:
        data = fh.read(size)
    if data.startswith(b"\xef\xbb\xbf"):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:  # perhaps a multi-byte character cut at the end: keep whole lines only
        cut = data[:data.rfind(b"\n") + 1]
        try:
            return cut.decode("utf-8")
        except UnicodeDecodeError:
            return None


def _ddl(names: list[str]) -> str:
    return ", ".join(f"`{n.replace('`', '``')}` STRING" for n in names)


def _csv_schema(files: list[str], partitions: list[str]) -> Optional[str]:
    import csv
    header = None
    for path in files[:_PEEK_FILES]:
        text = _first_bytes(path, 64 * 1024)
        if text is None or "\n" not in text and len(text) == 64 * 1024:
            return None
        line = text.splitlines()[0] if text else ""
        if header is not None and line != header:
            return None  # files with different headers: Spark's rules, as before
        header = line
    names = next(csv.reader([header]), []) if header else []
    lowered = [n.lower() for n in names + partitions]
    if not names or any(not n for n in names) or len(set(lowered)) != len(lowered):
        return None
    return _ddl(names + partitions)


def _json_schema(files: list[str], partitions: list[str], dataset: Dataset) -> Optional[str]:
    import json
    keys: set[str] = set()
    budget = _PEEK_BYTES
    for path in files[:_PEEK_FILES]:
        if budget <= 0:
            break
        text = _first_bytes(path, budget)
        if text is None:
            return None
        budget -= len(text)
        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError:
                continue  # a line cut by the byte budget, or a malformed one (Spark's PERMISSIVE rules)
            if not isinstance(row, dict):
                return None
            keys.update(row)
    declared = [c.name for c in dataset.columns]
    if any(c not in keys for c in declared):
        return None  # Spark infers, and a missing column is the located error of loading.py
    system = [n for n, _ in sysc.system_columns(dataset.temporal_mode) if n in keys and n not in declared]
    names = [n for n in declared + system if n not in partitions]
    return _ddl(names + partitions)


def _parquet_type(t) -> Optional[str]:
    """The Spark type Spark itself gives a Parquet column of Arrow type ``t``; None when unsure
    (timestamps without a zone may be INT96 or NTZ, nested and unsigned types: Spark decides)."""
    import pyarrow as pa
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_timestamp(t):
        return "timestamp" if t.tz is not None else None
    simple = {pa.string(): "string", pa.large_string(): "string", pa.int8(): "tinyint", pa.int16(): "smallint",
              pa.int32(): "int", pa.int64(): "bigint", pa.float32(): "float", pa.float64(): "double",
              pa.bool_(): "boolean", pa.date32(): "date", pa.binary(): "binary"}
    return simple.get(t)


def _parquet_schema(files: list[str], partitions: list[str]) -> Optional[str]:
    """The schema of the first Parquet file's footer (Spark reads one footer too, in a Spark job)."""
    try:
        import pyarrow.parquet as pq
        schema = pq.read_schema(files[0])
    except Exception:  # no pyarrow, or a file it cannot read: Spark decides, and reports
        return None
    cols = []
    for field in schema:
        t = _parquet_type(field.type)
        if t is None or field.name in partitions:
            return None
        cols.append(f"`{field.name.replace('`', '``')}` {t.upper()}")
    return ", ".join(cols + [_ddl([p]) for p in partitions]) if cols else None


def declared_schema(location: ResolvedLocation, dataset: Optional[Dataset]) -> Optional[str]:
    """The schema (DDL) a CSV, JSON or Parquet location is read with, or None to let Spark infer it."""
    if location.kind != "path" or location.format not in ("csv", "json", "parquet") or dataset is None:
        return None
    if location.format == "parquet":
        found = _local_files(location.target)
        if location.options or not found or not found[0]:
            return None
        return _parquet_schema(*found)
    options = {k: str(v).lower() for k, v in location.options}
    if location.format == "csv" and set(options) - {"header"} or options.get("header", "true") != "true":
        return None
    if location.format == "json" and options:
        return None
    found = _local_files(location.target)
    if not found or not found[0]:
        return None
    files, partitions = found
    return _csv_schema(files, partitions) if location.format == "csv" else _json_schema(files, partitions, dataset)


def read_raw(spark, location: ResolvedLocation, dataset: Optional[Dataset] = None, schema: Optional[str] = None):
    """The raw DataFrame of one location, read with ``schema`` (default: :func:`declared_schema`)."""
    if location.kind == "memory":
        if location.target not in MEMORY:
            raise ResolutionError(f"no in-memory data registered as '{location.target}'.")
        return MEMORY[location.target]
    if location.kind == "table":
        return spark.table(location.target)
    reader = spark.read.format(location.format)
    options = dict(location.options)
    if location.format == "csv":
        options.setdefault("header", "true")
    for k, v in options.items():
        reader = reader.option(k, v)
    schema = schema if schema is not None else declared_schema(location, dataset)
    if schema is not None:
        reader = reader.schema(schema)
    return reader.load(location.target)


# Characters java.net.URI leaves as they are in a path (Hadoop's Path.toUri, which Spark's
# `_metadata.file_path` is); any other ASCII character is percent-encoded, non-ASCII letters are not.
_URI_PATH_SAFE = frozenset("-_.!~*'(),;:$&+=/@")


def spark_file_uri(target: str) -> str:
    """The prefix ``_metadata.file_path`` gives the files of a location (``file:/abs/path``; a URI as written)."""
    if ":" in target.split("/")[0]:
        return target.rstrip("/")
    path = os.path.normpath(os.path.abspath(target))

    def keep(c: str) -> bool:
        return (c.isascii() and c.isalnum()) or c in _URI_PATH_SAFE or (not c.isascii() and c.isprintable()
                                                                          and not c.isspace())
    return "file:" + "".join(c if keep(c) else "".join(f"%{b:02X}" for b in c.encode("utf-8")) for c in path)


def file_root(location: ResolvedLocation) -> str:
    """What to strip from ``_metadata.file_path`` to get a file's path relative to the location."""
    uri = spark_file_uri(location.target)
    local = ":" not in location.target.split("/")[0]
    return uri if local and os.path.isfile(location.target) else uri + "/"


def with_file_metadata(raw):
    """``raw`` (a Parquet read) with Spark's hidden file-metadata struct as :data:`FILE_METADATA_COLUMN`:
    the struct Spark offers even when a data column takes the name ``_metadata``."""
    return raw.select("*", raw.metadataColumn(METADATA_COLUMN).alias(FILE_METADATA_COLUMN))


def load_input(spark, view: str, dataset: Dataset, version: int, locations: list[ResolvedLocation],
               args: dict, row_ids: bool = True, row_identity: int = sysc.ROW_IDENTITY,
               positioned: bool = False) -> int:
    """Create the temp view ``view`` from all ``locations``; returns how many locations were read.

    The view holds only the run's rows (the period filter is applied below the row identity).
    ``row_ids`` False (a view the SQL only joins or aggregates, never reading ``_row_id``): rows
    without ``_row_id`` get NULL, not a derived id; in particular Parquet rows are not given Spark's
    ``_metadata`` column, which Spark materialises for every row of every scan of a relation that has
    it, used or not. ``row_identity``: how ids are derived (a replay passes its run's).
    ``positioned``: the in-memory frames carry each row's position (a scenario test's given data, see
    :mod:`.scenarios.given`); ids derive from it, and the view keeps every period's rows, which the
    compiled SQL filters on every read of the view as the view would have."""
    selects = []
    for i, loc in enumerate(locations):
        if loc.kind == "table" and not spark.catalog.tableExists(loc.target):  # a data reference: exit 1, not 3
            raise ResolutionError(f"dataset '{dataset.name}': no catalog table {loc.target} (period "
                                  f"{loc.period or 'any'}); check the resolver rule or create the table.")
        schema = declared_schema(loc, dataset)
        raw = read_raw(spark, loc, schema=schema)
        raw_name = f"raw_{view}_{i}"
        present = {f.name: f.dataType.simpleString() for f in raw.schema.fields}
        if loc.format == "json" and schema is not None:  # JSON values as written: see loading.JSON_TEXT
            present = {k: JSON_TEXT if v == "string" else v for k, v in present.items()}
        root = None
        numbered = positioned and loc.kind == "memory" and present.pop(POSITION_COLUMN, None) is not None
        if row_ids and "_row_id" not in present and loc.kind == "path" and loc.format == "parquet":
            raw = with_file_metadata(raw)  # file path + row index: an id without a shuffle
            root = file_root(loc)
        raw.createOrReplaceTempView(raw_name)
        selects.append(normalised_select(dataset, version, raw_name, present, loc.target, loc.period, i,
                                         file_root=root, period_rows=not numbered, row_identity=row_identity,
                                         row_ids=row_ids, positioned=numbered))
    if not selects:
        raise ResolutionError(f"dataset '{dataset.name}' resolved to no locations.")
    query = union_all(selects)
    spark.sql(query, args=parameters.arguments(query, args)).createOrReplaceTempView(view)
    return len(selects)


def warmup_query(dataset: Dataset, row_ids: bool) -> str:
    """A normalised SELECT shaped like the one :func:`load_input` builds for ``dataset`` (its declared
    columns as they are, ids from Parquet row positions when ``row_ids``): text for :mod:`.parser_warmup`."""
    present = {c.name: c.type for c in dataset.columns}
    present.update(dict(sysc.TEMPORAL_COLUMNS[dataset.temporal_mode]))
    return normalised_select(dataset, 1, "lf_warmup", present, "the parser warm-up", None,
                             file_root="file:/lf-warmup/" if row_ids else None, period_rows=True, row_ids=row_ids)


@dataclass(frozen=True)
class InputLoad:
    """One input view to create: ``dataset`` at ``version``, read from its resolved ``locations``."""

    view: str
    dataset: Dataset
    version: int
    locations: list[ResolvedLocation]
    row_ids: bool = True  # whether the SQL reads the view's _row_id (InputView.row_ids)
    row_identity: int = sysc.ROW_IDENTITY  # how generated _row_ids are derived (system_columns.ROW_IDENTITIES)
    positioned: bool = False  # the frames carry their rows' positions (load_input)


def load_inputs(spark, inputs: list[InputLoad], args: dict) -> list[int]:
    """:func:`load_input` for every input; returns the location counts.

    The views are created concurrently: each one mostly waits on Spark (listing files, a small job
    reading a Parquet footer for the schema, analysing the normalised SELECT), so a pipeline with
    several inputs starts sooner. Every load finishes before the first error, in input order, is raised.
    """
    def load(i: InputLoad) -> int:
        return load_input(spark, i.view, i.dataset, i.version, i.locations, args, i.row_ids, i.row_identity,
                          i.positioned)

    if len(inputs) <= 1:
        return [load(i) for i in inputs]
    with ThreadPoolExecutor(max_workers=min(4, len(inputs)), thread_name_prefix="ledgerflow-load") as pool:
        futures = [pool.submit(load, i) for i in inputs]
    return [f.result() for f in futures]

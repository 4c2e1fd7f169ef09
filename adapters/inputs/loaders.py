"""Load resolved locations into Spark as the normalised input views the compiled SQL reads.

Each location is read raw (parquet, csv with header, json, orc, a catalog table, or an in-memory
DataFrame registered by tests and the Python API), then :func:`normalised_select` casts it to the
declared schema and fills system columns; several locations are unioned. How a local location's files
are read exactly: :mod:`.csv_reads` (CSV, one read per header), :mod:`.schemas` (JSON and Parquet
schemas without an inference pass), :mod:`.files` (what the files hold, checked first).
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Optional

from ...compiler.errors import ResolutionError
from ...compiler.loading import (FILE_METADATA_COLUMN, JSON_TEXT, METADATA_COLUMN, POSITION_COLUMN,
                                RowRules, normalised_select, union_all)
from ...compiler import parameters, system_columns as sysc
from ...compiler.model import Dataset
from ...compiler.resolver import ResolvedLocation
from . import files as input_files
from .csv_reads import common_columns, csv_reads
from .schemas import declared_schema

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


def has_data_files(folder: str) -> bool:
    """Whether ``folder`` (or a visible subfolder) holds a file Spark would read; stops at the first.
    Symbolic links are followed, as Spark does (a written ``_period=P`` partition is one)."""
    for parent, dirs, files in os.walk(folder, followlinks=True):
        dirs[:] = [d for d in dirs if not input_files.spark_skips(d, folder=True)]
        if any(not input_files.spark_skips(f) for f in files):
            return True
    return False


def _reader(spark, fmt: str, options: dict, schema: Optional[str]):
    reader = spark.read.format(fmt)
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.schema(schema) if schema is not None else reader


def read_options(location: ResolvedLocation) -> dict:
    """The reader options of a file location: its own, and by default a header line for CSV, records
    read as RFC 4180 (a quote in a quoted field doubled) and any malformed CSV or JSON record failing
    the read (Spark's default mode drops or pads it silently). CSV records are parsed whole
    (``columnPruning`` off): a pruned read checks only the fields the query uses, so a record cut
    short after them, or with a field too many, passed."""
    options = dict(location.options)
    lowered = {k.lower() for k in options}
    defaults = {"csv": {"header": "true", "escape": '"', "mode": "FAILFAST", "columnPruning": "false",
                        "enforceSchema": "false"},
                "json": {"mode": "FAILFAST"}}
    for k, v in defaults.get(location.format, {}).items():
        if k.lower() not in lowered:
            options[k] = v
    return options


# Spark's CSV parser checks a pushed-down filter field by field and drops a record the filter rejects
# before it would see that the record is malformed, even in FAILFAST: a row with one unquoted comma too
# many read `_period = 'ERP'` and vanished from the period's run. Off, every record is parsed whole.
CSV_FILTER_PUSHDOWN = "spark.sql.csv.filterPushdown.enabled"


def no_csv_filter_pushdown(spark) -> None:
    """Make sure ``spark`` parses every CSV record whole before filtering (see :data:`CSV_FILTER_PUSHDOWN`;
    ledgerflow's sessions start so, a session given by the caller is set here)."""
    if str(spark.conf.get(CSV_FILTER_PUSHDOWN, "true")).lower() != "false":
        spark.conf.set(CSV_FILTER_PUSHDOWN, "false")


def read_raw(spark, location: ResolvedLocation, dataset: Optional[Dataset] = None, schema: Optional[str] = None,
             strict: bool = False):
    """The raw DataFrame of one location, read with ``schema`` (default: :func:`declared_schema`; CSV:
    :func:`csv_reads`, whose column checks apply when ``strict``: a scenario test's given file may
    leave columns out). A path is given to Spark literally (no glob expansion)."""
    if location.kind == "memory":
        if location.target not in MEMORY:
            raise ResolutionError(f"no in-memory data registered as '{location.target}'.")
        return MEMORY[location.target]
    if location.kind == "table":
        return spark.table(location.target)
    options = read_options(location)
    if location.format == "csv":
        no_csv_filter_pushdown(spark)
    reads = csv_reads(location, dataset, strict) if location.format == "csv" and schema is None else None
    if reads:
        frames = [_reader(spark, "csv", {**options, **dict(r.options)}, r.schema).load(list(r.paths))
                  for r in reads]
        if len(frames) == 1:
            return frames[0]
        common = common_columns(frames)
        out = frames[0].select(*[f"`{c.replace('`', '``')}`" for c in common])
        for f in frames[1:]:
            out = out.unionByName(f.select(*[f"`{c.replace('`', '``')}`" for c in common]))
        return out
    schema = schema if schema is not None else declared_schema(location, dataset)
    return _reader(spark, location.format, options, schema).load(input_files.spark_path(location.target))


def check_file_columns(location: ResolvedLocation, dataset: Dataset) -> Optional[set]:
    """Refuse a Parquet or ORC location one of whose files lacks a declared column, whichever file
    Spark would take the schema from (it gives the others' rows NULL): each file's footer is read.
    JSON: :func:`.input_files.check_json_columns`, whose system columns are returned."""
    if location.kind != "path" or location.format not in ("parquet", "orc", "json"):
        return None
    found = input_files.local_files(location.target)
    if not found:
        return None
    files, partitions = found
    if location.format == "json":
        if any(f.endswith(input_files.COMPRESSED) and not f.endswith(input_files.SCANNED_COMPRESSED) for f in files):
            return None
        return input_files.check_json_columns(dataset, files, partitions)
    columns = ((f, cols) for f in files for cols in [input_files.footer_columns(f, location.format)] if cols is not None)
    input_files.check_columns(dataset, columns, partitions)
    return None


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


def _raw_view(view: str, index: int) -> str:
    """The temporary view of location ``index`` of input ``view`` as read, before it is normalised."""
    return f"raw_{view}_{index}"


def load_input(spark, load: InputLoad, args: dict, rewrite: Optional[Callable[[str], str]] = None) -> int:
    """Create the temp view ``load.view`` from all ``load.locations``; returns how many locations were read.

    The view holds only the run's rows (the period filter is applied below the row identity).
    ``load.row_ids`` False (a view the SQL only joins or aggregates, never reading ``_row_id``): rows
    without ``_row_id`` get NULL, not a derived id; in particular Parquet rows are not given Spark's
    ``_metadata`` column, which Spark materialises for every row of every scan of a relation that has
    it, used or not. ``load.row_identity``: how ids are derived (a replay passes its run's).
    ``load.positioned``: the in-memory frames carry each row's position (a scenario test's given data, see
    :mod:`.scenarios.given`); ids derive from it, and the view keeps every period's rows, which the
    compiled SQL filters on every read of the view as the view would have.
    ``rewrite``: applied to each location's normalised SELECT (fused execution reads a location for a whole
    range of periods: ``compiler.fused_inputs.location_query``)."""
    view, dataset, version, row_ids = load.view, load.dataset, load.version, load.row_ids
    selects = []
    for i, loc in enumerate(load.locations):
        if loc.kind == "table" and not spark.catalog.tableExists(loc.target):  # a data reference: exit 1, not 3
            raise ResolutionError(f"dataset '{dataset.name}': no catalog table {loc.target} (period "
                                  f"{loc.period or 'any'}); check the resolver rule or create the table.")
        carried = check_file_columns(loc, dataset)
        schema = declared_schema(loc, dataset, carried)
        raw = read_raw(spark, loc, dataset, schema=schema, strict=True)
        raw_name = _raw_view(view, i)
        present = {f.name: f.dataType.simpleString() for f in raw.schema.fields}
        if loc.format == "json" and schema is not None:  # JSON values as written: see loading.JSON_TEXT
            present = {k: JSON_TEXT if v == "string" else v for k, v in present.items()}
        root = None
        numbered = load.positioned and loc.kind == "memory" and present.pop(POSITION_COLUMN, None) is not None
        if row_ids and "_row_id" not in present and loc.kind == "path" and loc.format == "parquet":
            raw = with_file_metadata(raw)  # file path + row index: an id without a shuffle
            root = file_root(loc)
        raw.createOrReplaceTempView(raw_name)
        rows = RowRules(period_rows=not numbered, file_root=root, row_identity=load.row_identity, row_ids=row_ids,
                        positioned=numbered)
        selects.append(normalised_select(dataset, version, raw_name, present, loc.target, loc.period, i, rows))
        if rewrite is not None:
            selects[-1] = rewrite(selects[-1])
    if not selects:
        raise ResolutionError(f"dataset '{dataset.name}' resolved to no locations.")
    query = union_all(selects)
    spark.sql(query, args=parameters.arguments(query, args)).createOrReplaceTempView(view)
    return len(selects)


def raw_columns(spark, view: str, locations: int) -> Optional[set[str]]:
    """The columns input ``view``'s ``locations`` locations hold as :func:`load_input` read them (the names of its
    raw views), or None when they cannot be told (the view was not loaded by :func:`load_input`)."""
    try:
        return {c for i in range(locations) for c in spark.table(_raw_view(view, i)).columns}
    except Exception:  # noqa: BLE001 - no such raw view: unknown
        return None


def warmup_query(dataset: Dataset, row_ids: bool) -> str:
    """A normalised SELECT shaped like the one :func:`load_input` builds for ``dataset`` (its declared
    columns as they are, ids from Parquet row positions when ``row_ids``): text for :mod:`.parser_warmup`."""
    present = {c.name: c.type for c in dataset.columns}
    present.update(dict(sysc.TEMPORAL_COLUMNS[dataset.temporal_mode]))
    rows = RowRules(period_rows=True, file_root="file:/lf-warmup/" if row_ids else None, row_ids=row_ids)
    return normalised_select(dataset, 1, "lf_warmup", present, "the parser warm-up", None, rows=rows)


def load_inputs(spark, inputs: list[InputLoad], args: dict) -> list[int]:
    """:func:`load_input` for every input; returns the location counts.

    The views are created concurrently: each one mostly waits on Spark (listing files, a small job
    reading a Parquet footer for the schema, analysing the normalised SELECT), so a pipeline with
    several inputs starts sooner. Every load finishes before the first error, in input order, is raised.
    """
    def load(i: InputLoad) -> int:
        return load_input(spark, i, args)

    if len(inputs) <= 1:
        return [load(i) for i in inputs]
    with ThreadPoolExecutor(max_workers=min(4, len(inputs)), thread_name_prefix="ledgerflow-load") as pool:
        futures = [pool.submit(load, i) for i in inputs]
    return [f.result() for f in futures]

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

from ...compiler.errors import ResolutionError
from ...compiler.loading import (FILE_METADATA_COLUMN, JSON_TEXT, METADATA_COLUMN, POSITION_COLUMN,
                                normalised_select, union_all)
from ...compiler import parameters, system_columns as sysc
from ...compiler.model import Dataset
from ...compiler.resolver import ResolvedLocation
from . import files as input_files

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


# ------------------------------------------------------------------ schemas without an inference pass
# Without a schema Spark runs a job before the pipeline's own: CSV reads the header line of a file,
# JSON reads every line to infer types. For local files ledgerflow reads what it needs itself: every
# CSV file (its header, see input_files.scan_csv; the schema is its columns, all strings, as Spark
# would read them without inferSchema), the keys of the first JSON lines (the declared columns and the
# system columns found, as strings: a JSON number keeps the digits it was written with, and the
# checked cast of loading.py then reads it exactly or fails, located). Anything unusual (other reader
# options, compressed or non-UTF-8 files, a declared JSON column not seen in the sample) leaves the
# schema to Spark, as before, so its errors stay the same.
_PEEK_BYTES = 1 << 20
_PEEK_FILES = 1000
_COMPRESSED = (".gz", ".bz2", ".deflate", ".lz4", ".snappy", ".zst", ".zstd", ".xz", ".br")
# CSV reader options ledgerflow's own CSV reading understands: the structure options it scans with,
# and options that change how a value is read but never where a record or a field ends. Any other
# (quote, escape, comment, lineSep, multiLine, mode, ...) leaves the read to Spark's rules.
_CSV_OWN_OPTIONS = {"header", "sep", "delimiter"}
_CSV_VALUE_OPTIONS = {"nullvalue", "emptyvalue", "nanvalue", "positiveinf", "negativeinf", "dateformat",
                      "timestampformat", "timestampntzformat", "locale", "encoding", "charset",
                      "ignoreleadingwhitespace", "ignoretrailingwhitespace", "inferschema", "samplingratio",
                      "preferdate", "enabledatetimeparsingfallback"}
_UTF8 = {"utf-8", "utf8"}
# Compressed files ledgerflow's scan decompresses as Spark's Hadoop codecs do (see input_files.open_bytes).
_SCANNED_COMPRESSED = (".gz", ".bz2")
UNUSED = "__lf_unused_"  # a header name no statement reads that Spark could not take as it is


def _local_files(target: str) -> Optional[tuple[list[str], list[str]]]:
    """(data files Spark reads, partition column names) of a local location; None if not local."""
    if ":" in target.split("/")[0] or not os.path.exists(target):
        return None
    if os.path.isfile(target):
        return [target], []
    files, partitions = [], []
    for parent, dirs, names in os.walk(target, followlinks=True):
        dirs[:] = sorted(d for d in dirs if not input_files.spark_skips(d, folder=True))
        for d in dirs:
            if "=" in d and d.split("=", 1)[0] not in partitions:
                partitions.append(d.split("=", 1)[0])
        files += [os.path.join(parent, n) for n in sorted(names) if not input_files.spark_skips(n)]
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


def _json_schema(files: list[str], partitions: list[str], dataset: Dataset,
                 carried: Optional[set] = None) -> Optional[str]:
    """The schema of a JSON location: the declared columns (all seen in the first lines) and the system
    columns every file carries (``carried``, from :func:`.input_files.check_json_columns`; else those
    seen in the first lines)."""
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
                continue  # a line cut by the byte budget; a malformed one fails the read (mode FAILFAST)
            if not isinstance(row, dict):
                return None
            keys.update(row)
    declared = [c.name for c in dataset.columns]
    if any(c not in keys for c in declared):
        return None  # Spark infers, and a missing column is the located error of loading.py
    system = [n for n, _ in sysc.system_columns(dataset.temporal_mode)
              if (n in carried if carried is not None else n in keys) and n not in declared]
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


def declared_schema(location: ResolvedLocation, dataset: Optional[Dataset],
                    carried: Optional[set] = None) -> Optional[str]:
    """The schema (DDL) a JSON or Parquet location is read with, or None to let Spark infer it (CSV:
    :func:`csv_reads` gives each group of files its own). ``carried``: a JSON location's system columns,
    as :func:`check_file_columns` found them in every file."""
    if location.kind != "path" or location.format not in ("json", "parquet") or dataset is None:
        return None
    found = _local_files(location.target)
    if location.format == "parquet":
        if location.options or not found or not found[0]:
            return None
        return _parquet_schema(*found)
    if location.options or not found or not found[0]:
        return None
    return _json_schema(found[0], found[1], dataset, carried)


@dataclass(frozen=True)
class CsvRead:
    """One read of CSV files sharing a header: the paths given to Spark (literal), the schema, and the
    options (``multiLine`` when a quoted field of one of them holds a line break)."""

    paths: tuple[str, ...]
    schema: Optional[str]
    options: tuple[tuple[str, str], ...]
    columns: tuple[str, ...]  # the header's names as the frame has them
    partitions: tuple[str, ...] = ()  # the partition folders' columns (at the end of the schema)


def _csv_sep(options: dict) -> Optional[str]:
    """The delimiter of a CSV location ledgerflow reads itself, or None to leave it to Spark's rules."""
    lowered = {k.lower(): str(v) for k, v in options.items()}
    if set(lowered) - _CSV_OWN_OPTIONS - _CSV_VALUE_OPTIONS or lowered.get("header", "true").lower() != "true":
        return None
    if any(lowered.get(k, "utf-8").lower() not in _UTF8 for k in ("encoding", "charset")):
        return None
    sep = lowered.get("sep", lowered.get("delimiter", ","))
    return sep if len(sep) == 1 and sep.isascii() and sep not in "\"\r\n" else None


def common_columns(reads) -> list[str]:
    """The header names every one of ``reads`` (CSV reads or the frames they give) has, in the first one's
    order, without the placeholders of unused columns: what the reads of one location are unioned by."""
    return [c for c in reads[0].columns if not c.startswith(UNUSED) and all(c in r.columns for r in reads)]


def csv_reads(location: ResolvedLocation, dataset: Optional[Dataset], strict: bool = True) -> Optional[list[CsvRead]]:
    """How to read a local CSV location exactly: one :class:`CsvRead` per distinct header (files whose
    columns come in another order are read with their own schema and the frames joined by name), or
    None when it is not a local location ledgerflow reads itself. Every file is scanned first
    (:func:`.input_files.scan_csv`), and when ``strict`` each file must hold the ``dataset``'s declared
    columns (:func:`.input_files.check_columns`); either raises a located :class:`.input_files.InputFileError`."""
    sep = _csv_sep(dict(location.options))
    found = _local_files(location.target) if location.kind == "path" and sep is not None else None
    if not found or not found[0] or any(f.endswith(_COMPRESSED) and not f.endswith(_SCANNED_COMPRESSED)
                                        for f in found[0]):
        return None
    files, partitions = found
    label = dataset.name if dataset is not None else None
    scanned = [input_files.scan_csv(f, sep, dataset=label) for f in files]
    if dataset is not None and strict:
        input_files.check_columns(dataset, ((f.path, f.header) for f in scanned), partitions)
    # Files needing multiLine are read apart from the others (which Spark can still split), by line ending.
    groups: dict[tuple, list[input_files.CsvFile]] = {}
    for f in scanned:
        groups.setdefault((f.header, f.multiline, f.line_end if f.multiline else None), []).append(f)
    reads = []
    for (header, multiline, line_end), members in groups.items():
        names, renamed = _schema_names(header, partitions, dataset)
        options = {"multiLine": "true"} if multiline else {}
        if line_end:
            options["lineSep"] = line_end
        if names is None:  # a header column is also a partition folder: Spark's schema, header checked
            schema, options["enforceSchema"] = None, "false"
        else:
            schema = _ddl(names + partitions)
            options["enforceSchema"] = "true" if renamed else "false"  # Spark checks each file's header
        if os.path.isfile(location.target):
            paths = (input_files.spark_path(location.target),)
        else:  # the files scanned, not the folder listed again: a file arriving meanwhile is not read unscanned
            paths = tuple(input_files.spark_path(f.path) for f in members)
            if partitions:
                options["basePath"] = location.target  # read as it is (not a glob)
        reads.append(CsvRead(paths, schema, tuple(options.items()), tuple(names or header), tuple(partitions)))
    return reads


def _schema_names(header: tuple[str, ...], partitions: list[str],
                  dataset: Optional[Dataset]) -> tuple[Optional[list[str]], bool]:
    """(the names a header's columns are read under, whether one was renamed): an empty or repeated
    name (compared as Spark does, ignoring case) that no statement reads becomes a placeholder, so
    Spark neither refuses nor confuses it; None when a header column is also a partition column."""
    parts = {p.lower() for p in partitions}
    if any(n.lower() in parts for n in header):
        return None, False
    wanted = set()
    if dataset is not None:
        wanted = {c.name for c in dataset.columns} | {n for n, _ in sysc.system_columns(dataset.temporal_mode)}
    lowered = [n.lower() for n in header]
    names, renamed = [], False
    for i, n in enumerate(header):
        if not n or (lowered.count(n.lower()) > 1 and n not in wanted) or n.startswith(UNUSED):
            names.append(f"{UNUSED}{i}")
            renamed = True
        else:
            names.append(n)
    return names, renamed


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
    found = _local_files(location.target)
    if not found:
        return None
    files, partitions = found
    if location.format == "json":
        if any(f.endswith(_COMPRESSED) and not f.endswith(_SCANNED_COMPRESSED) for f in files):
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
        carried = check_file_columns(loc, dataset)
        schema = declared_schema(loc, dataset, carried)
        raw = read_raw(spark, loc, dataset, schema=schema, strict=True)
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

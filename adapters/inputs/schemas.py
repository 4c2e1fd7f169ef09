"""The schema a local JSON or Parquet location is read with, found without Spark's inference pass.

Without a schema Spark runs a job before the pipeline's own: CSV reads the header line of a file,
JSON reads every line to infer types. For local files ledgerflow reads what it needs itself: every
CSV file (its header, see :mod:`.csv_reads`; the schema is its columns, all strings, as Spark
would read them without inferSchema), the keys of the first JSON lines (the declared columns and the
system columns found, as strings: a JSON number keeps the digits it was written with, and the
checked cast of loading.py then reads it exactly or fails, located). Anything unusual (other reader
options, compressed or non-UTF-8 files, a declared JSON column not seen in the sample) leaves the
schema to Spark, as before, so its errors stay the same.
"""
from __future__ import annotations

from typing import Optional

from ...compiler import system_columns as sysc
from ...compiler.model import Dataset
from ...compiler.resolver import ResolvedLocation
from . import files as input_files

_PEEK_BYTES = 1 << 20
_PEEK_FILES = 1000


def _first_bytes(path: str, size: int) -> Optional[str]:
    if path.endswith(input_files.COMPRESSED):
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


def ddl(names: list[str]) -> str:
    """A schema of ``names``, every column a string (as Spark reads CSV without inferSchema)."""
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
    return ddl(names + partitions)


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
    return ", ".join(cols + [ddl([p]) for p in partitions]) if cols else None


def declared_schema(location: ResolvedLocation, dataset: Optional[Dataset],
                    carried: Optional[set] = None) -> Optional[str]:
    """The schema (DDL) a JSON or Parquet location is read with, or None to let Spark infer it (CSV:
    :func:`.csv_reads.csv_reads` gives each group of files its own). ``carried``: a JSON location's system columns,
    as :func:`.loaders.check_file_columns` found them in every file."""
    if location.kind != "path" or location.format not in ("json", "parquet") or dataset is None:
        return None
    found = input_files.local_files(location.target)
    if location.format == "parquet":
        if location.options or not found or not found[0]:
            return None
        return _parquet_schema(*found)
    if location.options or not found or not found[0]:
        return None
    return _json_schema(found[0], found[1], dataset, carried)

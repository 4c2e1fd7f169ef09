"""What ``datasets infer`` reads: the data files of a location (a file, or a folder of files with
``name=value`` partition folders, listed as the loaders list them: :func:`..inputs.files.local_files`),
their format, and each file's columns with their types. Parquet and ORC schemas are read with pyarrow
from the files' footers (exact types, no rows read); CSV and JSON lines from a sample of their rows
(:mod:`.infer_text`). Nothing here starts Spark."""
from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Optional

from ...compiler.errors import LedgerflowError
from ..inputs import files as input_files
from .infer_arrow import ledger_type
from .infer_text import TextColumn

FORMATS = ("parquet", "orc", "csv", "json")
_SUFFIX = {".parquet": "parquet", ".parq": "parquet", ".orc": "orc", ".csv": "csv", ".json": "json",
           ".jsonl": "json", ".ndjson": "json"}
SAMPLE_ROWS = 10_000  # rows read per CSV or JSON file
SAMPLE_FILES = 200  # CSV or JSON files sampled (every Parquet or ORC footer is read)


class InferError(LedgerflowError):
    """``datasets infer`` cannot describe the location: the paragraph says why and what to do."""


@dataclass
class Column:
    """One column of the files: its declared type (None: no ledgerflow type holds it), whether it may be
    NULL, a note for the YAML's comment, and the files' type when it has none."""

    name: str
    type: Optional[str]
    nullable: bool = True
    note: str = ""
    source_type: str = ""


@dataclass
class Found:
    """The location as read: its format, data files, each file's columns, partition columns (with values)."""

    format: str
    files: list[str]
    columns_of: dict[str, list[Column]] = field(default_factory=dict)
    partitions: dict[str, list[str]] = field(default_factory=dict)
    sampled_rows: int = 0


def list_files(location: str) -> tuple[list[str], dict[str, list[str]]]:
    """(the data files Spark would read, partition column -> the values of its folders) of ``location``."""
    if ":" in location.split("/")[0] and not os.path.exists(location):
        raise InferError(f"INFER-001 {location} is not a local path: `datasets infer` reads files on this machine; "
                         "copy a few of the files here and infer from them.")
    if not os.path.exists(location):
        raise InferError(f"INFER-001 no file or folder at {location}: give the path of a data file, or of a folder "
                         "of them (Parquet, ORC, CSV or JSON lines).")
    if os.path.isdir(location) and not os.access(location, os.R_OK | os.X_OK):
        raise InferError(f"INFER-001 cannot read the folder {location} (permission denied).")
    listed = input_files.local_files(location)
    files = listed[0] if listed else []
    if not files:
        raise InferError(f"INFER-001 no data files in {location}: the folder is empty or holds only hidden files "
                         "(names starting with '.' or '_', which Spark skips); give a folder that holds the data.")
    partitions: dict[str, list[str]] = {}
    if os.path.isfile(location):  # one file: no partition folders (and a bare name has no folder to be relative to)
        return files, partitions
    for path in files:
        for part in os.path.relpath(os.path.dirname(path), location).split(os.sep):
            if "=" in part:
                key, value = part.split("=", 1)
                partitions.setdefault(key, []).append(value)
    return files, partitions


def _magic(path: str) -> Optional[str]:
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
    except OSError:
        return None
    return "parquet" if head == b"PAR1" else "orc" if head[:3] == b"ORC" else None


def file_format(path: str) -> Optional[str]:
    """The format a file's name says (a compression suffix looked through), else its first bytes."""
    name = path.lower()
    for suffix in input_files.COMPRESSED:
        if name.endswith(suffix):
            name = name[:-len(suffix)]
            break
    stem, ext = os.path.splitext(name)
    if ext in (".snappy", ".zstd", ".gz"):  # part-0.snappy.parquet reads as .parquet; x.parquet.gz as x.parquet
        ext = os.path.splitext(stem)[1] or ext
    return _SUFFIX.get(ext) or _magic(path)


def location_format(location: str, files: list[str], given: Optional[str]) -> str:
    """The one format of the location's files: ``given`` (``--format``), else what every file says."""
    if given:
        return given
    seen = {f: file_format(f) for f in files}
    kinds = sorted({k for k in seen.values() if k})
    unknown = [f for f, k in seen.items() if k is None]
    if len(kinds) == 1 and not unknown:
        return kinds[0]
    if unknown:
        raise InferError(f"INFER-002 cannot tell the format of {unknown[0]}" + (f" and {len(unknown) - 1} more file(s)"
                         if len(unknown) > 1 else "") + f" of {location} from its name or first bytes: give --format "
                         "parquet, orc, csv or json.")
    raise InferError(f"INFER-002 {location} holds files of several formats ({', '.join(kinds)}): a dataset's location "
                     "is read in one format; give a folder of one format, or --format to read every file as one.")


def _unreadable(path: str, fmt: str, err: Exception) -> InferError:
    detail = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    return InferError(f"INFER-001 cannot read {path} as {fmt}: {detail}. Check the file (or give the right --format).")


def _arrow_schema(path: str, fmt: str):
    if fmt == "parquet":
        import pyarrow.parquet as pq
        return pq.read_schema(path)
    import pyarrow.orc as orc
    return orc.ORCFile(path).schema


def _arrow_column(arrow_field) -> Column:
    typ, note = ledger_type(arrow_field.type)
    return Column(arrow_field.name, typ, bool(arrow_field.nullable), note, str(arrow_field.type))


def read_columns(found: Found) -> None:
    """Fill ``found.columns_of`` for each file: footers for Parquet and ORC, a sample for CSV and JSON."""
    if found.format in ("parquet", "orc"):
        for path in found.files:
            try:
                schema = _arrow_schema(path, found.format)
            except (OSError, ValueError, ImportError) as err:  # pyarrow's errors derive from these
                raise _unreadable(path, found.format, err) from None
            found.columns_of[path] = [_arrow_column(f) for f in schema]
        return
    sample = _csv_sample if found.format == "csv" else _json_sample
    columns: dict[str, TextColumn] = {}
    for path in found.files[:SAMPLE_FILES]:
        try:
            names, rows = sample(path, columns)
        except (OSError, UnicodeDecodeError, csv.Error, ValueError) as err:
            raise _unreadable(path, found.format, err) from None
        found.columns_of[path] = names
        found.sampled_rows += rows
    for names in found.columns_of.values():
        for i, col in enumerate(names):
            seen = columns.get(col.name, TextColumn())
            if "nested" in seen.kinds:
                names[i] = Column(col.name, None, True, "", "a JSON object or array")
                continue
            typ, note = seen.result()
            names[i] = Column(col.name, typ, True, note)


class RaggedCsv(InferError):
    """A CSV record with more or fewer fields than the header: the run refuses such a file, so no YAML."""

    def __init__(self, path: str, line: int, fields: int, header: int):
        super().__init__(f"INFER-001 {path} line {line}: a record of {fields} field{'s' if fields != 1 else ''} "
                         f"where the header has {header}: a run refuses a CSV whose records do not all have the "
                         "header's fields (quote a value that holds a comma); fix the file and infer again.")


def _text(path: str):
    return io.TextIOWrapper(input_files.open_bytes(path), encoding="utf-8-sig", newline="")


def _csv_sample(path: str, columns: dict[str, TextColumn]) -> tuple[list[Column], int]:
    with _text(path) as fh:
        reader = csv.reader(fh, strict=True)
        header = next((row for row in reader if row), None)
        if header is None:
            raise ValueError("the file is empty (a CSV location needs a header line)")
        rows = 0
        start = reader.line_num + 1  # the line a record starts on (a quoted field may hold line breaks)
        for row in reader:
            if rows >= SAMPLE_ROWS:
                break
            if row and len(row) != len(header):
                raise RaggedCsv(path, start, len(row), len(header))
            start = reader.line_num + 1
            if not row:
                continue
            rows += 1
            for name, value in zip(header, row):
                columns.setdefault(name, TextColumn()).add_text(value)
    return [Column(n, None) for n in header], rows


def _json_sample(path: str, columns: dict[str, TextColumn]) -> tuple[list[Column], int]:
    names: dict[str, None] = {}
    rows = 0
    with _text(path) as fh:
        for number, line in enumerate(fh, 1):
            if rows >= SAMPLE_ROWS:
                break
            if not line.strip():
                continue
            try:
                record = json.loads(line, parse_float=Decimal)
            except ValueError as err:
                raise ValueError(f"line {number} is not a JSON object ({err})") from None
            if not isinstance(record, dict):
                raise ValueError(f"line {number} is not a JSON object (JSON lines: one object per line)")
            rows += 1
            for key, value in record.items():
                names.setdefault(key)
                col = columns.setdefault(key, TextColumn())
                if isinstance(value, (dict, list)):
                    col.kinds.add("nested")
                elif isinstance(value, str):
                    col.add_text(value)
                    if col.kinds & {"integer", "decimal", "boolean"}:  # a quoted number is text in JSON
                        col.kinds -= {"integer", "decimal", "boolean"}
                        col.kinds.add("string")
                elif value is not None:
                    col.add_number(value)
    if not rows:
        raise ValueError("the file holds no JSON object")
    return [Column(n, None) for n in names], rows

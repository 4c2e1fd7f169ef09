"""What the files of a local input location hold, checked before Spark reads them, so every row is read
into the right column or the run refuses, naming dataset, file and line.

- Paths reach Spark literally: :func:`spark_path` escapes Hadoop's glob characters (Spark globs every
  path it is given, so ``data/[eu] ledger`` would read ``data/e ledger``).
- CSV (:func:`scan_csv`): each file's header (its first record that is not an empty line), whether a
  quoted field holds a line break (then the file must be read with ``multiLine`` and the one line
  break that ends its records, else Spark cuts the record in two or leaves a CR in the last value),
  and the RFC 4180 structure of its quotes: a quoted field still open at the end of the file (a file
  cut while it was written), text after a closing quote, or records ending with different line breaks
  in a multi-line file are refused with dataset, file and line. A file without a quote character is
  searched at memchr speed; a file with one is parsed by Python's C ``csv`` reader. ``.gz``/``.bz2``
  files are scanned decompressed, as Spark reads them.
- Which columns each file has (:func:`check_columns`): a declared column missing from any file, or a
  system column some files have and others lack, is refused naming the file(s), whatever their order.
- :func:`locate_malformed`: after Spark refused a malformed record (mode ``FAILFAST``), the record's
  line, found by parsing that one file in Python (only on the error path).
"""
from __future__ import annotations

import csv
import functools
import io
import json
import os
import re
from dataclasses import dataclass
from typing import Iterable, Optional

from ...compiler.errors import ResolutionError
from ...compiler.model import Dataset

_GLOB = re.compile(r"([\\\[\]{}*?])")
_CHUNK = 8 << 20
_BOM = b"\xef\xbb\xbf"


class InputFileError(ResolutionError):
    """A data file of an input location that cannot be read exactly (code, file and line in the message)."""


def spark_skips(name: str, folder: bool = False) -> bool:
    """Whether Spark, reading a location, skips a file or folder of this name: names starting with ``_``
    (but ``_name=value`` partition folders) or ``.``, and ``._COPYING_`` files. Its listing keeps
    ``_metadata*``/``_common_metadata*`` (Parquet summaries), so it descends folders of those names,
    but reads no such file as data. The one rule of the loaders, the fingerprint and ``--resolved``."""
    hidden = (name.startswith("_") and "=" not in name) or name.startswith(".") or name.endswith("._COPYING_")
    return hidden and not (folder and name.startswith(("_metadata", "_common_metadata")))


def spark_path(target: str) -> str:
    """``target`` as a path Spark reads literally: the glob characters ``\\ [ ] { } * ?`` escaped with a
    backslash (Hadoop's ``GlobPattern`` escape; Spark's DataFrameReader has no literal-path switch)."""
    return _GLOB.sub(r"\\\1", target)


# ------------------------------------------------------------------------------------------- listing
# Compressed files: Spark reads them through Hadoop's codecs, chosen by the name's ending.
COMPRESSED = (".gz", ".bz2", ".deflate", ".lz4", ".snappy", ".zst", ".zstd", ".xz", ".br")
# Compressed files ledgerflow's scan decompresses as Spark's Hadoop codecs do (see open_bytes).
SCANNED_COMPRESSED = (".gz", ".bz2")


def local_files(target: str) -> Optional[tuple[list[str], list[str]]]:
    """(data files Spark reads, partition column names) of a local location, in Spark's order; None if
    not local (or not there)."""
    if ":" in target.split("/")[0] or not os.path.exists(target):
        return None
    if os.path.isfile(target):
        return [target], []
    files, partitions = [], []
    for parent, dirs, names in os.walk(target, followlinks=True):
        dirs[:] = sorted(d for d in dirs if not spark_skips(d, folder=True))
        for d in dirs:
            if "=" in d and d.split("=", 1)[0] not in partitions:
                partitions.append(d.split("=", 1)[0])
        files += [os.path.join(parent, n) for n in sorted(names) if not spark_skips(n)]
    return files, partitions


# ----------------------------------------------------------------------------------------------- CSV
@dataclass(frozen=True)
class CsvFile:
    """One CSV file as scanned: its header's names (a UTF-8 BOM dropped) and whether a quoted field
    holds a line break (it must be read with ``multiLine``, and then with its records' line ending as
    ``lineSep``: Spark's detected separator, taken from the first line, turns a CRLF inside a quoted
    field into LF, and cuts nothing but the one ending it detected)."""

    path: str
    header: tuple[str, ...]
    multiline: bool
    line_end: Optional[str] = None  # what ends its records outside quotes ("\r\n", "\n" or "\r"); None: none


def open_bytes(path: str):
    """``path`` opened for reading its bytes, decompressed when it is a ``.gz`` or ``.bz2`` file (Spark's
    Hadoop codecs read those by name)."""
    if path.endswith(".gz"):
        import gzip
        return gzip.open(path, "rb")
    if path.endswith(".bz2"):
        import bz2
        return bz2.open(path, "rb")
    return open(path, "rb")


def _text(path: str):
    """``path`` as text the way Spark's CSV reader decodes it (UTF-8, a BOM dropped, line ends kept)."""
    return io.TextIOWrapper(open_bytes(path), encoding="utf-8-sig", errors="replace", newline="")


def _where(path: str, dataset: Optional[str]) -> str:
    return f"dataset '{dataset}': {path}" if dataset else path


def scan_csv(path: str, sep: str = ",", quote: str = '"', dataset: Optional[str] = None) -> CsvFile:
    """Scan one CSV file (see the module docstring); raises :class:`InputFileError` (naming ``dataset``
    when given) for a quoted field open at its end, text after a closing quote, or records that need
    ``multiLine`` but end with different line breaks. A file without a quote character is searched at
    memchr speed; one with quotes is parsed by Python's C ``csv`` reader (strict RFC 4180)."""
    quote_b = quote.encode()
    quoted = False
    with open_bytes(path) as fh:
        first = fh.read(_CHUNK)
        data = first
        while data:
            if quote_b in data:
                quoted = True
                break
            data = fh.read(_CHUNK)
    if not first.removeprefix(_BOM).strip():
        # a header-only file says "no rows"; an empty one may be an export that has not written yet
        raise InputFileError(f"INPUT-003 {_where(path, dataset)}: the file is empty, without even a header line "
                             "(a file whose export has not written anything yet?); nothing was read. Remove it "
                             "or export it again (a period without rows is a file holding the header only).")
    if not quoted:
        return CsvFile(path, _header(path, sep, quote), False)
    return _scan_quoted(path, sep, quote, dataset)


def _header(path: str, sep: str, quote: str) -> tuple[str, ...]:
    """The file's first record that is not an empty line, whatever its length."""
    with _text(path) as fh:
        for record in csv.reader(fh, delimiter=sep, quotechar=quote, doublequote=True):
            if record:
                return tuple(record)
    return ()


_ENDS = ("\r\n", "\n", "\r")


def _scan_quoted(path: str, sep: str, quote: str, dataset: Optional[str]) -> CsvFile:
    if csv.field_size_limit() < (1 << 31) - 1:
        csv.field_size_limit((1 << 31) - 1)  # a long free-text field is data (Spark has no limit either)
    header: Optional[tuple[str, ...]] = None
    multiline = False
    inside = [0, 0, 0]  # line breaks inside quoted fields: CRLF, LF, CR
    done = 0  # lines consumed by the records read so far
    with _text(path) as fh:
        reader = csv.reader(fh, delimiter=sep, quotechar=quote, doublequote=True, strict=True)
        try:
            for record in reader:
                if reader.line_num - done > 1:  # one record over several lines: a quoted line break
                    multiline = True
                    for value in record:
                        if "\n" in value or "\r" in value:
                            crlf = value.count("\r\n")
                            inside[0] += crlf
                            inside[1] += value.count("\n") - crlf
                            inside[2] += value.count("\r") - crlf
                if header is None and record:
                    header = tuple(record)
                done = reader.line_num
        except csv.Error as exc:
            if "end of data" in str(exc):
                raise InputFileError(
                    f"INPUT-003 {_where(path, dataset)} line {done + 1}: the record starting there opens a "
                    "quoted field that is never closed: the file ends inside it (a file read while it was still being "
                    "written, or a quote missing); nothing was read. Re-export the file or close the quote.") from None
            raise InputFileError(
                f"INPUT-003 {_where(path, dataset)} line {reader.line_num}: text follows the closing quote of a "
                f"quoted field ({_line_text(path, reader.line_num)!r}): not an RFC 4180 CSV record (a quote inside "
                "a quoted field is written twice, \"\", not escaped with a backslash, and nothing, not even a "
                "space, comes between a closing quote and the next delimiter); fix or re-export the file.") from None
    line_end = _record_end(path, inside, dataset) if multiline else None
    return CsvFile(path, header or (), multiline, line_end)


def _record_end(path: str, inside: list[int], dataset: Optional[str]) -> Optional[str]:
    """The one line break that ends the records of a file read with ``multiLine``: every break of the
    file minus those inside quoted fields; refused when two kinds end records (Spark would split on one
    and leave the other inside values: '2026-01\\r' is no period, and its rows would be filtered out)."""
    total = [0, 0, 0]
    last = b""
    with open_bytes(path) as fh:
        for data in iter(lambda: fh.read(_CHUNK), b""):
            crlf = data.count(b"\r\n") + (last == b"\r" and data[:1] == b"\n")
            total[0] += crlf
            total[1] += data.count(b"\n") - crlf
            total[2] += data.count(b"\r") - crlf
            last = data[-1:]
    ends = [(end, t - i) for end, t, i in zip(_ENDS, total, inside) if t - i > 0]
    if len(ends) > 1:
        shown = ", ".join(f"{n} {'CRLF' if e == chr(13) + chr(10) else 'LF' if e == chr(10) else 'CR'}" for e, n in ends)
        raise InputFileError(
            f"INPUT-003 {_where(path, dataset)}: its records end with different line breaks ({shown}) and a "
            "quoted field holds a line break, so the file must be read as multi-line records, which end "
            "with one kind of line break only; nothing was read. Re-export the file with one line ending.")
    return ends[0][0] if ends else None


def _line_text(path: str, number: int) -> str:
    """The text of line ``number`` (1-based) of a file, at most 120 characters, read as a stream."""
    with _text(path) as fh:
        for n, line in enumerate(fh, 1):
            if n == number:
                return line.rstrip("\r\n")[:120]
    return ""


def locate_malformed(path: str, fmt: str, sep: str = ",", quote: str = '"') -> Optional[tuple[int, str, str]]:
    """(line, what is wrong, the record's text) of the first malformed record of a CSV or JSON-lines file,
    or None when none is found. CSV: a record whose field count differs from the header's."""
    try:
        with _text(path) as fh:
            if fmt == "json":
                for number, line in enumerate(fh, 1):
                    if not line.strip():
                        continue
                    try:
                        json.loads(line)
                    except ValueError:
                        return number, "not a JSON object on one line", line.rstrip("\r\n")
                return None
            csv.field_size_limit(max(csv.field_size_limit(), (1 << 31) - 1))
            reader = csv.reader(fh, delimiter=sep, quotechar=quote, doublequote=True)
            header = next((r for r in reader if r), None)
            if header is None:
                return None
            start = reader.line_num + 1
            for record in reader:
                if record and len(record) != len(header):
                    text = sep.join(record)
                    return (start, f"{len(record)} field{'s' if len(record) != 1 else ''} where the header has "
                            f"{len(header)}", text)
                start = reader.line_num + 1
    except (OSError, EOFError, csv.Error):
        return None
    return None


def _agreeing(dataset: Dataset, first: Optional[tuple[str, frozenset]], path: str,
              carried: frozenset) -> tuple[str, frozenset]:
    """The first file and the system columns it carries, after refusing ``path`` when it carries others
    (rows of one file would get their value and rows of the other a default)."""
    if first is None:
        return path, carried
    if carried != first[1]:
        only = sorted(carried ^ first[1])
        raise InputFileError(f"INPUT-002 dataset '{dataset.name}': the files {first[0]} and {path} disagree on "
                             f"the system column(s) {', '.join(only)} (one has them, the other not): rows "
                             "of one would get their value and rows of the other a default; give every file "
                             "of the location the same system columns.")
    return first


# ------------------------------------------------------------------------------------- columns per file
def check_columns(dataset: Dataset, columns_of: Iterable[tuple[str, Iterable[str]]], partitions: list[str]) -> None:
    """Refuse a file lacking a declared column (partition folders count as columns), a header naming a
    declared or system column twice, or files that disagree on which system columns they carry (rows
    of some would get a default, others their value). ``columns_of``: (file, its column names)."""
    from ...compiler import system_columns as sysc  # here: promote and status read no input's files
    declared = [c.name for c in dataset.columns]
    system = [n for n, _ in sysc.system_columns(dataset.temporal_mode)]
    relevant = {n.lower() for n in declared + system}
    first: Optional[tuple[str, frozenset]] = None
    for path, names in columns_of:
        names = list(names)
        lowered = [n.lower() for n in names]
        twice = sorted({n for n in names if n.lower() in relevant and lowered.count(n.lower()) > 1})
        if twice:
            raise InputFileError(f"INPUT-002 dataset '{dataset.name}': {path} names the column(s) {', '.join(twice)} "
                                 "more than once; rename or remove the repeated column.")
        have = set(names) | set(partitions)
        missing = [c for c in declared if c not in have]
        if missing:
            raise InputFileError(f"INPUT-001 dataset '{dataset.name}': {path} lacks the declared column(s) "
                                 f"{', '.join(missing)} (it has: {', '.join(map(_shown, sorted(names))) or 'nothing'}); every "
                                 "file of a location must have every declared column.")
        carried = frozenset(n for n in system if n in have)
        first = _agreeing(dataset, first, path, carried)


@functools.lru_cache(maxsize=None)
def _key_pattern(name: str) -> "re.Pattern[bytes]":
    """``name`` as a JSON key: its JSON string followed by a colon (compiled once per name, not per file)."""
    return re.compile(re.escape(json.dumps(name, ensure_ascii=False).encode()) + rb"\s*:")


def json_columns(path: str, names: Iterable[str]) -> tuple[set, list[str]]:
    """(which of ``names`` a JSON-lines file holds as a key somewhere, the keys of its first record): each
    name is searched as its JSON string followed by a colon (``"_period":``) through the whole file,
    stopping at the first hit (a key is normally in the first line). A quote inside a value is escaped
    (``\\"``), so a value cannot end the pattern's string; a key written with \\u escapes is not
    recognised (then it is absent: refused when it matters, see :func:`check_json_columns`)."""
    wanted = {n: _key_pattern(n) for n in names}
    found: set = set()
    first_keys: list[str] = []
    tail = b""
    keep = 4096  # a key and the spaces before its colon across two chunks
    with open_bytes(path) as fh:
        for data in iter(lambda: fh.read(_CHUNK), b""):
            if not first_keys and not tail:
                line = data.removeprefix(_BOM).lstrip().split(b"\n", 1)[0]
                try:
                    record = json.loads(line)
                    first_keys = list(record) if isinstance(record, dict) else []
                except ValueError:
                    pass  # a malformed line fails the read (FAILFAST), located then
            window = tail + data
            found.update(n for n, pattern in wanted.items() if n not in found and pattern.search(window))
            if len(found) == len(wanted):
                break
            tail = window[-keep:]
    return found, first_keys


def check_json_columns(dataset: Dataset, files: list[str], partitions: list[str]) -> set:
    """Refuse JSON files that disagree on the system columns they carry (rows of one would get their
    ``_period``, the others' the run's: a later file's own period was dropped with the schema taken from
    the first lines), and a file in which a declared column never occurs when that column is NOT NULL
    or the file's records carry a key no declared column names (a renamed key: ``amt`` for ``amount``
    read every amount as NULL). A nullable column absent from a whole file is read as NULL: Spark's own
    JSON writer leaves NULL values out. Returns the system columns every file carries."""
    from ...compiler import system_columns as sysc
    declared = [c.name for c in dataset.columns]
    system = [n for n, _ in sysc.system_columns(dataset.temporal_mode) if n not in declared]
    known = set(declared) | set(system) | set(partitions)
    first: Optional[tuple[str, frozenset]] = None
    for path in files:
        found, keys = json_columns(path, declared + system)
        absent = [c for c in dataset.columns if c.name not in found and c.name not in partitions]
        unknown = [k for k in keys if k not in known]
        if absent and (unknown or any(not c.nullable for c in absent)):
            names = ", ".join(c.name for c in absent)
            why = (f"its records carry {', '.join(map(repr, unknown))}, which no declared column names (a renamed "
                   "key?)" if unknown else "the column is declared not null")
            raise InputFileError(f"INPUT-001 dataset '{dataset.name}': {path} never holds the declared column(s) "
                                 f"{names}, and {why}; every row of the file would read it as NULL. Fix the "
                                 "file's keys or the dataset's columns.")
        carried = frozenset(n for n in system if n in found or n in partitions)
        first = _agreeing(dataset, first, path, carried)
    return set(first[1]) if first else set()


def _shown(name: str) -> str:
    """A column name as a message shows it: quoted when spaces or other characters would hide what it is
    (``'amount '`` is not ``amount``)."""
    return name if name and name.strip() == name and name.isprintable() and "," not in name else repr(name)


def footer_columns(path: str, fmt: str) -> Optional[list[str]]:
    """The column names in a Parquet or ORC file's footer (pyarrow), or None when it cannot be read
    here (Spark then reports the file)."""
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq
            return list(pq.read_schema(path).names)
        import pyarrow.orc as po
        return list(po.ORCFile(path).schema.names)
    except Exception:  # noqa: BLE001 - no pyarrow, or a file it cannot read: Spark decides and reports
        return None

"""What the files of a local input location hold, checked before Spark reads them, so every row is read
into the right column or the run refuses, naming dataset, file and line.

- Paths reach Spark literally: :func:`spark_path` escapes Hadoop's glob characters (Spark globs every
  path it is given, so ``data/[eu] ledger`` would read ``data/e ledger``).
- CSV (:func:`scan_csv`): each file's header (its first record), whether a quoted field holds a line
  break (then the file must be read with ``multiLine``, else Spark cuts the record in two), and the
  RFC 4180 structure of its quotes: a quoted field still open at the end of the file (a file cut while
  it was written) or text after a closing quote is refused with its line. The scan reads every byte,
  but only the quote characters cost Python work: a file without one is searched at memchr speed.
- Which columns each file has (:func:`check_columns`): a declared column missing from any file, or a
  system column some files have and others lack, is refused naming the file(s), whatever their order.
- :func:`locate_malformed`: after Spark refused a malformed record (mode ``FAILFAST``), the record's
  line, found by parsing that one file in Python (only on the error path).
"""
from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from typing import Iterable, Optional

from ..compiler import system_columns as sysc
from ..compiler.errors import ResolutionError
from ..compiler.model import Dataset

_GLOB = re.compile(r"([\\\[\]{}*?])")
_CHUNK = 8 << 20
_BOM = b"\xef\xbb\xbf"


class InputFileError(ResolutionError):
    """A data file of an input location that cannot be read exactly (code, file and line in the message)."""


def spark_path(target: str) -> str:
    """``target`` as a path Spark reads literally: the glob characters ``\\ [ ] { } * ?`` escaped with a
    backslash (Hadoop's ``GlobPattern`` escape; Spark's DataFrameReader has no literal-path switch)."""
    return _GLOB.sub(r"\\\1", target)


# ----------------------------------------------------------------------------------------------- CSV
@dataclass(frozen=True)
class CsvFile:
    """One CSV file as scanned: its header's names (a UTF-8 BOM dropped) and whether a quoted field
    holds a line break (it must be read with ``multiLine``, and then with its line ending as ``lineSep``:
    Spark's detected separator turns a CRLF inside a quoted field into LF)."""

    path: str
    header: tuple[str, ...]
    multiline: bool
    line_end: Optional[str] = None  # "\r\n" or "\n", as the header line ends; None: neither found


class _QuoteScan:
    """The RFC 4180 quote structure of a byte stream, fed in chunks: a quote opens a quoted field only at
    a field's start (elsewhere Spark reads it as a character), ``""`` inside one is a quote, and a closing
    quote is followed by the delimiter, a line break or the end."""

    def __init__(self, path: str, sep: bytes, quote: bytes):
        self.path, self.sep, self.quote = path, sep, quote
        self.breaks = b"\r\n" + sep
        self.inside = False  # within a quoted field
        self.closed = False  # a quote just closed a field (or is the first of a doubled quote)
        self.field_start = True  # the next byte begins a field
        self.offset = 0  # of the next byte (lines are counted only for an error: counting costs a pass)
        self.opened_at = 0  # the offset where the open quoted field began
        self.multiline = False

    def feed(self, data: bytes) -> None:
        """Scan the next bytes of the file."""
        if not self.inside and not self.closed and self.quote not in data:
            self.offset += len(data)
            if data:
                self.field_start = data[-1:] in (self.sep, b"\n", b"\r")
            return
        for k, part in enumerate(data.split(self.quote)):
            if k:
                self._quote()
                self.offset += 1
            if not part:
                continue
            if self.inside:
                if b"\n" in part or b"\r" in part:
                    self.multiline = True
            else:
                if self.closed and part[:1] not in (self.sep, b"\n", b"\r"):
                    raise InputFileError(
                        f"INPUT-003 {self.path} line {self._line(self.offset)}: text follows the closing quote of a quoted "
                        f"field ({_show(part)}): not an RFC 4180 CSV record (a quote inside a quoted field is "
                        "written twice, \"\"); fix or re-export the file.")
                self.closed = False
                self.field_start = part[-1:] in (self.sep, b"\n", b"\r")
            self.offset += len(part)

    def _quote(self) -> None:
        if self.inside:
            self.inside, self.closed = False, True
        elif self.closed:  # the second quote of "": still inside the field
            self.inside, self.closed = True, False
        elif self.field_start:
            self.inside, self.opened_at = True, self.offset
        self.field_start = False

    def _line(self, offset: int) -> int:
        """The line number of the byte at ``offset`` (of the file without its BOM)."""
        with open(self.path, "rb") as fh:
            data = fh.read(offset + len(_BOM))
        return data[len(_BOM):].count(b"\n") + 1 if data.startswith(_BOM) else data[:offset].count(b"\n") + 1

    def finish(self) -> None:
        """Refuse a quoted field still open at the end of the file."""
        if self.inside:
            raise InputFileError(
                f"INPUT-003 {self.path} line {self._line(self.opened_at)}: a quoted field opened there is never closed: the "
                "file ends inside it (a file read while it was still being written, or a quote missing); "
                "nothing was read. Re-export the file or close the quote.")


def _show(part: bytes) -> str:
    text = part.split(b"\n")[0][:40].decode("utf-8", "replace")
    return repr(text)


def scan_csv(path: str, sep: str = ",", quote: str = '"') -> CsvFile:
    """Scan one CSV file (see the module docstring); raises :class:`InputFileError` for an empty file,
    a quoted field open at its end, or text after a closing quote."""
    sep_b, quote_b = sep.encode(), quote.encode()
    scan = _QuoteScan(path, sep_b, quote_b)
    with open(path, "rb") as fh:
        first = fh.read(_CHUNK)
        if first.startswith(_BOM):
            first = first[len(_BOM):]
        if not first.strip():
            raise InputFileError(f"INPUT-003 {path}: the file is empty, without even a header line (a file "
                                 "whose export has not written anything yet?); nothing was read. Remove it or "
                                 "export it again.")
        scan.feed(first)
        while True:
            data = fh.read(_CHUNK)
            if not data:
                break
            scan.feed(data)
    scan.finish()
    header = _first_record(first, sep, quote)
    lf = first.find(b"\n")
    line_end = None if lf < 0 else "\r\n" if first[lf - 1:lf] == b"\r" else "\n"
    return CsvFile(path, header, scan.multiline, line_end)


def _first_record(data: bytes, sep: str, quote: str) -> tuple[str, ...]:
    text = data[:1 << 16].decode("utf-8", "replace")  # a header longer than 64 KiB is cut (then: missing columns)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep, quotechar=quote, doublequote=True)
    return tuple(next(reader, []))


def locate_malformed(path: str, fmt: str, sep: str = ",", quote: str = '"') -> Optional[tuple[int, str, str]]:
    """(line, what is wrong, the record's text) of the first malformed record of a CSV or JSON-lines file,
    or None when none is found. CSV: a record whose field count differs from the header's."""
    try:
        with open(path, "r", encoding="utf-8-sig", errors="replace", newline="") as fh:
            if fmt == "json":
                for number, line in enumerate(fh, 1):
                    if not line.strip():
                        continue
                    try:
                        json.loads(line)
                    except ValueError:
                        return number, "not a JSON object on one line", line.rstrip("\r\n")
                return None
            reader = csv.reader(fh, delimiter=sep, quotechar=quote, doublequote=True)
            header = next(reader, None)
            if header is None:
                return None
            start = reader.line_num + 1
            for record in reader:
                if record and len(record) != len(header):
                    text = sep.join(record)
                    return (start, f"{len(record)} field{'s' if len(record) != 1 else ''} where the header has "
                            f"{len(header)}", text)
                start = reader.line_num + 1
    except (OSError, csv.Error):
        return None
    return None


# ------------------------------------------------------------------------------------- columns per file
def check_columns(dataset: Dataset, columns_of: Iterable[tuple[str, Iterable[str]]], partitions: list[str]) -> None:
    """Refuse a file lacking a declared column (partition folders count as columns), a header naming a
    declared or system column twice, or files that disagree on which system columns they carry (rows
    of some would get a default, others their value). ``columns_of``: (file, its column names)."""
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
                                 f"{', '.join(missing)} (it has: {', '.join(sorted(names)) or 'nothing'}); every "
                                 "file of a location must have every declared column.")
        carried = frozenset(n for n in system if n in have)
        if first is None:
            first = (path, carried)
        elif carried != first[1]:
            only = sorted(carried ^ first[1])
            raise InputFileError(f"INPUT-002 dataset '{dataset.name}': the files {first[0]} and {path} disagree on "
                                 f"the system column(s) {', '.join(only)} (one has them, the other not): rows "
                                 "of one would get their value and rows of the other a default; give every file "
                                 "of the location the same system columns.")


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

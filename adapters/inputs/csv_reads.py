"""How a local CSV location is read exactly: its files scanned first (:func:`.files.scan_csv`), then one
Spark read per distinct header (:class:`CsvRead`), each with its own schema (every column a string, as
Spark reads CSV without inferSchema: no inference pass) and options, the frames unioned by name
(:func:`common_columns`). Reader options ledgerflow's scan does not understand, or files it cannot
decode, leave the read to Spark's rules.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

from ...compiler import system_columns as sysc
from ...compiler.model import Dataset
from ...compiler.resolver import ResolvedLocation
from . import files as input_files
from .schemas import ddl

# CSV reader options ledgerflow's own CSV reading understands: the structure options it scans with,
# and options that change how a value is read but never where a record or a field ends. Any other
# (quote, escape, comment, lineSep, multiLine, mode, ...) leaves the read to Spark's rules.
_CSV_OWN_OPTIONS = {"header", "sep", "delimiter"}
_CSV_VALUE_OPTIONS = {"nullvalue", "emptyvalue", "nanvalue", "positiveinf", "negativeinf", "dateformat",
                      "timestampformat", "timestampntzformat", "locale", "encoding", "charset",
                      "ignoreleadingwhitespace", "ignoretrailingwhitespace", "inferschema", "samplingratio",
                      "preferdate", "enabledatetimeparsingfallback"}
_UTF8 = {"utf-8", "utf8"}
UNUSED = "__lf_unused_"  # a header name no statement reads that Spark could not take as it is


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
    found = input_files.local_files(location.target) if location.kind == "path" and sep is not None else None
    if not found or not found[0] or any(f.endswith(input_files.COMPRESSED)
                                        and not f.endswith(input_files.SCANNED_COMPRESSED) for f in found[0]):
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
            schema = ddl(names + partitions)
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

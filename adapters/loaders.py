"""Load resolved locations into Spark as the normalised input views the compiled SQL reads.

Each location is read raw (parquet, csv with header, json, orc, a catalog table, or an in-memory
DataFrame registered by tests and the Python API), then :func:`normalised_select` casts it to the
declared schema and fills system columns; several locations are unioned.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional

from ..compiler.errors import ResolutionError
from ..compiler.loading import METADATA_COLUMN, normalised_select, union_all
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


def read_raw(spark, location: ResolvedLocation):
    """The raw DataFrame of one location."""
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


def load_input(spark, view: str, dataset: Dataset, version: int, locations: list[ResolvedLocation],
               args: dict) -> int:
    """Create the temp view ``view`` from all ``locations``; returns how many locations were read.

    The view holds only the run's rows (the period filter is applied below the row identity)."""
    selects = []
    for i, loc in enumerate(locations):
        if loc.kind == "table" and not spark.catalog.tableExists(loc.target):  # a data reference: exit 1, not 3
            raise ResolutionError(f"dataset '{dataset.name}': no catalog table {loc.target} (period "
                                  f"{loc.period or 'any'}); check the resolver rule or create the table.")
        raw = read_raw(spark, loc)
        raw_name = f"raw_{view}_{i}"
        present = {f.name: f.dataType.simpleString() for f in raw.schema.fields}
        root = None
        if "_row_id" not in present and loc.kind == "path" and loc.format == "parquet":
            raw = raw.select("*", METADATA_COLUMN)  # file path + row index: an id without a shuffle
            root = file_root(loc)
        raw.createOrReplaceTempView(raw_name)
        selects.append(normalised_select(dataset, version, raw_name, present, loc.target, loc.period, i,
                                         file_root=root, period_rows=True))
    if not selects:
        raise ResolutionError(f"dataset '{dataset.name}' resolved to no locations.")
    query = union_all(selects)
    used = {k: v for k, v in args.items() if f":{k}" in query}
    spark.sql(query, args=used).createOrReplaceTempView(view)
    return len(selects)


def load_inputs(spark, inputs: list[tuple[str, Dataset, int, list[ResolvedLocation]]], args: dict) -> list[int]:
    """:func:`load_input` for every ``(view, dataset, version, locations)``; returns the location counts.

    The views are created concurrently: each one mostly waits on Spark (listing files, a small job
    reading a Parquet footer for the schema, analysing the normalised SELECT), so a pipeline with
    several inputs starts sooner. Every load finishes before the first error, in input order, is raised.
    """
    if len(inputs) <= 1:
        return [load_input(spark, *item, args) for item in inputs]
    with ThreadPoolExecutor(max_workers=min(4, len(inputs)), thread_name_prefix="ledgerflow-load") as pool:
        futures = [pool.submit(load_input, spark, *item, args) for item in inputs]
    return [f.result() for f in futures]

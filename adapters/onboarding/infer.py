"""``ledgerflow datasets infer LOCATION --name NAME``: a dataset's YAML from its data files
(:mod:`.infer_read` reads them, :mod:`.infer_columns` makes the columns, :mod:`.infer_yaml` writes the
text). Every problem is one :class:`.infer_read.InferError` paragraph raised before anything is printed."""
from __future__ import annotations

import re
from typing import Optional

from .infer_columns import infer_columns
from .infer_read import Found, InferError, list_files, location_format, read_columns
from .infer_yaml import render

_TABLE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


def infer_dataset(location: str, name: str, table: Optional[str] = None, temporal_mode: Optional[str] = None,
                  fmt: Optional[str] = None) -> str:
    """The YAML text of dataset ``name`` read from ``location`` (main table ``table``, default ``name``)."""
    table = table or name
    if not _TABLE.match(table):
        raise InferError(f"INFER-003 '{table}' cannot be the main table's name (expressions name columns as "
                         "table.column, so it is a letter, then letters, digits or '_'): give --table NAME.")
    files, partitions = list_files(location)
    found = Found(location_format(location, files, fmt), files, partitions=partitions)
    read_columns(found)
    return render(infer_columns(found, location, temporal_mode), found, location, name, table)

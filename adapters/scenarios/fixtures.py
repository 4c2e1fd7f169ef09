"""The columns of a given CSV or Parquet file of a test, read before Spark.

They come from the CSV header line or the Parquet footer, read as an input location's files are
(:mod:`..input_files`: the header as the first RFC 4180 record without its byte order mark, the
footer with pyarrow), so that a column the dataset does not have (a misspelling) is reported with
the test's place, as for inline rows (TEST-006), instead of being dropped while the declared column
it meant reads as NULL.
"""
from __future__ import annotations

from typing import Optional

from ..inputs.files import InputFileError, footer_columns, scan_csv


def columns(path: str, file_format: str) -> Optional[list[str]]:
    """The column names of a fixture file: its CSV header or its Parquet schema; None when they cannot
    be read here (an empty or malformed CSV, an unreadable file: the read then names the file)."""
    if file_format == "csv":
        try:
            return list(scan_csv(path).header)
        except (InputFileError, OSError):
            return None
    if file_format == "parquet":
        return footer_columns(path, "parquet")
    return None

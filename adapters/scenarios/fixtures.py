"""The columns of a given CSV or Parquet file of a test, read before Spark.

They come from the CSV header line or the Parquet footer, so that a column the dataset does not
have (a misspelling) is reported with the test's place, as for inline rows (TEST-006), instead of
being dropped while the declared column it meant reads as NULL.
"""
from __future__ import annotations

import csv
from typing import Optional


def columns(path: str, file_format: str) -> Optional[list[str]]:
    """The column names of a fixture file: its CSV header line (a UTF-8 byte order mark dropped) or its
    Parquet schema; None when they cannot be read here (Spark's read then reports the file)."""
    try:
        if file_format == "csv":
            with open(path, encoding="utf-8-sig", newline="") as fh:
                return next(csv.reader(fh), [])
        if file_format == "parquet":
            import pyarrow.parquet as pq
            return list(pq.read_schema(path).names)
    except Exception:  # noqa: BLE001 - unreadable here: the read names the file (TEST-008 / the loader)
        return None
    return None

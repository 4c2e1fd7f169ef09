"""The figures of the rows an ``aggregate`` or an ``append`` created, read from an output's staged Parquet files
(docs/checks.md, "What the bridge costs"; :mod:`ledgerflow.compiler.bridge_written` says when they may be).

Each created row is written with its operation's seq in ``_operation_seq`` and, in the files of one write, such
rows come in their own row groups (the lines' row groups hold 0): each file's footer tells which row groups can
hold one, and only those are read, only the columns the figures need. Sums are exact: each column is widened to
a 76-digit decimal before it is summed (Arrow's sum of a 38-digit decimal wraps around silently)."""
from __future__ import annotations

import glob
import os
from decimal import Decimal, localcontext
from typing import Optional

from ...compiler.bridge import BridgeMeasure, metric_name
from ...compiler.bridge_columns import EXACT
from ...compiler.bridge_written import OPERATION_SEQ


def _row_groups(pf, creates: tuple[int, ...]) -> list[int]:
    """The row groups of ``pf`` whose ``_operation_seq`` may hold one of ``creates`` (all when a footer says not)."""
    meta = pf.metadata
    index = meta.schema.names.index(OPERATION_SEQ)
    out = []
    for g in range(meta.num_row_groups):
        stats = meta.row_group(g).column(index).statistics
        if stats is not None and stats.has_min_max and not any(stats.min <= k <= stats.max for k in creates):
            continue
        out.append(g)
    return out


def created_figures(folder: str, creates: tuple[int, ...], rows: str,
                    measures: tuple[BridgeMeasure, ...]) -> dict[str, object]:
    """``metric name -> value`` of each operation of ``creates`` and each of ``measures`` over the rows written to
    ``folder`` (Parquet part files) whose ``_operation_seq`` is that operation's, named as a stage names its
    figures (``rows``: the rows kind of the output's bridge): a count, or the exact sum with NULL as 0."""
    import pyarrow.parquet as pq
    columns = [OPERATION_SEQ, *dict.fromkeys(m.column for m in measures if m.column is not None)]
    totals: dict[str, object] = {metric_name(k, rows, m.name): (0 if m.column is None else Decimal(0).scaleb(-m.scale))
                                 for k in creates for m in measures}
    with localcontext(EXACT):
        for path in sorted(glob.glob(os.path.join(glob.escape(folder), "part-*"))):
            if not path.endswith(".crc"):
                _add(pq.ParquetFile(path), creates, rows, measures, columns, totals)
    return totals


def _add(pf, creates: tuple[int, ...], rows: str, measures: tuple[BridgeMeasure, ...], columns: list[str],
         totals: dict[str, object]) -> None:
    """Add to ``totals`` the figures of the file ``pf`` (a ``pyarrow.parquet.ParquetFile``)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    groups = _row_groups(pf, creates)
    if not groups:
        return
    table = pf.read_row_groups(groups, columns=columns)
    for k in creates:
        mine = table.filter(pc.equal(table[OPERATION_SEQ], k))
        for m in measures:
            name = metric_name(k, rows, m.name)
            if m.column is None:
                totals[name] += mine.num_rows
                continue
            total: Optional[Decimal] = pc.sum(mine[m.column].cast(pa.decimal256(76, m.scale)), min_count=0).as_py()
            totals[name] += total or 0

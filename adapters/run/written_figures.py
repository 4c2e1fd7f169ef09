"""Bridge figures read from an output's staged Parquet files with pyarrow, no Spark job (docs/checks.md, "What the
bridge costs"; :mod:`ledgerflow.compiler.bridge_written` says when the created rows' figures may be).

- :func:`created_figures`: the rows an ``aggregate`` or an ``append`` created, in a period's run. Each is written
  with its operation's seq in ``_operation_seq`` and, in the files of one write, such rows come in their own row
  groups (the lines' row groups hold 0): each file's footer tells which row groups can hold one, and only those
  are read, only the columns the figures need.
- :func:`output_figures`: a fused range's output, one period's folder: its value at the end (the row count from
  the footers, each measured column read and summed) and the created rows' figures, as above.

Sums are exact: a column is summed in its own type only when no sum of that many values can pass 38 digits, else
widened to a 76-digit decimal first (Arrow's sum of a 38-digit decimal wraps around silently); the files' sums
are added up in an exact decimal context."""
from __future__ import annotations

from decimal import Decimal, localcontext
from typing import Optional

from ...compiler.bridge import BridgeMeasure, metric_name
from ...compiler.bridge_columns import EXACT
from ...compiler.bridge_written import OPERATION_SEQ
from ..commit.staging import part_files


def _zero(m: BridgeMeasure):
    return 0 if m.column is None else Decimal(0).scaleb(-m.scale)


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


def _sum(column, m: BridgeMeasure) -> Decimal:
    """The exact sum of a decimal ``column`` (NULL as 0): in its own type when no sum of that many values of its
    precision can pass 38 digits, else widened to 76."""
    import pyarrow as pa
    import pyarrow.compute as pc
    if column.type.precision + len(str(len(column))) > 38:
        column = column.cast(pa.decimal256(76, m.scale))
    total: Optional[Decimal] = pc.sum(column, min_count=0).as_py()
    return total or 0


def _add_created(table, creates: tuple[int, ...], rows: str, measures: tuple[BridgeMeasure, ...],
                 totals: dict) -> None:
    """Add to ``totals`` the created rows' figures of ``table`` (read rows holding ``_operation_seq``)."""
    import pyarrow.compute as pc
    for k in creates:
        mine = table.filter(pc.equal(table[OPERATION_SEQ], k))
        for m in measures:
            name = metric_name(k, rows, m.name)
            totals[name] += mine.num_rows if m.column is None else _sum(mine[m.column], m)


def _columns(measures: tuple[BridgeMeasure, ...], creates: tuple[int, ...]) -> list[str]:
    return [*((OPERATION_SEQ,) if creates else ()), *dict.fromkeys(m.column for m in measures if m.column)]


def _add_file_created(pf, creates: tuple[int, ...], rows: str, measures: tuple[BridgeMeasure, ...],
                      totals: dict) -> None:
    groups = _row_groups(pf, creates)
    if groups:
        _add_created(pf.read_row_groups(groups, columns=_columns(measures, creates)), creates, rows, measures, totals)


def created_figures(folder: str, creates: tuple[int, ...], rows: str,
                    measures: tuple[BridgeMeasure, ...]) -> dict[str, object]:
    """``metric name -> value`` of each operation of ``creates`` and each of ``measures`` over the rows written to
    ``folder`` (Parquet part files) whose ``_operation_seq`` is that operation's, named as a stage names its
    figures (``rows``: the rows kind of the output's bridge): a count, or the exact sum with NULL as 0."""
    import pyarrow.parquet as pq
    totals: dict[str, object] = {metric_name(k, rows, m.name): _zero(m) for k in creates for m in measures}
    with localcontext(EXACT):
        for path in part_files(folder):
            _add_file_created(pq.ParquetFile(path), creates, rows, measures, totals)
    return totals


def output_figures(folder: str, measures: tuple[BridgeMeasure, ...], creates: tuple[int, ...] = (),
                   rows: str = "") -> dict[str, object]:
    """``measure name -> value`` over every row written to ``folder`` (the output's value at the end, as
    :func:`~ledgerflow.compiler.bridge.output_metrics` names it, a sum over no rows 0), and the figures of
    :func:`created_figures` for ``creates``."""
    import pyarrow.parquet as pq
    totals: dict[str, object] = {m.name: _zero(m) for m in measures}
    totals.update({metric_name(k, rows, m.name): _zero(m) for k in creates for m in measures})
    columns = _columns(measures, ())
    with localcontext(EXACT):
        for path in part_files(folder):
            pf = pq.ParquetFile(path)
            table = pf.read(columns=columns) if columns else None
            for m in measures:
                totals[m.name] += pf.metadata.num_rows if m.column is None else _sum(table[m.column], m)
            if creates:
                _add_file_created(pf, creates, rows, measures, totals)
    return totals

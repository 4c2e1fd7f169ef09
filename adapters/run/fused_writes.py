"""A fused range's outputs to local folders: written once for every period, then adopted period by period.

:func:`prestage_outputs` writes each such output of the fused statements with one Spark job, partitioned
by period (:mod:`..commit.prestage`), instead of materialising it and writing it again once per period.
:func:`pending_output` gives a period's run its folder to adopt, and :func:`discard` removes what no run
adopted when the range is over.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

from ...compiler.errors import ExecutionError
from ...compiler.fused import PERIOD_COLUMNS, PERIOD_KEY
from ...compiler.stage import Statement
from ..commit import prestage, staging
from ..commit.destinations import OutputDestination
from ..commit.publish import PendingOutput


@dataclass(frozen=True)
class PrestagedOutput:
    """An output's rows of every period written to ``folder`` for ``destination``; ``rows``: per period its
    row count, for a format whose files do not say (Parquet and ORC footers do: None); ``written``: the periods
    the write gave a folder (a period without one has no rows)."""

    folder: str
    destination: OutputDestination
    rows: Optional[dict[str, int]] = None
    written: frozenset = frozenset()


Prestaged = dict[int, PrestagedOutput]  # output seq -> its prestaged rows


def prestage_outputs(frames: dict, destinations: dict[int, OutputDestination], run_id: str) -> Prestaged:
    """Write every frame of ``frames`` (output seq -> the fused rows of every period, not materialised) to its
    local destination's prestaged folder, one Spark job each."""
    out: Prestaged = {}
    try:
        for seq, frame in frames.items():
            dest = destinations[seq]
            data = _written_columns(frame)
            folder = prestage.write_prestaged(data, PERIOD_KEY, dest.target, dest.format, run_id, dest.within)
            rows = None
            if dest.format not in ("parquet", "orc"):  # counted once for every period, as written
                written = staging.read_staged(data, folder, dest.format)
                rows = {r[0]: r[1] for r in written.groupBy(PERIOD_KEY).count().collect()}
            written_periods = frozenset(name.split("=", 1)[1] for name in os.listdir(folder)
                                        if name.startswith(PERIOD_KEY + "="))
            out[seq] = PrestagedOutput(folder, dest, rows, written_periods)
    except BaseException:
        discard(out)
        raise
    return out


def _written_columns(frame):
    """``frame`` (fused rows of every period) with the columns the prestaged write writes: its own and the period."""
    return frame.drop(*[c for c in PERIOD_COLUMNS.values() if c != PERIOD_KEY])


def read_back(frame, written: PrestagedOutput):
    """The rows of ``frame`` as :func:`prestage_outputs` wrote them for every period (a query of the files)."""
    return staging.read_staged(_written_columns(frame), written.folder, written.destination.format)


def pending_output(statement: Statement, frame, prestaged: Prestaged, period: str,
                   dest: Optional[OutputDestination]) -> Optional[PendingOutput]:
    """``period``'s pending output of ``statement`` from its prestaged rows (``frame``: the period's rows as a
    query, which gives the schema); None when the output was not prestaged for ``dest``."""
    seq = statement.operation.seq
    if seq not in prestaged or prestaged[seq].destination != dest:
        return None
    folder = prestage.period_folder(prestaged[seq].folder, PERIOD_KEY, period)
    if folder is None and period in prestaged[seq].written:  # its rows were written, and are gone (or replaced)
        raise ExecutionError(f"the rows of output {seq} for period {period}, written for the whole range to "
                             f"{prestaged[seq].folder}, are no longer there (removed or replaced while the range "
                             "ran): nothing was published for the period. Run the period again.")
    if folder is None:  # no rows in this period: its run writes an empty partition, as its own run would
        return PendingOutput(statement, frame.limit(0), None)
    counts = prestaged[seq].rows
    return PendingOutput(statement, frame, None if counts is None else counts.get(period, 0), prestaged=folder)


def discard(prestaged: Prestaged) -> None:
    """Remove every prestaged root folder and the period folders in it that no run adopted."""
    for out in prestaged.values():
        prestage.discard_prestaged(out.folder, out.destination.target)

"""The bridge of each period of a fused range (docs/fused.md, "The bridge"), measured once for the range.

A period's own run observes its bridge in the pass that computes it (:mod:`.bridge`). A fused pass holds the
rows of every period, each carrying its period in ``__lf_period_identifier`` and the bridge's columns, so a
period's figure is the same aggregate over that period's rows: :class:`FusedBridge` takes every period's
figures at once, grouped by the period, after the fused statements ran:

- a stage an output reads: :func:`~ledgerflow.compiler.bridge.stage_metrics` over its rows, grouped by period
  (a materialised stage is read from memory; a stage computed by its one output's write is computed again,
  Spark reading only the columns the figures need: the same rows, as the DSL has no non-deterministic or
  order-dependent function, and inputs changed in between fail the periods' input checks before publishing);
- an output: :func:`~ledgerflow.compiler.bridge.output_metrics` over its rows as written for the whole range
  (a column-pruned read of the prestaged files), or over its materialised rows.

Observing every period in the fused pass itself would hold each aggregate once per period (``SUM(IF(period =
P, x, NULL))``): 168 aggregates for a year of pipeline P, which Spark's ``CollectMetrics`` evaluates row by row,
and which doubled the range's time at 10M rows (BENCHMARKS.md section 4). A grouped aggregate is Spark's
compiled hash aggregation. :meth:`FusedBridge.for_period` gives a period's run the :class:`.bridge.BridgeObserver`
its own run would have made, holding that period's figures already read, so :func:`.bridge.collect` records
the same ``bridge`` as a period-by-period run: every figure, and a *not measured* reason when a figure could
not be taken.
"""
from __future__ import annotations

from typing import Any, Optional

from ...compiler.bridge import BridgePlan, output_metrics, stage_metrics
from ...compiler.bridge_written import (MISTAKEN, Stamps, left_out, mistaken, written_creates, written_metrics,
                                        written_names)
from ...compiler.fused import PERIOD_KEY
from ...compiler.periods import Period
from ..commit import prestage
from . import fused_writes, written_figures
from .bridge import BridgeObserver


class Observed:
    """Figures already read: their metrics (``_result``), or why there are none (``_error``), in the shape
    :func:`.observations.completed` and :func:`.observations.read` take (Spark Connect's)."""

    def __init__(self, result: Optional[dict], error: Optional[str] = None):
        self._result = result or {}
        self._error = error

    @property
    def get(self) -> dict:
        """The metrics (raises when there are none, with the reason)."""
        if self._error is not None:
            raise RuntimeError(self._error)
        return self._result


def _grouped(df, metrics: list[tuple[str, str]]) -> dict[str, dict]:
    """Period identifier -> {metric name: value} of ``metrics`` over ``df``'s rows of each period (a period
    with no rows is absent: its counts are 0 and its sums none, as the bridge reads an absent figure)."""
    from pyspark.sql import functions as F
    rows = df.groupBy(PERIOD_KEY).agg(*[F.expr(sql).alias(name) for name, sql in metrics]).collect()
    return {r[0]: {name: r[i + 1] for i, (name, _) in enumerate(metrics)} for r in rows}


class FusedBridge:
    """Every period's bridge of a fused range (see the module docstring)."""

    def __init__(self, plan: BridgePlan, periods: tuple[Period, ...], stamps: Stamps = Stamps()):
        self.plan = plan
        self.periods = periods
        self.stamps = stamps  # the operations whose created rows say so in _operation_seq (bridge_written.stamped)
        self.names: dict[str, list[str]] = {}  # stage view -> the names of every figure it tells
        self.output_names: dict[int, list[str]] = {}  # output seq -> the names of its own figures
        self.written: dict[int, tuple[str, Any, tuple[int, ...]]] = {}  # output seq -> (its stage, the stage's
        # rows, the operations whose created rows' figures are taken from the output's written rows)
        self.stages: dict[str, tuple[Any, list[tuple[str, str]]]] = {}  # stage view -> (its rows, metrics)
        self.stage_of: dict[int, str] = {}  # output seq -> the stage view it reads
        self.outputs: dict[int, tuple[Any, list[tuple[str, str]]]] = {}  # output seq -> (its rows, metrics)
        self.got: dict = {}  # ("stage", view) or ("output", seq) -> period identifier -> figures
        self.missing: dict = {}  # the same key -> why its figures are not measured

    def stage(self, df, stage: str, outputs: list[int]) -> None:
        """Measure, once the fused statements ran, the figures of ``stage`` (its fused rows ``df``, read by the
        outputs ``outputs``) that tell each operation's change."""
        metrics = stage_metrics(self.plan, outputs)
        for seq in outputs:
            self.stage_of[seq] = stage
        if not metrics:  # no operation before these outputs changes a measure
            return
        self.names[stage] = [n for n, _ in metrics]
        creates = written_creates(self.plan, self.stamps, outputs[0]) if len(outputs) == 1 else ()
        if creates:  # their rows left out of the stage's figures: Spark prunes the branches computing them
            self.written[outputs[0]] = (stage, df, creates)
            metrics = stage_metrics(self.plan, outputs, skip=creates) + [mistaken(creates)]
            df = df.where(left_out(creates))
        self.stages[stage] = (df, metrics)

    def output(self, df, seq: int) -> None:
        """Measure, once the fused statements ran, output ``seq``'s value at the end over its fused rows ``df``
        (or over its rows as written for the whole range, see :meth:`measure`)."""
        metrics = output_metrics(self.plan, seq)
        self.output_names[seq] = [n for n, _ in metrics]
        if seq in self.written:  # and the created rows' figures (:meth:`stage`)
            metrics = metrics + written_metrics(self.plan, seq, self.written[seq][2])
        if metrics:
            self.outputs[seq] = (df, metrics)

    def measure(self, prestaged: Optional[dict] = None) -> None:
        """Take every figure, one grouped aggregate per stage and output; an output of ``prestaged`` (seq ->
        :class:`.fused_writes.PrestagedOutput`) is read back from its written files."""
        prestaged = prestaged or {}
        work = {("stage", s): v for s, v in self.stages.items()}
        for seq, (df, metrics) in self.outputs.items():
            if seq in prestaged and self._read_written(seq, prestaged[seq]):
                continue
            if seq in prestaged:
                df = fused_writes.read_back(df, prestaged[seq])
            work[("output", seq)] = (df, metrics)
        for key, (df, metrics) in work.items():
            self._take(key, df, metrics)
        for seq, (stage, rows, creates) in self.written.items():
            self._move_written(seq, stage, rows, creates)

    def _read_written(self, seq: int, written: fused_writes.PrestagedOutput) -> bool:
        """Output ``seq``'s figures of every period read from its prestaged Parquet files, no Spark job
        (:func:`.written_figures.output_figures`); False, nothing taken, when they are not Parquet or unreadable."""
        o = self.plan.output(seq)
        if written.destination.format != "parquet" or o is None:
            return False
        creates = self.written[seq][2] if seq in self.written else ()
        got = {}
        try:
            for period in self.periods:
                folder = prestage.period_folder(written.folder, PERIOD_KEY, period.identifier)
                if folder is not None:
                    got[period.identifier] = written_figures.output_figures(folder, o.measures, creates, o.rows)
        except Exception:  # noqa: BLE001 - not read: Spark reads them back (measure)
            return False
        self.got[("output", seq)] = got
        return True

    def _take(self, key, df, metrics: list[tuple[str, str]]) -> None:
        try:
            self.got[key] = _grouped(df, metrics)
        except Exception as exc:  # noqa: BLE001 - the periods' bridges say why, the rows are written
            self.missing[key] = (f"not measured: Spark failed to compute the range's figures "
                                 f"({type(exc).__name__}: {str(exc).splitlines()[0][:200]})")

    def _move_written(self, seq: int, stage: str, rows, creates: tuple[int, ...]) -> None:
        """The created rows' figures of output ``seq`` join its stage's: from its written rows, unless a live row
        of the stage carried one of their seqs in some period (then from the stage's rows, computed again)."""
        names = written_names(self.plan, seq, creates)
        stage_key, output_key = ("stage", stage), ("output", seq)
        if stage_key in self.missing:
            return
        figures = self.got[stage_key]
        if output_key in self.missing or any(f.get(MISTAKEN) for f in figures.values()):
            key = ("created", seq)
            self._take(key, rows, [m for m in stage_metrics(self.plan, [seq]) if m[0] in names])
            if key in self.missing:
                self.missing[stage_key] = self.missing[key]
                return
            source = self.got[key]
        else:
            source = self.got[output_key]
        for period, got in source.items():
            figures.setdefault(period, {}).update({n: got.get(n) for n in names})

    def _figures(self, key, names: list[str], period: Period) -> Observed:
        if key in self.missing:
            return Observed(None, self.missing[key])
        mine = self.got[key].get(period.identifier, {})
        return Observed({name: mine.get(name) for name in names})

    def for_period(self, period: Period, frames: dict[int, Any]) -> BridgeObserver:
        """The bridge observer of ``period``'s run, whose outputs are ``frames`` (seq -> the period's frame)."""
        observer = BridgeObserver(self.plan)
        observer.stages = {s: self._figures(("stage", s), self.names[s], period) for s in self.stages}
        observer.outputs = {s: self._figures(("output", s), self.output_names[s], period)
                            for s in self.outputs if self.output_names[s]}
        observer.stage_of = dict(self.stage_of)
        observer.frames = dict(frames)
        return observer

"""The bridge of each period of a fused range (docs/fused.md, "The bridge"), observed in the fused pass.

:class:`FusedBridge` observes each fused stage an output reads (and each output with a selector) once, with
every period's figures (:mod:`ledgerflow.compiler.fused_bridge`): no Spark job is added. :meth:`FusedBridge.
for_period` gives a period's run the :class:`.bridge.BridgeObserver` its own run would have made, holding that
period's figures already read, so :func:`.bridge.collect` records the same ``bridge`` as a period-by-period
run: every figure, and the same *not measured* reason when an observation did not arrive.
"""
from __future__ import annotations

import uuid
from typing import Any, Optional

from ...compiler.bridge import BridgePlan, output_metrics, stage_metrics
from ...compiler.fused_bridge import period_metrics, period_values
from ...compiler.periods import Period
from . import observations
from .bridge import BridgeObserver


class Observed:
    """An observation already read: its metrics (``_result``), or why there are none (``_error``), in the
    shape :func:`.observations.completed` and :func:`.observations.read` take (Spark Connect's)."""

    def __init__(self, result: Optional[dict], error: Optional[str] = None):
        self._result = result or {}
        self._error = error

    @property
    def get(self) -> dict:
        """The metrics (raises when there are none, with the reason)."""
        if self._error is not None:
            raise RuntimeError(self._error)
        return self._result


class FusedBridge:
    """The observations of a fused range's bridges (see the module docstring)."""

    def __init__(self, plan: BridgePlan, periods: tuple[Period, ...]):
        self.plan = plan
        self.periods = periods
        self.tag = uuid.uuid4().hex[:12]
        self.stages: dict[str, tuple[Any, list[str]]] = {}  # stage view -> (Observation, metric names)
        self.stage_of: dict[int, str] = {}  # output seq -> the stage view it reads
        self.outputs: dict[int, tuple[Any, list[str]]] = {}  # output seq -> (Observation, metric names)
        self.got: dict = {}
        self.missing: dict = {}

    def _observe(self, df, name: str, metrics: list[tuple[str, str]]):
        from pyspark.sql import Observation
        from pyspark.sql import functions as F
        observation = Observation(f"lf_fused_bridge_{self.tag}_{name}")
        restricted = period_metrics(metrics, self.periods)
        return df.observe(observation, *[F.expr(sql).alias(n) for n, sql in restricted]), observation

    def observe_stage(self, df, stage: str, outputs: list[int]):
        """``df``, the fused rows of ``stage`` (read by the outputs ``outputs``), carrying one observation of
        every period's figures."""
        metrics = stage_metrics(self.plan, outputs)
        for seq in outputs:
            self.stage_of[seq] = stage
        if not metrics:  # no operation before these outputs changes a measure
            return df
        df, observation = self._observe(df, stage, metrics)
        self.stages[stage] = (observation, [n for n, _ in metrics])
        return df

    def observe_output(self, df, seq: int):
        """Output ``seq``'s fused frame carrying every period's measures of its rows (an output with a
        selector; one without is told by its stage)."""
        metrics = output_metrics(self.plan, seq)
        if not metrics:
            return df
        df, observation = self._observe(df, f"out_{seq}", metrics)
        self.outputs[seq] = (observation, [n for n, _ in metrics])
        return df

    def read(self) -> None:
        """Read every observation (after the fused statements ran): see :func:`.observations.read`."""
        self.got, self.missing = observations.read(
            {**{("stage", s): o for s, (o, _) in self.stages.items()},
             **{("output", s): o for s, (o, _) in self.outputs.items()}})

    def _figures(self, key, names: list[str], index: int) -> Observed:
        if key in self.missing:
            return Observed(None, self.missing[key])
        return Observed(period_values(self.got[key], names, index))

    def for_period(self, period: Period, frames: dict[int, Any]) -> BridgeObserver:
        """The bridge observer of ``period``'s run, whose outputs are ``frames`` (seq -> the period's frame)."""
        index = self.periods.index(period)
        observer = BridgeObserver(self.plan)
        observer.stages = {s: self._figures(("stage", s), names, index) for s, (_, names) in self.stages.items()}
        observer.outputs = {s: self._figures(("output", s), names, index) for s, (_, names) in self.outputs.items()}
        observer.stage_of = dict(self.stage_of)
        observer.frames = dict(frames)
        return observer

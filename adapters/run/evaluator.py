"""How a run's outputs are evaluated: the strategies of the one run sequence (:class:`.runner.Runner`).

A strategy answers the run's four hooks, each a named method:

- :meth:`Strategy.places`: partitions the run publishes beside its outputs and quarantines (a restatement's
  outputs the project no longer writes, published empty), found before anything is claimed;
- :meth:`Strategy.compute`: the pending outputs (a period's own Spark work, or a fused range's rows);
- :meth:`Strategy.publishing`: the checks the writes publish with (a restatement wraps them to compute its
  data diff before the swaps);
- :meth:`Strategy.close`: what the strategy leaves behind once its runs are done.

:class:`PeriodRun` is a period's ordinary run; the fused range (:class:`.fused.FusedRange`) and a restatement
(``adapters/periods/restate.py``) are the others. A dry run (``restate --dry-run``, a ``diff --data`` side,
:class:`DryRun`, through :meth:`.scheduler.Scheduler.dry_run`) records nothing: its outputs are computed up to
the write and no further.
"""
from __future__ import annotations

from typing import Callable, Optional, Protocol

from ..commit.destinations import OutputDestination
from ..commit.publish import PendingOutput
from . import compute as period_compute
from .context import RunContext
from .metrics import RunMetrics

Echo = Callable[[str], None]


class Strategy(Protocol):
    """The hooks a run calls (see the module docstring)."""

    def places(self, ctx: RunContext, places: dict, record: dict) -> dict:
        """More partitions the run publishes, by name, beside ``places`` (its outputs and quarantines)."""

    def compute(self, spark, ctx: RunContext, metrics: RunMetrics, echo: Echo,
                destinations: Optional[dict[int, OutputDestination]] = None) -> list[PendingOutput]:
        """The run's pending outputs."""

    def publishing(self, record: dict, ctx: RunContext, checks):
        """The checks (:class:`..commit.publish.OutputChecks` or None) the run's writes publish with."""

    def close(self) -> None:
        """Called once the strategy's runs are over."""


class PeriodRun:
    """A period's ordinary run: its own Spark work (:func:`.compute.compute`), its own checks, nothing more."""

    def places(self, ctx: RunContext, places: dict, record: dict) -> dict:
        """Nothing beside the run's outputs and quarantines."""
        return {}

    def compute(self, spark, ctx: RunContext, metrics: RunMetrics, echo: Echo,
                destinations: Optional[dict[int, OutputDestination]] = None) -> list[PendingOutput]:
        """The period's outputs, computed by :func:`.compute.compute`."""
        return period_compute.compute(spark, ctx, metrics, echo, destinations)

    def publishing(self, record: dict, ctx: RunContext, checks):
        """The run's own checks."""
        return checks

    def close(self) -> None:
        """Nothing to clean up."""


class _Deferred:
    """An output destination as :func:`.compute.compute` reads it: ``local`` makes compute hand the output's
    frame back uncomputed (a run's staged write would compute it; a dry run's comparison does)."""

    local = True
    format = None  # no file is written


class DryRun:
    """A dry run (``restate --dry-run``, each side of ``diff --data``): the outputs computed up to the write and
    no further, each frame handed back uncomputed; nothing written, recorded or printed, so it publishes
    nothing and claims no place. ``load_inputs``: creates the input views (default
    :func:`..inputs.loaders.load_inputs`; ``diff --data`` loads an input both sides read alike once)."""

    def __init__(self, load_inputs: Optional[Callable] = None):
        self.load_inputs = load_inputs

    def places(self, ctx: RunContext, places: dict, record: dict) -> dict:
        """Nothing: a dry run writes no partition."""
        return {}

    def compute(self, spark, ctx: RunContext, metrics: RunMetrics, echo: Echo,
                destinations: Optional[dict[int, OutputDestination]] = None) -> list[PendingOutput]:
        """Each output's frame, uncomputed (its destination taken as local: nothing is staged)."""
        deferred = {st.operation.seq: _Deferred() for st in ctx.compiled.outputs}
        return period_compute.compute(spark, ctx, metrics, echo, deferred, self.load_inputs)

    def publishing(self, record: dict, ctx: RunContext, checks):
        """A dry run never reaches a write: nothing is published, so no check publishes with it."""
        return None

    def close(self) -> None:
        """Nothing to clean up."""

"""One unit of work as one value: a project-period of a batch (:class:`Unit`) and the settings every run of
the invocation shares (:class:`RunSettings`).

The period travels as the :class:`~ledgerflow.compiler.periods.Period` the command line parsed; its
identifier is taken only where a path, a store query or a record needs the text.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ...compiler.periods import Period


@dataclass(frozen=True)
class RunSettings:
    """What the invocation asked, the same for each of its runs: ``--allow-draft``, ``--fail-fast``, ``--mode``
    and the batch the runs record (None: no batch, e.g. a run from Python code)."""

    allow_draft: bool = False
    fail_fast: bool = False
    mode: Optional[str] = "auto"  # None: as the batch ran (retry), or not recorded (one run)
    batch_id: Optional[str] = None


@dataclass(frozen=True)
class Unit:
    """One project-period to run: the project's name, the period, the invocation's settings, and ``upstream``:
    registered dataset -> the version this batch registered for the period earlier ({dataset, version, run_id,
    project}), read instead of the newest (the mapping is the period's, shared as the batch fills it)."""

    project: str
    period: Period
    settings: RunSettings = RunSettings()
    upstream: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def key(self) -> tuple[str, str]:
        """``(project, period identifier)``: how the batch's plan and the run store name the unit."""
        return self.project, self.period.identifier

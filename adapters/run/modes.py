"""How ``ledgerflow run --period RANGE`` executes its periods: ``--mode fused|each|auto``
(docs/commands.md, "Many periods, and retry").

:func:`choose_mode` is the one place that decides. ``each`` runs the project-periods one by one
(:mod:`.batch`); ``fused`` (one Spark job per statement for the whole range) is not built yet, so every
request comes back as ``each`` with the reason, which the command line prints. Fused execution replaces
the body of :func:`choose_mode` (and :func:`.batch.run_batch` hands a ``fused`` answer to it); the
signature and the meaning of the answer stay.
"""
from __future__ import annotations

from typing import Optional

from ...compiler.periods import Period

MODES = ("fused", "each", "auto")
EACH, FUSED = "each", "fused"


def choose_mode(mode: str, project_names: list[str], periods: list[Period],
                workspace: Optional[object] = None) -> tuple[str, str]:
    """How to execute ``project_names`` (in run order) over ``periods`` (ascending) when the user asked
    ``mode`` (one of :data:`MODES`; ``workspace``: the loaded workspace, for a decision that reads the
    projects): ``(EACH or FUSED, reason)``, the reason a sentence fragment saying why it is not fused
    (printed as ``running period by period: <reason>``), or why it is."""
    if mode == EACH:
        return EACH, "--mode each"
    if len(periods) < 2:
        return EACH, "one period"
    return EACH, "fused execution is not available yet"

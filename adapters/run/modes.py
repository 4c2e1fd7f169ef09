"""How ``ledgerflow run --period RANGE`` executes its periods: ``--mode fused|each|auto``
(docs/commands.md, "Many periods, and retry"; docs/fused.md).

:func:`choose_mode` is the one place that decides, per project: ``each`` runs its project-periods one
by one (:mod:`.scheduler`); ``fused`` runs the project's statements once for the whole range and commits
each period as its own run (:func:`.fused.run_range`, one step of a batch: :mod:`.fused_step`). ``fused``
and ``auto`` fuse a project only where the compiler proves it equivalent (:func:`.fused.decide`); otherwise
the project runs period by period and the reason is printed.
"""
from __future__ import annotations

from typing import Optional

from ...compiler.periods import Period

MODES = ("fused", "each", "auto")
EACH, FUSED = "each", "fused"


def choose_mode(mode: str, project_names: list[str], periods: list[Period],
                workspace: Optional[object] = None) -> tuple[str, str]:
    """How to execute ``project_names`` (in run order) over ``periods`` (ascending) when the user asked
    ``mode`` (one of :data:`MODES`; ``workspace``: the loaded workspace, whose projects the decision compiles):
    ``(EACH or FUSED, reason)``, the reason a sentence fragment saying why it is not fused (printed as
    ``running period by period: <reason>``), or how it is."""
    if mode == EACH:
        return EACH, "--mode each"
    if len(periods) < 2:
        return EACH, "one period"
    if workspace is None:
        raise ValueError("choose_mode needs the workspace to decide whether its projects can be fused")
    from .fused import decide  # Spark-side module: imported only when a range may be fused
    return decide(mode, project_names, periods, workspace)

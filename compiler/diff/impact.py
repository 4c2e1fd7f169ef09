"""Impact of a change beyond the projects it touches (CONTRACT.md §7 ``impact``)."""
from __future__ import annotations

from ..model import Workspace
from .result import Impact, ProjectDiff


def impact_of(base: Workspace, head: Workspace, changes: list[ProjectDiff]) -> list[Impact]:
    """The output columns of other projects that read a changed output column through a registered
    dataset, transitively.

    Empty for now: this will walk the workspace graph and column lineage (CONTRACT.md §8, being built
    in parallel): for each changed output column of ``changes`` that is registered as a dataset
    (``register_as_dataset``), the projects reading that dataset and, through their lineage, the
    output columns computed from it — then again from those, until nothing new is reached."""
    return []

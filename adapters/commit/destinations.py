"""Where a run's outputs write, resolved before anything runs, and the rule that no two share a place."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

from ...compiler.errors import ResolutionError
from ..layout.partition_paths import PROD, is_local, local_path


@dataclass(frozen=True)
class OutputDestination:
    """Where one output writes, resolved before anything runs: a folder (``kind`` "path", with its
    ``format``) or a catalog table (``kind`` "table"), at ``version`` (the registered dataset's, else 1).
    ``within``: for a folder a relative path gave, the workspace its real path must stay inside. ``env``: the
    environment the run publishes to (a local folder's partitions of another environment than prod are in
    ``.lf_envs/<env>``, see :mod:`..layout.partition_paths`). ``stands_for``: the catalog table or URI whose rows
    this destination holds for an environment other than prod (:func:`..run.destinations.in_env`)."""

    kind: str
    target: str
    format: str
    version: int
    within: Optional[str] = None
    env: str = PROD
    stands_for: Optional[str] = None

    @property
    def local(self) -> bool:
        """A folder on this machine (staged, then swapped in; see :mod:`.staging` and :mod:`.swaps`)."""
        return self.kind == "path" and is_local(self.target)


def destination_key(dest: OutputDestination) -> tuple[str, str]:
    """What two outputs writing the same place have in common: a table's name (Spark compares names
    case-insensitively), a local folder's real path, a URI without its trailing slash."""
    if dest.kind == "table":
        return "table", dest.target.lower()  # other spellings of one table: spark_writes.qualified_table
    if dest.local:
        return "path", os.path.realpath(local_path(dest.target))
    return "path", dest.target.rstrip("/")


def refuse_shared_destinations(destinations: dict[int, OutputDestination], period: str) -> None:
    """Two outputs of one run may not write the same destination: the later would replace the earlier's
    partition of the period, and the run would record both as written."""
    seen: dict[tuple[str, str], int] = {}
    for seq in sorted(destinations):
        key = destination_key(destinations[seq])
        if key in seen:
            raise ResolutionError(
                f"outputs {seen[key]} and {seq} both write {destinations[seq].target} for period {period}: the "
                f"second would replace the first's rows. Give each output a destination of its own.")
        seen[key] = seq

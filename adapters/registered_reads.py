"""Where a run reads a registered dataset version, refusing a version that does not hold the run's period.

A registered version holds the periods its producing run wrote (the run store's ``periods``), each
a ``_period=P`` partition of its location. Reading it for any other period would read no rows, and
a month-end close must not take an empty input for a real one (nor register a 0-row version of
its own from it). So a version, pinned by ``dataset_version`` or chosen, is read only for a period
it holds and whose partition is still there; otherwise the run stops before Spark starts, naming
the dataset, the version, the period and the versions that do hold it.
"""
from __future__ import annotations

import os

from ..compiler.errors import ResolutionError
from ..compiler.model import Dataset
from ..compiler.periods import Period
from ..compiler.resolver import Resolution, ResolvedLocation
from . import writers


def registered_resolution(dataset: Dataset, version: int, registrations: list[dict], period: Period,
                          pinned: bool) -> Resolution:
    """The resolution of ``dataset`` (registered) at ``version`` for ``period``, from the run store's
    ``registrations`` of it; a ResolutionError when that version is not registered, does not hold
    ``period`` or has lost its partition of it. ``pinned``: the project fixed the version."""
    name, p = dataset.name, period.identifier
    how = " (pinned by dataset_version)" if pinned else ""
    reg = next((r for r in registrations if r["version"] == version), None)
    if reg is None:
        known = ", ".join(str(r["version"]) for r in registrations) or "none yet"
        raise ResolutionError(f"registered dataset '{name}' has no version {version}{how} (registered versions: "
                              f"{known}); pin a registered version or run the producing project first.")
    if p not in reg["periods"]:
        holding = [str(r["version"]) for r in registrations if p in r["periods"]]
        advice = (f"pin a version that holds it ({', '.join(holding)})" if holding else
                  f"run the producing project for {p} first")
        raise ResolutionError(f"registered dataset '{name}' version {version}{how} does not hold period {p} (it "
                              f"holds {', '.join(reg['periods']) or 'no period'}): reading it for {p} would read no "
                              f"rows. Nothing was run; {advice}, or remove the pin to read the newest version "
                              "holding the period.")
    location = reg["location"]
    if writers.is_local(location):
        partition = writers.partition_link(writers.local_path(location), p)
        if not os.path.isdir(partition):
            raise ResolutionError(f"registered dataset '{name}' version {version}{how} holds period {p}, but its "
                                  f"partition {partition} is gone: reading it would read no rows. Nothing was run; "
                                  "run the producing project for the period again to register a new version.")
    return Resolution(dataset.id, name, version, "registered", "registered", "",
                      [ResolvedLocation("path", location, reg["format"], None)])

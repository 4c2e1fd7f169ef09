"""Where a run reads a registered dataset version, refusing a version that does not hold the run's period.

A registered version holds the periods its producing run wrote (the run store's ``periods``), each
a ``_period=P`` partition of its location. Reading it for any other period would read no rows, and
a month-end close must not take an empty input for a real one (nor register a 0-row version of
its own from it). So a version, pinned (a project's ``input_dataset_version``, a join's or an
append source's ``dataset_version``) or chosen, is read only for a period it holds and whose
partition is still there; otherwise the run stops before Spark starts, naming the dataset, the
version, the pin's place, the period and the versions that do hold it.
"""
from __future__ import annotations

import os

from typing import TYPE_CHECKING, Optional

from ...compiler.errors import ResolutionError
from ...compiler.model import AppendOperation, Dataset, DatasetRef, Project, UpdateOperation
from ...compiler.periods import Period
from ..layout.partition_paths import PROD, env_folder, is_local, local_path, partition_link

if TYPE_CHECKING:
    from ...compiler.plan import InputView
    from ...compiler.resolver import Resolution


def versions_holding(registrations: list[dict], period: Period) -> list[int]:
    """The registered versions (of the run store's ``registrations`` of one dataset) holding ``period``."""
    return [r["version"] for r in registrations if period.identifier in r["periods"]]


def version_read(registrations: list[dict], period: str) -> Optional[int]:
    """The version of one registered dataset a run reads for ``period`` (an identifier), from the run store's
    ``registrations`` of it as its environment reads them: of the versions holding the period, those its own
    environment published when there are any (else prod's, per period, like dbt's ``--defer``), and of those the
    one published last (registered, or promoted: a promotion makes the promoted version the one read, whatever
    its number); None when no version holds the period."""
    holding = [r for r in registrations if period in r["periods"]]
    own = [r for r in holding if r.get("shown_in", "prod") != "prod"]
    chosen = own or holding
    if not chosen:
        return None
    return max(chosen, key=lambda r: (r.get("published_at") or r.get("created_at") or "", r["version"]))["version"]


def pin_source(project: Project, view: InputView) -> Optional[str]:
    """Where the version ``view`` reads is pinned, as errors name it (``input_dataset_version at
    projects/p.yml:4:24``); None when it is not pinned."""
    if view.pinned_version is None:
        return None
    for seq, alias in view.uses:
        key, ref = "dataset_version", None
        if seq == 0 and alias is None:
            key, ref = "input_dataset_version", project.input
        for op in project.operations if ref is None else []:
            if op.seq == seq and isinstance(op, UpdateOperation):
                ref = next((j.dataset for j in op.joins if j.alias == alias), ref)
            elif op.seq == seq and isinstance(op, AppendOperation):
                ref = op.source
        if isinstance(ref, DatasetRef) and ref.dataset_version == view.pinned_version:
            place = ref.version_location or ref.location
            return f"{key} at {place}" if place else key
    return "dataset_version"


def registered_resolution(dataset: Dataset, version: int, registrations: list[dict], period: Period,
                          pin: Optional[str] = None) -> Resolution:
    """The resolution of ``dataset`` (registered) at ``version`` for ``period``, from the run store's
    ``registrations`` of it; a ResolutionError when that version is not registered, does not hold
    ``period`` or has lost its partition of it. ``pin``: where the project fixed the version
    (:func:`pin_source`), None when it did not."""
    name, p = dataset.name, period.identifier
    how = f" (pinned by {pin})" if pin else ""
    reg = next((r for r in registrations if r["version"] == version), None)
    if reg is None:
        known = ", ".join(str(r["version"]) for r in registrations) or "none yet"
        raise ResolutionError(f"registered dataset '{name}' has no version {version}{how} (registered versions: "
                              f"{known}); pin a registered version or run the producing project first.")
    if p not in reg["periods"]:
        holding = [str(v) for v in versions_holding(registrations, period)]
        advice = (f"pin a version that holds it ({', '.join(holding)})" if holding else
                  f"run the producing project for {p} first")
        raise ResolutionError(f"registered dataset '{name}' version {version}{how} does not hold period {p} (it "
                              f"holds {', '.join(reg['periods']) or 'no period'}): reading it for {p} would read no "
                              f"rows. Nothing was run; {advice}, or remove the pin to read the newest version "
                              "holding the period.")
    location = reg["location"]
    if is_local(location):
        # the partitions of the environment that shows this version (prod's, or the reading environment's own)
        location = env_folder(location, reg.get("shown_in", PROD))
        partition = partition_link(local_path(location), p)
        if not os.path.isdir(partition):
            raise ResolutionError(f"registered dataset '{name}' version {version}{how} holds period {p}, but its "
                                  f"partition {partition} is gone: reading it would read no rows. Nothing was run; "
                                  "run the producing project for the period again to register a new version.")
    from ...compiler.resolver import Resolution, ResolvedLocation  # the resolver's module, loaded when resolving
    return Resolution(dataset.id, name, version, "registered", "registered", "",
                      [ResolvedLocation("path", location, reg["format"], None)])

"""Which version and which locations every dataset a compiled project reads comes from, for one period.

Resolving is the inputs' job: a pinned version, else the version an upstream project registered in
this invocation, else the newest one holding the period (registered) or the latest active one
(declared); then the dataset's resolver (or the registry, or a DataFrame from memory) gives its
locations, each checked to exist. The run record keeps what was resolved as its resolver snapshot.
"""
from __future__ import annotations

from typing import Optional, Protocol

from ...compiler import resolver as resolver_engine
from ...compiler.compile import CompiledProject
from ...compiler.errors import ResolutionError
from ...compiler.model import Dataset, Project, Workspace
from ...compiler.periods import Period
from ...compiler.resolver import Resolution
from ..store.runstore import RunStore
from . import loaders
from .registered_reads import pin_source, registered_resolution, version_read


class Resolving(Protocol):
    """What :func:`resolve_inputs` reads and fills (a run's context, adapters/run/context.py)."""

    workspace: Workspace
    project: Project
    compiled: CompiledProject
    period: Period
    run_id: str
    resolutions: dict  # filled: view -> Resolution (those made before an error stay)
    upstream: dict
    upstream_runs: list  # filled: the entries of ``upstream`` read


def choose_version(dataset: Dataset, pinned: Optional[int], period: Period, store: RunStore,
                   upstream: Optional[dict] = None) -> int:
    """The version a run reads: the pin, else the version an upstream project registered in this
    invocation (``upstream``), else the latest active (registered: newest holding the period)."""
    if pinned is not None:
        return pinned
    if dataset.registered and upstream and dataset.name in upstream:
        return upstream[dataset.name]["version"]
    if dataset.registered:
        version = version_read(store.registrations(dataset.name), period.identifier)
        if version is None:
            raise ResolutionError(f"registered dataset '{dataset.name}' has no version holding period "
                                  f"{period.identifier}; pin a dataset_version or run the producing project first.")
        return version
    version = dataset.latest_active_version()
    if version is None:
        raise ResolutionError(f"dataset '{dataset.name}' has no active version.")
    return version


def resolve_inputs(ctx: Resolving, store: RunStore, memory: Optional[dict] = None) -> None:
    """Resolve the version and locations of every dataset the compiled SQL reads into ``ctx.resolutions``.

    ``memory`` (dataset id or name -> DataFrame, from the Python API) is read instead of resolving;
    such a location belongs to the run's period."""
    for view in ctx.compiled.inputs:
        ds = view.dataset
        version = choose_version(ds, view.pinned_version, ctx.period, store, ctx.upstream)
        if ds.registered and ds.name in ctx.upstream and version == ctx.upstream[ds.name]["version"] \
                and ctx.upstream[ds.name] not in ctx.upstream_runs:
            ctx.upstream_runs.append(ctx.upstream[ds.name])
        frame = next((memory[k] for k in (ds.id, ds.name) if memory and k in memory), None)
        if frame is not None:
            loc = loaders.register_memory(f"{ctx.run_id}/{view.view}", frame, ctx.period.identifier)
            res = Resolution(ds.id, ds.name, version, "memory", "in_memory", "", [loc])
        elif ds.registered:  # a version lacking the run's period is refused, pinned or not
            res = registered_resolution(ds, version, store.registrations(ds.name), ctx.period,
                                        pin=pin_source(ctx.project, view))
        else:
            res = resolver_engine.resolve(ctx.workspace, ctx.project, ds, version, ctx.period)
        for loc in res.locations:
            loaders.check_exists(loc, ds)
        ctx.resolutions[view.view] = res


def resolver_snapshot(compiled: CompiledProject, resolutions: dict[str, Resolution],
                      fingerprints: Optional[list] = None) -> dict:
    """The run record's resolver snapshot (docs/run-record.md)."""
    snap = {"input_dataset_id": None, "input_dataset_version": None, "input_resolver": None,
            "join_datasets": [], "append_datasets": []}
    for view in compiled.inputs:
        res = resolutions.get(view.view)
        if res is None:  # resolution stopped at an earlier dataset's error
            continue
        entry = {"dataset_id": res.dataset_id, "dataset_name": res.dataset_name, "dataset_version": res.version,
                 "resolver_id": res.resolver_id, "resolver_source": res.resolver_source, "rule": res.rule,
                 "locations": [loc["target"] for loc in res.to_json()["locations"]]}
        for seq, alias in view.uses:
            if view.role == "input" and seq == 0:
                snap.update(input_dataset_id=res.dataset_id, input_dataset_version=res.version,
                            input_resolver=res.resolver_id, input_resolver_source=res.resolver_source,
                            input_locations=entry["locations"])
            elif alias is not None:
                snap["join_datasets"].append({"operation_seq": seq, "alias": alias, **entry})
            else:
                snap["append_datasets"].append({"operation_seq": seq, **entry})
    snap["resolutions"] = {v: r.to_json() for v, r in resolutions.items()}
    # the views whose version the project pinned: a newer version of the others makes the run stale (status)
    snap["pinned_views"] = sorted(v.view for v in compiled.inputs if v.pinned_version is not None)
    if fingerprints is not None:
        snap["input_fingerprints"] = fingerprints
    return snap

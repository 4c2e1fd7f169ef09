"""The data of a dataset's page: what ``ledgerflow datasets show`` prints (columns, types, temporal mode,
versions, a registered dataset's periods and runs from the run store) and what the workspace graph and the
resolver precedence know (readers, the project registering it, the resolver and its rules)."""
from __future__ import annotations

from typing import Callable, Optional

from ...compiler.graph import WorkspaceGraph, node_id, split_id
from ...compiler.model import Dataset, Resolver, Workspace
from ...compiler.resolver import resolver_precedence
from . import ids
from .project_data import source_lines

_LEVELS = {"project_override": "a project's resolver_overrides", "dataset_resolver": "the dataset's resolver_id",
           "system_default": "ledgerflow.yml's default_resolver", "none": "no resolver"}


def _rules(resolver: Optional[Resolver]) -> list[dict]:
    if resolver is None:
        return []
    out = []
    for r in resolver.rules:
        s = r.strategy
        out.append({"name": str(r.name), "data_level": str(r.data_level), "when": str(r.when) if r.when else None,
                    "type": str(s.type), "path": str(s.path) if s.path else None, "format": str(s.format),
                    "table": str(s.table) if s.table else None,
                    "line": r.location.line if r.location else 0})
    return out


def resolver_data(ws: Workspace, ds: Dataset) -> dict:
    """The resolver that finds ``ds``'s data (:func:`~ledgerflow.compiler.resolver.resolver_precedence`) with its
    ordered rules, and the projects that override it."""
    chosen, level = resolver_precedence(ws, None, ds)
    overrides = []
    for p in ws.projects:
        for key in (ds.id, ds.name):
            if key in p.resolver_overrides:
                overrides.append({"project": p.name, "href": ids.project_page(p.name),
                                  "resolver": str(p.resolver_overrides[key])})
                break
    return {"name": chosen, "chosen_by": _LEVELS.get(level, level),
            "rules": _rules(ws.config.resolvers.get(chosen) if chosen else None), "overrides": overrides}


def _neighbours(graph: WorkspaceGraph, node: str) -> tuple[list[dict], list[dict]]:
    """(readers, producers) of a dataset node: projects with their roles and pages."""
    readers, producers = [], []
    if node not in graph:
        return readers, producers
    for target, listed in graph.out_edges(node):
        name = split_id(target)[1]
        readers.append({"project": name, "href": ids.project_page(name), "roles": [e.role for e in listed]})
    for source, listed in graph.in_edges(node):
        name = split_id(source)[1]
        producers.append({"project": name, "href": ids.project_page(name), "roles": [e.role for e in listed]})
    return sorted(readers, key=lambda r: r["project"]), sorted(producers, key=lambda r: r["project"])


def dataset_data(ws: Workspace, graph: WorkspaceGraph, name: str,
                 registrations: Callable[[str], list[dict]]) -> dict:
    """The dataset page's data of ``name`` (a declared dataset, a registered one, or one an output registers
    that no run registered yet); ``registrations``: :meth:`..store.runstore.RunStore.registrations`."""
    readers, producers = _neighbours(graph, node_id("dataset", name))
    ds = ws.find_dataset(name)
    data = {"name": name, "readers": readers, "producers": producers}
    if ds is None:
        data.update({"registered": True, "declared": False, "columns": [], "versions": [], "source": [],
                     "note": "registered by an output that has not run yet: no version exists"})
        return data
    regs = {r["version"]: r for r in registrations(ds.name)} if ds.registered else {}
    versions = []
    for v in ds.versions:
        reg = regs.get(v.version) or {}
        versions.append({"version": v.version, "status": v.status, "periods": list(reg.get("periods") or []),
                         "location": reg.get("location"), "run_id": reg.get("run_id"),
                         "run_href": ids.run_page(reg["run_id"]) if reg.get("run_id") else None})
    data.update({
        "id": str(ds.id), "status": str(ds.status), "table": str(ds.table_name), "temporal_mode": ds.temporal_mode,
        "registered": ds.registered, "declared": not ds.registered, "file": ds.file,
        "description": str(ds.description or ""),
        "columns": [{"name": c.name, "type": c.type, "nullable": c.nullable} for c in ds.columns],
        "versions": versions,
        "resolver": resolver_data(ws, ds) if not ds.registered else None,
        "source": source_lines(ws.root, ds.file) if ds.file and not ds.registered else [],
    })
    return data

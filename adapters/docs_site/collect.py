"""Everything the site shows, gathered once into :class:`Page` objects (a page's file, its kind, title and
data): the workspace graph (as ``ledgerflow dag --format json`` has it), one page per project, per project's
column lineage, per dataset, the runs page and one page per run. A workspace whose files have errors still
gives a site: the errors go on the first page (and the command exits 1)."""
from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Sequence

from ...compiler.dag_view import as_dict
from ...compiler.errors import Diagnostic
from ...compiler.compile import plan_project
from ...compiler.graph import GraphCycle, WorkspaceGraph, edges, split_id
from ...compiler.lineage import LineageWalker
from ...compiler.model import Workspace
from ...compiler.version import version
from ..scenarios.spec import load_all
from . import ids
from .dataset_data import dataset_data
from .layout import LARGE, layered_positions
from .project_data import diagnostic, lineage_data, project_data
from .restatement_data import search_entries, superseding_index
from .run_data import run_data, runs_of, runs_page_data


@dataclass
class Page:
    """One page of the site: its file (relative to the site's root), kind (which script draws it), title and
    data (written as its own ``data/*.js`` script)."""

    path: str
    kind: str
    title: str
    data: dict


@dataclass
class Site:
    """The pages of the site and the errors its first page shows."""

    pages: list[Page] = field(default_factory=list)
    errors: list[Diagnostic] = field(default_factory=list)


def _graph_dict(graph: WorkspaceGraph, ws: Workspace) -> dict:
    """``dag --format json``'s nodes and edges; with a cycle (no order exists) every node and edge, sorted."""
    try:
        return as_dict(graph)
    except GraphCycle:  # no order exists (GRAPH-001, on the first page)
        return {"nodes": [{"id": n, "kind": graph.kind(n)} for n in graph.nodes()],
                "edges": [{"from": e.source, "to": e.target, "role": e.role} for e in edges(ws)]}


def _index(name: str, graph: dict, errors: list[Diagnostic], projects: list[dict], datasets: list[dict],
           runs: int, search: Sequence[dict] = ()) -> Page:
    """The first page; ``search``: entries the search box finds besides the graph's nodes (restatements)."""
    bad = {p["node"] for p in projects if p["errors"]}
    nodes = [{"id": n["id"], "kind": n["kind"], "name": split_id(n["id"])[1], "href": ids.node_page(n["id"]),
              "errors": n["id"] in bad} for n in graph["nodes"]]
    data = {"workspace": name, "version": version(),
            "generated_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "errors": [diagnostic(d) for d in errors], "nodes": nodes, "edges": graph["edges"],
            "projects": projects, "datasets": datasets, "runs": runs, "runs_href": "runs.html", "search": list(search)}
    if len(nodes) >= LARGE:  # drawn at positions computed here, datasets collapsible (see layout.py)
        pairs = [(e["from"], e["to"]) for e in graph["edges"]]
        data["positions"] = layered_positions([n["id"] for n in nodes], pairs)
        data["direct_edges"] = _through_datasets(nodes, pairs)
    return Page("index.html", "index", f"{name or 'workspace'}: ledgerflow docs", data)


def _through_datasets(nodes: list[dict], pairs: list[tuple[str, str]]) -> list[dict]:
    """Project to project edges, one per dataset one writes and the other reads: the graph with its datasets
    collapsed."""
    datasets = {n["id"] for n in nodes if n["kind"] == "dataset"}
    writers: dict[str, list[str]] = {}
    readers: dict[str, list[str]] = {}
    for a, b in pairs:
        if b in datasets and a not in datasets:
            writers.setdefault(b, []).append(a)
        elif a in datasets and b not in datasets:
            readers.setdefault(a, []).append(b)
    found = sorted({(w, r, d) for d in datasets for w in writers.get(d, ()) for r in readers.get(d, ()) if w != r})
    return [{"from": w, "to": r, "dataset": split_id(d)[1]} for w, r, d in found]


def broken_site(errors: list[Diagnostic], name: str = "") -> Site:
    """The site of a workspace that could not be loaded at all: its first page, with the errors."""
    return Site([_index(name, {"nodes": [], "edges": []}, errors, [], [], 0),
                 Page("runs.html", "runs", "runs: ledgerflow docs", {"runs": [], "periods": [], "store": False})],
                errors)


def collect_site(ws: Workspace, store=None, environments: Sequence[str] = (), scripts=None) -> Site:
    """Every page of the site of ``ws``; ``store``: the run store (None when nothing ran in the workspace), in the
    environment the site shows; ``environments``: the lines of ``envs list``; ``scripts``: the compiled scripts
    kept between invocations (:class:`~..compile_out.script_cache.ScriptCache`), or None to compile each."""
    graph = WorkspaceGraph(ws)
    errors: list[Diagnostic] = list(graph.problems())
    runs_data, records = runs_page_data(store, ws, list(environments))
    superseding = superseding_index(records)
    tests = load_all(ws.root)
    pages: list[Page] = []
    projects = []
    walker = LineageWalker(ws, plan_project)  # one walk upstream for every project's lineage page
    if scripts is not None:
        scripts.precompile(ws, sorted(ws.projects, key=lambda p: p.name))
    for project in sorted(ws.projects, key=lambda p: p.name):
        data, plan, problems = project_data(ws, project, tests, runs_of(records, project.name, superseding=superseding),
                                            scripts)
        href = ids.project_page(project.name)
        pages.append(Page(href, "project", f"{project.name}: project", data))
        errors += problems
        if data["lineage_href"]:
            lineage = lineage_data(ws, project, plan, walker)
            pages.append(Page(data["lineage_href"], "lineage", f"{project.name}: column lineage", lineage))
            _link_columns(data, lineage)
        projects.append({"name": project.name, "node": f"project:{project.name}", "href": href,
                         "operations": len(project.operations), "outputs": len(data["outputs"]),
                         "checks": len(data["checks"]), "tests": len(data["tests"]), "errors": len(data["errors"]),
                         "runs": len(data["runs"]), "description": data["description"]})
    registrations = store.registrations if store is not None else (lambda name: [])
    datasets = []
    for node in graph.datasets():
        name = split_id(node)[1]
        data = dataset_data(ws, graph, name, registrations)
        pages.append(Page(ids.dataset_page(name), "dataset", f"{name}: dataset", data))
        datasets.append({"name": name, "href": ids.dataset_page(name), "temporal_mode": data.get("temporal_mode"),
                         "registered": data["registered"], "columns": len(data["columns"]),
                         "readers": len(data["readers"])})
    pages.append(Page("runs.html", "runs", "runs: ledgerflow docs", runs_data))
    for rec in records:
        pages.append(Page(ids.run_page(rec["run_id"]), "run", f"run {rec['run_id']}", run_data(rec, superseding)))
    test_problems = [d for _, _, problems in tests for d in problems]
    site_errors = _unique(errors + test_problems)
    pages.insert(0, _index(ws.config.name, _graph_dict(graph, ws), site_errors, projects, datasets, len(records),
                          search_entries(records)))
    return Site(pages, site_errors)


def _link_columns(project: dict, lineage: dict) -> None:
    """Give each output column of the project page the link to its lineage (``#c=INDEX`` of the lineage page)."""
    index = {(c["output"], c["column"]): i for i, c in enumerate(lineage["columns"])}
    for output in project["outputs"]:
        for column in output["columns"]:
            found = index.get((output["seq"], column["name"]))
            column["lineage_href"] = f"{project['lineage_href']}#c={found}" if found is not None else None


def _unique(found: list[Diagnostic]) -> list[Diagnostic]:
    """Each diagnostic once (a producer's error is reported by each project reading its dataset too)."""
    seen, out = set(), []
    for d in found:
        key = (d.code, str(d.location), d.message)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


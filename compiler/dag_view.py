"""The workspace graph (or a selection of it) as text, JSON, Graphviz dot or Mermaid: ``ledgerflow dag``.

Every format lists nodes in dependency order (ties by id) and edges by their nodes' order then role,
so the output is deterministic. JSON (docs/commands.md, projects feeding projects)::

    {"nodes": [{"id": "project:NAME" | "dataset:NAME", "kind": "project" | "dataset"}],
     "edges": [{"from": ID, "to": ID, "role": "input" | "join" | "append" | "output"}]}
"""
from __future__ import annotations

import json
from typing import Iterable, Optional

from .graph import WorkspaceGraph
from .graph_text import dot_string, mermaid_string
from .visible_text import visible

FORMATS = ("text", "json", "dot", "mermaid")


def as_dict(graph: WorkspaceGraph, nodes: Optional[Iterable[str]] = None) -> dict:
    """The JSON shape of the graph restricted to ``nodes`` (default: all)."""
    order = graph.order(nodes)
    return {"nodes": [{"id": n, "kind": graph.kind(n)} for n in order],
            "edges": [{"from": e.source, "to": e.target, "role": e.role} for e in graph.edge_list(order)]}


def render(graph: WorkspaceGraph, fmt: str, nodes: Optional[Iterable[str]] = None) -> str:
    """The graph in ``fmt`` (one of :data:`FORMATS`)."""
    data = as_dict(graph, nodes)
    return {"text": _text, "json": _json, "dot": _dot, "mermaid": _mermaid}[fmt](data)


def _json(data: dict) -> str:
    return json.dumps(data, indent=2)


def _text(data: dict) -> str:
    """One line per node; a node with parents lists them with their roles."""
    parents: dict[str, list[str]] = {}
    for e in data["edges"]:
        parents.setdefault(e["to"], []).append(f"{e['from']} ({e['role']})")
    width = max((len(n["id"]) for n in data["nodes"]), default=0)
    lines = []
    for n in data["nodes"]:
        inputs = parents.get(n["id"])
        lines.append(f"{n['id']:<{width}}  <- {', '.join(inputs)}" if inputs else n["id"])
    return "\n".join(visible(line) for line in lines)  # a name's escape sequence is shown, never sent


def _dot(data: dict) -> str:
    """A Graphviz digraph; node ids are ``n0``, ``n1``... labelled with the graph's ids (escaped by
    :func:`.graph_text.dot_string`: a name never breaks the source nor merges two nodes)."""
    ids = {n["id"]: f"n{i}" for i, n in enumerate(data["nodes"])}
    lines = ["digraph ledgerflow {", "  rankdir=LR;"]
    for n in data["nodes"]:
        shape = "box" if n["kind"] == "project" else "ellipse"
        lines.append(f"  {ids[n['id']]} [label={dot_string(n['id'])}, shape={shape}];")
    for e in data["edges"]:
        lines.append(f"  {ids[e['from']]} -> {ids[e['to']]} [label={dot_string(e['role'])}];")
    lines.append("}")
    return "\n".join(lines)


def _mermaid(data: dict) -> str:
    """``flowchart LR``; node ids are ``n0``, ``n1``... (Mermaid ids cannot hold ':'), labels the node ids
    (escaped by :func:`.graph_text.mermaid_string`)."""
    ids = {n["id"]: f"n{i}" for i, n in enumerate(data["nodes"])}
    lines = ["flowchart LR"]
    for n in data["nodes"]:
        label = mermaid_string(n["id"])
        lines.append(f'  {ids[n["id"]]}[{label}]' if n["kind"] == "project" else f'  {ids[n["id"]]}[({label})]')
    for e in data["edges"]:
        lines.append(f"  {ids[e['from']]} -->|{e['role']}| {ids[e['to']]}")
    return "\n".join(lines)

"""Renderings of column lineage (:mod:`.lineage`): text, JSON (docs/lineage.md), the OpenLineage
``columnLineage`` dataset facet, Graphviz dot and mermaid. Pure functions, text or dicts out."""
from __future__ import annotations

import json
from typing import Optional

from .graph_text import dot_string, mermaid_string
from .lineage import ColumnLineage, Input
from .lineage_walk import ROW_KINDS
from .model import OutputOperation
from .plan import Plan
from .visible_text import visible

OPENLINEAGE_SCHEMA = "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet"
PRODUCER = "https://github.com/ledgerflow/ledgerflow/tree/0.1.0"

_DESCRIPTION = {
    "identity": "the value of the input column as is",
    "transformation": "computed from the input column",
    "aggregation": "an aggregate over the input column",
    "conditional": "read in the condition that decides the value",
    "join": "read in a runtime join's condition",
    "filter": "read in a filter that decides which rows are written",
    "group_by": "a grouping column of the aggregate that made the rows",
}


def output_names(plan: Plan) -> dict[int, str]:
    """Per output seq, the name of what it writes: its registered dataset, table, catalog table or path."""
    out = {}
    for op in plan.project.operations:
        if not isinstance(op, OutputOperation):
            continue
        d = op.destination
        name = op.register_as_dataset or (d and (d.table or d.catalog_table or d.path)) or f"output_{op.seq}"
        out[op.seq] = str(name)
    return out


def to_json(columns: list[ColumnLineage]) -> dict:
    """docs/lineage.md's JSON: ``{"columns": [{"output", "column", "inputs": [{"dataset", "column", "kind"}]}]}``;
    a column read by checks (docs/checks.md) also has ``"checks": [name, ...]``."""
    return {"columns": [{"output": c.output, "column": c.column,
                         "inputs": [{"dataset": i.dataset, "column": i.column, "kind": i.kind} for i in c.inputs],
                         **({"checks": list(c.checks)} if c.checks else {})}
                        for c in columns]}


def _via(i: Input) -> str:
    return f"  via {', '.join(i.via)}" if i.via else ""


def to_text(columns: list[ColumnLineage], plan: Plan) -> str:
    """One block per output, one paragraph per column: kind, dataset.column, and the registered
    datasets the path went through."""
    names = output_names(plan)
    lines: list[str] = []
    current: Optional[int] = None
    for c in columns:
        if c.output != current:
            current = c.output
            if lines:
                lines.append("")
            lines.append(f"{plan.project.name} output {c.output} ({names.get(c.output, '?')})")
        lines.append(f"  {c.column}")
        for i in c.inputs:
            lines.append(f"    {i.kind:<15} {i.dataset}.{i.column}{_via(i)}")
        if not c.inputs:
            lines.append("    (no input column: a constant or a system value)")
        if c.checks:
            lines.append(f"    {'checked by':<15} {', '.join(c.checks)}")
    return "\n".join(visible(line) for line in lines)  # a name's escape sequence is shown, never sent


def transformation(kind: str) -> dict:
    """A lineage kind as OpenLineage's transformation ``{type, subtype}``: what decides the rows, and a value read
    only in a condition, are INDIRECT; the rest DIRECT."""
    return {"type": "INDIRECT" if kind in ROW_KINDS + ("conditional",) else "DIRECT", "subtype": kind.upper()}


def to_openlineage(columns: list[ColumnLineage], plan: Plan, namespace: str) -> dict:
    """Per output, an OpenLineage output dataset ``{namespace, name, facets: {columnLineage}}``; the
    facet's ``fields`` map each column to its ``inputFields`` with their transformations."""
    names = output_names(plan)
    outputs: dict[int, dict] = {}
    for c in columns:
        facet = outputs.setdefault(c.output, {"_producer": PRODUCER, "_schemaURL": OPENLINEAGE_SCHEMA, "fields": {}})
        fields: dict[tuple[str, str], dict] = {}
        for i in c.inputs:
            field = fields.setdefault((i.dataset, i.column), {"namespace": namespace, "name": i.dataset,
                                                              "field": i.column, "transformations": []})
            description = _DESCRIPTION[i.kind] + (f" (through {', '.join(i.via)})" if i.via else "")
            field["transformations"].append({**transformation(i.kind), "description": description, "masking": False})
        facet["fields"][c.column] = {"inputFields": list(fields.values())}
        rows = facet.setdefault("dataset", [])  # what decides the rows: the union over the columns
        for f in fields.values():
            indirect = [t for t in f["transformations"] if t["subtype"].lower() in ROW_KINDS]
            for t in indirect:
                entry = next((r for r in rows if (r["name"], r["field"]) == (f["name"], f["field"])), None)
                if entry is None:
                    entry = {**{k: f[k] for k in ("namespace", "name", "field")}, "transformations": []}
                    rows.append(entry)
                if t not in entry["transformations"]:
                    entry["transformations"].append(t)
    return {"outputs": [{"namespace": namespace, "name": names.get(seq, f"output_{seq}"),
                         "facets": {"columnLineage": facet}} for seq, facet in outputs.items()]}


def _graph(columns: list[ColumnLineage], plan: Plan):
    """Nodes ``{id: (label, is_output)}`` and edges (from, to, kind, via) shared by dot and mermaid.

    A node is an input (dataset, column) or an output (seq, column) pair; its id is ``n1``, ``n2``...
    in order of appearance, never made from the names, so no two pairs share a node whatever the names
    hold (``cost``.``centers_code`` and ``cost_centers``.``code`` are two nodes)."""
    names = output_names(plan)
    ids: dict[tuple, str] = {}
    nodes: dict[str, tuple[str, bool]] = {}
    edges = []

    def node(key: tuple, label: str, is_out: bool) -> str:
        if key not in ids:
            ids[key] = f"n{len(ids) + 1}"
            nodes[ids[key]] = (label, is_out)
        return ids[key]

    for c in columns:
        out_id = node(("output", c.output, c.column),
                      f"{plan.project.name}.{c.output} ({names.get(c.output, '?')}).{c.column}", True)
        for i in c.inputs:
            in_id = node(("input", i.dataset, i.column), f"{i.dataset}.{i.column}", False)
            edges.append((in_id, out_id, i.kind, " via " + ", ".join(i.via) if i.via else ""))
    return nodes, edges


def to_dot(columns: list[ColumnLineage], plan: Plan) -> str:
    """A Graphviz digraph: input dataset columns -> output columns, edges labelled by kind (row kinds
    dashed); nodes ``"n1"``, ``"n2"``... labelled with their names (escaped: :mod:`.graph_text`)."""
    nodes, edges = _graph(columns, plan)
    lines = [f"digraph {dot_string('lineage ' + plan.project.name)} {{", "  rankdir=LR;"]
    for nid, (label, is_out) in nodes.items():
        lines.append(f"  {dot_string(nid)} [label={dot_string(label)}, shape={'box' if is_out else 'ellipse'}];")
    for a, b, kind, via in edges:
        style = ", style=dashed" if kind in ROW_KINDS or kind == "conditional" else ""
        lines.append(f"  {dot_string(a)} -> {dot_string(b)} [label={dot_string(kind + via)}{style}];")
    lines.append("}")
    return "\n".join(lines)


def to_mermaid(columns: list[ColumnLineage], plan: Plan) -> str:
    """A mermaid flowchart: input dataset columns -> output columns, edges labelled by kind (row kinds dotted)."""
    nodes, edges = _graph(columns, plan)
    lines = ["flowchart LR"]
    for nid, (label, is_out) in nodes.items():
        text = mermaid_string(label)
        lines.append(f"  {nid}[{text}]" if is_out else f"  {nid}([{text}])")
    for a, b, kind, via in edges:
        label = mermaid_string(kind + via)
        arrow = f"-.->|{label}|" if kind in ROW_KINDS or kind == "conditional" else f"-->|{label}|"
        lines.append(f"  {a} {arrow} {b}")
    return "\n".join(lines)


def render(columns: list[ColumnLineage], plan: Plan, fmt: str, namespace: str) -> str:
    """``columns`` in format ``fmt`` (text, json, openlineage, dot, mermaid)."""
    if fmt == "json":
        return json.dumps(to_json(columns), indent=2)
    if fmt == "openlineage":
        return json.dumps(to_openlineage(columns, plan, namespace), indent=2)
    if fmt == "dot":
        return to_dot(columns, plan)
    if fmt == "mermaid":
        return to_mermaid(columns, plan)
    return to_text(columns, plan)

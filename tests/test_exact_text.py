"""Text ledgerflow writes from names a workspace holds, and one-paragraph failures of file-system and
git problems: collision-free file names for projects, escaping in the markdown/HTML/DOT/Mermaid/JUnit
writers, unique graph node ids, `diff` of revisions holding symlinks or many files, `--junit-xml` and
`--out` targets that cannot be written, a damaged run store. No Spark: everything here is offline."""
from __future__ import annotations

import json
import os
import random
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from cli_support import cli, describe
from conftest import copy_workspace
from ledgerflow.adapters.folders import segment

ADVERSARIAL = ["", ".", "..", "...", "a b", "a_b", "a_b-c8687a08", "a/b", "a\\b", "../../escape", "A", "a",
               "Close", "close", "CLOSE", "a.", "a..", ".hidden", "-x", "+", "+2b", "+h", "x\n", "x\r\n", "\x00",
               "con", "é", "e\u0301", "İ", "ß", "SS", "ss", "</details>", "-->", '"q"', "a" * 120, "a" * 121,
               "a" * 500, "A" * 500, "\udcff", "a+20b", "a%20b", "a~20b"]


def clone_project(ws: Path, name: str, source: str = "ts01_output_only", n: int = 1) -> Path:
    """A copy of ``projects/<source>.yml`` as a project of its own called ``name``."""
    text = (ws / "projects" / f"{source}.yml").read_text(encoding="utf-8")
    text = re.sub(r"^id: .*$", f"id: 0e000000-0000-4000-8000-{n:012d}", text, count=1, flags=re.M)
    text = re.sub(r"^name: .*$", "name: " + json.dumps(name), text, count=1, flags=re.M)
    path = ws / "projects" / f"clone_{n}.yml"
    path.write_text(text, encoding="utf-8")
    return path


# ------------------------------------------------------------------------------------ file names
def test_segment_is_injective_for_random_and_adversarial_names_even_when_case_is_folded():
    rng = random.Random(20261128)
    alphabet = "aAbBzZ09_.-+ /\\\n\t\x00é%~:*?<>|\"'"
    names = set(ADVERSARIAL)
    while len(names) < 10_000:
        names.add("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))))
    names = sorted(names)
    segments = [segment(n) for n in names]
    assert len(set(segments)) == len(names)
    assert len({s.casefold() for s in segments}) == len(names)  # macOS / Windows default file systems
    for name, s in zip(names, segments):
        assert s and s not in (".", "..") and re.fullmatch(r"[a-z0-9_.+-]+", s), (name, s)
        assert len(s) <= 120 and not s.endswith(".") and not s.startswith("-"), (name, s)
    assert segment("ts03_fx_conversion") == "ts03_fx_conversion"  # plain names map to themselves


def test_two_projects_never_share_a_compiled_file(finance, tmp_path):
    """`a b` used to be written to `a_b-c8687a08/`, the folder of a project with that very name: one
    project's SQL was lost and `compile --all --check` still said "up to date"."""
    clone_project(finance, "a b", n=1)
    clone_project(finance, "a_b-c8687a08", n=2)
    out = tmp_path / "compiled"
    written = cli(finance, "compile", "--all", "--out", out)
    assert written.exit_code == 0, describe(written)
    files = written.stdout.split("\n")[:-1]
    assert len(files) == len(set(files)) == len(list((finance / "projects").glob("*.yml")))
    first = cli(finance, "compile", "a b").stdout
    second = cli(finance, "compile", "a_b-c8687a08").stdout
    assert first != second
    assert (out / segment("a b") / f"{segment('a b')}.sql").read_text() == first
    assert (out / "a_b-c8687a08" / "a_b-c8687a08.sql").read_text() == second
    (out / segment("a b") / f"{segment('a b')}.sql").unlink()
    check = cli(finance, "compile", "--all", "--check", out)
    assert check.exit_code == 4 and "missing:" in check.stderr, describe(check)


# ------------------------------------------------------------------------------------ graphs
HOSTILE = 'x"y\\z\n</details>--><b>#quot;|`%%\x07\r\u2028;end'
DOT_STRING = r'"(?:[^"\\\n]|\\.)*"'
DOT_NODE = re.compile(rf'^  ("?n\d+"?) \[label=({DOT_STRING}), shape=(?:box|ellipse)\];$')
DOT_EDGE = re.compile(rf'^  ("?n\d+"?) -> ("?n\d+"?) \[label=({DOT_STRING})(?:, style=dashed)?\];$')
MERMAID_LABEL = r'"[^"<>|`\n\x00-\x1f\u2028]*"'
MERMAID_NODE = re.compile(rf'^  (n\d+)(?:\[{MERMAID_LABEL}\]|\(\[{MERMAID_LABEL}\]\)|\[\({MERMAID_LABEL}\)\])$')
MERMAID_EDGE = re.compile(rf'^  (n\d+) (?:-->|-\.->)\|(?:{MERMAID_LABEL}|[a-z]+)\| (n\d+)$')


def dot_text(token: str) -> str:
    """The text of a DOT escString as Graphviz shows it."""
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), token[1:-1])


def parse_dot(source: str) -> tuple[dict, list]:
    """Nodes {id: label} and edges [(from, to)] of a DOT source ledgerflow wrote; every line must be one
    statement (a name that broke a string or a line fails here)."""
    lines = source.splitlines()
    assert lines[0].startswith("digraph ") and re.fullmatch(rf"digraph (?:{DOT_STRING}|\w+) {{", lines[0]), lines[0]
    assert lines[1] == "  rankdir=LR;" and lines[-1] == "}"
    nodes, edges = {}, []
    for line in lines[2:-1]:
        node, edge = DOT_NODE.match(line), DOT_EDGE.match(line)
        assert node or edge, line
        if node:
            assert node.group(1) not in nodes
            nodes[node.group(1)] = dot_text(node.group(2))
        else:
            edges.append((edge.group(1), edge.group(2)))
    assert all(a in nodes and b in nodes for a, b in edges)
    return nodes, edges


def check_mermaid(source: str) -> tuple[set, list]:
    lines = source.splitlines()
    assert lines[0] == "flowchart LR"
    nodes, edges = set(), []
    for line in lines[1:]:
        node, edge = MERMAID_NODE.match(line), MERMAID_EDGE.match(line)
        assert node or edge, line
        if node:
            nodes.add(node.group(1))
        else:
            edges.append((edge.group(1), edge.group(2)))
    assert all(a in nodes and b in nodes for a, b in edges)
    return nodes, edges


def shown(name: str) -> str:
    """What a label shows for ``name``: control characters and line separators as ``\\uXXXX`` text."""
    return name.replace("\x07", "\\u0007").replace("\r", "\\u000d").replace("\u2028", "\\u2028")


def lineage_of(project: str, columns):
    from types import SimpleNamespace
    return columns, SimpleNamespace(project=SimpleNamespace(name=project, operations=[]))


def test_lineage_graph_nodes_are_unique_per_dataset_column_pair():
    """`cost`.`centers_code` and `cost_centers`.`code` used to be one node `i_cost_centers_code`."""
    from ledgerflow.compiler.lineage import ColumnLineage, Input
    from ledgerflow.compiler.lineage_formats import to_dot, to_mermaid
    columns, plan = lineage_of("p", [ColumnLineage(1, "x", [Input("cost", "centers_code", "identity")]),
                                     ColumnLineage(1, "y", [Input("cost_centers", "code", "identity")]),
                                     ColumnLineage(2, "x", [Input("cost", "centers_code", "filter")])])
    nodes, edges = parse_dot(to_dot(columns, plan))
    assert sorted(nodes.values()) == sorted(["cost.centers_code", "cost_centers.code", "p.1 (?).x", "p.1 (?).y",
                                             "p.2 (?).x"])
    by_label = {label: nid for nid, label in nodes.items()}
    assert set(edges) == {(by_label["cost.centers_code"], by_label["p.1 (?).x"]),
                          (by_label["cost_centers.code"], by_label["p.1 (?).y"]),
                          (by_label["cost.centers_code"], by_label["p.2 (?).x"])}
    mermaid_nodes, mermaid_edges = check_mermaid(to_mermaid(columns, plan))
    assert len(mermaid_nodes) == 5 and len(set(mermaid_edges)) == 3


def test_lineage_graph_labels_are_escaped():
    from ledgerflow.compiler.lineage import ColumnLineage, Input
    from ledgerflow.compiler.lineage_formats import to_dot, to_mermaid
    columns, plan = lineage_of(HOSTILE, [ColumnLineage(1, HOSTILE, [Input(HOSTILE, HOSTILE, "join", (HOSTILE,)),
                                                                      Input(HOSTILE + "2", "c", "identity")])])
    dot = to_dot(columns, plan)
    nodes, edges = parse_dot(dot)
    assert len(nodes) == 3 and len(edges) == 2
    assert shown(f"{HOSTILE}.{HOSTILE}") in nodes.values() and shown(f"{HOSTILE}2.c") in nodes.values()
    assert not re.search(r"[\x00-\x08\x0b-\x1f\u2028]", dot)
    mermaid = to_mermaid(columns, plan)
    assert len(check_mermaid(mermaid)[0]) == 3
    assert "#quot;" in mermaid and "#lt;/details#gt;" in mermaid and "#35;quot;" in mermaid


class FakeGraph:
    """The part of WorkspaceGraph dag_view reads."""

    def __init__(self, nodes: list[tuple[str, str]], edges: list[tuple[str, str, str]]):
        from types import SimpleNamespace
        self.nodes, self.edges = nodes, [SimpleNamespace(source=a, target=b, role=r) for a, b, r in edges]

    def order(self, nodes=None):
        return [n for n, _ in self.nodes]

    def kind(self, node):
        return dict(self.nodes)[node]

    def edge_list(self, order):
        return self.edges


def test_dag_dot_and_mermaid_escape_names():
    from ledgerflow.compiler.dag_view import render
    graph = FakeGraph([(f"dataset:{HOSTILE}", "dataset"), (f"project:{HOSTILE}", "project"),
                       ("project:a\\", "project"), ('project:a"', "project")],
                      [(f"dataset:{HOSTILE}", f"project:{HOSTILE}", "input"),
                       (f"project:{HOSTILE}", "project:a\\", "output")])
    dot = render(graph, "dot")
    nodes, edges = parse_dot(dot)
    assert len(nodes) == 4 and len(edges) == 2 and {"project:a\\", 'project:a"'} <= set(nodes.values())
    assert not re.search(r"[\x00-\x08\x0b-\x1f\u2028]", dot)
    mermaid = render(graph, "mermaid")
    assert len(check_mermaid(mermaid)[0]) == 4 and "#lt;b#gt;" in mermaid

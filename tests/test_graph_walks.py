"""The workspace graph's own walks (order, ancestors, descendants, cycles) against networkx's, on random graphs,
and a workspace with registered datasets loaded, ordered and validated without importing networkx."""
from __future__ import annotations

import subprocess
import sys

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from ledgerflow.compiler.graph import DATASET, PROJECT, Edge, GraphCycle, WorkspaceGraph


def _graph(n: int, pairs: list[tuple[int, int]]) -> tuple[WorkspaceGraph, nx.DiGraph]:
    names = [f"{PROJECT if k % 2 else DATASET}:n{k:02d}" for k in range(n)]
    kinds = {name: name.split(":")[0] for name in names}
    listed = [Edge(names[a], names[b], "input") for a, b in pairs if a < n and b < n]
    ours = WorkspaceGraph.__new__(WorkspaceGraph)
    ours._link(kinds, listed)
    theirs = nx.DiGraph()
    theirs.add_nodes_from(names)
    theirs.add_edges_from((e.source, e.target) for e in listed)
    return ours, theirs


_PAIRS = st.lists(st.tuples(st.integers(0, 19), st.integers(0, 19)), max_size=40)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 20), _PAIRS)
def test_walks_agree_with_networkx(n, pairs):
    acyclic = [(a, b) for a, b in pairs if a < b]  # edges forward only: a DAG
    ours, theirs = _graph(n, acyclic)
    assert ours.order() == list(nx.lexicographical_topological_sort(theirs))
    for node in theirs:
        assert ours.ancestors(node) == nx.ancestors(theirs, node)
        assert ours.descendants(node) == nx.descendants(theirs, node)
    assert ours.cycles() == []
    chosen = sorted(theirs)[::2]
    assert ours.order(chosen) == [x for x in nx.lexicographical_topological_sort(theirs) if x in set(chosen)]


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 20), _PAIRS)
def test_a_cycle_has_no_order_and_is_spelled_out(n, pairs):
    ours, theirs = _graph(n, pairs)
    looped = not nx.is_directed_acyclic_graph(theirs)
    cycles = ours.cycles()
    assert bool(cycles) == looped
    for cycle in cycles:  # each a closed walk along real edges
        assert cycle[0] == cycle[-1] and all(theirs.has_edge(u, v) for u, v in zip(cycle, cycle[1:]))
    if looped:
        try:
            ours.order()
        except GraphCycle:
            pass
        else:
            raise AssertionError("a graph with a cycle was ordered")


def test_loading_and_ordering_a_workspace_imports_no_networkx(finance):
    code = ("import sys; from ledgerflow.compiler.workspace import load_workspace; "
            "from ledgerflow.compiler.graph import WorkspaceGraph; "
            f"g = WorkspaceGraph(load_workspace({str(finance)!r})); assert g.project_order(); "
            "assert not g.problems(); print('networkx' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"

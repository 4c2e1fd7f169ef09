"""The positions the docs site's first page draws a large workspace graph at (``docs_site/layout.py``): every
edge points right, no two nodes share a place, a chain stays on one line, a cycle gives none."""
from __future__ import annotations

import random

from ledgerflow.adapters.docs_site.layout import layered_positions


def test_edges_point_right_and_no_two_nodes_share_a_place():
    rng = random.Random(5)
    nodes = [f"n{k}" for k in range(400)]
    edges = [(nodes[a], nodes[b]) for a, b in ((rng.randrange(400), rng.randrange(400)) for _ in range(900)) if a < b]
    placed = layered_positions(nodes, edges)
    assert set(placed) == set(nodes)
    assert all(placed[a][0] < placed[b][0] for a, b in edges)
    assert len({tuple(p) for p in placed.values()}) == len(nodes)


def test_a_chain_is_one_line_and_a_cycle_has_no_positions():
    chain = [f"c{k}" for k in range(1000)]
    placed = layered_positions(chain, list(zip(chain, chain[1:])))
    assert {p[1] for p in placed.values()} == {0} and placed["c999"][0] > placed["c0"][0]
    assert layered_positions(["a", "b"], [("a", "b"), ("b", "a")]) is None

"""Where the first page draws each node of a large workspace graph, computed here rather than in the browser.

The browser's layered layout (dagre) takes seconds past a few hundred nodes; a workspace of 1,000 projects has
about 2,000 (each project and each dataset it reads or registers). From :data:`LARGE` nodes on, the site carries
the positions of a plain layered drawing: each node's column is its longest path from a node nothing points to
(so every edge points right), and within a column nodes are ordered by the mean row of what points to them (one
sweep, left to right), which keeps a chain on one line and a fan-in near its sources. Linear in nodes and edges.
"""
from __future__ import annotations

from collections import deque
from typing import Optional

LARGE = 300  # nodes from which positions are computed here (below: the browser's dagre, the nicer drawing)
COLUMN = 240  # px between columns
ROW = 44  # px between rows


def layered_positions(nodes: list[str], edges: list[tuple[str, str]]) -> Optional[dict[str, list[int]]]:
    """{node: [x, y]} for ``nodes`` joined by ``edges`` (from, to), or None when the edges make a cycle (the first
    page then shows the cycle's error and the browser lays the graph out)."""
    known = set(nodes)
    succ: dict[str, list[str]] = {n: [] for n in nodes}
    pred: dict[str, list[str]] = {n: [] for n in nodes}
    for a, b in edges:
        if a in known and b in known and a != b:
            succ[a].append(b)
            pred[b].append(a)
    waiting = {n: len(pred[n]) for n in nodes}
    queue = deque(n for n in nodes if waiting[n] == 0)
    order: list[str] = []
    while queue:
        n = queue.popleft()
        order.append(n)
        for m in succ[n]:
            waiting[m] -= 1
            if waiting[m] == 0:
                queue.append(m)
    if len(order) != len(nodes):
        return None
    column = {n: 0 for n in nodes}
    for n in order:
        for m in succ[n]:
            column[m] = max(column[m], column[n] + 1)
    row: dict[str, float] = {}
    filled: dict[int, int] = {}
    # nodes of a column in the order of the mean row of their predecessors (sources in workspace order)
    by_column: dict[int, list[str]] = {}
    for n in order:
        by_column.setdefault(column[n], []).append(n)
    for c in sorted(by_column):
        ranked = sorted(by_column[c], key=lambda n: (sum(row[p] for p in pred[n]) / len(pred[n]) if pred[n] else 0.0))
        for n in ranked:
            row[n] = filled.get(c, 0)
            filled[c] = row[n] + 1
    return {n: [column[n] * COLUMN, int(row[n]) * ROW] for n in nodes}

"""The workspace graph: which projects read which datasets, and which project's output registers which.

Nodes are ``project:NAME`` and ``dataset:NAME``; edges run the way data flows: a dataset a project
reads points at the project (role ``input``, ``join`` or ``append``), and a project points at every
dataset one of its outputs registers (role ``output``, ``register_as_dataset``). So a project depends
on its ancestors, and a topological order is a valid run order.

Built from the typed model alone (no binding, no SQL): a dataset reference is resolved by UUID or
name against the declared datasets, the datasets registered in the run store and the names the
projects' outputs register; an unknown reference is left out (binding reports it). The graph is kept
as plain adjacency maps and walked iteratively (no recursion, whatever the depth); networkx is imported
only to spell out a cycle, which only a broken workspace has.

:func:`problems` lists the graph's errors: ``GRAPH-001`` a cycle, spelled out node by node;
``GRAPH-002`` a dataset registered by more than one output.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Iterable, Optional

from .errors import Diagnostic, Location
from .model import AppendOperation, DatasetRef, OutputOperation, Project, UpdateOperation, Workspace
from .registered import registered_id

PROJECT = "project"
DATASET = "dataset"
ROLES = ("input", "join", "append", "output")  # the order edges of one pair are listed in


def node_id(kind: str, name: str) -> str:
    """``project:NAME`` or ``dataset:NAME``."""
    return f"{kind}:{name}"


def split_id(node: str) -> tuple[str, str]:
    """(kind, name) of a node id."""
    kind, _, name = node.partition(":")
    return kind, name


class GraphCycle(ValueError):
    """The workspace graph has a cycle, so it has no order (reported as GRAPH-001 by :meth:`WorkspaceGraph.problems`)."""


@dataclass(frozen=True)
class Edge:
    """One edge of the graph: ``source`` feeds ``target`` in ``role``; ``location`` is the YAML that says so."""

    source: str
    target: str
    role: str
    location: Optional[Location] = None


def has_registrations(ws: Workspace) -> bool:
    """Whether any output of the workspace registers a dataset (else no project feeds another)."""
    return any(isinstance(op, OutputOperation) and op.register_as_dataset for p in ws.projects for op in p.operations)


def registrations(ws: Workspace) -> dict[str, list[tuple[Project, OutputOperation]]]:
    """Registered dataset name -> every (project, output) registering it, in project and seq order.

    A name that is also a declared dataset is left out: the declaration wins (as in the run store)."""
    declared = {d.name for d in ws.datasets if not d.registered}
    out: dict[str, list[tuple[Project, OutputOperation]]] = {}
    for p in ws.projects:
        for op in p.operations:
            if isinstance(op, OutputOperation) and op.register_as_dataset and str(op.register_as_dataset) not in declared:
                out.setdefault(str(op.register_as_dataset), []).append((p, op))
    return out


def dataset_name(ws: Workspace, ref: str, registered: Iterable[str]) -> Optional[str]:
    """The name of the dataset a reference (UUID or name) means, or None when nothing has it. ``registered``'s ids
    are derived once per collection it is given as (a mapping or set reused across calls: one pass each)."""
    ds = ws.find_dataset(ref)
    if ds is not None:
        return ds.name
    names = registered if isinstance(registered, (dict, set, frozenset)) else set(registered)
    if ref in names:
        return ref
    return _ids_of(names).get(ref)


_ID_CACHE: dict[int, tuple[object, dict[str, str]]] = {}


def _ids_of(names) -> dict[str, str]:
    """Registered id -> name for the collection ``names`` (kept while that very collection lives)."""
    kept = _ID_CACHE.get(id(names))
    if kept is None or kept[0] is not names:
        kept = (names, {registered_id(n): n for n in names})
        _ID_CACHE.clear()  # one collection at a time: a workspace's registrations
        _ID_CACHE[id(names)] = kept
    return kept[1]


def project_refs(project: Project) -> list[tuple[DatasetRef, str]]:
    """(dataset reference, role) of every dataset ``project`` reads, in operation order."""
    out = [(project.input, "input")]
    for op in project.operations:
        if isinstance(op, UpdateOperation):
            out += [(j.dataset, "join") for j in op.joins]
        elif isinstance(op, AppendOperation) and op.source is not None:
            out.append((op.source, "append"))
    return [(ref, role) for ref, role in out if ref is not None]


def project_reads(project: Project) -> list[tuple[str, str, Optional[Location]]]:
    """(dataset reference, role, where) of every dataset ``project`` reads, in operation order."""
    return [(ref.dataset_id, role, ref.location) for ref, role in project_refs(project) if ref.dataset_id]


def edges(ws: Workspace) -> list[Edge]:
    """Every edge of the workspace graph (one per role; a pair read twice in one role is one edge)."""
    regs = registrations(ws)
    out: dict[tuple[str, str, str], Edge] = {}
    for p in ws.projects:
        target = node_id(PROJECT, p.name)
        for ref, role, loc in project_reads(p):
            name = dataset_name(ws, str(ref), regs)
            if name is not None:
                out.setdefault((node_id(DATASET, name), target, role), Edge(node_id(DATASET, name), target, role, loc))
    for name, producers in regs.items():
        for p, op in producers:
            key = (node_id(PROJECT, p.name), node_id(DATASET, name), "output")
            loc = op.register_as_dataset.location() if hasattr(op.register_as_dataset, "location") else op.location
            out.setdefault(key, Edge(key[0], key[1], "output", loc))
    return list(out.values())


class WorkspaceGraph:
    """The graph of one workspace: each node's kind, and for each pair of nodes the edges (roles and
    locations) from one to the other, kept both ways."""

    def __init__(self, ws: Workspace):
        self.workspace = ws
        kinds: dict[str, str] = {}
        for p in ws.projects:
            kinds[node_id(PROJECT, p.name)] = PROJECT
        for d in ws.datasets:
            kinds.setdefault(node_id(DATASET, d.name), DATASET)
        for name in registrations(ws):
            kinds.setdefault(node_id(DATASET, name), DATASET)
        self._link(kinds, edges(ws))

    def _link(self, kinds: dict[str, str], listed: Iterable[Edge]) -> None:
        """Keep ``kinds`` (node -> kind) and the ``listed`` edges between them, both ways."""
        self._kinds = kinds
        self._succ: dict[str, dict[str, list[Edge]]] = {n: {} for n in kinds}
        self._pred: dict[str, dict[str, list[Edge]]] = {n: {} for n in kinds}
        for e in listed:
            self._succ[e.source].setdefault(e.target, []).append(e)
            self._pred[e.target][e.source] = self._succ[e.source][e.target]
        self._order: Optional[list[str]] = None
        self._looped = False

    # ------------------------------------------------------------------ queries
    def __contains__(self, node: str) -> bool:
        return node in self._kinds

    def nodes(self) -> list[str]:
        """Every node, sorted."""
        return sorted(self._kinds)

    def kind(self, node: str) -> str:
        """``project`` or ``dataset``."""
        return self._kinds[node]

    def projects(self) -> list[str]:
        """Every project node, sorted."""
        return sorted(n for n, k in self._kinds.items() if k == PROJECT)

    def datasets(self) -> list[str]:
        """Every dataset node, sorted."""
        return sorted(n for n, k in self._kinds.items() if k == DATASET)

    def successors(self, node: str) -> list[str]:
        """The nodes ``node`` feeds directly."""
        return list(self._succ[node])

    def out_edges(self, node: str) -> list[tuple[str, list[Edge]]]:
        """(target, the edges to it) of every node ``node`` feeds directly."""
        return list(self._succ[node].items())

    def in_edges(self, node: str) -> list[tuple[str, list[Edge]]]:
        """(source, the edges from it) of every node feeding ``node`` directly."""
        return list(self._pred[node].items())

    def ancestors(self, node: str) -> set[str]:
        """Every node ``node`` depends on (transitively)."""
        return self._reach(node, self._pred)

    def descendants(self, node: str) -> set[str]:
        """Every node that depends on ``node`` (transitively)."""
        return self._reach(node, self._succ)

    @staticmethod
    def _reach(node: str, links: dict[str, dict[str, list[Edge]]]) -> set[str]:
        seen: set[str] = set()
        todo = [node]
        while todo:
            for other in links[todo.pop()]:
                if other not in seen:
                    seen.add(other)
                    todo.append(other)
        seen.discard(node)
        return seen

    def _full_order(self) -> list[str]:
        """Every node in dependency order, ties broken by id (the smallest ready node first). On a cycle the
        nodes on or after it are left out and :attr:`_looped` says so."""
        if self._order is None:
            waiting = {n: len(self._pred[n]) for n in self._kinds}
            ready = [n for n, k in waiting.items() if k == 0]
            heapq.heapify(ready)
            order = []
            while ready:
                n = heapq.heappop(ready)
                order.append(n)
                for succ in self._succ[n]:
                    waiting[succ] -= 1
                    if waiting[succ] == 0:
                        heapq.heappush(ready, succ)
            self._order, self._looped = order, len(order) < len(self._kinds)
        return self._order

    def order(self, nodes: Optional[Iterable[str]] = None) -> list[str]:
        """``nodes`` (default: all) in dependency order, ties broken by id: deterministic. The order is
        the whole graph's, so two selected projects linked through an unselected one keep their order.
        Raises :class:`GraphCycle` when the graph has a cycle (no order exists)."""
        order = self._full_order()
        if self._looped:
            raise GraphCycle("the workspace graph has a cycle: no order exists (GRAPH-001)")
        if nodes is None:
            return list(order)
        chosen = set(nodes)
        return [n for n in order if n in chosen]

    def project_order(self, nodes: Optional[Iterable[str]] = None) -> list[str]:
        """The project names among ``nodes`` (default: all), in run order."""
        return [split_id(n)[1] for n in self.order(nodes) if self.kind(n) == PROJECT]

    def edge_list(self, nodes: Optional[Iterable[str]] = None) -> list[Edge]:
        """The edges between ``nodes`` (default: all), ordered by the nodes' order then role."""
        order = self.order(nodes)
        index = {n: i for i, n in enumerate(order)}
        found = [e for u in order for v, listed in self._succ[u].items() if v in index for e in listed]
        return sorted(found, key=lambda e: (index[e.source], index[e.target], ROLES.index(e.role)))

    # ------------------------------------------------------------------ problems
    def cycles(self) -> list[list[str]]:
        """One cycle per strongly connected group of nodes, each starting (and ending) at its smallest project."""
        self._full_order()
        if not self._looped:
            return []
        import networkx as nx  # only a broken workspace gets here: spelling a cycle out is networkx's job
        g = nx.DiGraph()
        g.add_nodes_from(self._kinds)
        g.add_edges_from((u, v) for u, targets in self._succ.items() for v in targets)
        out = []
        for component in sorted((sorted(c) for c in nx.strongly_connected_components(g)), key=lambda c: c[0]):
            start = next((n for n in component if self.kind(n) == PROJECT), component[0])
            if len(component) == 1 and not g.has_edge(start, start):
                continue
            sub = g.subgraph(component)
            path = [start]
            # the shortest way back to start from each of its successors gives a simple cycle
            best = None
            for succ in sorted(sub.successors(start)):
                try:
                    back = nx.shortest_path(sub, succ, start)
                except nx.NetworkXNoPath:  # pragma: no cover - impossible inside a component
                    continue
                if best is None or len(back) < len(best):
                    best = back
            out.append(path + (best or [start]))
        return out

    def problems(self) -> list[Diagnostic]:
        """GRAPH-001 (a cycle) and GRAPH-002 (a dataset registered twice) diagnostics."""
        diags = []
        for cycle in self.cycles():
            back = self._succ[cycle[-2]][cycle[-1]][0]  # the read that closes the cycle
            diags.append(Diagnostic(
                "GRAPH-001", "projects depend on each other in a cycle: " + " -> ".join(cycle),
                back.location or Location("<workspace>"), split_id(cycle[-2])[1],
                "a project cannot read, directly or through other projects, a dataset its own output registers; "
                "read a declared dataset or pin the registered one in another project"))
        for name, producers in sorted(registrations(self.workspace).items()):
            if len(producers) > 1:
                where = ", ".join(f"project {p.name} output {op.seq}" for p, op in producers)
                p, op = producers[1]
                loc = op.register_as_dataset.location() if hasattr(op.register_as_dataset, "location") else op.location
                diags.append(Diagnostic("GRAPH-002", f"dataset '{name}' is registered by more than one output ({where})",
                                        loc or Location(p.file), name,
                                        "give each registered dataset one producing output"))
        return diags

"""The workspace graph: which projects read which datasets, and which project's output registers which.

Nodes are ``project:NAME`` and ``dataset:NAME``; edges run the way data flows: a dataset a project
reads points at the project (role ``input``, ``join`` or ``append``), and a project points at every
dataset one of its outputs registers (role ``output``, ``register_as_dataset``). So a project depends
on its ancestors, and a topological order is a valid run order.

Built from the typed model alone (no binding, no SQL): a dataset reference is resolved by UUID or
name against the declared datasets, the datasets registered in the run store and the names the
projects' outputs register; an unknown reference is left out (binding reports it). networkx is
imported only here, and only when a graph is built: a workspace where no output registers a dataset
has no edge between projects and never needs it (:func:`has_registrations`).

:func:`problems` lists the graph's errors: ``GRAPH-001`` a cycle, spelled out node by node;
``GRAPH-002`` a dataset registered by more than one output.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Optional

from .errors import Diagnostic, Location
from .model import AppendOperation, OutputOperation, Project, UpdateOperation, Workspace
from .registered import registered_id

if TYPE_CHECKING:  # pragma: no cover
    import networkx as nx

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


def project_reads(project: Project) -> list[tuple[str, str, Optional[Location]]]:
    """(dataset reference, role, where) of every dataset ``project`` reads, in operation order."""
    out = [(project.input.dataset_id, "input", project.input.location)]
    for op in project.operations:
        if isinstance(op, UpdateOperation):
            out += [(j.dataset.dataset_id, "join", j.dataset.location) for j in op.joins]
        elif isinstance(op, AppendOperation) and op.source is not None:
            out.append((op.source.dataset_id, "append", op.source.location))
    return [r for r in out if r[0]]


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
    """The graph of one workspace (a networkx ``DiGraph``; each edge keeps its roles and locations)."""

    def __init__(self, ws: Workspace):
        import networkx as nx  # here, not at import: it costs ~0.7 s and a plain `compile` never needs it

        self.nx = nx
        self.workspace = ws
        g = nx.DiGraph()
        for p in ws.projects:
            g.add_node(node_id(PROJECT, p.name), kind=PROJECT)
        for d in ws.datasets:
            g.add_node(node_id(DATASET, d.name), kind=DATASET)
        for name in registrations(ws):
            g.add_node(node_id(DATASET, name), kind=DATASET)
        for e in edges(ws):
            if g.has_edge(e.source, e.target):
                g.edges[e.source, e.target]["edges"].append(e)
            else:
                g.add_edge(e.source, e.target, edges=[e])
        self.g: "nx.DiGraph" = g

    # ------------------------------------------------------------------ queries
    def kind(self, node: str) -> str:
        """``project`` or ``dataset``."""
        return self.g.nodes[node]["kind"]

    def projects(self) -> list[str]:
        """Every project node, sorted."""
        return sorted(n for n in self.g if self.kind(n) == PROJECT)

    def datasets(self) -> list[str]:
        """Every dataset node, sorted."""
        return sorted(n for n in self.g if self.kind(n) == DATASET)

    def ancestors(self, node: str) -> set[str]:
        """Every node ``node`` depends on (transitively)."""
        return self.nx.ancestors(self.g, node)

    def descendants(self, node: str) -> set[str]:
        """Every node that depends on ``node`` (transitively)."""
        return self.nx.descendants(self.g, node)

    def order(self, nodes: Optional[Iterable[str]] = None) -> list[str]:
        """``nodes`` (default: all) in dependency order, ties broken by id: deterministic. The order is
        the whole graph's, so two selected projects linked through an unselected one keep their order."""
        chosen = set(self.g) if nodes is None else set(nodes)
        return [n for n in self.nx.lexicographical_topological_sort(self.g) if n in chosen]

    def project_order(self, nodes: Optional[Iterable[str]] = None) -> list[str]:
        """The project names among ``nodes`` (default: all), in run order."""
        return [split_id(n)[1] for n in self.order(nodes) if self.kind(n) == PROJECT]

    def edge_list(self, nodes: Optional[Iterable[str]] = None) -> list[Edge]:
        """The edges between ``nodes`` (default: all), ordered by the nodes' order then role."""
        order = self.order(nodes)
        index = {n: i for i, n in enumerate(order)}
        found = [e for u, v, data in self.g.edges(data=True) if u in index and v in index for e in data["edges"]]
        return sorted(found, key=lambda e: (index[e.source], index[e.target], ROLES.index(e.role)))

    # ------------------------------------------------------------------ problems
    def cycles(self) -> list[list[str]]:
        """One cycle per strongly connected group of nodes, each starting (and ending) at its smallest project."""
        out = []
        for component in sorted((sorted(c) for c in self.nx.strongly_connected_components(self.g)), key=lambda c: c[0]):
            start = next((n for n in component if self.kind(n) == PROJECT), component[0])
            if len(component) == 1 and not self.g.has_edge(start, start):
                continue
            sub = self.g.subgraph(component)
            path = [start]
            # the shortest way back to start from each of its successors gives a simple cycle
            best = None
            for succ in sorted(sub.successors(start)):
                try:
                    back = self.nx.shortest_path(sub, succ, start)
                except self.nx.NetworkXNoPath:  # pragma: no cover - impossible inside a component
                    continue
                if best is None or len(back) < len(best):
                    best = back
            out.append(path + (best or [start]))
        return out

    def problems(self) -> list[Diagnostic]:
        """GRAPH-001 (a cycle) and GRAPH-002 (a dataset registered twice) diagnostics."""
        diags = []
        for cycle in self.cycles():
            back = self.g.edges[cycle[-2], cycle[-1]]["edges"][0]  # the read that closes the cycle
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

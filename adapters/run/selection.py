"""The projects a batch runs: the selection planned and every selected project compiled before anything runs."""
from __future__ import annotations

from typing import Optional

from ...compiler.errors import CompileError, LedgerflowError
from ...compiler.graph import WorkspaceGraph
from ...compiler.selection import selected_projects
from ...compiler.workspace import load_workspace
from ..commit.open_store import open_store


def plan_selection(root: str, select: Optional[str], project: Optional[str] = None,
                   names: Optional[list[str]] = None, env: str = "prod",
                   bind: bool = True) -> tuple[WorkspaceGraph, list[str]]:
    """The graph and the selected project names in run order: those ``select`` selects, the one ``project``
    names (name, id or path), those of ``names`` (``ledgerflow retry``: a name no longer in the workspace is
    an error), or else every project. ``env``: the environment whose registered datasets the projects read.

    Raises :class:`CompileError` (exit 1) with every error of the selected projects; with ``bind`` False (a
    command that computes nothing, such as ``promote``), only the workspace's own errors (its YAML, names and
    dependencies), each project's SQL left unbound."""
    ws = load_workspace(root, extra_datasets=open_store(root, env).registered_datasets)
    graph = WorkspaceGraph(ws)
    if project is not None:
        from ...compiler.project_refs import require_project
        names = [require_project(ws, project).name]
    elif names is not None:
        gone = sorted(set(names) - set(graph.project_order()))
        if gone:
            raise LedgerflowError(f"project{'s' if len(gone) != 1 else ''} {', '.join(gone)} of the batch "
                                  "no longer in the workspace; put it back, or run what is left with `ledgerflow run`.")
        names = [n for n in graph.project_order() if n in set(names)]
    else:
        names = graph.project_order() if select is None else selected_projects(graph, select)
    if bind:  # imported here: binding loads the SQL parser, which promote never needs
        from ...compiler.compile import plan_diagnostics
        diagnostics = [d for name in names for d in plan_diagnostics(ws, ws.find_project(name))]
        if diagnostics:
            raise CompileError(diagnostics)
    return graph, names

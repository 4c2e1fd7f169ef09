"""Node selection over the workspace graph, in dbt's grammar.

A selection is one or more terms separated by spaces; the result is their union. A term is a node,
optionally with ``+`` before it (and everything it depends on) and/or after it (and everything that
depends on it)::

    close_reporting          the project close_reporting
    +close_reporting         it and every project and dataset upstream of it
    close_conversion+        it and everything downstream
    dataset:gl+              the dataset gl and everything that reads it, transitively
    +dataset:close_converted the dataset and what produces it
    project:NAME             explicit project (a bare NAME is a project, else a dataset of that name)

An unknown name is a :class:`SelectionError` (exit 2, a usage error) with a did-you-mean.
"""
from __future__ import annotations

import re

from .errors import LedgerflowError, did_you_mean
from .graph import DATASET, PROJECT, WorkspaceGraph, node_id, split_id

_TERM = re.compile(r"^(?P<up>\+?)(?:(?P<kind>project|dataset):)?(?P<name>[^+\s]+)(?P<down>\+?)$")


class SelectionError(LedgerflowError):
    """A selection that does not parse or names nothing: a command-line usage error."""

    exit_code = 2


def select(graph: WorkspaceGraph, text: str) -> set[str]:
    """The node ids ``text`` selects (see the module docstring)."""
    terms = text.split()
    if not terms:
        raise SelectionError("the selection is empty; name a project, e.g. --select +close_reporting")
    chosen: set[str] = set()
    for term in terms:
        m = _TERM.match(term)
        if not m:
            raise SelectionError(f"cannot read the selector '{term}'; write NAME, +NAME, NAME+, dataset:NAME+ "
                                 "or +dataset:NAME")
        node = _node(graph, m.group("kind"), m.group("name"), term)
        chosen.add(node)
        if m.group("up"):
            chosen |= graph.ancestors(node)
        if m.group("down"):
            chosen |= graph.descendants(node)
    return chosen


def _node(graph: WorkspaceGraph, kind: str, name: str, term: str) -> str:
    """The node a term names; a bare name is a project first, then a dataset."""
    kinds = [kind] if kind else [PROJECT, DATASET]
    for k in kinds:
        if node_id(k, name) in graph:
            return node_id(k, name)
    if kind == DATASET:
        candidates = [split_id(n)[1] for n in graph.datasets()]
        what = "dataset"
    elif kind == PROJECT:
        candidates = [split_id(n)[1] for n in graph.projects()]
        what = "project"
    else:
        candidates = [split_id(n)[1] for n in graph.projects()] + [f"dataset:{split_id(n)[1]}" for n in graph.datasets()]
        what = "project or dataset"
    hint = did_you_mean(name, candidates)
    raise SelectionError(f"--select '{term}': no {what} '{name}' in the workspace" + (f"; {hint}" if hint else ""))


def selected_projects(graph: WorkspaceGraph, text: str) -> list[str]:
    """The names of the projects ``text`` selects, in run order; a selection of no project is an error."""
    names = graph.project_order(select(graph, text))
    if not names:
        raise SelectionError(f"--select '{text}' selects no project (only datasets); add '+' to take the projects "
                             "that read or produce them, e.g. dataset:NAME+")
    return names

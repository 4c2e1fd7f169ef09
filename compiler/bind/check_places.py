"""CHK-007: a quarantine destination (docs/checks.md) is a folder of its own below the workspace.

Like an output's ``{path: ...}`` (:func:`.output.template_path_problem`), it may not be absolute, a URI,
climb out, be the workspace folder or lead out through a link. It may not lie in ledgerflow's own
folders (``target/``, ``.ledgerflow/``) nor overlap (equal, hold or lie inside, compared as real paths) a
place ledgerflow reads or writes for something else: a dataset's location, or a place another writer of
the workspace may write, an output's destination or another check's quarantine destination
(:mod:`..writers`, the one home of that decision). Two quarantines in one folder would each replace the
other's partition of a period: the rows one run quarantined would be lost to the next."""
from __future__ import annotations

from typing import Iterator, Optional

from ..model import Workspace
from ..realpaths import fixed_part
from ..resolver import is_absolute_or_uri, resolver_precedence
from ..writers import Writer, fill, overlap, own_folder_problem, path_place, shared_with
from .output import template_path_problem

HINT = "write a folder of its own below the workspace, e.g. path: out/quarantine/<check name>"
_fill = fill


def _rule_paths(ws: Workspace, resolver: Optional[str]) -> Iterator[str]:
    rules = ws.config.resolvers.get(resolver).rules if resolver in ws.config.resolvers else []
    for rule in rules:
        if rule.strategy.type == "path" and rule.strategy.path and not is_absolute_or_uri(rule.strategy.path):
            yield rule.strategy.path


def dataset_places(ws: Workspace) -> Iterator[tuple[str, str]]:
    """(what, path template relative to the workspace, name tokens filled) of every dataset location."""
    for ds in ws.datasets:
        chosen, _ = resolver_precedence(ws, None, ds)
        for path in _rule_paths(ws, chosen):
            yield f"the location of dataset '{ds.name}'", fixed_part(_fill(path, ds.name, ds.table_name))


def as_run_fills(path: str, check: str) -> str:
    """A quarantine path with ``{{dataset}}`` and ``{{table_name}}`` filled with the check's name, as a run fills
    them (its period tokens stay: they differ per period)."""
    return _fill(path, check, check)


def quarantine_problem(ws: Workspace, path: str, project: str, check: str) -> Optional[str]:
    """Why ``path``, the quarantine destination of ``check`` of ``project``, cannot be one (a clause after "the
    quarantine path 'x' ..."), or None. Places are compared as real paths (:mod:`..writers`)."""
    if is_absolute_or_uri(path) or path.startswith("\\"):
        return "is absolute or a URI; a quarantine destination lies inside the workspace"
    problem = template_path_problem(ws.root, path)
    if problem is not None:
        return problem
    mine = path_place(ws.root, as_run_fills(path, check))
    own = own_folder_problem(ws.root, mine)
    if own is not None:
        return own
    for what, folder in dataset_places(ws):
        if overlap(mine, path_place(ws.root, folder)):
            return f"overlaps {what} ('{folder}')"
    found = shared_with(ws, Writer((project, "check", check), "", (mine,)))
    if found is None:
        return None
    other, _, theirs = found
    whose = "" if other.key[0] == project else f" of project '{other.key[0]}'"
    if other.key[1] == "output":
        return f"overlaps the destination of output {other.key[2]}{whose} ('{theirs.shown}')"
    return (f"overlaps the quarantine destination of check '{other.key[2]}'{whose} ('{theirs.shown}'): each run "
            "would replace the other's quarantined rows")

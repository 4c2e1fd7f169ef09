"""CHK-007: a quarantine destination (docs/checks.md) is a folder of its own below the workspace.

Like an output's ``{path: ...}`` (:func:`.output.template_path_problem`), it may not be absolute, a URI,
climb out, be the workspace folder or lead out through a link. It may not overlap (equal, hold or lie
inside) a place ledgerflow reads or writes for something else: an output's destination folder or a
dataset's location, registered datasets included, or another check's quarantine destination, of any
project of the workspace, as far as their path templates are fixed before a run (the folders before the
first ``{{token}}``, with the dataset's name and table filled in). Two quarantines in one folder would each
replace the other's partition of a period: the rows one run quarantined would be lost to the next."""
from __future__ import annotations

import os
from typing import Iterator, Optional

from ..model import OutputOperation, Workspace
from ..realpaths import fixed_part
from ..resolver import is_absolute_or_uri, resolver_precedence
from .output import template_path_problem

HINT = "write a folder of its own below the workspace, e.g. path: out/quarantine/<check name>"


def _fill(template: str, dataset: str, table: str) -> str:
    return template.replace("{{dataset}}", dataset).replace("{{table_name}}", table)


def _rule_paths(ws: Workspace, resolver: Optional[str]) -> Iterator[str]:
    rules = ws.config.resolvers.get(resolver).rules if resolver in ws.config.resolvers else []
    for rule in rules:
        if rule.strategy.type == "path" and rule.strategy.path and not is_absolute_or_uri(rule.strategy.path):
            yield rule.strategy.path


def places(ws: Workspace) -> Iterator[tuple[str, str]]:
    """(what, fixed folder relative to the workspace) of every dataset location and output destination."""
    for ds in ws.datasets:
        chosen, _ = resolver_precedence(ws, None, ds)
        for path in _rule_paths(ws, chosen):
            yield f"the location of dataset '{ds.name}'", fixed_part(_fill(path, ds.name, ds.table_name))
    for project in ws.projects:
        for op in project.operations:
            d = op.destination if isinstance(op, OutputOperation) else None
            if d is None:
                continue
            what = f"the destination of output {op.seq} of project '{project.name}'"
            if d.kind == "path" and d.path and not is_absolute_or_uri(d.path):
                yield what, fixed_part(str(d.path))
            elif d.kind == "table" and d.table:
                for path in _rule_paths(ws, d.resolver or ws.config.default_resolver):
                    yield what, fixed_part(_fill(path, str(d.table), str(d.table)))


def quarantine_places(ws: Workspace) -> Iterator[tuple[str, str, str]]:
    """(project, check, path) of every check of the workspace that names a relative quarantine path, its name
    tokens filled as a run fills them (:func:`as_run_fills`)."""
    for project in ws.projects:
        for check in project.checks:
            q = check.quarantine
            if q is not None and q.path and not is_absolute_or_uri(str(q.path)):
                yield str(project.name), str(check.name), as_run_fills(str(q.path), str(check.name))


def as_run_fills(path: str, check: str) -> str:
    """A quarantine path with ``{{dataset}}`` and ``{{table_name}}`` filled with the check's name, as a run fills
    them (its period tokens stay: they differ per period)."""
    return _fill(path, check, check)


def _may_be_one(a: str, b: str) -> bool:
    """Whether two folder names of two paths may name one folder: equal text, or one holds a token."""
    return a == b or "{{" in a or "{{" in b


def templates_overlap(a: str, b: str) -> bool:
    """Whether two quarantine paths (tokens left in) may be one folder, or one hold the other, for some period:
    compared folder by folder, a folder name with a token matching any other (so ``q/{{YYYY}}/a`` and
    ``q/{{YYYY}}/b`` never overlap, ``q/{{YYYY}}`` and ``q/2026`` may)."""
    sa, sb = ([x for x in _norm(p).split("/") if x not in ("", ".")] for p in (a, b))
    return all(_may_be_one(x, y) for x, y in zip(sa, sb))


def _norm(path: str) -> str:
    return os.path.normpath(path.replace("\\", "/")).strip("/")


def overlaps(a: str, b: str) -> bool:
    """Whether two folders (relative, normalised) are one, or one holds the other."""
    a, b = _norm(a), _norm(b)
    if a in ("", ".") or b in ("", "."):
        return True  # the workspace folder itself holds everything
    return a == b or a.startswith(b + "/") or b.startswith(a + "/")


def quarantine_problem(ws: Workspace, path: str, project: str, check: str) -> Optional[str]:
    """Why ``path``, the quarantine destination of ``check`` of ``project``, cannot be one (a clause after "the
    quarantine path 'x' ..."), or None."""
    if is_absolute_or_uri(path) or path.startswith("\\"):
        return "is absolute or a URI; a quarantine destination lies inside the workspace"
    problem = template_path_problem(ws.root, path)
    if problem is not None:
        return problem
    mine = fixed_part(path)
    for what, folder in places(ws):
        if overlaps(mine, folder):
            return f"overlaps {what} ('{folder}')"
    filled = as_run_fills(path, check)
    for other_project, other_check, folder in quarantine_places(ws):
        if (other_project, other_check) != (project, check) and templates_overlap(filled, folder):
            whose = "" if other_project == project else f" of project '{other_project}'"
            return (f"overlaps the quarantine destination of check '{other_check}'{whose} ('{folder}'): each run "
                    "would replace the other's quarantined rows")
    return None

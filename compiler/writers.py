"""One writer per destination: every place a run of the workspace may write (an output's destination, a
check's quarantine destination) and whether two of them overlap, the one home of that decision
(docs/workspace.md "One writer per destination").

A place is a folder or a table name, as far as it is known before a run. A folder is compared as a real
path (:func:`os.path.realpath` of its folders before the first ``{{token}}``: a symbolic link inside the
workspace leads where it leads, whatever its text says), then folder by folder after that, a token
standing for the values it can take (``out/{{YYYY}}/a`` and ``out/{{YYYY}}/b`` never overlap, nor do
``out/{{YYYY}}`` and ``out/lines``, nor ``out/r_v{{version}}`` and ``out/d_v{{version}}``; ``out/{{YYYY}}``
and ``out/2026`` may). Two folders overlap when they may be one, or one may hold the other: a run
replaces its partition of a period, so one writer's rows would be lost to the other's run.
A table is compared by its name's parts in lower case (Spark compares names so), from the last: the parts
one name leaves out are the session's (``gl``, ``db.gl`` and ``spark_catalog.db.gl`` may be one table,
``db1.gl`` and ``db2.gl`` are two). ``{{dataset}}`` and ``{{table_name}}`` are filled as a run fills
them (a destination table's name through its resolver's rules, a check's name in its quarantine path).

ledgerflow's own folders, ``.ledgerflow/`` (the run store) and the folders of ``target/`` its commands
write (``runs``, ``compiled``, ``docs``, ``logs``, ``scratch``, ``resolved``), are no destination, nor is a
folder holding one: :func:`own_folder_problem`.
Only links are read here; nothing is created.
"""
from __future__ import annotations

import functools
import os
import re
import weakref
from dataclasses import dataclass
from typing import Iterator, Optional

from .model import OutputOperation, Project, Workspace
from .realpaths import fixed_part, inside
from .resolver import is_absolute_or_uri
from .table_names import split_parts

# what ledgerflow itself writes in a workspace (docs/workspace.md): the run store, and the folders of target/ its
# commands fill (target/ as a whole is a user's too: a destination may be, e.g., target/out)
OWN_FOLDERS = {".ledgerflow": "the run store", "target/runs": "the run records",
               "target/compiled": "compiled SQL", "target/docs": "the docs site", "target/logs": "Spark's log",
               "target/scratch": "compile --resolved's scratch", "target/resolved": "compile --resolved's results"}
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_SPLIT = re.compile(r"[/\\]")


@dataclass(frozen=True)
class Place:
    """Where a writer may write: ``kind`` "path" (``fixed`` a real path, ``rest`` the folder names after it,
    tokens kept), "uri" (``fixed`` the URI's text) or "table" (``fixed`` the name's parts, lower case, joined
    by dots); ``shown`` is what the user wrote (a path, a table) to name it by."""

    kind: str
    fixed: str
    rest: tuple[str, ...]
    shown: str


@dataclass(frozen=True)
class Writer:
    """A writer of the workspace: ``key`` (project name, "output" or "check", seq or check name) tells it
    from the others, ``what`` names it in a message, ``places`` are where it may write."""

    key: tuple[str, str, str]
    what: str
    places: tuple[Place, ...]


def fill(template: str, dataset: str, table: str) -> str:
    """``template`` with ``{{dataset}}`` and ``{{table_name}}`` filled, as a run fills them."""
    return template.replace("{{dataset}}", dataset).replace("{{table_name}}", table)


def path_place(root: str, template: str) -> Place:
    """The place of a path template (relative to the workspace folder ``root``, or absolute, or a URI)."""
    if _URI.match(template) and not os.path.isabs(template):
        return Place("uri", template.rstrip("/"), (), template)
    fixed = fixed_part(template)
    rest = tuple(p for p in _SPLIT.split(template[len(fixed):]) if p not in ("", "."))
    real = os.path.realpath(os.path.join(root, fixed) if fixed else root)
    return Place("path", real, rest, template)


def table_place(name: str) -> Place:
    """The place of a catalog table name."""
    parts = split_parts(name)
    text = ".".join(p[0] for p in parts) if parts else name
    return Place("table", text.lower(), (), name)


_TOKEN = re.compile(r"\{\{[^}]*\}\}")
_NAMED_TOKEN = re.compile(r"\{\{\s*([^}]*?)\s*\}\}")
# what a token's value can be (compiler.resolver.token_values); a name (dataset, table) can be any text
_VALUES = {"version": r"\d+", "YYYY": r"\d{4}", "MM": r"\d{2}", "DD": r"\d{2}", "QQ": r"Q[1-4]",
           "identifier": r"\d{4}(?:-(?:\d{2}|Q[1-4]))?(?:-\d{2})?"}


def _pattern(template: str) -> str:
    """A folder name template as a regular expression: its text as is, each token as the values it can take."""
    parts = _NAMED_TOKEN.split(template)  # text, token name, text, ...
    return "".join(re.escape(part) if n % 2 == 0 else f"(?:{_VALUES.get(part, '.*')})"
                   for n, part in enumerate(parts))


def _may_be_one(a: str, b: str) -> bool:
    """Whether two folder names may name one folder: a name without a token matched against the other, a token
    standing for the values it can take (``{{YYYY}}`` four digits: never ``journal_lines``); two with tokens
    compared by the text before their first token and after their last (``report_r_v{{version}}`` and
    ``report_d_v{{version}}`` never meet)."""
    if a == b:
        return True
    if "{{" not in a and "{{" not in b:
        return False
    if "{{" not in a or "{{" not in b:
        name, template = (a, b) if "{{" not in a else (b, a)
        return re.fullmatch(_pattern(template), name, re.S) is not None
    (head_a, *_, tail_a), (head_b, *_, tail_b) = _TOKEN.split(a), _TOKEN.split(b)
    return (head_a.startswith(head_b) or head_b.startswith(head_a)) and \
        (tail_a.endswith(tail_b) or tail_b.endswith(tail_a))


def _paths_overlap(a: Place, b: Place) -> bool:
    if not inside(b.fixed, a.fixed, strict=False):
        if not inside(a.fixed, b.fixed, strict=False):
            return False
        a, b = b, a  # a's fixed folder holds b's
    below = os.path.relpath(b.fixed, a.fixed)
    b_names = tuple(p for p in below.split(os.sep) if p not in ("", ".")) + b.rest
    return all(_may_be_one(x, y) for x, y in zip(a.rest, b_names))


def _tables_overlap(a: Place, b: Place) -> bool:
    if "{{" in a.fixed or "{{" in b.fixed:
        head_a, head_b = a.fixed.split("{{")[0], b.fixed.split("{{")[0]
        return head_a.startswith(head_b) or head_b.startswith(head_a)
    # a name's missing leading parts are the session's catalog and database: one name may be the other's end
    parts_a, parts_b = a.fixed.split("."), b.fixed.split(".")
    n = min(len(parts_a), len(parts_b))
    return parts_a[-n:] == parts_b[-n:]


def overlap(a: Place, b: Place) -> bool:
    """Whether two places may be one, or one may hold the other (see the module docstring)."""
    if a.kind != b.kind:
        return False
    if a.kind == "path":
        return _paths_overlap(a, b)
    if a.kind == "uri":
        x, y = a.fixed.split("{{")[0], b.fixed.split("{{")[0]
        return x == y or x.startswith(y.rstrip("/") + "/") or y.startswith(x.rstrip("/") + "/")
    return _tables_overlap(a, b)


def own_folder_problem(root: str, place: Place) -> Optional[str]:
    """Why ``place`` cannot be written because it is (in, or holds) one of ledgerflow's own folders of the
    workspace at ``root`` (a clause after "writes to 'x', which ..."), or None."""
    if place.kind != "path":
        return None
    for name, what in OWN_FOLDERS.items():
        if overlap(place, _own_place(root, name)):
            return (f"is or holds '{name}/', ledgerflow's own folder ({what}): a run would write its partitions "
                    "among ledgerflow's files")
    return None


@functools.lru_cache(maxsize=64)
def _own_place(root: str, name: str) -> Place:
    """One of ledgerflow's own folders of the workspace at ``root`` as a place (its real path: read once per
    process, as a workspace's folders do not move while a command runs)."""
    return Place("path", os.path.realpath(os.path.join(root, name)), (), name)


def output_places(ws: Workspace, op: OutputOperation) -> tuple[Place, ...]:
    """Where ``op`` may write: its path, its catalog table, or each place its table's resolver rules give."""
    d = op.destination
    if d is None:
        return ()
    if d.kind == "path" and d.path:
        return (path_place(ws.root, str(d.path)),)
    if d.kind == "catalog_table" and d.catalog_table:
        return (table_place(str(d.catalog_table)),)
    if d.kind != "table" or not d.table:
        return ()
    resolver = ws.config.resolvers.get(d.resolver or ws.config.default_resolver or "")
    out = []
    for rule in resolver.rules if resolver else []:
        st, table = rule.strategy, str(d.table)
        if st.type == "path" and st.path:
            out.append(path_place(ws.root, fill(st.path, table, table)))
        elif st.type == "table" and st.table:
            out.append(table_place(fill(st.table, table, table)))
    return tuple(dict.fromkeys(out))


def project_writers(ws: Workspace, project: Project) -> Iterator[Writer]:
    """Every writer of ``project``: its outputs, then its checks' quarantine destinations (a relative
    path: any other is refused by CHK-007)."""
    name = str(project.name)
    for op in project.operations:
        if isinstance(op, OutputOperation) and op.destination is not None:
            yield Writer((name, "output", str(op.seq)), f"output {op.seq} of project '{name}'", output_places(ws, op))
    for check in project.checks:
        q = check.quarantine
        if q is not None and q.path and not is_absolute_or_uri(str(q.path)):
            place = path_place(ws.root, fill(str(q.path), str(check.name), str(check.name)))
            yield Writer((name, "check", str(check.name)),
                         f"the quarantine destination of check '{check.name}' of project '{name}'", (place,))


class _Index:
    """The places of a workspace's writers, found by where they may meet: a folder by its real path and each
    folder holding it (two folders overlap only when one fixed part holds the other), a table by the last
    part of its name; a templated table name or a URI is compared with every one of its kind. So each writer
    is compared with the few places near it, not with every place of the workspace."""

    def __init__(self, writers: list[Writer]):
        self.writers = writers
        self.order = {id(w): n for n, w in enumerate(writers)}  # the workspace's order: the first one is named
        self.at: dict[str, list[tuple[Writer, Place]]] = {}  # a folder -> the places whose fixed part it is
        self.under: dict[str, list[tuple[Writer, Place]]] = {}  # a folder -> the places at or below it
        self.tables: dict[str, list[tuple[Writer, Place]]] = {}
        self.anywhere: list[tuple[Writer, Place]] = []
        for writer in writers:
            for place in writer.places:
                entry = (writer, place)
                if place.kind == "path":
                    self.at.setdefault(place.fixed, []).append(entry)
                    for folder in _folders(place.fixed):
                        self.under.setdefault(folder, []).append(entry)
                elif place.kind == "table" and "{{" not in place.fixed:
                    self.tables.setdefault(place.fixed.rsplit(".", 1)[-1], []).append(entry)
                else:
                    self.anywhere.append(entry)

    def near(self, place: Place) -> Iterator[tuple[Writer, Place]]:
        """The places that may overlap ``place`` (a superset: :func:`overlap` decides)."""
        if place.kind == "path":
            for folder in _folders(place.fixed):
                yield from self.at.get(folder, ())
            yield from self.under.get(place.fixed, ())
        elif place.kind == "table" and "{{" not in place.fixed:
            yield from self.tables.get(place.fixed.rsplit(".", 1)[-1], ())
            yield from (e for e in self.anywhere if e[1].kind == "table")
        else:
            yield from (e for e in self.anywhere if e[1].kind == place.kind)
            if place.kind == "table":
                yield from (e for entries in self.tables.values() for e in entries)


def _folders(path: str) -> Iterator[str]:
    """``path`` and every folder holding it, up to the root."""
    while True:
        yield path
        parent = os.path.dirname(path)
        if parent == path:
            return
        path = parent


_CACHE: dict[int, tuple[weakref.ref, _Index]] = {}


def workspace_writers(ws: Workspace) -> _Index:
    """Every writer of every project of ``ws``, indexed (worked out once per loaded workspace)."""
    kept = _CACHE.get(id(ws))
    if kept is not None and kept[0]() is ws:
        return kept[1]
    for key in [k for k, (ref, _) in _CACHE.items() if ref() is None]:
        del _CACHE[key]
    found = _Index([w for project in ws.projects for w in project_writers(ws, project)])
    _CACHE[id(ws)] = (weakref.ref(ws), found)
    return found


def shared_with(ws: Workspace, mine: Writer) -> Optional[tuple[Writer, Place, Place]]:
    """The first other writer of ``ws`` (in the order of the workspace's projects) that may write where
    ``mine`` writes, with the two places (``mine``'s first), or None. A writer of a project of the same name
    is ``mine``'s own project as the workspace holds it (a run's snapshot of it included): its other writers
    count, ``mine`` itself not."""
    index = workspace_writers(ws)
    best: Optional[tuple[int, tuple[Writer, Place, Place]]] = None
    for a in mine.places:
        for other, b in index.near(a):
            if other.key == mine.key or not overlap(a, b):
                continue
            rank = index.order[id(other)]
            if best is None or rank < best[0]:
                best = (rank, (other, a, b))
    return None if best is None else best[1]

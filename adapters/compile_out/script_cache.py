"""Compiled scripts kept between invocations, per project (``target/compiled.cache.json``), like dbt's partial
parsing: ``manifest`` and ``docs`` of a workspace of a thousand projects compile again only the projects whose
compile could give other SQL.

A project's key is a SHA-256 of everything its compiled script is made from once it binds without errors: the
workspace's folder; the bytes of ``ledgerflow.yml`` and of the project's file, as the load parsed them (a digest
taken when they were read, never a second read, which could see an edit made meanwhile); each dataset the compiled
SQL reads (every input view of the bound plan): its file's bytes when it is declared, and in any case its identity,
status, temporal mode, versions and typed columns (a registered dataset is known by those, as its readers see it);
ledgerflow's version and the size and modification time of every file of its installed code; and the versions of
the libraries that shape the SQL text (:data:`SHAPING`). Binding is not
skipped: a project's errors are always found afresh, and a project with errors is neither read from nor written
to the cache. Scripts missing from the cache are compiled first, half of them in a forked process when there
are :data:`PARALLEL_MIN_PROJECTS` or more (:meth:`ScriptCache.precompile`). A cached script is used only under an
equal key; after the command the file holds exactly the
scripts of the projects it compiled or used, so it never grows past the workspace. A link or a folder at the
cache's name, a file not in the cache's form, or ``target`` being a link: the cache is not used and nothing is
written.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
from typing import Optional

from ...compiler.compile import compile_plan, plan_project
from ...compiler.model import Dataset, Project, Workspace
from ...compiler.plan import Plan
from ..console.two_processes import can_fork, in_two_processes
from ..store.whole_files import may_keep, write_json_whole

CACHE = os.path.join("target", "compiled.cache.json")
CACHE_VERSION = 1
PARALLEL_MIN_PROJECTS = 100  # scripts to compile from which a second process pays for its start
SHAPING = ("sqlglot", "jinja2", "yaml")  # libraries whose version can change the compiled text


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """ledgerflow's version and the size and modification time of every file of its installed code (compiler,
    adapters, templates): a different ledgerflow may compile the same workspace to other SQL."""
    import importlib
    import importlib.util

    from ...compiler import version as version_module
    digest = hashlib.sha256(version_module.version().encode())
    for module in SHAPING:  # the libraries that shape the SQL text: another version may write other SQL
        version = getattr(importlib.import_module(module), "__version__", "unknown")  # loaded anyway; no scan
        digest.update(f"{module}=={version}\n".encode())
    adapters = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    templates = importlib.util.find_spec("ledgerflow.templates")
    bases = [os.path.dirname(os.path.abspath(version_module.__file__)), adapters,
             *(list(templates.submodule_search_locations) if templates else [])]
    for base in bases:
        for folder, dirs, files in os.walk(base):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith((".py", ".j2")):
                    st = os.stat(os.path.join(folder, name))
                    digest.update(f"{os.path.relpath(os.path.join(folder, name), base)}:{st.st_size}:{st.st_mtime_ns}\n"
                                  .encode())
    return digest.hexdigest()


def _parsed(root: str, relative: str, text_sha256: str) -> bytes:
    """What a key holds of a workspace file: the digest of the text the load parsed (the file read again now could
    hold an edit made since), or, for a file not read by this load, its bytes now."""
    return text_sha256.encode() if text_sha256 else _bytes(root, relative)


def _bytes(root: str, relative: str) -> bytes:
    try:
        with open(os.path.join(root, relative), "rb") as fh:
            return fh.read()
    except OSError:
        return b"\0unreadable\0"


def _dataset_key(ws: Workspace, ds: Dataset) -> bytes:
    seen = repr((ds.id, ds.name, ds.status, ds.table_name, ds.temporal_mode, ds.registered, ds.versions,
                 [(c.name, str(c.type), c.nullable) for c in ds.columns])).encode()
    declared = _parsed(ws.root, ds.file, ds.text_sha256) if ds.file and not ds.registered else b""
    return hashlib.sha256(seen + b"\0" + declared).digest()


def _workspace_key(ws: Workspace) -> bytes:
    """What every project's key shares: ledgerflow's code, the workspace's folder and ``ledgerflow.yml``."""
    digest = hashlib.sha256(code_fingerprint().encode())
    for part in (os.path.abspath(ws.root).encode(),
                 _parsed(ws.root, ws.config.file or "ledgerflow.yml", ws.config.text_sha256)):
        digest.update(hashlib.sha256(part).digest())
    return digest.digest()


def project_key(ws: Workspace, project: Project, plan: Plan, shared: Optional[bytes] = None) -> str:
    """The key of ``project``'s compiled script in ``ws`` with its bound ``plan`` (see the module docstring);
    ``shared``: :func:`_workspace_key` of ``ws`` when already known."""
    digest = hashlib.sha256(shared if shared is not None else _workspace_key(ws))
    for part in (project.file.encode(), _parsed(ws.root, project.file, project.text_sha256)):
        digest.update(hashlib.sha256(part).digest())
    for view in plan.inputs:
        digest.update(view.view.encode() + b"\0" + _dataset_key(ws, view.dataset))
    return digest.hexdigest()


class ScriptCache:
    """The scripts kept under a workspace's ``target/``: :meth:`compiled` answers, :meth:`save` keeps what was
    compiled or used (see the module docstring)."""

    def __init__(self, root: str, fork: bool = True):
        """``fork``: whether :meth:`precompile` may fork (not in a process with threads of its own, such as a
        Dagster code server: a forked copy of a thread holding a lock would wait for it forever)."""
        self.root = root
        self.fork = fork
        self.path = os.path.join(root, CACHE)
        self.kept = self._read()
        self.on_disk = dict(self.kept)  # what save() would write again: nothing to do
        self.used: dict[str, str] = {}
        self._bound: dict[str, tuple[Project, Plan, Optional[str]]] = {}  # project name -> (project, plan, key)
        self._shared: Optional[tuple[Workspace, bytes]] = None

    def _plan_and_key(self, ws: Workspace, project: Project) -> tuple[Plan, Optional[str]]:
        """``project``'s bound plan and its key (None when the plan has errors), each found once per command."""
        kept = self._bound.get(project.name)
        if kept is None or kept[0] is not project:
            if self._shared is None or self._shared[0] is not ws:
                self._shared = (ws, _workspace_key(ws))
            plan = plan_project(ws, project)
            key = None if plan.diagnostics else project_key(ws, project, plan, self._shared[1])
            kept = self._bound[project.name] = (project, plan, key)
        return kept[1], kept[2]

    def _read(self) -> dict[str, str]:
        if not may_keep(self.path) or not os.path.isfile(self.path):
            return {}
        try:
            with open(self.path, encoding="utf-8") as fh:
                kept = json.load(fh)
        except (OSError, ValueError, UnicodeDecodeError):
            return {}
        if not isinstance(kept, dict) or kept.get("version") != CACHE_VERSION or not isinstance(kept.get("scripts"), dict):
            return {}
        return {k: v for k, v in kept["scripts"].items() if isinstance(k, str) and isinstance(v, str)}

    def precompile(self, ws: Workspace, projects: list[Project]) -> None:
        """Compile the scripts of ``projects`` that the cache lacks, on two cores when there are enough of them
        (:data:`PARALLEL_MIN_PROJECTS`; a forked process compiles half, as ``diff`` compiles its base side): the
        first build of a large workspace's manifest or site takes half the time. Each project is bound here first,
        so the forked process inherits the plans; its scripts come back as text."""
        missing = []
        for project in projects:
            plan, key = self._plan_and_key(ws, project)
            if key is not None and key not in self.kept:
                missing.append((key, project, plan))
        if not self.fork or len(missing) < PARALLEL_MIN_PROJECTS or not can_fork():
            return
        # dealt out alternately, largest first: each process gets about half the operations to compile
        work = sorted(missing, key=lambda m: -len(m[1].operations))
        theirs, mine = in_two_processes(lambda: _compiled(work[1::2]), lambda: _compiled(work[0::2]))
        self.kept.update(theirs)
        self.kept.update(mine)

    def compiled(self, ws: Workspace, project: Project) -> tuple[Plan, Optional[str]]:
        """``project``'s bound plan and its compiled script (``ledgerflow compile``'s text, without the final
        newline), or None for the script when the plan has errors (``plan.diagnostics``)."""
        plan, key = self._plan_and_key(ws, project)
        if key is None:
            return plan, None
        text = self.kept.get(key)
        if text is None:
            text = compile_plan(project, plan).script()
        self.used[key] = text
        return plan, text

    def save(self) -> None:
        """Keep the scripts compiled or used by this command (nothing when the cache's place is not ours, or
        when nothing changed)."""
        if not may_keep(self.path) or self.used == self.on_disk:
            return
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        write_json_whole(self.path, {"version": CACHE_VERSION, "scripts": self.used})


def _compiled(work: list[tuple[str, Project, Plan]]) -> dict[str, str]:
    return {key: compile_plan(project, plan).script() for key, project, plan in work}


def plan_and_script(ws: Workspace, project: Project, scripts: Optional[ScriptCache]) -> tuple[Optional[Plan], str, list]:
    """(the bound plan, the compiled script, no errors), or (None, "", the project's errors): from ``scripts``
    when given, else compiled here."""
    if scripts is not None:
        plan, text = scripts.compiled(ws, project)
        return (None, "", list(plan.diagnostics)) if text is None else (plan, text, [])
    plan = plan_project(ws, project)
    if plan.diagnostics:
        return None, "", list(plan.diagnostics)
    return plan, compile_plan(project, plan).script(), []

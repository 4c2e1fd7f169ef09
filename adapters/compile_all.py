"""``ledgerflow compile --all``: every project's SQL written to a folder (``--out``), or the folder
checked against a fresh compile (``--check``, a CI gate keeping committed SQL honest).

The layout is the one ``compile PROJECT --out DIR`` writes: ``DIR/<project>/<project>.sql`` (the
project name made a safe folder name by :func:`.folders.segment`), the script plus a final newline.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..compiler.compile import compile_project
from ..compiler.errors import CompileError, LedgerflowError
from ..compiler.model import Workspace
from . import folders
from .output_paths import write_failed

EXIT_STALE = 4


def relative_path(project_name: str) -> str:
    """``<project>/<project>.sql`` for a project name (a safe path segment)."""
    name = folders.segment(project_name)
    return f"{name}/{name}.sql"


def compile_all(workspace: Workspace) -> dict[str, str]:
    """Every project's file content by relative path; raises :class:`CompileError` with every error of
    every project."""
    out, diagnostics, owner = {}, [], {}
    for project in workspace.projects:
        rel = relative_path(project.name)
        if rel in owner:  # folders.segment is injective: this would be a bug, never a silent overwrite
            raise LedgerflowError(f"projects '{owner[rel]}' and '{project.name}' would both be written to {rel}.")
        owner[rel] = project.name
        try:
            out[rel] = compile_project(workspace, project).script() + "\n"
        except CompileError as err:
            diagnostics += err.diagnostics
    if diagnostics:
        raise CompileError(diagnostics)
    return out


def write_all(workspace: Workspace, folder: str) -> list[str]:
    """Write every project's SQL under ``folder``; returns the paths written."""
    written = []
    for rel, text in compile_all(workspace).items():
        path = os.path.join(folder, *rel.split("/"))
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as err:
            done = f" ({len(written)} written before it)" if written else ""
            raise write_failed(path, err, f"the compiled SQL{done}") from None
        written.append(path)
    return written


@dataclass
class CheckResult:
    """What differs between a folder of compiled SQL and a fresh compile (relative paths)."""

    stale: list[str] = field(default_factory=list)  # present, but not what the compiler writes now
    missing: list[str] = field(default_factory=list)  # a project's file is not there
    extra: list[str] = field(default_factory=list)  # a .sql file of no current project

    @property
    def ok(self) -> bool:
        """Whether the folder is up to date."""
        return not (self.stale or self.missing or self.extra)

    def lines(self, folder: str) -> list[str]:
        """One line per problem, then a hint; or one line saying all is well."""
        if self.ok:
            return []
        out = [f"{what}: {os.path.join(folder, *rel.split('/'))}"
               for what, rels in (("stale", self.stale), ("missing", self.missing), ("extra", self.extra))
               for rel in rels]
        out.append(f"compiled SQL in {folder} is out of date: run `ledgerflow compile --all --out {folder}` "
                   "and commit the result.")
        return out


def check_all(workspace: Workspace, folder: str) -> CheckResult:
    """Compare ``folder`` with a fresh compile of every project (``.sql`` files only, one level deep, as
    ``--out`` writes them; other files are left alone; a file of ``compile --resolved`` is not checked)."""
    expected = compile_all(workspace)
    present = set()
    if os.path.isdir(folder):
        for sub in sorted(os.listdir(folder)):
            path = os.path.join(folder, sub)
            if os.path.isdir(path):
                present |= {f"{sub}/{f}" for f in os.listdir(path) if f == f"{sub}.sql"}
    result = CheckResult()
    for rel, text in sorted(expected.items()):
        if rel not in present:
            result.missing.append(rel)
            continue
        with open(os.path.join(folder, *rel.split("/")), encoding="utf-8", newline="") as fh:
            if fh.read() != text:
                result.stale.append(rel)
    result.extra = sorted(present - set(expected))
    return result


"""``ledgerflow compile --all``: every project's SQL written to a folder (``--out``), or the folder
checked against a fresh compile (``--check``, a CI gate keeping committed SQL honest).

The layout is the one ``compile PROJECT --out DIR`` writes: ``DIR/<project>/<project>.sql`` (the
project name made a safe folder name by :func:`.folders.segment`), the script plus a final newline.

``--out`` also removes the files of projects that are no longer there, or whose folder name changed
(``FX_Close/FX_Close.sql`` became ``+46+58_+43lose/+46+58_+43lose.sql``), so that a folder written
again passes ``--check``: only a regular file of the shape ``<folder>/<folder>.sql`` (no link) that
begins with the header ledgerflow writes (:data:`HEADER`), and its folder when that is left empty.
Anything else is never touched: ``--check`` lists it as extra and says to delete it by hand.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from ...compiler.compile import compile_project
from ...compiler.errors import CompileError, LedgerflowError
from ...compiler.render import comment
from ...compiler.model import Workspace
from ..store.whole_files import write_whole
from . import folders
from .paths import write_failed

EXIT_STALE = 4
HEADER = comment("ledgerflow ").encode("utf-8")  # how every compiled script begins: b"-- ledgerflow "


class CompiledFolderError(LedgerflowError):
    """A file of the compiled folder cannot be read (``--check``)."""

    exit_code = 1


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


def _present(folder: str) -> list[str]:
    """The relative paths ``<sub>/<sub>.sql`` under ``folder`` (whatever they are: file, folder, link)."""
    if not os.path.isdir(folder):
        return []
    present = []
    for sub in sorted(os.listdir(folder)):
        path = os.path.join(folder, sub)
        if os.path.isdir(path) and os.path.lexists(os.path.join(path, f"{sub}.sql")):
            present.append(f"{sub}/{sub}.sql")
    return present


def written_by_ledgerflow(folder: str, rel: str) -> bool:
    """Whether ``folder/rel`` is a file ``--out`` wrote: a regular file (not a link), in a folder that is
    not a link, beginning with :data:`HEADER`."""
    sub = os.path.join(folder, rel.split("/")[0])
    path = os.path.join(folder, *rel.split("/"))
    if os.path.islink(sub) or os.path.islink(path) or not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as fh:
            return fh.read(len(HEADER)) == HEADER
    except OSError:
        return False


def remove_extra(folder: str, expected: dict[str, str]) -> list[str]:
    """Remove what ``--out`` wrote before for a project that no longer has that file (see the module);
    returns the paths removed."""
    removed = []
    for rel in _present(folder):
        if rel in expected or not written_by_ledgerflow(folder, rel):
            continue
        path = os.path.join(folder, *rel.split("/"))
        try:
            os.unlink(path)
        except OSError as err:
            raise write_failed(path, err, "an old compiled file (to be removed)") from None
        removed.append(path)
        try:
            os.rmdir(os.path.dirname(path))  # only when empty: anything else in it stays
        except OSError:
            pass
    return removed


def write_all(workspace: Workspace, folder: str) -> tuple[list[str], list[str]]:
    """Write every project's SQL under ``folder``, then remove the files ledgerflow wrote there for
    projects that no longer have them (:func:`remove_extra`); returns (paths written, paths removed)."""
    written = []
    compiled = compile_all(workspace)
    for rel, text in compiled.items():
        path = os.path.join(folder, *rel.split("/"))
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            write_whole(path, text)  # a link planted at the file's name is replaced, never written through
        except OSError as err:
            done = f" ({len(written)} written before it)" if written else ""
            raise write_failed(path, err, f"the compiled SQL{done}") from None
        written.append(path)
    return written, remove_extra(folder, compiled)


@dataclass
class CheckResult:
    """What differs between a folder of compiled SQL and a fresh compile (relative paths)."""

    stale: list[str] = field(default_factory=list)  # present, but not what the compiler writes now
    missing: list[str] = field(default_factory=list)  # a project's file is not there
    extra: list[str] = field(default_factory=list)  # a .sql file of no current project
    foreign: list[str] = field(default_factory=list)  # extra files --out would not remove (not its own)

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
        hint = f"compiled SQL in {folder} is out of date: run `ledgerflow compile --all --out {folder}`"
        if self.extra and len(self.foreign) < len(self.extra):
            hint += " (it also removes the extra files it wrote)"
        hint += " and commit the result."
        if self.foreign:
            hint += (" Delete by hand what ledgerflow does not remove (not a file it wrote: no ledgerflow "
                     "header, or a link): " + ", ".join(os.path.join(folder, *rel.split("/")) for rel in self.foreign)
                     + ".")
        out.append(hint)
        return out


def check_all(workspace: Workspace, folder: str) -> CheckResult:
    """Compare ``folder`` with a fresh compile of every project (``.sql`` files only, one level deep, as
    ``--out`` writes them; other files are left alone; a file of ``compile --resolved`` is not checked)."""
    expected = compile_all(workspace)
    present = set(_present(folder))
    result = CheckResult()
    for rel, text in sorted(expected.items()):
        if rel not in present:
            result.missing.append(rel)
            continue
        path = os.path.join(folder, *rel.split("/"))
        try:
            with open(path, "rb") as fh:  # bytes: a file that is not UTF-8 is stale, not a traceback
                same = fh.read() == text.encode("utf-8")
        except OSError as err:
            what = "a folder" if os.path.isdir(path) else err.strerror or str(err)
            raise CompiledFolderError(f"compile --all --check cannot read {path}: {what}. It should be the "
                                      f"compiled SQL of a project: remove it, then run `ledgerflow compile --all "
                                      f"--out {folder}`.") from None
        if not same:
            result.stale.append(rel)
    result.extra = sorted(present - set(expected))
    result.foreign = [rel for rel in result.extra if not written_by_ledgerflow(folder, rel)]
    return result


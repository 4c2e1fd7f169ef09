"""One side of a diff: per project, what the comparison needs, as plain data (picklable, no sqlglot).

:func:`summarise_project` compiles a project and keeps its script, its normalised SQL (the statements
without comments or header), and the prints of its plan (:mod:`.prints`). :func:`source_digest` tells
whether anything a project could depend on changed at all, so that an untouched project need not be
compiled on either side.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Optional

from ..checks.plan import Action
from ..check_script import fingerprint
from ..compile import compile_project
from ..model import Project, Workspace
from .prints import OperationPrint, OutputPrint, plan_prints


@dataclass
class ProjectSummary:
    """A compiled project as the diff sees it."""

    name: str
    file_digest: str  # the project's YAML file, byte for byte but its line endings (see _file_bytes)
    script: str  # the compiled script, as `ledgerflow compile` prints it
    normalised_sql: str  # what the script computes: inputs and statements, no comments
    operations: list[OperationPrint] = field(default_factory=list)
    outputs: dict[int, OutputPrint] = field(default_factory=dict)
    datasets: list[str] = field(default_factory=list)  # names of the datasets it reads
    # name -> (fingerprint, quarantines, the output seq it is on: None for the input)
    checks: dict[str, tuple[str, bool, Optional[int]]] = field(default_factory=dict)


def _file_bytes(workspace: Workspace, relative: str) -> bytes:
    """The file's bytes with CRLF line endings read as LF. A revision is read from git as committed (no
    checkout filter), while the working tree may hold the same files with CRLF (``core.autocrlf``,
    ``eol=crlf`` in .gitattributes); YAML reads both endings alike, so only a real edit may count."""
    try:
        with open(os.path.join(workspace.root, relative), "rb") as fh:
            return fh.read().replace(b"\r\n", b"\n")
    except OSError:
        return b""


def file_digest(workspace: Workspace, project: Project) -> str:
    """A hash of the project's YAML file as written (line endings aside: :func:`_file_bytes`)."""
    return hashlib.sha256(_file_bytes(workspace, project.file)).hexdigest()


def declarations_digest(workspace: Workspace) -> str:
    """A hash of everything besides projects that a compile reads: ledgerflow.yml and every dataset
    (declared: its file; registered: what a reader sees of it, its versions and typed columns, not the file
    of the project registering it: a change to that project which leaves the columns alone compiles no
    reader again), and the registered datasets whose producer does not compile."""
    h = hashlib.sha256(_file_bytes(workspace, workspace.config.file or "ledgerflow.yml"))
    for ds in sorted(workspace.datasets, key=lambda d: (d.name, d.file)):
        h.update(ds.file.encode() + b"\0")
        h.update(_file_bytes(workspace, ds.file) if ds.file and not ds.registered else
                 repr((ds.id, ds.name, ds.temporal_mode, ds.versions,
                       [(c.name, c.type, c.nullable) for c in ds.columns])).encode())
    h.update(repr(sorted(workspace.unavailable.items())).encode())
    return h.hexdigest()


def source_digest(workspace: Workspace, project: Project, declarations: Optional[str] = None) -> str:
    """A hash of every file compiling ``project`` reads: equal on both sides means nothing changed."""
    return hashlib.sha256((file_digest(workspace, project) + (declarations or declarations_digest(workspace))).encode()).hexdigest()


def summarise_project(workspace: Workspace, project: Project) -> ProjectSummary:
    """Compile ``project`` (raises :class:`~..errors.CompileError`) and summarise it for a diff."""
    compiled = compile_project(workspace, project)
    header = [f"input {v.view} <- dataset {v.dataset.name} ({v.dataset.temporal_mode}, "
              f"{'version ' + str(v.pinned_version) if v.pinned_version is not None else 'latest active'})"
              for v in compiled.inputs]
    normalised = "\n".join(header + [f"{st.kind} {st.name}:\n{st.sql};" for st in compiled.statements])
    prints = plan_prints(workspace, compiled.plan)
    checks = {c.name: (fingerprint(c), c.action == Action.QUARANTINE, c.on) for c in compiled.plan.checks}
    return ProjectSummary(project.name, file_digest(workspace, project), compiled.script(), normalised,
                          prints.operations, prints.outputs, sorted({v.dataset.name for v in compiled.inputs}), checks)

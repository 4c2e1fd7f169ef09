"""The compiler's entry points: validate and compile a project into a :class:`CompiledProject`."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Optional

from . import parameters
from .errors import CompileError, Diagnostic, LedgerflowError
from .model import Project, Workspace
from .planner import STAGE_MAX_CTES, InputView, Planner, Statement
from .render import comment, normalise
from .types import SqlType
from .version import version


@dataclass
class CompiledProject:
    """A compiled project: the datasets it reads and its statements in execution order."""

    project: Project
    inputs: list[InputView]
    statements: list[Statement]
    schema: dict[str, SqlType]
    input_dataset_id: str

    @property
    def stages(self) -> list[Statement]:
        """The stage statements."""
        return [s for s in self.statements if s.kind == "stage"]

    @property
    def outputs(self) -> list[Statement]:
        """The output statements."""
        return [s for s in self.statements if s.kind == "output"]

    def script(self) -> str:
        """The whole compiled SQL script, byte-for-byte deterministic (parameters as markers)."""
        p = self.project
        lines = [comment(f"ledgerflow {version()}: project {p.name} (id {p.id}, version {p.version})"),
                 comment("Parameters: " + ", ".join(f":{name}" for name in parameters.NAMES)),
                 comment("Inputs (views the runner creates from each dataset's resolved locations, normalised to the"),
                 comment("declared columns plus system columns):")]
        for v in self.inputs:
            pin = f"version {v.pinned_version}" if v.pinned_version is not None else "latest active version"
            lines.append(comment(f"  {v.view} <- dataset {v.dataset.name} ({v.dataset.temporal_mode}, {pin})"))
        lines.append("")
        for st in self.statements:
            lines.append(describe(st))
            lines.append(st.sql + ";")
            lines.append("")
        return "\n".join(lines)

    def sha256(self) -> str:
        """Hash of :meth:`script`, recorded with each run."""
        return hashlib.sha256(self.script().encode()).hexdigest()


def describe(st: Statement, note: str = "") -> str:
    """The comment line above a statement in the script (``note`` is appended to its text)."""
    return comment(statement_text(st) + note)


def statement_text(st: Statement) -> str:
    """What a statement does, in words (names as the user wrote them; :func:`comment` escapes them)."""
    if st.kind == "stage":
        ops = st.operations
        span = "input" if ops == [0] else f"operations {_span(ops)}"
        return f"{st.name}: {span}; materialised by the runner before the next statement"
    op = st.operation
    return f"{st.name}: operation {op.seq} '{op.name}' writes {destination_text(op)}"


def destination_text(op) -> str:
    """A short description of an output's destination."""
    d = op.destination
    if d.kind == "table":
        return f"table {d.table}" + (f" (resolver {d.resolver})" if d.resolver else "")
    if d.kind == "path":
        return f"path {d.path} ({d.format})"
    return f"catalog table {d.catalog_table}"


def _span(ops: list[int]) -> str:
    real = [o for o in ops if o]
    if not real:
        return "input"
    prefix = "input, " if 0 in ops else ""
    return prefix + (str(real[0]) if len(real) == 1 else f"{real[0]}-{real[-1]}")


def plan_diagnostics(workspace: Workspace, project: Project) -> list[Diagnostic]:
    """Every compile-time error of ``project`` (empty when it is valid)."""
    return Planner(workspace, project).plan().diagnostics


def compile_project(workspace: Workspace, project: Project, stage_max_ctes: int = STAGE_MAX_CTES,
                    normalise_sql: bool = True) -> CompiledProject:
    """Validate and compile ``project``; raises :class:`CompileError` with every problem found."""
    plan = Planner(workspace, project, stage_max_ctes).plan()
    if plan.diagnostics:
        raise CompileError(plan.diagnostics)
    if normalise_sql:
        for st in plan.statements:
            st.sql = normalise(st.sql, f"{project.name} {st.name}")
    return CompiledProject(project, plan.inputs, plan.statements, plan.schema,
                           plan.input_dataset.id if plan.input_dataset else "")


def require_project(workspace: Workspace, ref: str) -> Project:
    """:func:`find_project`, or a :class:`LedgerflowError` naming the workspace and its projects."""
    project = find_project(workspace, ref)
    if project is None:
        raise LedgerflowError(f"no project '{ref}' in {workspace.root}; projects: "
                              f"{', '.join(sorted(p.name for p in workspace.projects)) or 'none'}.")
    return project


def find_project(workspace: Workspace, ref: str) -> Optional[Project]:
    """A project by name, id, or path of its YAML file."""
    import os
    found = workspace.find_project(ref)
    if found:
        return found
    if ref.endswith((".yml", ".yaml")):
        target = os.path.abspath(ref)
        for p in workspace.projects:
            if os.path.abspath(os.path.join(workspace.root, p.file)) == target:
                return p
    return None

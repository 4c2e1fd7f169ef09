"""The compiler's entry points: validate and compile a project into a :class:`CompiledProject`.

The passes, in order: :func:`.bind.bind` (names, types, rules, diagnostics -> typed
:class:`~.plan.Plan`; a producer's plan comes from the registered-datasets pass of
:func:`.workspace.load_workspace`, :mod:`.registered_pass`) -> :func:`.lower.lower` (one builder per
operation kind -> CTE steps) -> :func:`.stage.cut_stages` (statements within the CTE budget) ->
:func:`.emit.script` (the script).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Optional

from . import emit
from .binding import bind
from .emit import describe, destination_text, statement_text  # noqa: F401  (re-exported for adapters)
from .errors import CompileError, Diagnostic, LedgerflowError
from .gcpause import gc_paused  # adapters import it from here too
from .lower import lower
from .model import Project, Workspace
from .plan import InputView, Plan
from .project_refs import find_project, require_project  # noqa: F401  (re-exported: callers import them here)
from .render import printing_only
from .stage import STAGE_MAX_CTES, Statement, cut_stages
from .types import SqlType
from .version import version


@dataclass
class CompiledProject:
    """A compiled project: the datasets it reads, its statements in execution order, and its typed plan."""

    project: Project
    inputs: list[InputView]
    statements: list[Statement]
    schema: dict[str, SqlType]
    input_dataset_id: str
    plan: Optional[Plan] = None

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
        return emit.script(self.project, self.inputs, self.statements, version(), self.plan.checks if self.plan else ())

    def sha256(self) -> str:
        """Hash of :meth:`script`, recorded with each run."""
        return hashlib.sha256(self.script().encode()).hexdigest()


def plan_project(workspace: Workspace, project: Project) -> Plan:
    """The typed plan of ``project`` (with its diagnostics; see :mod:`.plan`)."""
    with gc_paused():
        return _bound(workspace, project)


def _bound(workspace: Workspace, project: Project) -> Plan:
    """:func:`.bind.bind`, or the plan the registered-datasets pass bound for this very project of this
    very workspace (:mod:`.registered_pass`: the same plan a bind now gives)."""
    kept = workspace.producer_plans.get(project.name)
    if kept is not None and kept.project is project:
        return kept
    return bind(workspace, project)


def plan_diagnostics(workspace: Workspace, project: Project) -> list[Diagnostic]:
    """Every compile-time error of ``project`` (empty when it is valid)."""
    return plan_project(workspace, project).diagnostics


def compile_project(workspace: Workspace, project: Project, stage_max_ctes: int = STAGE_MAX_CTES) -> CompiledProject:
    """Validate and compile ``project``; raises :class:`CompileError` with every problem found."""
    with gc_paused():
        return compile_plan(project, _bound(workspace, project), stage_max_ctes)


def compile_plan(project: Project, plan: Plan, stage_max_ctes: int = STAGE_MAX_CTES) -> CompiledProject:
    """The compiled ``project`` from its bound ``plan`` (:func:`plan_project`'s); raises :class:`CompileError`
    with the plan's diagnostics when it has any."""
    if plan.diagnostics:
        raise CompileError(plan.diagnostics)
    with gc_paused(), printing_only():
        statements = cut_stages(lower(plan), stage_max_ctes)
    return CompiledProject(project, plan.inputs, statements, plan.schema,
                           plan.input_dataset.id if plan.input_dataset else "", plan)

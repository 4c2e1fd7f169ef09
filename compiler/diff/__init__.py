"""``ledgerflow diff`` without git or Spark: compare two loaded workspaces, project by project.

The passes: :mod:`.summary` compiles each project that may have changed on each side and keeps plain
data (script, normalised SQL, plan prints from :mod:`.prints`); :mod:`.align` matches operations;
:mod:`.projects` compares outputs and columns and assigns the category; :mod:`.datasets` lists what
changed in each dataset's declaration; :mod:`.impact` follows changed columns and row sets into other
projects; :mod:`.result` is the result and its JSON (docs/diff.md).

:func:`diff_workspaces` runs them in one process; an adapter may call :func:`to_compile`, summarise each
side elsewhere (another process) and call :func:`compare`.
"""
from __future__ import annotations

from typing import Iterable, Optional

from ..errors import CompileError, LedgerflowError
from ..model import Workspace
from .datasets import compare_datasets
from .impact import impact_of
from .projects import compare_project
from .result import Category, OperationChange, ProjectDiff, Status, WorkspaceDiff, to_json  # noqa: F401
from .summary import ProjectSummary, declarations_digest, source_digest, summarise_project


class SideError(LedgerflowError):
    """One side of a diff does not compile: the errors, naming the side (``base`` or ``head``)."""

    exit_code = 1

    def __init__(self, side: str, label: str, message: str):
        self.side, self.label = side, label
        super().__init__(f"{side} ({label}) does not compile:\n{message}")


class UnknownProject(LedgerflowError):
    """``--project NAME`` names a project neither side has."""

    exit_code = 2


def select_projects(base: Workspace, head: Workspace, names: Iterable[str] = ()) -> list[str]:
    """The project names to compare: ``names`` (each must exist on a side), else every project of either side."""
    known = {p.name for p in base.projects} | {p.name for p in head.projects}
    names = list(dict.fromkeys(names))
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UnknownProject(f"no project {', '.join(repr(n) for n in unknown)} on either side; "
                             f"projects: {', '.join(sorted(known)) or 'none'}.")
    return names or sorted(known)


def projects_to_compile(base: Workspace, head: Workspace, names: list[str]) -> list[str]:
    """The projects whose sources differ between the sides (or that exist on one side only): the others
    read the same bytes on both sides and are unchanged without compiling."""
    decl_b, decl_h = declarations_digest(base), declarations_digest(head)
    out = []
    for name in names:
        b, h = base.find_project(name), head.find_project(name)
        if b is None or h is None or source_digest(base, b, decl_b) != source_digest(head, h, decl_h):
            out.append(name)
    return out


def to_compile(base: Workspace, head: Workspace, chosen: list[str]) -> list[str]:
    """What to compile for a diff of the ``chosen`` projects: every project whose sources differ, the chosen
    ones or not, as a change upstream of a chosen project reaches it (``impact``)."""
    return projects_to_compile(base, head, select_projects(base, head))


def summarise(workspace: Workspace, names: Iterable[str]) -> tuple[dict[str, ProjectSummary], list[str]]:
    """Summaries of the named projects that exist in ``workspace``, and the errors of those that do not
    compile (each rendered, naming the project)."""
    out, errors = {}, []
    for name in names:
        project = workspace.find_project(name)
        if project is None:
            continue
        try:
            out[name] = summarise_project(workspace, project)
        except CompileError as err:
            errors.append(f"project {name}: {err.render()}")
    return out, errors


def compare(base: Workspace, head: Workspace, base_label: str, head_label: str, names: list[str],
            base_summaries: dict[str, ProjectSummary], head_summaries: dict[str, ProjectSummary]) -> WorkspaceDiff:
    """The diff of the named projects, from the summaries of those compiled (others are unchanged). The
    summaries may hold projects beyond ``names`` (:func:`to_compile`): their changes reach the named projects'
    ``impact``, and an impact on a named project counts as a breaking change of the selection."""
    diff = WorkspaceDiff(base_label, head_label)
    compared = {name: compare_project(name, base_summaries.get(name), head_summaries.get(name))
                for name in dict.fromkeys([*base_summaries, *head_summaries])}
    for name in names:
        if name in compared:
            diff.projects.append(compared[name])
        else:
            project = head.find_project(name)
            diff.projects.append(ProjectDiff(name, Status.UNCHANGED, None, [
                OperationChange(o.seq, o.name, Status.UNCHANGED, o.kind.value if o.kind else "", o.seq)
                for o in project.operations]))
    diff.datasets = compare_datasets(base, head)
    changed = [p for p in diff.projects if p.status != Status.UNCHANGED]
    diff.impact = impact_of(base, head, changed)
    everything = [p for p in compared.values() if p.status != Status.UNCHANGED]
    if len(everything) > len(changed):  # a selection: what reaches it from the projects left out counts too
        chosen, kept = set(names), {(i.project, i.output, i.column) for i in diff.impact}
        upstream = [i for i in impact_of(base, head, everything)
                    if i.project in chosen and (i.project, i.output, i.column) not in kept]
        diff.impact += upstream
        diff.selection_impacted = bool(upstream)
    return diff


def diff_workspaces(base: Workspace, head: Workspace, base_label: str = "base", head_label: str = "head",
                    names: Iterable[str] = ()) -> WorkspaceDiff:
    """Compare two workspaces in this process; raises :class:`SideError` when a side does not compile."""
    chosen = select_projects(base, head, names)
    todo = to_compile(base, head, chosen)
    sides = {}
    for side, ws, label in (("base", base, base_label), ("head", head, head_label)):
        summaries, errors = summarise(ws, todo)
        if errors:
            raise SideError(side, label, "\n".join(errors))
        sides[side] = summaries
    return compare(base, head, base_label, head_label, chosen, sides["base"], sides["head"])

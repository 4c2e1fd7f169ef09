"""``ledgerflow diff``: open both sides (:mod:`.gitsource`), compile them offline, compare
(:mod:`ledgerflow.compiler.diff`), format (:mod:`.diff_format`) and choose the exit code.

The two sides are compiled at the same time, the base in a forked process, when the machine has
more than one core and there is enough to compile (:data:`PARALLEL_MIN_OPERATIONS`): a diff costs
about one compile instead of two. Likewise a base of :data:`PARALLEL_MIN_PROJECTS` projects or more is loaded
in a forked process while the head loads (a workspace of 1,000 projects: one load instead of two).
"""
from __future__ import annotations

import os
from typing import Callable, Optional

from ...compiler.compile import gc_paused
from ...compiler.diff import SideError, compare, select_projects, summarise, to_compile
from ...compiler.diff.result import Category, WorkspaceDiff
from ...compiler.errors import CompileError
from ...compiler.model import Dataset, Workspace
from ...compiler.workspace import load_workspace
from ..console.two_processes import can_fork, in_two_processes
from .formats import render_json, render_markdown, render_text
from .gitsource import Side, open_side

EXIT_FOUND = 4
PARALLEL_MIN_OPERATIONS = 200
PARALLEL_MIN_PROJECTS = 100  # project files on the base side from which it is loaded in a forked process



def _load(side: Side, extra: list[Dataset]) -> Workspace:
    try:
        return load_workspace(side.root, extra_datasets=(lambda: list(extra)) if extra else None)
    except CompileError as err:
        raise SideError(side.role, side.label, err.render()) from None


def _load_for_parent(side: Side, registered: list[Dataset]) -> Optional[Workspace]:
    """``side`` loaded in a forked process, as the parent takes it back: without its plans (sqlglot trees; the
    parent binds again the few projects it compiles), or None when it does not load (the parent loads it again
    and reports its error itself)."""
    try:
        ws = _load(side, registered)
    except Exception:  # noqa: BLE001 - reported by the parent's own load
        return None
    ws.producer_plans = {}
    return ws


def _load_both(base_side: Side, head_side: Side, registered: list[Dataset]) -> tuple[Workspace, Workspace]:
    """Both sides loaded: for a workspace of :data:`PARALLEL_MIN_PROJECTS` projects or more, the base side in a
    forked process while this one loads the head side (the base comes back pickled, which takes a tenth of its
    load with the collector paused, as the diff runs); a base that does not load is loaded again here, so its
    error is reported as any."""
    projects = os.path.join(base_side.root, "projects")
    count = len(os.listdir(projects)) if os.path.isdir(projects) else 0
    if count < PARALLEL_MIN_PROJECTS or not can_fork():
        return _load(base_side, registered), _load(head_side, registered)
    base, head = in_two_processes(lambda: _load_for_parent(base_side, registered),
                                  lambda: _load(head_side, registered))
    return (base if base is not None else _load(base_side, registered)), head


def _summarise_both(base: Workspace, head: Workspace, names: list[str]) -> tuple[tuple, tuple]:
    size = sum(len(p.operations) for ws in (base, head) for p in ws.projects if p.name in names)
    if size < PARALLEL_MIN_OPERATIONS or not can_fork():
        return summarise(base, names), summarise(head, names)
    return in_two_processes(lambda: summarise(base, names), lambda: summarise(head, names))


def compute_diff(workspace_root: Optional[str], base_spec: Optional[str], head_spec: Optional[str],
                 projects: tuple = (), extra_datasets=None) -> WorkspaceDiff:
    """The diff of ``base_spec`` (default ``HEAD``) and ``head_spec`` (default the working tree); raises
    :class:`SideError` (exit 1) naming the side that does not compile.

    ``extra_datasets`` (a list, or a callable giving one): the datasets registered by runs of this
    workspace (its run store). They are not in git, so both sides get the same ones."""
    registered = list(extra_datasets() if callable(extra_datasets) else extra_datasets or [])
    # The cyclic collector finds nothing to free while two workspaces are loaded, compiled and
    # compared (everything stays referenced until the end) but costs ~15 % of the time: paused.
    with gc_paused():
        return _compute(workspace_root, base_spec, head_spec, projects, registered)


def _compute(workspace_root: Optional[str], base_spec: Optional[str], head_spec: Optional[str], projects: tuple,
             registered: list[Dataset]) -> WorkspaceDiff:
    base_side = open_side("base", base_spec if base_spec is not None else "HEAD", workspace_root)
    try:
        head_side = open_side("head", head_spec, workspace_root)
        try:
            return compare_sides(base_side, head_side, registered, projects)[2]
        finally:
            head_side.close()
    finally:
        base_side.close()


def compare_sides(base_side: Side, head_side: Side, registered: list[Dataset],
                  projects: tuple) -> tuple[Workspace, Workspace, WorkspaceDiff]:
    """Both open sides loaded, the selected projects whose declarations differ compiled on each, and their
    compiled SQL compared: (BASE's workspace, HEAD's, the diff). Raises :class:`SideError` naming the side
    where a project does not compile."""
    base, head = _load_both(base_side, head_side, registered)
    names = select_projects(base, head, projects)
    todo = to_compile(base, head, names)
    (base_summaries, base_errors), (head_summaries, head_errors) = _summarise_both(base, head, todo)
    if base_errors:
        raise SideError("base", base_side.label, "\n".join(base_errors))
    if head_errors:
        raise SideError("head", head_side.label, "\n".join(head_errors))
    return base, head, compare(base, head, base_side.label, head_side.label, names, base_summaries, head_summaries)


def render(diff: WorkspaceDiff, fmt: str) -> str:
    """The diff in ``fmt`` (text, markdown or json)."""
    return {"text": render_text, "markdown": render_markdown, "json": render_json}[fmt](diff)


def exit_code(diff: WorkspaceDiff, fail_on: Optional[str]) -> int:
    """4 when a change at or above ``fail_on`` was found (``any``: any change of what a project computes
    or writes, i.e. non_breaking or breaking; a no_op edit never fails), else 0."""
    worst = diff.worst()
    if fail_on is None or worst is None:
        return 0
    threshold = Category.BREAKING if fail_on == "breaking" else Category.NON_BREAKING
    return EXIT_FOUND if worst.rank >= threshold.rank else 0


def run_diff(workspace_root: Optional[str], base_spec: Optional[str], head_spec: Optional[str], projects: tuple,
             fmt: str, fail_on: Optional[str], echo: Callable[[str], None],
             extra_datasets=None) -> int:
    """Print the diff with ``echo``; returns the exit code."""
    diff = compute_diff(workspace_root, base_spec, head_spec, projects, extra_datasets)
    echo(render(diff, fmt))
    return exit_code(diff, fail_on)

"""``ledgerflow run --select SEL | --all``: several projects in dependency order, in one SparkSession.

Before anything runs, the workspace graph orders the selected projects (:mod:`..compiler.graph`) and
every one of them is compiled: a definition error anywhere stops the invocation with exit 1, nothing
executed. Then each project runs with the one :class:`~.runner.Runner` (so the one session), reading
the version of a registered dataset that its upstream registered moments ago in this invocation,
not merely the newest one in the store (a concurrent run could have registered another), and its
run record names those versions and runs (``upstream_runs``).

A project that fails (on Spark, or while resolving its data) is recorded as failed; every selected
project downstream of it, directly or through unselected projects, is ``skipped`` with the failed
upstream named; the others go on. A draft project is skipped (with its downstream) unless
``--allow-draft``. The summary lists every project's status, rows written and duration (a project whose
checks failed names them); the invocation fails with exit 3 (:class:`MultiRunFailed`) when any project
failed, or exit 4 when every failure was a failed check (docs/checks.md: nothing of it was published).

Ctrl-C stops the invocation: a project interrupted before its commit point is rolled back and
recorded failed, one interrupted after it stands (completed), and in every case no further project
runs: they are ``skipped``, the summary is printed and the invocation ends with exit 3
(:class:`~.interrupts.RunInterrupted`).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from ...compiler.compile import plan_diagnostics
from ...compiler.errors import ChecksFailed, CompileError, ExecutionError, LedgerflowError
from ...compiler.graph import PROJECT, WorkspaceGraph, node_id
from ...compiler.periods import Period
from ...compiler.selection import selected_projects
from ...compiler.workspace import load_workspace
from .interrupts import RunInterrupted
from ..open_store import open_store
from ..store.runstore import RunStore

Echo = Callable[[str], None]


class MultiRunFailed(ExecutionError):
    """At least one selected project failed (exit 3); the summary was printed."""


@dataclass
class ProjectOutcome:
    """What happened to one selected project."""

    project: str
    status: str = "pending"  # completed | failed | skipped
    run_id: Optional[str] = None
    rows: Optional[int] = None
    seconds: Optional[float] = None
    reason: str = ""  # the error of a failed project, why a skipped one was skipped
    registered: list = field(default_factory=list)  # [{dataset, version, run_id, project}]
    failed_checks: list = field(default_factory=list)  # the checks that failed the project's run (exit 4)


def plan_selection(root: str, select: Optional[str]) -> tuple[WorkspaceGraph, list[str]]:
    """The graph and the selected project names in run order (every project when ``select`` is None).

    Raises :class:`CompileError` (exit 1) with every error of the selected projects."""
    ws = load_workspace(root, extra_datasets=open_store(root).registered_datasets)
    graph = WorkspaceGraph(ws)
    names = graph.project_order() if select is None else selected_projects(graph, select)
    diagnostics = []
    for name in names:
        diagnostics += plan_diagnostics(ws, ws.find_project(name))
    if diagnostics:
        raise CompileError(diagnostics)
    return graph, names


def run_many(runner, root: str, period: Period, select: Optional[str], allow_draft: bool = False,
             echo: Echo = print) -> list[ProjectOutcome]:
    """Run the selection (see the module docstring) for ``period`` (as the command line parsed it, handed to
    every run); returns one outcome per project, in run order."""
    graph, names = plan_selection(root, select)
    outcomes = {n: ProjectOutcome(n) for n in names}
    blocked: dict[str, str] = {}  # project -> why it cannot run (a failed or skipped upstream)
    upstream: dict[str, dict] = {}  # registered dataset -> what this invocation registered
    echo(f"Running {len(names)} project{'s' if len(names) != 1 else ''} for period {period.identifier}: "
         f"{', '.join(names)}")
    stopped: Optional[str] = None  # what Ctrl-C did, when it stopped the invocation
    try:
        for i, name in enumerate(names, 1):
            stopped = _run_one(runner, graph, names, i, outcomes[name], period, allow_draft, blocked, upstream, echo)
            if stopped is not None:
                break
    except KeyboardInterrupt:  # between two projects: no run was under way
        stopped = "Ctrl-C between two projects"
    result = [outcomes[n] for n in names]
    if stopped is not None:
        for o in result:
            if o.status == "pending":
                o.status, o.reason = "skipped", "not run: the invocation was stopped by Ctrl-C"
    echo("")
    echo(summary(result, period.identifier))
    if stopped is not None:
        done = sum(o.status == "completed" for o in result)
        left = sum(o.reason.startswith("not run: the invocation was stopped") for o in result)
        raise RunInterrupted(f"{stopped}. Not run: {left} project{'s' if left != 1 else ''}; completed (committed, "
                             f"they stand): {done}. See the summary above.")
    failed = [o for o in result if o.status == "failed"]
    if failed:
        err = MultiRunFailed(f"{len(failed)} of {len(result)} projects failed ({', '.join(o.project for o in failed)}); "
                             f"{sum(o.status == 'skipped' for o in result)} skipped. See the summary above.")
        if all(o.failed_checks for o in failed):
            err.exit_code = 4  # each ran, and a check stopped its publication
        raise err
    return result


def _run_one(runner, graph: WorkspaceGraph, names: list[str], i: int, out: ProjectOutcome, period: Period,
             allow_draft: bool, blocked: dict, upstream: dict, echo: Echo) -> Optional[str]:
    """Run (or skip) the ``i``-th project of the selection, filling ``out``; returns what Ctrl-C did when it
    came during the project's run (the invocation stops), else None."""
    name = out.project
    project = graph.workspace.find_project(name)
    echo(f"\n[{i}/{len(names)}] {name}")
    if name in blocked:
        out.status, out.reason = "skipped", blocked[name]
        echo(f"  skipped: {out.reason}")
        return None
    if project.status == "draft" and not allow_draft:
        out.status, out.reason = "skipped", "draft project (pass --allow-draft to run it)"
        echo(f"  skipped: {out.reason}")
        _block_downstream(graph, name, names, blocked, f"upstream project '{name}' is a draft and was skipped")
        return None
    clock = time.monotonic()
    known = _run_ids(runner.store, name)
    try:
        record = runner.run(name, period, allow_draft, upstream=upstream)
    except (LedgerflowError, RunInterrupted) as err:
        out.seconds = time.monotonic() - clock
        out.status = "failed"
        out.reason = f"interrupted: {err}" if isinstance(err, RunInterrupted) else err.render()
        out.run_id = next(iter(_run_ids(runner.store, name) - known), None)
        out.failed_checks = err.failed if isinstance(err, ChecksFailed) else []
        echo(f"  failed: {out.reason}")
        _block_downstream(graph, name, names, blocked, f"upstream project '{name}' failed")
        if isinstance(err, RunInterrupted):
            return f"{name}: {str(err).rstrip('.')}"
        if runner.stop_requested:  # Ctrl-C while its failure was being recorded
            return f"{name} failed, and Ctrl-C was pressed meanwhile"
        return None
    out.status, out.run_id = "completed", record["run_id"]  # first: a Ctrl-C from here on finds it completed
    out.seconds = time.monotonic() - clock
    out.rows = sum(o.get("rows") or 0 for o in record.get("outputs") or [])
    for o in record.get("outputs") or []:
        if o.get("registered_dataset"):
            entry = {"dataset": o["registered_dataset"], "version": o["registered_version"],
                     "run_id": record["run_id"], "project": name}
            upstream[o["registered_dataset"]] = entry
            out.registered.append(entry)
    if runner.stop_requested:  # a Ctrl-C after its commit point: it stands, and nothing more runs
        return f"Ctrl-C after the commit point of {name} (run {record['run_id']}, completed)"
    return None


def _block_downstream(graph: WorkspaceGraph, name: str, names: list[str], blocked: dict, reason: str) -> None:
    """Mark every selected project downstream of ``name`` (through any node) as blocked by ``reason``."""
    below = graph.descendants(node_id(PROJECT, name))
    for other in names:
        if node_id(PROJECT, other) in below:
            blocked.setdefault(other, reason)


def _run_ids(store: RunStore, name: str) -> set[str]:
    """The ids of the recorded runs of project ``name`` (a failed attempt's record is the new one)."""
    return {rec["run_id"] for rec in store.list_runs() if rec["project"]["name"] == name}


def summary(outcomes: list[ProjectOutcome], period: str) -> str:
    """The summary table: project, status, rows written, seconds, run id or reason."""
    width = max([len("project")] + [len(o.project) for o in outcomes])
    lines = [f"Summary for period {period}:",
             f"  {'project':<{width}}  {'status':<9}  {'rows':>6}  {'seconds':>7}  run / reason"]
    for o in outcomes:
        rows = "-" if o.rows is None else str(o.rows)
        secs = "-" if o.seconds is None else f"{o.seconds:.1f}"
        detail = o.run_id or ""
        if o.status != "completed":
            first = o.reason.splitlines()[0] if o.reason else ""
            if o.failed_checks:
                first = f"failed check{'s' if len(o.failed_checks) != 1 else ''} {', '.join(o.failed_checks)}: " \
                        "nothing published"
            detail = f"{detail}  {first}".strip() if o.status == "failed" else first
        lines.append(f"  {o.project:<{width}}  {o.status:<9}  {rows:>6}  {secs:>7}  {detail}")
    counts = {s: sum(o.status == s for o in outcomes) for s in ("completed", "failed", "skipped")}
    lines.append(f"  {counts['completed']} completed, {counts['failed']} failed, {counts['skipped']} skipped")
    return "\n".join(lines)

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

Several periods (``--period 2026-01..2026-03``, :func:`run_periods`): each project-period is a run of
its own, period by period in ascending order and within a period the projects in dependency order.
A project failed for one period skips its downstream for that period only (each period has its own
registered versions, so its downstream reads what its upstream registered for that period);
``--fail-fast`` skips every project-period after the first failure. The batch (its id, its plan,
``ledgerflow retry``) is :mod:`.batch`'s.
"""
from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from ...compiler.compile import plan_diagnostics
from ...compiler.compile import require_project
from ...compiler.errors import ChecksFailed, CompileError, ExecutionError, LedgerflowError
from ...compiler.graph import PROJECT, WorkspaceGraph, node_id
from ...compiler.periods import Period
from ...compiler.selection import selected_projects
from ...compiler.workspace import load_workspace
from .closed import ClosedReason
from .interrupts import RunInterrupted
from ..commit.open_store import open_store
from ..store.runstore import RunStore

Echo = Callable[[str], None]


class MultiRunFailed(ExecutionError):
    """At least one selected project failed (exit 3); the summary was printed."""


@dataclass
class ProjectOutcome:
    """What happened to one selected project."""

    project: str
    status: str = "pending"  # completed | failed | skipped | closed (a closed project-period, not run)
    run_id: Optional[str] = None
    rows: Optional[int] = None
    seconds: Optional[float] = None
    reason: str = ""  # the error of a failed project, why a skipped one was skipped
    registered: list = field(default_factory=list)  # [{dataset, version, run_id, project}]
    failed_checks: list = field(default_factory=list)  # the checks that failed the project's run (exit 4)
    period: str = ""  # the period identifier of this project-period


def plan_selection(root: str, select: Optional[str], project: Optional[str] = None,
                   names: Optional[list[str]] = None) -> tuple[WorkspaceGraph, list[str]]:
    """The graph and the selected project names in run order: those ``select`` selects, the one ``project``
    names (name, id or path), those of ``names`` (``ledgerflow retry``: a name no longer in the workspace is
    an error), or else every project.

    Raises :class:`CompileError` (exit 1) with every error of the selected projects."""
    ws = load_workspace(root, extra_datasets=open_store(root).registered_datasets)
    graph = WorkspaceGraph(ws)
    if project is not None:
        names = [require_project(ws, project).name]
    elif names is not None:
        gone = sorted(set(names) - set(graph.project_order()))
        if gone:
            raise LedgerflowError(f"project{'s' if len(gone) != 1 else ''} {', '.join(gone)} of the batch "
                                  "no longer in the workspace; put it back, or run what is left with `ledgerflow run`.")
        names = [n for n in graph.project_order() if n in set(names)]
    else:
        names = graph.project_order() if select is None else selected_projects(graph, select)
    diagnostics = []
    for name in names:
        diagnostics += plan_diagnostics(ws, ws.find_project(name))
    if diagnostics:
        raise CompileError(diagnostics)
    return graph, names


def run_many(runner, root: str, period: Period, select: Optional[str], allow_draft: bool = False,
             echo: Echo = print, batch_id: Optional[str] = None) -> list[ProjectOutcome]:
    """Run the selection (see the module docstring) for ``period`` (as the command line parsed it, handed to
    every run); returns one outcome per project, in run order."""
    graph, names = plan_selection(root, select)
    return run_periods(runner, graph, names, [period], allow_draft, echo, batch_id)


def run_periods(runner, graph: WorkspaceGraph, names: list[str], periods: list[Period], allow_draft: bool = False,
                echo: Echo = print, batch_id: Optional[str] = None, fail_fast: bool = False,
                todo: Optional[set] = None, upstream: Optional[dict] = None,
                closed: Optional[dict] = None) -> list[ProjectOutcome]:
    """Run the projects ``names`` (in run order) for each of ``periods`` (ascending), period by period (see the
    module docstring); returns one outcome per project-period, in run order. ``batch_id``: recorded by each
    run; ``todo``: only these ``(project, period identifier)`` run (``retry``); ``upstream``: period
    identifier -> registered dataset -> the version this batch registered for it earlier (``retry``);
    ``closed``: period identifier -> project -> :class:`.closed.ClosedReason` (listed ``closed``, not run)."""
    single = len(periods) == 1
    pairs = [(p, n) for p in periods for n in names if todo is None or (n, p.identifier) in todo]
    outcomes = [ProjectOutcome(n, period=p.identifier) for p, n in pairs]
    # period -> project -> why it cannot run (closed ones first: a failed upstream does not make them skipped)
    blocked: dict[str, dict] = {p.identifier: dict((closed or {}).get(p.identifier) or {}) for p in periods}
    registered = {p.identifier: dict((upstream or {}).get(p.identifier) or {}) for p in periods}
    running, when = list(dict.fromkeys(n for _, n in pairs)), list(dict.fromkeys(p for p, _ in pairs))
    plural = "s" if len(running) != 1 else ""
    echo(f"Running {len(running)} project{plural} for period {periods[0].identifier}: {', '.join(running)}" if single
         else f"Running {len(pairs)} project-period{'s' if len(pairs) != 1 else ''}, period by period: {len(running)} "
              f"project{plural} ({', '.join(running)}) for {len(when)} period{'s' if len(when) != 1 else ''} "
              f"({_span(when)})")
    stopped: Optional[str] = None  # what Ctrl-C did, when it stopped the invocation
    why_skipped = "not run: the invocation was stopped by Ctrl-C"
    try:
        for k, ((period, name), out) in enumerate(zip(pairs, outcomes), 1):
            step = f"[{k}/{len(pairs)}] {name}" if single else f"[{k}/{len(pairs)}] {period.identifier} {name}"
            with _progress(runner, None if single else period.identifier):
                stopped = _run_one(runner, graph, names, step, out, period, allow_draft, blocked[period.identifier],
                                   registered[period.identifier], echo, batch_id)
            if stopped is not None:
                break
            if fail_fast and out.status == "failed":
                why_skipped = f"not run: --fail-fast, after {name} {period.identifier} failed"
                break
    except KeyboardInterrupt:  # between two projects: no run was under way
        stopped = "Ctrl-C between two projects"
    return conclude(outcomes, periods, stopped, why_skipped, batch_id, echo)


def conclude(outcomes: list[ProjectOutcome], periods: list[Period], stopped: Optional[str], why_skipped: str,
             batch_id: Optional[str], echo: Echo) -> list[ProjectOutcome]:
    """The end of a batch however it ran: every project-period still pending ``skipped`` (``why_skipped``),
    the summary and the batch line printed, then :class:`~.interrupts.RunInterrupted` when Ctrl-C
    ``stopped`` it, :class:`MultiRunFailed` (exit 3, or 4 when every failure is a failed check) when any
    failed; else the outcomes."""
    single = len(periods) == 1
    for o in outcomes:
        if o.status == "pending":
            o.status, o.reason = "skipped", why_skipped
    echo("")
    echo(summary(outcomes, periods[0].identifier) if single else period_summary(outcomes, periods))
    retry = f"`ledgerflow retry {batch_id}` re-runs the failed and skipped ones" if batch_id else ""
    if batch_id:
        echo(f"Batch {batch_id}" + (f": {retry}" if any(o.status in ("failed", "skipped") for o in outcomes) else ""))
    unit = "project" if single else "project-period"
    if stopped is not None:
        done = sum(o.status == "completed" for o in outcomes)
        left = sum(o.reason.startswith("not run: the invocation was stopped") for o in outcomes)
        raise RunInterrupted(f"{stopped}. Not run: {left} {unit}{'s' if left != 1 else ''}; completed (committed, "
                             f"they stand): {done}. See the summary above.")
    failed = [o for o in outcomes if o.status == "failed"]
    if failed:
        which = [o.project if single else f"{o.project} {o.period}" for o in failed]
        err = MultiRunFailed(f"{len(failed)} of {len(outcomes)} {unit}s failed ({', '.join(which[:5])}"
                             f"{', ...' if len(which) > 5 else ''}); {sum(o.status == 'skipped' for o in outcomes)} "
                             f"skipped. See the summary above{'; ' + retry if retry else ''}.")
        if all(o.failed_checks for o in failed):
            err.exit_code = 4  # each ran, and a check stopped its publication
        raise err
    return outcomes


@contextlib.contextmanager
def _progress(runner, period: Optional[str]):
    """While a run of ``period`` is under way, its indented progress lines (loaded, each operation, each
    output) name the period: ``  2026-02: [1] update 'Convert to USD'`` (None: lines as they are)."""
    echo = getattr(runner, "echo", None)
    if period is None or echo is None:
        yield
        return
    runner.echo = lambda line: echo(f"  {period}: {line[2:]}" if line.startswith("  ") else line)
    try:
        yield
    finally:
        runner.echo = echo


def _run_one(runner, graph: WorkspaceGraph, names: list[str], step: str, out: ProjectOutcome, period: Period,
             allow_draft: bool, blocked: dict, upstream: dict, echo: Echo, batch_id: Optional[str]) -> Optional[str]:
    """Run (or skip) one project-period (``step``: its progress heading), filling ``out``; ``blocked`` and
    ``upstream`` are the period's. Returns what Ctrl-C did when it came during the run (the invocation
    stops), else None."""
    name = out.project
    project = graph.workspace.find_project(name)
    echo(f"\n{step}")
    if name in blocked:
        out.status = "closed" if isinstance(blocked[name], ClosedReason) else "skipped"
        out.reason = blocked[name]
        echo(f"  {out.status}: {out.reason}")
        return None
    if project.status == "draft" and not allow_draft:
        out.status, out.reason = "skipped", "draft project (pass --allow-draft to run it)"
        echo(f"  skipped: {out.reason}")
        _block_downstream(graph, name, names, blocked, f"upstream project '{name}' is a draft and was skipped")
        return None
    clock = time.monotonic()
    known = _run_ids(runner.store, name, period.identifier, batch_id)
    try:
        record = runner.run(name, period, allow_draft, upstream=upstream, batch_id=batch_id)
    except (LedgerflowError, RunInterrupted) as err:
        return ended_failed(runner, graph, names, out, err, time.monotonic() - clock, known, blocked, echo, batch_id)
    return ended_completed(runner, out, record, time.monotonic() - clock, upstream)


def ended_failed(runner, graph: WorkspaceGraph, names: list[str], out: ProjectOutcome, err: BaseException,
                 seconds: float, known: set[str], blocked: dict, echo: Echo, batch_id: Optional[str]) -> Optional[str]:
    """Fill ``out`` for a project-period whose run raised ``err`` (``known``: the run ids of the project-period
    before it ran), its downstream blocked for the period; returns what Ctrl-C did (the invocation stops) or
    None."""
    name = out.project
    out.seconds = seconds
    out.status = "failed"
    if isinstance(err, RunInterrupted):
        out.reason = f"interrupted: {err}"
    else:
        out.reason = err.render() if isinstance(err, LedgerflowError) else f"{type(err).__name__}: {err}"
    out.run_id = next(iter(_run_ids(runner.store, name, out.period, batch_id) - known), None)
    out.failed_checks = err.failed if isinstance(err, ChecksFailed) else []
    echo(f"  failed: {out.reason}")
    _block_downstream(graph, name, names, blocked, f"upstream project '{name}' failed")
    if isinstance(err, RunInterrupted):
        return f"{name}: {str(err).rstrip('.')}"
    if runner.stop_requested:  # Ctrl-C while its failure was being recorded
        return f"{name} failed, and Ctrl-C was pressed meanwhile"
    return None


def ended_completed(runner, out: ProjectOutcome, record: dict, seconds: float, upstream: dict) -> Optional[str]:
    """Fill ``out`` for a project-period whose run completed with ``record``; what it registered goes into
    ``upstream`` (the period's, for its downstream). Returns what Ctrl-C did (the invocation stops) or None."""
    name = out.project
    out.status, out.run_id = "completed", record["run_id"]  # first: a Ctrl-C from here on finds it completed
    out.seconds = seconds
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


def _run_ids(store: RunStore, name: str, period: str, batch_id: Optional[str]) -> set[str]:
    """The ids of the recorded runs of project ``name`` (of ``batch_id`` for ``period``, when given): a failed
    attempt's record is the new one."""
    if batch_id:
        return store.batch_run_ids(batch_id, name, period)
    return {rec["run_id"] for rec in store.list_runs() if rec["project"]["name"] == name}


def _span(periods: list[Period]) -> str:
    """The periods' identifiers (the first and the last of more than four)."""
    ids = [p.identifier for p in periods]
    return ", ".join(ids) if len(ids) <= 4 else f"{ids[0]} ... {ids[-1]}"


def summary(outcomes: list[ProjectOutcome], period: str) -> str:
    """The summary table: project, status, rows written, seconds, run id or reason."""
    return "\n".join([f"Summary for period {period}:", *_table(outcomes, with_period=False)])


def period_summary(outcomes: list[ProjectOutcome], periods: list[Period]) -> str:
    """The summary table of several periods: period, project, status, rows written, seconds, run id or reason."""
    return "\n".join([f"Summary for {len(periods)} periods ({_span(periods)}), project by period:",
                      *_table(outcomes, with_period=True)])


def _table(outcomes: list[ProjectOutcome], with_period: bool) -> list[str]:
    width = max([len("project")] + [len(o.project) for o in outcomes])
    pwidth = max([len("period")] + [len(o.period) for o in outcomes])
    first_col = (lambda text: f"{text:<{pwidth}}  ") if with_period else (lambda _text: "")
    lines = [f"  {first_col('period')}{'project':<{width}}  {'status':<9}  {'rows':>6}  {'seconds':>7}  run / reason"]
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
        lines.append(f"  {first_col(o.period)}{o.project:<{width}}  {o.status:<9}  {rows:>6}  {secs:>7}  {detail}")
    counts = {s: sum(o.status == s for o in outcomes) for s in ("completed", "failed", "skipped", "closed")}
    lines.append(f"  {counts['completed']} completed, {counts['failed']} failed, {counts['skipped']} skipped"
                 + (f", {counts['closed']} closed (not run: closed periods stand)" if counts["closed"] else ""))
    return lines

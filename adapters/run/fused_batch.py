"""A batch with fused projects (``ledgerflow run --period RANGE --mode fused|auto``, docs/commands.md).

When :func:`.modes.choose_mode` fuses at least one selected project, the batch runs **project by project**
in dependency order: a fused project runs its statements once for its periods and commits each period as
its own run (:func:`.fused.run_range`); a project that cannot be fused runs its periods one by one, as in
:func:`.many.run_periods`. Every project-period still has its own outcome, filled as :mod:`.many` fills it
(status, rows, seconds, run id, the versions it registered, which the downstream project reads for that
period). A project-period whose upstream failed for that period is skipped, and the project's other
periods are fused without it; ``--fail-fast`` stops at the first failed project-period; Ctrl-C stops the
invocation as in period-by-period mode. Summary and exit codes are :func:`.many.conclude`'s.
"""
from __future__ import annotations

import time
from typing import Callable, Optional

from ...compiler.errors import LedgerflowError
from ...compiler.graph import WorkspaceGraph
from ...compiler.periods import Period
from .fused import run_range
from .interrupts import RunInterrupted
from .many import (ProjectOutcome, _progress, _run_ids, _run_one, _span, conclude, ended_completed,
                   ended_failed)
from .modes import FUSED

Echo = Callable[[str], None]


def run_by_project(runner, graph: WorkspaceGraph, names: list[str], periods: list[Period],
                   answers: dict[str, tuple[str, str]], allow_draft: bool = False, echo: Echo = print,
                   batch_id: Optional[str] = None, fail_fast: bool = False,
                   closed: Optional[dict] = None, todo: Optional[set] = None,
                   upstream: Optional[dict] = None) -> list[ProjectOutcome]:
    """Run ``names`` (in run order) over ``periods`` (ascending) project by project, each fused or period by
    period as ``answers`` (project -> :func:`.modes.choose_mode`'s answer) says (see the module docstring);
    returns one outcome per project-period, period by period as :func:`.many.run_periods` lists them.
    ``closed``, ``todo`` (only these ``(project, period identifier)`` run: ``run --stale``, ``retry``) and
    ``upstream`` (what the batch registered earlier: ``retry``): as :func:`.many.run_periods` takes them."""
    outcomes = {(n, p.identifier): ProjectOutcome(n, period=p.identifier) for p in periods for n in names
                if todo is None or (n, p.identifier) in todo}
    blocked: dict[str, dict] = {p.identifier: dict((closed or {}).get(p.identifier) or {}) for p in periods}
    registered: dict[str, dict] = {p.identifier: dict((upstream or {}).get(p.identifier) or {}) for p in periods}
    total = len(outcomes)
    running = [n for n in names if any(key[0] == n for key in outcomes)]
    when = [p for p in periods if any(key[1] == p.identifier for key in outcomes)]
    echo(f"Running {total} project-periods, project by project: {len(running)} project"
         f"{'s' if len(running) != 1 else ''} ({', '.join(running)}) for {len(when)} period"
         f"{'s' if len(when) != 1 else ''} ({_span(when)})")
    state = {"k": 0, "stopped": None, "failed": False}
    why_skipped = "not run: the invocation was stopped by Ctrl-C"
    try:
        for name in running:
            mine = [p for p in periods if (name, p.identifier) in outcomes]  # its project-periods of the batch
            if answers[name][0] == FUSED:
                _fused_project(runner, graph, names, name, mine, outcomes, blocked, registered, allow_draft, echo,
                               batch_id, fail_fast, total, state)
            else:
                for p in mine:
                    _one_period(runner, graph, names, name, p, outcomes, blocked, registered, allow_draft, echo,
                                batch_id, total, state)
                    if state["stopped"] is not None or (fail_fast and state["failed"]):
                        break
            if state["stopped"] is not None:
                break
            if fail_fast and state["failed"]:
                failed = next(o for o in outcomes.values() if o.status == "failed")
                why_skipped = f"not run: --fail-fast, after {failed.project} {failed.period} failed"
                break
    except KeyboardInterrupt:  # between two runs: none was under way
        state["stopped"] = "Ctrl-C between two projects"
    ordered = [outcomes[(n, p.identifier)] for p in periods for n in names if (n, p.identifier) in outcomes]
    return conclude(ordered, periods, state["stopped"], why_skipped, batch_id, echo)


def _one_period(runner, graph: WorkspaceGraph, names: list[str], name: str, p: Period, outcomes: dict,
                blocked: dict, registered: dict, allow_draft: bool, echo: Echo, batch_id: Optional[str], total: int,
                state: dict) -> None:
    """Project ``name`` for period ``p`` on its own, as period by period: its outcome, and ``state`` (the
    step counter, whether Ctrl-C stopped the invocation, whether it failed) updated."""
    state["k"] += 1
    out = outcomes[(name, p.identifier)]
    with _progress(runner, p.identifier):
        state["stopped"] = _run_one(runner, graph, names, f"[{state['k']}/{total}] {p.identifier} {name}", out, p,
                                    allow_draft, blocked[p.identifier], registered[p.identifier], echo, batch_id)
    state["failed"] = out.status == "failed"


def _fused_project(runner, graph: WorkspaceGraph, names: list[str], name: str, periods: list[Period],
                   outcomes: dict, blocked: dict, registered: dict, allow_draft: bool, echo: Echo,
                   batch_id: Optional[str], fail_fast: bool, total: int, state: dict) -> None:
    """Project ``name``'s periods: those blocked (a failed upstream, a draft) skipped as :func:`.many._run_one`
    skips them, the others fused (one period left: run on its own)."""
    project = graph.workspace.find_project(name)
    todo = []
    for p in periods:
        out = outcomes[(name, p.identifier)]
        if name in blocked[p.identifier] or (project.status == "draft" and not allow_draft):
            state["k"] += 1  # skipped, with its reason, as period by period
            _run_one(runner, graph, names, f"[{state['k']}/{total}] {p.identifier} {name}", out, p, allow_draft,
                     blocked[p.identifier], registered[p.identifier], echo, batch_id)
        else:
            todo.append(p)
    if len(todo) == 1:
        _one_period(runner, graph, names, name, todo[0], outcomes, blocked, registered, allow_draft, echo, batch_id,
                    total, state)
    if len(todo) < 2:
        return
    echo(f"\n{name}: {len(todo)} periods fused ({_span(todo)})")
    echo_before = runner.echo
    current: dict = {}  # the period whose run is under way: period, clock
    known: dict[str, set] = {}  # period -> the project-period's run ids before its run (its record is the new one)

    def on_start(period: Period) -> None:
        state["k"] += 1
        runner.echo = echo_before
        echo(f"\n[{state['k']}/{total}] {period.identifier} {name} (fused)")
        known[period.identifier] = _run_ids(runner.store, name, period.identifier, batch_id)
        current.update(period=period, clock=time.monotonic())
        runner.echo = _prefixed(echo_before, period.identifier)

    def ended(period: Period, result: object, seconds: float) -> None:
        out = outcomes[(name, period.identifier)]
        if isinstance(result, BaseException):
            state["stopped"] = ended_failed(runner, graph, names, out, result, seconds,
                                            known.get(period.identifier, set()), blocked[period.identifier], echo,
                                            batch_id)
            state["failed"] = True
        else:
            state["stopped"] = ended_completed(runner, out, result, seconds, registered[period.identifier])

    def on_done(period: Period, result: object) -> bool:
        runner.echo = echo_before
        ended(period, result, time.monotonic() - current.pop("clock"))
        current.clear()
        return state["stopped"] is not None or (fail_fast and state["failed"])

    try:
        # the workspace as each run loads it (runner.run does): with the datasets registered by the upstream
        # runs of this batch, which the planning workspace does not have yet
        run_range(runner, name, todo, workspace=None,
                  upstream={p.identifier: registered[p.identifier] for p in todo}, allow_draft=allow_draft,
                  batch_id=batch_id, on_start=on_start, on_done=on_done)
    except (RunInterrupted, LedgerflowError) as err:  # Ctrl-C during a period's run, or the range did not start
        runner.echo = echo_before
        hit = [current["period"]] if current else [p for p in todo
                                                   if outcomes[(name, p.identifier)].status == "pending"]
        for p in hit:
            ended(p, err, time.monotonic() - current.get("clock", time.monotonic()))
    finally:
        runner.echo = echo_before


def _prefixed(echo: Echo, period: str) -> Echo:
    """``echo`` whose indented progress lines name ``period`` (``  2026-02: [1] update ...``)."""
    return lambda line: echo(f"  {period}: {line[2:]}" if line.startswith("  ") else line)

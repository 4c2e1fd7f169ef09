"""A batch: the runs of one ``ledgerflow run`` invocation, and ``ledgerflow retry BATCH_ID``.

Every ``ledgerflow run`` is a batch, a single project for a single period too: a ``batch_id`` (a
UUIDv7, like a run id) that each of its runs records (``batch_id`` in the run record, ``runs.batch_id``
in the run store), and its plan saved before its first run: the projects in run order, the periods in
ascending order, ``--allow-draft``. Project-periods that never ran (skipped after a failed upstream,
``--fail-fast`` or Ctrl-C) have no run record; the plan is how ``retry`` knows them.

``retry`` re-runs, as new runs of the same batch, every project-period of the plan that has no
completed run in the batch (failed, skipped, or never run), in the order of ``run``: a project with two
or more of them fused where it can be (:func:`execute`), the rest period by period, upstream first. A
project whose upstream completed earlier in the batch reads the version that run registered for that
period (as within one invocation: ``upstream_runs``).
"""
from __future__ import annotations

from typing import Callable, Optional

from ...compiler.errors import LedgerflowError
from ...compiler.periods import Period, parse_period
from .closed import closed_blocks
from .context import new_run_id, utcnow
from .many import ProjectOutcome, plan_selection, run_periods
from .fused_batch import run_by_project
from .modes import EACH, FUSED, choose_mode

Echo = Callable[[str], None]


class NothingToRetry(LedgerflowError):
    """``ledgerflow retry`` of a batch whose project-periods all completed (exit 1)."""


def start_batch(store, names: list[str], periods: list[Period], allow_draft: bool,
                pairs: Optional[list[tuple[str, str]]] = None, mode: Optional[str] = None) -> str:
    """A new batch id, with its plan saved in ``store`` (see the module docstring); ``pairs``: only these
    ``(project, period identifier)`` of ``names`` x ``periods`` are the batch's (``run --stale``); ``mode``:
    the ``--mode`` it ran with (``retry``'s default)."""
    now = utcnow()
    batch_id = new_run_id(now)
    plan = {"projects": names, "periods": [p.identifier for p in periods], "allow_draft": allow_draft}
    if mode is not None:
        plan["mode"] = mode
    if pairs is not None:
        plan["pairs"] = [list(pair) for pair in pairs]
    store.save_batch(batch_id, now.isoformat(timespec="milliseconds"), plan)
    return batch_id


def run_batch(runner, root: str, periods: list[Period], select: Optional[str] = None, project: Optional[str] = None,
              allow_draft: bool = False, echo: Echo = print, mode: str = "auto",
              fail_fast: bool = False) -> list[ProjectOutcome]:
    """``ledgerflow run (PROJECT | --select SEL | --all) --period RANGE_OR_LIST``: plan (every selected project
    compiled first: a definition error is exit 1, nothing run), choose the mode of each project
    (:func:`.modes.choose_mode`, every reason not to fuse printed), start the batch and run it: period by
    period (:func:`.many.run_periods`) when no project is fused, else project by project
    (:func:`.fused_batch.run_by_project`) through :func:`execute`; returns one outcome per project-period."""
    graph, names = plan_selection(root, select, project=project)
    closed = closed_blocks(runner.store, names, periods, graph.workspace)  # listed `closed`, not run (run/closed.py)
    answers = choose_modes(mode, graph, names, periods, closed=closed, echo=echo)
    if len(periods) < 2 and mode not in ("auto", EACH):
        echo("running period by period: one period")
    batch_id = start_batch(runner.store, names, periods, allow_draft, mode=mode)
    return execute(runner, graph, names, periods, answers, allow_draft, echo, batch_id, fail_fast, closed)


def choose_modes(mode: str, graph, names: list[str], periods: list[Period], todo: Optional[set] = None,
                 closed: Optional[dict] = None, echo: Echo = print) -> dict[str, tuple[str, str]]:
    """Each project's :func:`.modes.choose_mode` answer over its own open periods of the batch (``todo``: only
    these ``(project, period identifier)``; ``closed``: period identifier -> project -> reason, left out).
    ``--mode each`` is said once; otherwise the reason a project of two periods or more is not fused."""
    if mode == EACH:
        echo("running period by period: --mode each")
        return {name: (EACH, "--mode each") for name in names}
    answers = {}
    for name in names:
        mine = [p for p in periods if (todo is None or (name, p.identifier) in todo)
                and name not in (closed or {}).get(p.identifier, {})]
        answers[name] = choose_mode(mode, [name], mine, graph.workspace)
        if answers[name][0] == EACH and len(mine) > 1:
            echo(f"running period by period: {answers[name][1]}")
    return answers


def execute(runner, graph, names: list[str], periods: list[Period], answers: dict[str, tuple[str, str]],
            allow_draft: bool, echo: Echo, batch_id: str, fail_fast: bool, closed: dict, todo: Optional[set] = None,
            upstream: Optional[dict] = None) -> list[ProjectOutcome]:
    """Run the batch: period by period (:func:`.many.run_periods`) when no project is fused, else project by
    project (:func:`.fused_batch.run_by_project`); ``todo`` and ``upstream`` as :func:`.many.run_periods` takes
    them. Returns one outcome per project-period."""
    if all(chosen == EACH for chosen, _ in answers.values()):
        return run_periods(runner, graph, names, periods, allow_draft, echo, batch_id, fail_fast, todo=todo,
                           upstream=upstream, closed=closed)
    fused: dict[str, list[str]] = {}  # why -> the projects fused so (a stale batch: each over its own periods)
    for name, (chosen, why) in answers.items():
        if chosen == FUSED:
            fused.setdefault(why, []).append(name)
    echo("fused: " + "; ".join(f"{', '.join(names_)} ({why})" for why, names_ in fused.items()))
    return run_by_project(runner, graph, names, periods, answers, allow_draft, echo, batch_id, fail_fast,
                          closed=closed, todo=todo, upstream=upstream)


def retry_batch(runner, root: str, batch_ref: str, echo: Echo = print, fail_fast: bool = False,
                mode: Optional[str] = None) -> list[ProjectOutcome]:
    """``ledgerflow retry BATCH_ID``: re-run the project-periods of the batch that did not complete (see the
    module docstring); ``mode``: as ``run --mode`` (default: the mode the batch ran with, else auto). Raises
    :class:`.batch_table.BatchNotFound` or :class:`NothingToRetry` (exit 1)."""
    batch = runner.store.get_batch(batch_ref)
    batch_id, plan = batch["batch_id"], batch["plan"]
    mode = mode or plan.get("mode") or "auto"
    runs = runner.store.batch_runs(batch_id)  # oldest first
    done = {(r["project"]["name"], r["period"]["identifier"]) for r in runs if r["status"] == "completed"}
    planned = ([tuple(pair) for pair in plan["pairs"]] if plan.get("pairs") is not None
               else [(n, p) for p in plan["periods"] for n in plan["projects"]])
    todo = {key for key in planned if key not in done}
    if not todo:
        raise NothingToRetry(
            f"batch {batch_id} has nothing to retry: all its {len(planned)} project-period"
            f"{'s' if len(planned) != 1 else ''} completed ({len(runs)} run{'s' if len(runs) != 1 else ''} recorded). "
            f"`ledgerflow runs list --batch {batch_id}` lists them; to run a period again, start a new batch with "
            "`ledgerflow run`.")
    graph, names = plan_selection(root, None, names=plan["projects"])
    periods = [parse_period(p) for p in plan["periods"]]
    failed = len(todo & {(r["project"]["name"], r["period"]["identifier"]) for r in runs if r["status"] == "failed"})
    echo(f"Retrying batch {batch_id}: {len(todo)} of {len(planned)} project-periods ({failed} failed, "
         f"{len(todo) - failed} skipped or not run)")
    upstream: dict[str, dict] = {}  # period -> registered dataset -> what the batch's completed runs registered
    for r in runs:
        if r["status"] != "completed":
            continue
        for o in r.get("outputs") or []:
            if o.get("registered_dataset"):
                upstream.setdefault(r["period"]["identifier"], {})[o["registered_dataset"]] = {
                    "dataset": o["registered_dataset"], "version": o["registered_version"], "run_id": r["run_id"],
                    "project": r["project"]["name"]}
    closed = closed_blocks(runner.store, names, periods, graph.workspace)
    answers = choose_modes(mode, graph, names, periods, todo, closed, echo)
    return execute(runner, graph, names, periods, answers, bool(plan.get("allow_draft")), echo, batch_id, fail_fast,
                   closed, todo=todo, upstream=upstream)

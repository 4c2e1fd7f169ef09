"""A batch: the runs of one ``ledgerflow run`` invocation, and ``ledgerflow retry BATCH_ID``.

Every ``ledgerflow run`` is a batch, a single project for a single period too: a ``batch_id`` (a
UUIDv7, like a run id) that each of its runs records (``batch_id`` in the run record, ``runs.batch_id``
in the run store), and its plan saved before its first run: the projects in run order, the periods in
ascending order, ``--allow-draft``. Project-periods that never ran (skipped after a failed upstream,
``--fail-fast`` or Ctrl-C) have no run record; the plan is how ``retry`` knows them.

``retry`` re-runs, as new runs of the same batch, every project-period of the plan that has no
completed run in the batch (failed, skipped, or never run), in the order of ``run``: a project with two
or more of them fused where it can be, the rest period by period, upstream first. A
project whose upstream completed earlier in the batch reads the version that run registered for that
period (as within one invocation: ``upstream_runs``). The batch runs through :class:`.scheduler.Scheduler`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from ...compiler.errors import LedgerflowError
from ...compiler.periods import Period, parse_period
from .context import new_run_id, utcnow
from .modes import EACH, choose_mode
from .unit import RunSettings

Echo = Callable[[str], None]


class NothingToRetry(LedgerflowError):
    """``ledgerflow retry`` of a batch whose project-periods all completed (exit 1)."""


def start_batch(store, names: list[str], periods: list[Period], settings: RunSettings,
                pairs: Optional[list[tuple[str, str]]] = None) -> str:
    """A new batch id, with its plan saved in ``store`` (see the module docstring): ``settings``' ``--allow-draft``
    and ``--mode`` (``retry``'s default; None: not recorded); ``pairs``: only these ``(project, period
    identifier)`` of ``names`` x ``periods`` are the batch's (``run --stale``)."""
    now = utcnow()
    batch_id = new_run_id(now)
    plan = {"projects": names, "periods": [p.identifier for p in periods], "allow_draft": settings.allow_draft}
    if settings.mode is not None:
        plan["mode"] = settings.mode
    if pairs is not None:
        plan["pairs"] = [list(pair) for pair in pairs]
    store.save_batch(batch_id, now.isoformat(timespec="milliseconds"), plan)
    return batch_id


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


@dataclass(frozen=True)
class RetryPlan:
    """What ``retry`` re-runs of a batch: its id, projects, periods, ``--allow-draft`` and mode as the batch
    ran, ``todo`` (the ``(project, period identifier)`` pairs without a completed run), ``upstream`` (period
    identifier -> registered dataset -> what the batch's completed runs registered) and the line announcing it."""

    batch_id: str
    names: list
    periods: list
    allow_draft: bool
    mode: str
    todo: frozenset
    upstream: dict
    announce: str


def retry_plan(store, batch_ref: str) -> RetryPlan:
    """The :class:`RetryPlan` of ``batch_ref`` (see the module docstring). Raises
    :class:`.batch_table.BatchNotFound` or :class:`NothingToRetry` (exit 1)."""
    batch = store.get_batch(batch_ref)
    batch_id, plan = batch["batch_id"], batch["plan"]
    runs = store.batch_runs(batch_id)  # oldest first
    done = {(r["project"]["name"], r["period"]["identifier"]) for r in runs if r["status"] == "completed"}
    planned = ([tuple(pair) for pair in plan["pairs"]] if plan.get("pairs") is not None
               else [(n, p) for p in plan["periods"] for n in plan["projects"]])
    todo = frozenset(key for key in planned if key not in done)
    if not todo:
        raise NothingToRetry(
            f"batch {batch_id} has nothing to retry: all its {len(planned)} project-period"
            f"{'s' if len(planned) != 1 else ''} completed ({len(runs)} run{'s' if len(runs) != 1 else ''} recorded). "
            f"`ledgerflow runs list --batch {batch_id}` lists them; to run a period again, start a new batch with "
            "`ledgerflow run`.")
    failed = len(todo & {(r["project"]["name"], r["period"]["identifier"]) for r in runs if r["status"] == "failed"})
    announce = (f"Retrying batch {batch_id}: {len(todo)} of {len(planned)} project-periods ({failed} failed, "
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
    return RetryPlan(batch_id, list(plan["projects"]), [parse_period(p) for p in plan["periods"]],
                     bool(plan.get("allow_draft")), plan.get("mode") or "auto", todo, upstream, announce)

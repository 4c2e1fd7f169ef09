"""``ledgerflow periods close | reopen | list`` (docs/commands.md "Closed periods"): the command-line side of
the run store's closed project-periods (:mod:`..store.closure_table`)."""
from __future__ import annotations

import datetime
import os
from typing import Callable, Optional

from ...compiler.periods import Period
from ..console.invocation import who
from ..layout.env_names import ENV_VARIABLE
from ..layout.partition_paths import PROD
from ..store.closure_table import CLOSE, describe
from .stale import current_names

Echo = Callable[[str], None]


def now() -> str:
    """Now in UTC, to the second, as closes record it (``2026-02-03T10:15:00Z``)."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def project_names(inv, refs: tuple) -> list[str]:
    """The names of the projects ``refs`` names (each a name, id or path: an unknown one is the usual
    one-paragraph error listing the projects), or every project of the workspace now when none is named."""
    if refs:
        return list(dict.fromkeys(inv.project(ref).name for ref in refs))
    return sorted(p.name for p in inv.workspace.projects)


def set_state(inv, action: str, periods: list[Period], refs: tuple, note: Optional[str], by: Optional[str],
              echo: Echo) -> None:
    """``periods close`` (``action`` close) or ``periods reopen``: every named project (default: every project
    of the workspace now, each recorded on its own) for every one of ``periods``, in one transaction. A reopen
    also takes the name of a closed project no longer in the workspace (``periods list`` shows it removed),
    so that its close, which keeps the partitions it published, can be lifted."""
    ids = {p.name: p.id for p in inv.workspace.projects}
    gone: dict[str, Optional[str]] = {}
    if action != CLOSE and refs:
        gone = {c["project"]: c.get("project_id") for c in inv.store.closures(
            current=current_names(inv.workspace)).values() if c["removed"]}
    names = list(dict.fromkeys(ref if ref in gone and ref not in ids else inv.project(ref).name for ref in refs)) \
        if refs else project_names(inv, refs)
    pairs = [(n, p.identifier) for p in periods for n in names]
    person, at = who(by), now()
    inv.store.set_closed(pairs, action, person, at, note,
                         ids={**{n: pid for n, pid in gone.items() if pid}, **ids})
    verb = "Closed" if action == CLOSE else "Reopened"
    span = ", ".join(p.identifier for p in periods)
    echo(f"{verb} {len(pairs)} project-period{'s' if len(pairs) != 1 else ''} by {person} at {at}"
         f"{f' (note: {note!r})' if note else ''}: period{'s' if len(periods) != 1 else ''} {span} of "
         f"{len(names)} project{'s' if len(names) != 1 else ''} ({', '.join(names)})")
    if action == CLOSE:
        echo("A run of these project-periods is refused now; `ledgerflow restate PROJECT --period P --reason TEXT` "
             "changes one on purpose.")


def refuse_closed(inv, project_ref: str, period: Period) -> None:
    """Raise :class:`.closure_table.PeriodClosed` (exit 1) when ``project_ref``'s ``period`` is closed: before
    ``run PROJECT --period P`` starts Spark."""
    project = inv.project(project_ref)
    inv.store.refuse_if_closed(project.name, period.identifier, project.id)


def refuse_closed_replay(inv, run_id: str) -> None:
    """Before ``replay`` starts Spark: the replay publishes in the environment the run published in, unless
    ``--env`` or ``$LEDGERFLOW_ENV`` names one (a dev run's replay never lands in prod unasked); then raise
    :class:`.closure_table.PeriodClosed` (exit 1) when it would republish a closed period of prod (an unknown run:
    the usual error)."""
    if inv.env_option is None and not os.environ.get(ENV_VARIABLE):
        from ..store.runstore import RunStore  # one record read, in whatever environment it ran
        inv.env_option = RunStore(inv.root).get_run(run_id).get("env") or PROD
    rec = inv.store.get_run(run_id)
    if inv.env == PROD:
        inv.store.refuse_if_closed(rec["project"]["name"], rec["period"]["identifier"], rec["project"].get("id"))


def list_periods(inv, refs: tuple, periods: Optional[list[Period]], echo: Echo) -> None:
    """``periods list``: per project and period that was ever closed or has a completed run, its state (open or
    closed, by whom, when, the note), the run whose outputs are published (its last completed run) and
    whether that run is stale (``status``). Closes and runs are listed under their project's name now (a
    renamed project's under its new name, found by id); a project no longer in the workspace is marked
    ``(removed)`` and never judged stale."""
    from .stale import published_runs, stale_report
    names = project_names(inv, refs) if refs else None
    wanted = None if periods is None else [p.identifier for p in periods]
    store, ws = inv.store, inv.workspace
    current = current_names(ws)
    closures = store.closures(names, wanted, current=current)
    published = {(r["project"], r["period"]): r for r in published_runs(store, ws, wanted, names)}
    live = set(current.values())
    report = stale_report(store, ws, wanted, names, published=list(published.values()))
    stale = {(e.project, e.period) for e in report.entries}
    keys = sorted(set(closures) | set(published), key=lambda k: (k[1], k[0]))
    if not keys:
        echo("no project-period closed or run yet" + (" (of those asked)" if refs or periods else ""))
        return
    shown = {k: k[0] if k[0] in live else f"{k[0]} (removed)" for k in keys}
    pw = max(len("period"), *(len(k[1]) for k in keys))
    nw = max(len("project"), *(len(v) for v in shown.values()))
    echo(f"{'period':<{pw}}  {'project':<{nw}}  {'state':<6}  {'published run':<36}  {'stale':<5}  closed / reopened")
    for key in keys:
        closure, run = closures.get(key), published.get(key)
        state = "closed" if closure and closure["action"] == CLOSE else "open"
        stale_text = "-" if run is None or key[0] not in live else ("yes" if key in stale else "no")
        echo(f"{key[1]:<{pw}}  {shown[key]:<{nw}}  {state:<6}  {(run or {}).get('run_id') or '-':<36}  "
             f"{stale_text:<5}  {describe(closure) if closure else '-'}")
    if stale:
        echo(f"{len(stale)} stale: `ledgerflow status` says why.")
    gone = sorted({k[0] for k in keys if k[0] not in live})
    if gone:
        echo(f"Removed: project{'s' if len(gone) != 1 else ''} {', '.join(gone)} no longer in the workspace; "
             "their closes and published runs stay recorded.")

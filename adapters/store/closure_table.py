"""The ``period_closures`` table of the run store: which project-periods are closed (``ledgerflow periods
close | reopen | list``, docs/commands.md "Closed periods").

Every close and reopen is a row of its own (who, when, the note), never updated or deleted: the table is
the period's history, and a project-period's state is its newest row (``close``: closed; ``reopen`` or no
row: open). A close or reopen of several project-periods is one ``BEGIN IMMEDIATE`` transaction that
first reads their states: when one of them is already in the state asked for, nothing is written.

A run of a closed project-period is refused before it starts (:class:`PeriodClosed`, by the command) and
again at its commit point (:meth:`ClosureTable.refuse_closed`, in the transaction that records it
completed), so that a close that lands while a run is under way still keeps the period's published
outputs: that run is rolled back. A run that writes a catalog table or a URI does so in place before its
commit point, which a rollback cannot undo: so a close is refused (PERIOD-004) while a run of that
project-period is under way (recorded ``running``, its process alive). The check and the close are one
transaction, and a run saves itself ``running`` before it looks for a close the last time (before its
first in-place write): whichever comes first, the other sees it. A record carrying ``restatement``
(``ledgerflow restate``) is the one run of a closed period that commits.

Closes are kept by project id (``project_id``; ``project`` is the name it had then): a renamed project keeps
its closed periods under its new name. A close recorded before ids were (``project_id`` NULL) belongs to the
project of that name, or to the project whose runs were recorded under that name (its id in ``runs``).
"""
from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing
from typing import Iterable, Optional

from ...compiler.errors import LedgerflowError
from ...compiler.visible_text import visible
from . import liveness
from .database import StateDatabase

CLOSE, REOPEN = "close", "reopen"
_COLUMNS = "project, period, action, by_name, at, note"
# the closes of one project: by its id, or (recorded before ids) by its name or a name its runs were recorded under
_OF_PROJECT = ("(project_id = :id OR (project_id IS NULL AND (project = :name OR project IN "
               "(SELECT project_name FROM runs WHERE project_id = :id))))")
_BY_NAME = "project = :name"


class PeriodClosed(LedgerflowError):
    """A run of a closed project-period (exit 1): ``closure`` is the close that holds it."""

    def __init__(self, closure: dict, through: Optional[tuple[str, str, str]] = None):
        self.closure = closure
        p, period = closure["project"], closure["period"]
        # through: (the project that would run, a partition the close's published run wrote, that run's id)
        by = "" if through is None else (
            f" Project '{through[0]}' would replace the partition {through[1]}, which run {through[2]} of '{p}' "
            "published: a close keeps the partitions it published, whichever project writes them.")
        super().__init__(
            f"PERIOD-001 period {period} of project '{p}' is closed: {describe(closure)}.{by} Its published outputs "
            f"stand, so nothing was run or written. A restatement changes a closed period on purpose, with a "
            f"reason and the data diff in its record: `ledgerflow restate {p} --period {period} --reason TEXT`; "
            f"or reopen it first (`ledgerflow periods reopen {period} --project {p} --note TEXT`).")


class PeriodStateError(LedgerflowError):
    """A close of a closed project-period, or a reopen of an open one (exit 1; nothing written)."""


def describe(closure: dict) -> str:
    """Who closed (or reopened) a project-period, when, and the note: ``closed by alice at ... (note: ...)``."""
    verb = "closed" if closure["action"] == CLOSE else "reopened"
    # free text someone typed: shown by the one rule (an escape sequence or a line break written as \uXXXX),
    # wherever this lands (periods list, status, a PERIOD-001 error, a run's skipped line)
    note = f' (note: "{visible(closure["note"])}")' if closure.get("note") else " (no note)"
    was = closure.get("recorded_as")
    named = f" as project '{visible(str(was))}'" if was and was != closure.get("project") else ""
    return f"{verb}{named} by {visible(str(closure['by']))} at {closure['at']}{note}"


def _row(r: tuple) -> dict:
    return dict(zip(("project", "period", "action", "by", "at", "note"), r))


class ClosureTable(StateDatabase):
    """The closes and reopens of project-periods."""

    def closures(self, projects: Optional[Iterable[str]] = None, periods: Optional[Iterable[str]] = None,
                 current: Optional[dict[str, str]] = None) -> dict[tuple[str, str], dict]:
        """(project, period identifier) -> its newest close or reopen ``{project, period, action, by, at, note,
        project_id, removed}``, for every project-period ever closed (only of ``projects`` / ``periods`` when
        given). ``current`` (project id -> its name in the workspace now): each close is listed under its
        project's name now, and ``removed`` says its project is no longer in the workspace; without it, under
        the name its newest close or reopen recorded."""
        if not os.path.exists(self.db_path):
            return {}
        want_t = None if periods is None else list(dict.fromkeys(periods))
        only = "" if want_t is None else f" WHERE period IN ({','.join('?' * len(want_t))})"
        with closing(self._connect()) as conn:
            rows = conn.execute(f"SELECT {_COLUMNS}, project_id FROM period_closures{only} ORDER BY seq",
                                want_t or ()).fetchall()
        ran_as = self.names_ran_as() if rows else {}
        now = current or {}
        id_of_name = {name: pid for pid, name in now.items()}
        newest: dict[tuple[str, str], dict] = {}
        for r in rows:
            row = {**_row(r), "project_id": r[6]}
            identity = r[6] or id_of_name.get(r[0]) or ran_as.get(r[0]) or "name:" + r[0]
            newest[(identity, r[1])] = row
        want_p = None if projects is None else set(projects)
        out = {}
        for (identity, period), row in newest.items():
            name = now.get(identity, row["project"])
            row = {**row, "project": name, "removed": current is not None and identity not in now}
            if want_p is None or name in want_p:
                out[(name, period)] = row
        return out

    def closed_publications(self, period: str) -> list[tuple[dict, dict]]:
        """(close, what the run it keeps published wrote: ``{run_id, period, outputs, commit}`` of the project-period's
        last completed run) of every closed project-period of ``period`` that has a completed run (one query
        of the runs of the closed projects: a run of another project checks them before it writes)."""
        if self.env != "prod":
            return []  # a close protects what prod publishes; another environment publishes apart from it
        closes = [c for c in self.closures(periods=[period]).values() if c["action"] == CLOSE]
        if not closes:
            return []
        ids = [c["project_id"] for c in closes if c.get("project_id")]
        names = [c["project"] for c in closes if not c.get("project_id")]
        where = " OR ".join(f"{column} IN ({','.join('?' * len(values))})"
                            for column, values in (("project_id", ids), ("project_name", names)) if values)
        with closing(self._connect()) as conn:
            rows = conn.execute(f"SELECT project_id, project_name, run_id, record FROM runs WHERE status = 'completed' "
                                f"AND period = ? AND ({where}) ORDER BY finished_at, run_id",
                                [period, *ids, *names]).fetchall()
        by_id = {r[0]: r for r in rows}  # the newest last
        by_name = {r[1]: r for r in rows}
        found = []
        for closure in closes:
            row = by_id.get(closure["project_id"]) if closure.get("project_id") else by_name.get(closure["project"])
            if row is not None:
                rec = json.loads(row[3])
                found.append((closure, {"run_id": row[2], "period": {"identifier": period},
                                        "outputs": rec.get("outputs") or [], "commit": rec.get("commit") or {}}))
        return found

    def names_ran_as(self) -> dict[str, str]:
        """Project name -> the id of the project whose runs were recorded under it (the newest run's)."""
        if not os.path.exists(self.db_path):
            return {}
        with closing(self._connect()) as conn:
            return dict(conn.execute("SELECT project_name, project_id FROM runs WHERE project_id IS NOT NULL "
                                     "ORDER BY started_at, run_id").fetchall())

    def closed(self, project: str, period: str, project_id: Optional[str] = None) -> Optional[dict]:
        """The close holding ``project``'s ``period`` (its identifier), or None when it is open. With
        ``project_id``, the project's closes under any earlier name count too (named ``project`` here)."""
        if not os.path.exists(self.db_path):
            return None
        with closing(self._connect()) as conn:
            found = _newest(conn, project, period, project_id)
        return found if found and found["action"] == CLOSE else None

    def history(self, project: str, period: str, project_id: Optional[str] = None) -> list[dict]:
        """Every close and reopen of ``project``'s ``period`` (by ``project_id`` too, as :meth:`closed`), oldest
        first."""
        if not os.path.exists(self.db_path):
            return []
        with closing(self._connect()) as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM period_closures WHERE period = :period AND "
                                f"{_OF_PROJECT if project_id else _BY_NAME} ORDER BY seq",
                                {"period": period, "name": project, "id": project_id}).fetchall()
        return [{**_row(r), "project": project} for r in rows]

    def set_closed(self, pairs: list[tuple[str, str]], action: str, by: str, at: str, note: Optional[str],
                   ids: Optional[dict[str, str]] = None) -> None:
        """Close (``action`` :data:`CLOSE`) or reopen (:data:`REOPEN`) every ``(project, period)`` of ``pairs``
        in one transaction, recording ``by``, ``at``, ``note`` and the project's id (``ids``: name -> id); raises
        :class:`PeriodStateError`, nothing written, when one of them is already closed (closing) or open
        (reopening), naming each such one."""
        ids = ids or {}
        with self._immediate() as conn:
            wrong: list[str] = []
            busy: list[str] = []
            for project, period in pairs:
                newest = _newest(conn, project, period, ids.get(project))
                is_closed = newest is not None and newest["action"] == CLOSE
                if action == CLOSE and is_closed:
                    wrong.append(f"{period} of '{project}' ({describe(newest)})")
                elif action == CLOSE:
                    busy.extend(f"{period} of '{project}' (run {run_id}, {where})"
                                for run_id, where in self._runs_in_flight(conn, project, period))
                elif action == REOPEN and not is_closed:
                    wrong.append(f"{period} of '{project}' ({'never closed' if newest is None else describe(newest)})")
            if wrong:
                raise _state_error(action, wrong, len(pairs))
            if busy:
                raise _busy_error(busy, len(pairs))
            conn.executemany("INSERT INTO period_closures (project, period, action, by_name, at, note, project_id) "
                             "VALUES (?,?,?,?,?,?,?)", [(p, t, action, by, at, note, ids.get(p)) for p, t in pairs])

    def _runs_in_flight(self, conn: sqlite3.Connection, project: str, period: str) -> list[tuple[str, str]]:
        """``(run id, where it runs)`` of each run of ``project``'s ``period`` recorded ``running`` whose process
        may still be writing (:func:`.liveness.may_be_alive`, as a lease's holder is judged). A run whose process
        died is not one: recovery rolls it back, and it never reaches its commit."""
        runs_dir = getattr(self, "runs_dir", None)
        found = []
        for run_id, text in conn.execute("SELECT run_id, record FROM runs WHERE project_name = ? AND period = ? "
                                         "AND status = 'running' ORDER BY run_id", (project, period)):
            try:
                process = (json.loads(text or "{}").get("process") or {})
            except ValueError:
                process = {}
            where = f"process {process.get('pid')} on {process.get('host')}"
            if runs_dir is None or liveness.may_be_alive(runs_dir, run_id, process.get("pid"), process.get("host")):
                found.append((run_id, where))
        return found

    def refuse_if_closed(self, project: str, period: str, project_id: Optional[str] = None) -> None:
        """Raise :class:`PeriodClosed` (exit 1) when ``project``'s ``period`` (its identifier) is closed (by
        ``project_id`` too, as :meth:`closed`): what ``run``, ``replay`` and the Python API check before Spark
        starts. Not in an environment other than prod: a close protects what prod publishes."""
        found = self.closed(project, period, project_id) if self.env == "prod" else None
        if found is not None:
            raise PeriodClosed(found)

    def refuse_closed_now(self, record: dict) -> None:
        """Raise :class:`PeriodClosed` when the project-period of the run ``record`` describes is closed now
        (a restatement excepted): before a run writes a catalog table or URI in place, which its commit
        point's refusal could no longer undo."""
        if os.path.exists(self.db_path):
            with closing(self._connect()) as conn:
                self.refuse_closed(conn, record)

    @staticmethod
    def periods_with_closures(conn: sqlite3.Connection, periods) -> set[str]:
        """Which of ``periods`` any close or reopen was ever recorded for, in one query: a run of any other period
        cannot be in a closed one, so :meth:`refuse_closed` need not ask for it (a promotion records thousands of
        runs in the transaction that checks them)."""
        asked = sorted(set(periods))
        if not asked:
            return set()
        return {period for (period,) in conn.execute(
            f"SELECT DISTINCT period FROM period_closures WHERE period IN ({','.join('?' * len(asked))})", asked)}

    @staticmethod
    def refuse_closed(conn: sqlite3.Connection, record: dict) -> None:
        """Inside the transaction recording ``record`` completed: raise :class:`PeriodClosed` when its
        project-period is closed (the transaction rolls back), unless the record is a restatement or of a run in
        an environment other than prod."""
        if record.get("restatement") or record.get("env", "prod") != "prod":
            return
        project, period = record["project"], record["period"]["identifier"]
        found = _newest(conn, project["name"], period, project.get("id"))  # by id: a renamed project's too
        if found is not None and found["action"] == CLOSE:
            raise PeriodClosed(found)


def _newest(conn: sqlite3.Connection, project: str, period: str, project_id: Optional[str] = None) -> Optional[dict]:
    """The newest close or reopen of ``project``'s ``period``: by ``project_id`` when given (:data:`_OF_PROJECT`;
    named ``project``, its name now), else by name."""
    row = conn.execute(f"SELECT {_COLUMNS} FROM period_closures WHERE period = :period AND "
                       f"{_OF_PROJECT if project_id else _BY_NAME} ORDER BY seq DESC LIMIT 1",
                       {"period": period, "name": project, "id": project_id}).fetchone()
    return {**_row(row), "project": project, "recorded_as": row[0]} if row else None


def _busy_error(busy: list[str], asked: int) -> PeriodStateError:
    shown = "; ".join(busy[:5]) + (f"; and {len(busy) - 5} more" if len(busy) > 5 else "")
    return PeriodStateError(
        f"PERIOD-004 a run is under way: {shown}. Nothing was closed (of {asked} project-period"
        f"{'s' if asked != 1 else ''} asked): a run that writes a catalog table or a URI in place could not be "
        "undone once its period is closed. Close it when the run has finished (`ledgerflow runs list` shows "
        "it); the close then keeps what that run published. A run on another host whose process is gone holds "
        "it until `ledgerflow runs clean --other-hosts` recovers it.")


def _state_error(action: str, wrong: list[str], asked: int) -> PeriodStateError:
    shown = "; ".join(wrong[:5]) + (f"; and {len(wrong) - 5} more" if len(wrong) > 5 else "")
    if action == CLOSE:
        return PeriodStateError(
            f"PERIOD-002 already closed: {shown}. Nothing was closed (of {asked} project-period"
            f"{'s' if asked != 1 else ''} asked). `ledgerflow periods list` shows each one's state; name only the "
            "open ones with --project, or reopen one first with `ledgerflow periods reopen`.")
    return PeriodStateError(
        f"PERIOD-003 not closed: {shown}. Nothing was reopened (of {asked} project-period"
        f"{'s' if asked != 1 else ''} asked). `ledgerflow periods list` shows which are closed.")

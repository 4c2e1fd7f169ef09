"""The ``batches`` table of the run store and ``runs.batch_id``: every ``ledgerflow run`` invocation is a
batch (``batch_id``), whose plan (the project-periods it meant to run, in run order) is saved before its
first run, so that ``ledgerflow retry`` knows the project-periods that were skipped and never recorded a
run, and ``ledgerflow runs list --batch`` lists its runs."""
from __future__ import annotations

import json
import os
from contextlib import closing

from ...compiler.errors import LedgerflowError
from .database import StateDatabase


class BatchNotFound(LedgerflowError):
    """No batch with the given id (or the prefix names several); exit 1."""


class BatchTable(StateDatabase):
    """The batches recorded, and the runs of each."""

    def save_batch(self, batch_id: str, created_at: str, plan: dict) -> None:
        """Record batch ``batch_id`` and its ``plan`` (``{projects, periods, ...}``: what it meant to run)."""
        with closing(self._connect()) as conn, conn:
            conn.execute("INSERT OR REPLACE INTO batches (batch_id, created_at, plan) VALUES (?,?,?)",
                         (batch_id, created_at, json.dumps(plan)))

    def get_batch(self, batch_id: str) -> dict:
        """``{batch_id, created_at, plan}`` of ``batch_id`` (a unique prefix is enough); raises
        :class:`BatchNotFound`."""
        rows = []
        if os.path.exists(self.db_path):
            with closing(self._connect()) as conn:
                rows = conn.execute("SELECT batch_id, created_at, plan FROM batches WHERE substr(batch_id, 1, ?) = ? "
                                    "ORDER BY batch_id", (len(batch_id), batch_id)).fetchall()
        if len(rows) != 1:
            why = (f"no batch '{batch_id}' in this workspace's run store" if not rows
                   else f"batch id prefix '{batch_id}' is ambiguous ({', '.join(r[0] for r in rows[:3])}, ...)")
            raise BatchNotFound(f"{why}. A batch id is printed in the summary of `ledgerflow run` and in "
                                "`ledgerflow runs show RUN_ID`; `ledgerflow runs list` lists the runs.")
        return {"batch_id": rows[0][0], "created_at": rows[0][1], "plan": json.loads(rows[0][2])}

    def batch_runs(self, batch_id: str) -> list[dict]:
        """The records of the runs of ``batch_id`` (exact id), oldest first."""
        if not os.path.exists(self.db_path):
            return []
        with closing(self._connect()) as conn:
            rows = conn.execute("SELECT record FROM runs WHERE batch_id = ? ORDER BY started_at, run_id",
                                (batch_id,)).fetchall()
        return [json.loads(r[0]) for r in rows]

    def batch_run_ids(self, batch_id: str, project: str, period: str) -> set[str]:
        """The ids of the runs of ``batch_id`` of project ``project`` for ``period`` (its identifier)."""
        with closing(self._connect()) as conn:
            rows = conn.execute("SELECT run_id FROM runs WHERE batch_id = ? AND project_name = ? AND period = ?",
                                (batch_id, project, period)).fetchall()
        return {r[0] for r in rows}

"""The ``leases`` table of the run store: the destination partitions running runs are writing, one
writer per partition (adapters/run/leases.py takes and waits for them). A run's leases go in the
transaction that records it completed or failed (:class:`.runstore.RunStore`)."""
from __future__ import annotations

import os
from contextlib import closing
from typing import Optional

from .database import StateDatabase


class LeaseTable(StateDatabase):
    """The leases held, and every run's claims (leases and pending reservations) for recovery."""

    def take_leases(self, run_id: str, process: dict, resources: list[str], taken_at: str) -> Optional[dict]:
        """Lease every one of ``resources`` to ``run_id`` in one ``BEGIN IMMEDIATE`` transaction, or none:
        returns None when all were taken, else the lease another run holds on one of them
        (``{resource, run_id, pid, host, taken_at}``)."""
        with self._immediate() as conn:
            for resource in resources:
                row = conn.execute("SELECT resource, run_id, pid, host, taken_at FROM leases WHERE resource = ? "
                                   "AND run_id != ?", (resource, run_id)).fetchone()
                if row is not None:
                    conn.execute("ROLLBACK")
                    return dict(zip(("resource", "run_id", "pid", "host", "taken_at"), row))
            conn.executemany("INSERT OR REPLACE INTO leases VALUES (?,?,?,?,?)",
                             [(r, run_id, process.get("pid"), process.get("host"), taken_at) for r in resources])
            return None

    def leases(self, run_id: Optional[str] = None) -> list[dict]:
        """The leases held (by ``run_id``, or all)."""
        if not os.path.exists(self.db_path):
            return []
        with closing(self._connect()) as conn:
            rows = conn.execute("SELECT resource, run_id, pid, host, taken_at FROM leases"
                                + (" WHERE run_id = ?" if run_id else "") + " ORDER BY resource",
                                (run_id,) if run_id else ()).fetchall()
        return [dict(zip(("resource", "run_id", "pid", "host", "taken_at"), r)) for r in rows]

    def claims(self) -> dict[str, dict]:
        """Run id -> ``{pid, host}`` of every run holding a lease or a pending reservation (recovery
        releases those of dead processes, whether or not their run was ever recorded)."""
        if not os.path.exists(self.db_path):
            return {}
        with closing(self._connect()) as conn:
            rows = conn.execute("SELECT run_id, pid, host FROM leases UNION ALL SELECT run_id, pid, host FROM "
                                "registered_datasets WHERE status = 'pending' ORDER BY 1").fetchall()
        out: dict[str, dict] = {}
        for run_id, pid, host in rows:
            if out.get(run_id, {}).get("pid") is None:  # a reservation taken before pids were recorded has none
                out[run_id] = {"pid": pid, "host": host}
        return out

"""The run store: ``target/runs/<run_id>/run.json`` (+ compiled SQL) and ``.ledgerflow/state.db``.

The SQLite database holds the run registry and the datasets registered by outputs
(``register_as_dataset``): each registration is an immutable version with its location, format,
schema and the periods it holds.

A registration is taken in two steps so that two runs never share a version: before anything runs
the run reserves the next version in one ``BEGIN IMMEDIATE`` transaction (a ``pending`` row holding
its location); after its outputs were swapped in, the run flips the row to ``committed`` in the same
transaction that records it completed (``complete``: the run's commit point); a failed run deletes
its pending rows. Readers see committed rows only. A reservation records the process that took it
(``pid``, ``host``), so that recovery can release it even when its run was never recorded.

The ``leases`` table holds the destination partitions running runs are writing (:mod:`.leases`):
one writer per partition. A run's leases go in the transaction that records it completed or failed.
"""
from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing
from typing import Optional

from ...compiler.errors import LedgerflowError, ResolutionError
from ...compiler.model import ColumnDef, Dataset, DatasetVersion
from ...compiler.registered import registered_id
from .batch_table import BatchTable
from .closure_table import ClosureTable
from .lease_table import LeaseTable
from .promotion_table import PromotionTable
from .whole_files import write_json_whole, write_whole
from .published import PublishedTable, upsert_run

_COMMITTED = "status = 'committed'"
_LIVE = "status IN ('pending', 'committed')"


STORE_FILE = ".ledgerflow/state.db"  # the file a registered dataset only the run store knows names

class RunNotFound(LedgerflowError):
    """No run with the given id."""


class RunStore(LeaseTable, BatchTable, ClosureTable, PublishedTable, PromotionTable):
    """Access to one workspace's run records and registered datasets (and, from its bases, the file
    :class:`.database.StateDatabase`, the leases :class:`.lease_table.LeaseTable`, the batches
    :class:`.batch_table.BatchTable`, the closed periods :class:`.closure_table.ClosureTable` and the
    published runs :class:`.published.PublishedTable`). Making one opens nothing yet and recovers nothing: a command opens
    the store with :func:`ledgerflow.adapters.commit.open_store.open_store`, which checks the file and recovers
    interrupted runs first."""

    # ---------------------------------------------------------------- runs
    def save_run(self, record: dict, sql_text: Optional[str] = None, release: bool = False) -> str:
        """Write ``run.json`` (and the compiled SQL) and upsert the registry row; returns the run folder.
        ``release`` (a final record): the run's pending reservations and leases go in the same transaction."""
        folder = self.write_files(record, sql_text)
        with closing(self._connect()) as conn, conn:
            upsert_run(conn, record)
            if release:
                _release(conn, record["run_id"])
        return folder

    def complete(self, record: dict, registrations: list[tuple[str, int, list[tuple[str, str]]]],
                 created_at: str) -> None:
        """A run's commit point: in one transaction, its registered versions ``(name, version, columns)``
        are confirmed (created at ``created_at``) and its registry row becomes ``record`` (completed).
        Raises, with nothing changed, when a reservation is missing or the run's project-period is closed
        (:class:`.closure_table.PeriodClosed`; the caller rolls the run back).
        The run's leases are released in the same transaction.
        ``run.json`` follows with :meth:`write_files`; until then the registry holds the newer record."""
        with closing(self._connect()) as conn, conn:
            for name, version, columns in registrations:
                _confirm(conn, name, version, record["run_id"], columns, created_at)
            upsert_run(conn, record)
            conn.execute("DELETE FROM leases WHERE run_id = ?", (record["run_id"],))
            # after the first write: this transaction holds the write lock, so no close commits in between
            self.refuse_closed(conn, record)

    def write_files(self, record: dict, sql_text: Optional[str] = None) -> str:
        """Write ``run.json`` (and the compiled SQL) into the run's folder; returns the folder."""
        folder = os.path.join(self.runs_dir, record["run_id"])
        os.makedirs(folder, exist_ok=True)
        # written whole, through no link planted in the run's folder (write_whole)
        write_json_whole(os.path.join(folder, "run.json"), record, indent=2, default=str)
        if sql_text is not None:
            write_whole(os.path.join(folder, "compiled.sql"), sql_text)
        return folder

    def run_status(self, run_id: str) -> Optional[str]:
        """The status the registry holds for ``run_id`` (None when it has no row or cannot be read)."""
        try:
            with closing(self._connect()) as conn:
                row = conn.execute("SELECT status FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        except (OSError, sqlite3.Error):
            return None
        return row[0] if row else None

    def list_runs(self, env: Optional[str] = None) -> list[dict]:
        """Every run (of environment ``env`` only, when given), newest first."""
        where = "" if env is None else " WHERE COALESCE(env, 'prod') = ?"
        with closing(self._connect()) as conn:
            rows = conn.execute(f"SELECT record FROM runs{where} ORDER BY started_at DESC, run_id DESC",
                                () if env is None else (env,)).fetchall()
        return [json.loads(r[0]) for r in rows]

    def running_records(self) -> list[dict]:
        """The records whose status is ``running`` (live runs, or runs whose process died), including a
        ``run.json`` without its registry row (``save_run`` writes the file first: a process killed in
        between leaves only the file)."""
        with closing(self._connect()) as conn:
            rows = conn.execute("SELECT record FROM runs WHERE status = 'running' ORDER BY run_id").fetchall()
            known = {r[0] for r in conn.execute("SELECT run_id FROM runs")}
        out = [json.loads(r[0]) for r in rows]
        for run_id in sorted(set(os.listdir(self.runs_dir)) - known if os.path.isdir(self.runs_dir) else ()):
            rec = self.read_run_json(run_id)
            if rec is not None and rec.get("status") == "running":
                out.append(rec)
        return out

    def read_run_json(self, run_id: str) -> Optional[dict]:
        """The record in ``run_id``'s ``run.json`` (None when there is none, or it is not that run's record)."""
        try:
            with open(os.path.join(self.runs_dir, run_id, "run.json"), encoding="utf-8") as fh:
                rec = json.load(fh)
        except (OSError, ValueError):
            return None
        return rec if isinstance(rec, dict) and rec.get("run_id") == run_id else None

    def get_run(self, run_id: str) -> dict:
        """The record of ``run_id`` (a unique prefix is enough)."""
        with closing(self._connect()) as conn:
            rows = conn.execute("SELECT record FROM runs WHERE run_id LIKE ?", (run_id + "%",)).fetchall()
        if len(rows) != 1:
            raise RunNotFound(f"no run '{run_id}'" if not rows else f"run id prefix '{run_id}' is ambiguous")
        return json.loads(rows[0][0])

    def compiled_sql(self, run_id: str) -> Optional[str]:
        """The compiled SQL recorded beside a run."""
        path = os.path.join(self.runs_dir, run_id, "compiled.sql")
        return open(path, encoding="utf-8").read() if os.path.exists(path) else None

    # ---------------------------------------------------------------- registered datasets
    def next_version(self, name: str) -> int:
        """The version number the next registration of ``name`` gets (pending reservations count)."""
        with closing(self._connect()) as conn:
            row = conn.execute(f"SELECT MAX(version) FROM registered_datasets WHERE name = ? AND {_LIVE}",
                               (name,)).fetchone()
        return (row[0] or 0) + 1

    def reserve(self, name: str, run_id: str, periods: list[str], version: int, location: Optional[str], fmt: str,
                process: Optional[dict] = None) -> bool:
        """Take ``version`` of ``name`` for ``run_id`` if it is still the next one (:meth:`next_version`),
        atomically: False when another run took it meanwhile (ask :meth:`next_version` again).

        ``location`` and ``fmt``: where that version is written, computed by the caller before this
        transaction; None when the output registers nothing there (a table). The pending row is written in
        the same ``BEGIN IMMEDIATE`` transaction that read the highest version, so concurrent runs get
        different versions; a location that another live registration (of any dataset) holds, or that
        overlaps it, is refused. ``process`` (``{pid, host}``, :func:`.liveness.owner`): who holds the
        reservation, for recovery.
        """
        with self._immediate() as conn:
            row = conn.execute(f"SELECT MAX(version) FROM registered_datasets WHERE name = ? AND {_LIVE}",
                               (name,)).fetchone()
            if version != (row[0] or 0) + 1:
                return False
            if location is not None:
                taken = conn.execute(f"SELECT name, version, location, status FROM registered_datasets WHERE {_LIVE}")
                for other, other_version, other_location, status in taken:
                    if locations_overlap(location, other_location):
                        raise ResolutionError(
                            f"version {version} of registered dataset '{name}' would be written at {location}, which "
                            f"overlaps the location {other_location} of registered dataset '{other}' version "
                            f"{other_version}{' (being written by a running run)' if status == 'pending' else ''}; a "
                            "registered version is immutable. Give each registered dataset a destination path of its "
                            "own with {{version}} in it.")
                conn.execute("INSERT INTO registered_datasets (name, version, dataset_id, location, format, periods, "
                             "columns, run_id, created_at, status, pid, host, env) "
                             "VALUES (?,?,?,?,?,?,?,?,?,'pending',?,?,?)",
                             (name, version, registered_id(name), location, fmt, json.dumps(periods), "[]", run_id,
                              None, (process or {}).get("pid"), (process or {}).get("host"), self.env_value()))
            return True

    def confirm(self, name: str, version: int, run_id: str, columns: list[tuple[str, str]], created_at: str) -> None:
        """Flip ``run_id``'s reservation of ``name`` v``version`` to committed (its outputs are in place)."""
        with closing(self._connect()) as conn, conn:
            _confirm(conn, name, version, run_id, columns, created_at)

    def release(self, run_id: str) -> None:
        """Drop the pending reservations and the leases of ``run_id`` (the run failed or never started:
        its versions were never visible)."""
        if not os.path.exists(self.db_path):
            return
        with closing(self._connect()) as conn, conn:
            _release(conn, run_id)

    def pending_reservations(self, run_id: str) -> list[dict]:
        """The versions ``run_id`` reserved and has not confirmed (``{name, version, location}``)."""
        if not os.path.exists(self.db_path):
            return []
        with closing(self._connect()) as conn:
            rows = conn.execute("SELECT name, version, location FROM registered_datasets WHERE run_id = ? AND "
                                "status = 'pending' ORDER BY name, version", (run_id,)).fetchall()
        return [dict(zip(("name", "version", "location"), r)) for r in rows]

    def live_registrations_at(self, location: str) -> list[dict]:
        """Committed or pending registrations whose location is, contains or lies inside ``location``."""
        if not os.path.exists(self.db_path):
            return []
        with closing(self._connect()) as conn:
            rows = conn.execute(f"SELECT name, version, location, status FROM registered_datasets WHERE {_LIVE}")
            return [dict(zip(("name", "version", "location", "status"), r)) for r in rows
                    if locations_overlap(location, r[2])]

    def register(self, name: str, version: int, location: str, fmt: str, periods: list[str],
                 columns: list[tuple[str, str]], run_id: str, created_at: str) -> None:
        """Record an immutable new version of a registered dataset (committed at once, no reservation)."""
        with closing(self._connect()) as conn, conn:
            conn.execute("INSERT INTO registered_datasets (name, version, dataset_id, location, format, periods, "
                         "columns, run_id, created_at, status) VALUES (?,?,?,?,?,?,?,?,?,'committed')", (
                             name, version, registered_id(name), location, fmt, json.dumps(periods),
                             json.dumps(columns), run_id, created_at))

    def registrations(self, name: Optional[str] = None, every_env: bool = False) -> list[dict]:
        """Registered dataset versions (of ``name``, or all), oldest first, as this store's environment reads
        them: prod's versions (registered in prod or promoted to it); in another environment, for a dataset it has
        registered (or had promoted to it) its own versions, else prod's (:mod:`..envs`). Each has ``env``, the
        environment it was registered in, and ``shown_in``, the environment whose partitions a read of it opens.
        ``every_env``: every committed version, whatever its environment (``datasets show`` of all of them)."""
        q = ("SELECT name, version, dataset_id, location, format, periods, columns, run_id, created_at, "
             "COALESCE(env, 'prod'), (SELECT group_concat(p.env || '=' || p.at) FROM registered_promotions p "
             "WHERE p.name = registered_datasets.name AND p.version = registered_datasets.version) "
             f"FROM registered_datasets WHERE {_COMMITTED}")
        with closing(self._connect()) as conn:
            rows = conn.execute(q + (" AND name = ?" if name else "") + " ORDER BY name, version",
                                (name,) if name else ()).fetchall()
            dropped = self.dropped_at(conn)
        keys = ("name", "version", "dataset_id", "location", "format", "periods", "columns", "run_id", "created_at",
                "env")
        out = []
        for r in rows:
            d = dict(zip(keys, r[:10]))
            d["periods"], d["columns"] = json.loads(d["periods"]), json.loads(d["columns"])
            # when it became what each environment reads: registered there, or promoted to it (the latest)
            published = {d["env"]: d["created_at"] or ""}
            for promoted in (r[10] or "").split(",") if r[10] else []:
                env, _, at = promoted.partition("=")
                published[env] = max(published.get(env, ""), at)
            if d["env"] == self.env != "prod" and (d["created_at"] or "") <= dropped:
                published.pop(self.env, None)  # registered before the environment was dropped: no longer its own
            d["published"] = published
            d["envs"] = sorted(published)
            out.append(d)
        return out if every_env else _as_env_reads(out, self.env)

    def registered_datasets(self) -> list[Dataset]:
        """Registered datasets as catalog entries (their newest version's schema)."""
        by_name: dict[str, list[dict]] = {}
        if not os.path.exists(self.db_path):
            return []
        for reg in self.registrations():
            by_name.setdefault(reg["name"], []).append(reg)
        out = []
        for name, regs in by_name.items():
            own = [r for r in regs if r["shown_in"] == self.env]
            newest = (own or regs)[-1]  # an environment's own columns when it registered the dataset
            cols = [ColumnDef(c, t) for c, t in newest["columns"] if not c.startswith("_")]
            out.append(Dataset(id=newest["dataset_id"], name=name, status="active", table_name=name,
                               temporal_mode="period", columns=cols,
                               versions=[DatasetVersion(r["version"]) for r in regs], file=STORE_FILE,
                               registered=True))
        return out


def _as_env_reads(regs: list[dict], env: str) -> list[dict]:
    """The registrations ``env`` may read (see :meth:`RunStore.registrations`): its own (registered in it or
    promoted to it) and prod's, each with ``shown_in`` (the environment whose partitions a read of it opens) and
    ``published_at`` (when it became what that environment reads). Which one a run reads for a period:
    :func:`..inputs.registered_reads.version_read`."""
    out = []
    for r in regs:
        if env != "prod" and env in r["envs"]:
            out.append({**r, "shown_in": env, "published_at": r["published"][env]})
        elif "prod" in r["envs"]:
            out.append({**r, "shown_in": "prod", "published_at": r["published"]["prod"]})
    return out


def _confirm(conn: sqlite3.Connection, name: str, version: int, run_id: str, columns: list[tuple[str, str]],
             created_at: str) -> None:
    cur = conn.execute("UPDATE registered_datasets SET status = 'committed', columns = ?, created_at = ? "
                       "WHERE name = ? AND version = ? AND run_id = ? AND status = 'pending'",
                       (json.dumps(columns), created_at, name, version, run_id))
    if cur.rowcount != 1:
        raise LedgerflowError(f"run {run_id} holds no reservation of registered dataset '{name}' version {version}, "
                              "so its outputs were not made visible.")


def _release(conn: sqlite3.Connection, run_id: str) -> None:
    conn.execute("DELETE FROM registered_datasets WHERE run_id = ? AND status = 'pending'", (run_id,))
    conn.execute("DELETE FROM leases WHERE run_id = ?", (run_id,))


def locations_overlap(a: str, b: str) -> bool:
    """Whether two locations are the same folder or one lies inside the other (local paths compared
    by real path, URIs as text)."""
    def norm(loc: str) -> str:
        if loc.startswith("file:"):
            loc = loc[len("file:"):]
        if loc.startswith("/"):
            return os.path.realpath(loc)
        return loc.rstrip("/")
    x, y = norm(a), norm(b)
    return x == y or x.startswith(y.rstrip("/") + "/") or y.startswith(x.rstrip("/") + "/")


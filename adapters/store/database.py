"""The run store's database file, ``.ledgerflow/state.db``: where it lives, its tables made (and columns
added to an older file) on a process's first connection to it, and the one ``BEGIN IMMEDIATE`` transaction that
makes a writer wait for another process's."""
from __future__ import annotations

import os
import sqlite3
from contextlib import contextmanager
from typing import Iterator, Optional

from .schema import ADDED, INDEXES, SCHEMA

# The database files (device, inode) this process has made the tables of: a command that opens its store a
# thousand times (a promotion of 1,800 partitions) ran the schema script each time (0.36 s of 2.9). Another file
# at the same path (removed and made again) is made anew: it is empty, or has another inode.
_MADE: set[tuple[int, int]] = set()


class StateDatabase:
    """The files of one workspace's run store: ``.ledgerflow/state.db`` and ``target/runs/`` (making one
    reads neither)."""

    def __init__(self, root: str, env: str = "prod"):
        self.root = root
        self.env = env  # the environment this view of the store publishes to and reads (adapters/envs)
        self.db_path = os.path.join(root, ".ledgerflow", "state.db")
        self.runs_dir = os.path.join(root, "target", "runs")

    def env_value(self) -> Optional[str]:
        """This store's environment as the tables keep it: NULL (None) for prod."""
        return None if self.env == "prod" else self.env

    def env_where(self, column: str = "env") -> tuple[str, list]:
        """A condition choosing the rows of this store's environment, and its arguments."""
        return (f"{column} IS NULL", []) if self.env == "prod" else (f"{column} = ?", [self.env])

    def dropped_at(self, conn) -> str:
        """When this store's environment (not prod) was last dropped (``envs drop``), "" when never: its runs and
        registrations from before then are no longer its own."""
        if self.env == "prod":
            return ""
        row = conn.execute("SELECT MAX(dropped_at) FROM environment_drops WHERE env = ?", (self.env,)).fetchone()
        return (row[0] or "") if row else ""

    @contextmanager
    def _immediate(self) -> Iterator[sqlite3.Connection]:
        """A connection in a ``BEGIN IMMEDIATE`` transaction (one writer at a time across processes):
        committed when the block ends, unless the block rolled it back itself; rolled back on any error."""
        conn = self._connect()
        conn.isolation_level = None  # explicit transactions
        try:
            conn.execute("BEGIN IMMEDIATE")
            yield conn
            if conn.in_transaction:
                conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        finally:
            conn.close()

    def _connect(self) -> sqlite3.Connection:
        os.makedirs(os.path.dirname(self.db_path), exist_ok=True)
        conn = sqlite3.connect(self.db_path, timeout=60)
        try:
            st = os.stat(self.db_path)
        except OSError:
            st = None
        if st is not None and st.st_size > 0 and (st.st_dev, st.st_ino) in _MADE:
            return conn
        conn.executescript(SCHEMA)
        for table, added in ADDED.items():
            columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
            for name, declaration in added:
                if name in columns:
                    continue
                try:
                    conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {declaration}")
                    conn.commit()
                except sqlite3.OperationalError as err:  # another process added it at the same moment
                    if "duplicate column" not in str(err):
                        raise
        conn.executescript(INDEXES)
        if st is not None:
            _MADE.add((st.st_dev, st.st_ino))
        return conn

"""A run store that cannot be used as one paragraph saying which file and what to do, instead of a
traceback from every command: ``.ledgerflow/state.db`` damaged (not an SQLite database, or corrupt:
:class:`RunStoreDamaged`) or unreadable (a folder in its place, no permission to open it, tables of
another program or version, locked past the timeout: :class:`RunStoreUnreadable`).

Commands that need no run store (validate, compile, lineage, dag, diff, test) go on without the
datasets it registers, with one warning (:func:`warning`); the others stop with the paragraph.
ledgerflow never repairs, moves or deletes the file: it holds the run registry and the registered
dataset versions, and what to keep of it is the user's call.
"""
from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Optional

from ...compiler.errors import LedgerflowError
from .schema import ADDED, SCHEMA


class RunStoreUnusable(LedgerflowError):
    """``.ledgerflow/state.db`` cannot be used (either subclass)."""

    exit_code = 1
    state = "unusable"  # the warning's word for it

    def __init__(self, db_path: str, reason: str, message: str):
        self.db_path = db_path
        self.reason = reason
        super().__init__(message)


class RunStoreUnreadable(RunStoreUnusable):
    """``.ledgerflow/state.db`` cannot be opened or read, though nothing says its content is damaged."""

    state = "unreadable"

    def __init__(self, db_path: str, reason: str):
        super().__init__(
            db_path, reason,
            f"cannot open or read the run store {db_path}: {reason}. ledgerflow keeps its run registry and the "
            "datasets registered by runs there, and does not change or remove what it finds. Make it readable "
            f"(a folder or another program's database in its place, its permissions), or move it aside (e.g. "
            f"`mv {db_path} {db_path}.unreadable`) and the next command starts an empty store — each run's "
            "record stays in target/runs/<run_id>/run.json, and registered datasets come back when the "
            "projects that register them run again.")


class RunStoreDamaged(RunStoreUnusable):
    """``.ledgerflow/state.db`` cannot be read as a database."""

    state = "damaged"

    def __init__(self, db_path: str, reason: str):
        super().__init__(
            db_path, reason,
            f"the run store {db_path} is damaged ({reason}): ledgerflow cannot read its run registry or the "
            "datasets registered by runs, and does not repair or remove it. Move it aside (e.g. "
            f"`mv {db_path} {db_path}.damaged`) and the next command starts an empty store — each run's "
            "record stays in target/runs/<run_id>/run.json, and registered datasets come back when the "
            f"projects that register them run again — or put back a copy from a backup (`sqlite3 {db_path} "
            ".recover` may save some of its rows).")


def is_damage(err: BaseException) -> bool:
    """Whether ``err`` says the database file is not a database or is corrupt (not: locked, busy,
    unreadable, which say nothing about the file's content)."""
    if not isinstance(err, sqlite3.DatabaseError) or isinstance(err, sqlite3.OperationalError):
        return False
    name = getattr(err, "sqlite_errorname", "") or ""
    return name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or type(err) is sqlite3.DatabaseError


def _missing_columns(conn: sqlite3.Connection) -> list[str]:
    """``table.column`` the run store reads but the file's tables lack (tables it makes itself when they are
    missing, and columns it adds to an older store, do not count)."""
    with closing(sqlite3.connect(":memory:")) as mem:
        mem.executescript(SCHEMA)
        missing = []
        for table in ("runs", "registered_datasets"):
            have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
            if not have:
                continue
            added = {name for name, _ in ADDED.get(table, ())}
            missing += [f"{table}.{r[1]}" for r in mem.execute(f"PRAGMA table_info({table})")
                        if r[1] not in have and r[1] not in added]
    return missing


def check(db_path: str) -> None:
    """Raise :class:`RunStoreDamaged` when ``db_path`` exists and its header or schema cannot be read,
    :class:`RunStoreUnreadable` when it is not a file, cannot be opened or its tables are not the run
    store's (read-only: nothing is created or changed). Corruption deeper in the file shows when it is
    read: :func:`unusable` turns that error into the same paragraph."""
    if not os.path.lexists(db_path):
        return
    if not os.path.isfile(db_path):
        kind = "a folder" if os.path.isdir(db_path) else "not a regular file"
        raise RunStoreUnreadable(db_path, f"it is {kind}")
    try:
        if os.path.getsize(db_path) == 0:
            return
        with closing(sqlite3.connect(Path(db_path).resolve().as_uri() + "?mode=ro", uri=True, timeout=60)) as conn:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            missing = _missing_columns(conn)
    except sqlite3.Error as err:
        if getattr(err, "sqlite_errorcode", None) == sqlite3.SQLITE_READONLY_ROLLBACK:
            # a hot journal: a writer was killed inside a transaction; the store's next read-write connection
            # rolls it back, as SQLite is made to (a read-only one cannot), so the file is not damaged
            return
        raise unusable(err, db_path) from None
    except OSError as err:
        raise RunStoreUnreadable(db_path, err.strerror or str(err)) from None
    if missing:
        raise RunStoreUnreadable(db_path, f"its tables lack {', '.join(missing)}: not a ledgerflow run store, or "
                                          "one of another version")


def damaged(err: BaseException, db_path: str) -> Optional[RunStoreDamaged]:
    """The :class:`RunStoreDamaged` paragraph for ``err`` raised while reading ``db_path``, or None."""
    return RunStoreDamaged(db_path, str(err)) if is_damage(err) else None


def unusable(err: BaseException, db_path: str) -> Optional[RunStoreUnusable]:
    """The paragraph for any SQLite error ``err`` raised while using ``db_path`` (damaged, or else
    unreadable), or None for another error."""
    if is_damage(err):
        return RunStoreDamaged(db_path, str(err))
    if isinstance(err, sqlite3.Error):
        return RunStoreUnreadable(db_path, str(err))
    return None


def warning(err: RunStoreUnusable) -> str:
    """The warning of a command that goes on without the run store."""
    return (f"ledgerflow: warning: the run store {err.db_path} is {err.state} ({err.reason}); going on without "
            "the datasets registered by runs (a project reading one reports it missing). Move the file aside, "
            "repair or restore it: any command that needs the run store says how.")

"""A damaged run store (``.ledgerflow/state.db`` that is not an SQLite database, or is corrupt) as one
paragraph saying which file and what to do, instead of a traceback from every command.

Commands that need no run store (validate, compile, lineage, dag, diff) go on without the datasets
it registers, with one warning (:func:`warning`); the others stop with :class:`RunStoreDamaged`.
ledgerflow never repairs, moves or deletes the file: it holds the run registry and the registered
dataset versions, and what to keep of it is the user's call.
"""
from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Optional

from ..compiler.errors import LedgerflowError


class RunStoreDamaged(LedgerflowError):
    """``.ledgerflow/state.db`` cannot be read as a database."""

    exit_code = 1

    def __init__(self, db_path: str, reason: str):
        self.db_path = db_path
        self.reason = reason
        super().__init__(
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


def check(db_path: str) -> None:
    """Raise :class:`RunStoreDamaged` when ``db_path`` exists and its header or schema cannot be read
    (read-only: nothing is created or changed). Corruption deeper in the file shows when it is read:
    :func:`damaged` turns that error into the same paragraph."""
    if not os.path.isfile(db_path) or os.path.getsize(db_path) == 0:
        return
    try:
        with closing(sqlite3.connect(Path(db_path).resolve().as_uri() + "?mode=ro", uri=True, timeout=60)) as conn:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as err:
        if is_damage(err):
            raise RunStoreDamaged(db_path, str(err)) from None


def damaged(err: BaseException, db_path: str) -> Optional[RunStoreDamaged]:
    """The :class:`RunStoreDamaged` paragraph for ``err`` raised while reading ``db_path``, or None."""
    return RunStoreDamaged(db_path, str(err)) if is_damage(err) else None


def warning(err: RunStoreDamaged) -> str:
    """The warning of a command that goes on without the run store."""
    return (f"ledgerflow: warning: the run store {err.db_path} is damaged ({err.reason}); going on without the "
            "datasets registered by runs (a project reading one reports it missing). Move the file aside or "
            "restore it: any command that needs the run store says how.")

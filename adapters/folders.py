"""Folder and file names made from names a user wrote (project names in ``target/``).

A project name may hold anything (``../..``, ``/``, control characters); used as a path segment it
could climb out of ``target/`` — and the resolved script's ``INSERT OVERWRITE DIRECTORY`` clears the
folder it writes to. :func:`segment` gives one path segment that stays where it is put.
"""
from __future__ import annotations

import hashlib
import re

_PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}")


def segment(name: str) -> str:
    """``name`` itself when it is a plain file name (letters, digits, ``_ . -``, not starting with
    ``.``); otherwise its plain characters with every other run replaced by ``_`` and a short hash of
    the whole name, so two different names never share a folder."""
    if _PLAIN.fullmatch(name):
        return name
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._-")[:60] or "project"
    return f"{stem}-{hashlib.sha256(name.encode('utf-8')).hexdigest()[:8]}"

"""Files and folders a command writes where the user said (``test --junit-xml FILE``, ``compile --out
DIR``): checked before the work starts, so a path that cannot be written costs nothing, and a write
that still fails is one paragraph, never a traceback.

Nothing is created by the checks; the writers create the missing folders later (as pytest does for
its ``--junit-xml``: ``reports/junit.xml`` needs no ``reports/`` yet). A symbolic link that points at
nothing is refused, naming its target: writing through it would make a file wherever it points.
"""
from __future__ import annotations

import os

from ...compiler.errors import LedgerflowError


class OutputPathError(LedgerflowError):
    """A file or folder given on the command line cannot be written (a usage error: nothing ran)."""

    exit_code = 2


class OutputWriteError(LedgerflowError):
    """Writing a file the command produces failed (after the work was done)."""

    exit_code = 1


def _nearest_existing(path: str) -> str:
    while not os.path.lexists(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return path


def _check_below(path: str, option: str) -> None:
    """Whether the folders ``path`` needs exist or can be made: the nearest existing one must be a
    writable folder (not a file, not a dangling link)."""
    ancestor = _nearest_existing(os.path.dirname(path))
    if not os.path.isdir(ancestor):
        kind = "a file" if os.path.isfile(ancestor) else "not a folder"
        raise OutputPathError(f"{option} {path} cannot be written: {ancestor} is {kind}, so no folder can be made "
                              "below it. Give a path in a folder.")
    if not os.path.lexists(path) and not os.access(ancestor, os.W_OK | os.X_OK):
        raise OutputPathError(f"{option} {path} cannot be written: the folder {ancestor} is not writable.")


def _check_link(path: str, full: str, option: str) -> None:
    """A dangling symbolic link (or one in a loop) at ``full``: refused, saying where it points."""
    if os.path.islink(full) and not os.path.exists(full):
        raise OutputPathError(f"{option} {path} is a symbolic link to {os.readlink(full)}, which does not exist "
                              "(or is a loop of links): ledgerflow does not write through it. Remove the link or "
                              "give another path.")


def check_file(path: str, option: str) -> None:
    """Raise :class:`OutputPathError` unless ``path`` can be written as a file."""
    full = os.path.abspath(path)
    _check_link(path, full, option)
    if os.path.isdir(full):
        raise OutputPathError(f"{option} {path} is a folder: give the path of a file.")
    _check_below(full, option)
    if os.path.lexists(full) and not os.access(full, os.W_OK):
        raise OutputPathError(f"{option} {path} cannot be written: the file is not writable.")


def check_folder(path: str, option: str) -> None:
    """Raise :class:`OutputPathError` unless ``path`` is, or can be made as, a writable folder."""
    full = os.path.abspath(path)
    _check_link(path, full, option)
    if os.path.lexists(full) and not os.path.isdir(full):
        raise OutputPathError(f"{option} {path} is a file, not a folder: give a folder to write into.")
    _check_below(full, option)
    if os.path.isdir(full) and not os.access(full, os.W_OK | os.X_OK):
        raise OutputPathError(f"{option} {path} cannot be written: the folder is not writable.")


def write_failed(path: str, err: OSError, what: str) -> OutputWriteError:
    """The one-paragraph error for a failed write of ``path`` (``what``: what was not written)."""
    reason = err.strerror or str(err)
    where = f" ({err.filename})" if err.filename and os.path.abspath(str(err.filename)) != os.path.abspath(path) else ""
    return OutputWriteError(f"{what} could not be written to {path}: {reason}{where}.")

"""Where the site goes, put in place all at once or not at all.

The site is written into a new temporary folder beside ``--out`` and renamed into place only when every
file is written: a failed write leaves ``--out`` as it was. A site folder holds a marker file
(:data:`MARKER`); ``ledgerflow docs`` replaces only a folder holding that marker, or an empty one, and never
deletes a folder it did not create (a non-empty folder without the marker is refused, exit 1)."""
from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from typing import Iterator

from ...compiler.errors import LedgerflowError

MARKER = ".ledgerflow-docs"
MARKER_TEXT = ("This folder was written by `ledgerflow docs`; the next `ledgerflow docs` replaces it whole.\n"
               "Remove this file to keep ledgerflow from ever replacing the folder.\n")


class DocsOutError(LedgerflowError):
    """``--out`` cannot take the site (exit 1; nothing was written)."""

    exit_code = 1


def check_out(out: str) -> None:
    """Refuse, before any work, an ``--out`` that is a file, a link, a non-empty folder without the marker,
    or below a file (:class:`DocsOutError`)."""
    if os.path.islink(out):
        raise DocsOutError(f"--out {out} is a symbolic link: ledgerflow docs does not write through links. "
                           "Give the folder itself.")
    if os.path.lexists(out) and not os.path.isdir(out):
        raise DocsOutError(f"--out {out} is a file, not a folder: give a folder for the site (default target/docs).")
    if os.path.isdir(out) and os.listdir(out) and not os.path.isfile(os.path.join(out, MARKER)):
        raise DocsOutError(f"--out {out} is a folder that holds files ledgerflow docs did not write (it has no "
                           f"{MARKER} marker): it is left as it is. Give an empty or new folder, or one an "
                           "earlier `ledgerflow docs` wrote.")
    parent = os.path.dirname(out)
    ancestor = parent
    while not os.path.lexists(ancestor) and os.path.dirname(ancestor) != ancestor:
        ancestor = os.path.dirname(ancestor)
    if not os.path.isdir(ancestor):
        raise DocsOutError(f"--out {out} cannot be written: {ancestor} is a file, so no folder can be made below it. "
                           "Give a folder path.")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise DocsOutError(f"--out {out} cannot be written: the folder {ancestor} is not writable.")


@contextmanager
def staged_site(out: str) -> Iterator[str]:
    """A new temporary folder beside ``out`` to write the site into; on leaving without error it replaces
    ``out`` (its marker written last), else it is removed and ``out`` is untouched. OS errors become one
    paragraph (:class:`DocsOutError`)."""
    parent = os.path.dirname(out)
    try:
        os.makedirs(parent, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=".ledgerflow-docs-", dir=parent)
    except OSError as err:
        raise DocsOutError(f"--out {out} cannot be written: {err.strerror or err} ({err.filename or parent}).") from None
    try:
        yield tmp
        with open(os.path.join(tmp, MARKER), "w", encoding="utf-8") as fh:
            fh.write(MARKER_TEXT)
        _replace(tmp, out)
    except OSError as err:
        shutil.rmtree(tmp, ignore_errors=True)
        raise DocsOutError(f"the site could not be written to {out}: {err.strerror or err}"
                           f"{f' ({err.filename})' if err.filename else ''}; {out} is left as it was.") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _replace(tmp: str, out: str) -> None:
    """Rename ``tmp`` to ``out``: an empty ``out`` (perhaps the user's) is kept and filled; one holding the marker
    is moved aside, replaced, then removed (checked again here: it may have changed since :func:`check_out`)."""
    if not os.path.lexists(out):
        os.rename(tmp, out)
        return
    check_out(out)
    if not os.listdir(out):
        _fill(tmp, out)
        return
    old = tempfile.mkdtemp(prefix=".ledgerflow-docs-old-", dir=os.path.dirname(out))
    aside = os.path.join(old, "site")
    os.rename(out, aside)
    try:
        os.rename(tmp, out)
    except OSError:
        os.rename(aside, out)  # the old site back where it was
        os.rmdir(old)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _fill(tmp: str, out: str) -> None:
    """Move the site's entries from ``tmp`` into the empty folder ``out``, the marker last; on a failure the entries
    moved so far are taken out again (ledgerflow wrote them) and ``out`` is left empty, as it was."""
    names = sorted(os.listdir(tmp), key=lambda n: n == MARKER)
    moved = []
    try:
        for name in names:
            os.rename(os.path.join(tmp, name), os.path.join(out, name))
            moved.append(name)
    except OSError:
        for name in moved:
            os.rename(os.path.join(out, name), os.path.join(tmp, name))
        raise
    os.rmdir(tmp)

"""Where the site goes, and what ``ledgerflow docs`` may change there.

The site is written into a new temporary folder beside ``--out`` first: a failed write leaves ``--out`` as it
was. A new or empty ``--out`` then takes the whole site. A folder an earlier ``ledgerflow docs`` wrote holds its
marker (:mod:`.manifest`), which lists the files it wrote: only those are replaced or deleted, each file
renamed into place at once, and a file the marker does not list is never touched (one standing where the new
site puts a file is refused before anything changes). A non-empty folder without a marker of the current
format is refused (exit 1), as is a place ledgerflow keeps data or records in (:mod:`.protected`, exit 2)."""
from __future__ import annotations

import os
import shutil
import stat
import tempfile
from contextlib import contextmanager
from typing import Iterator

from ...compiler.errors import LedgerflowError
from .manifest import MARKER, marker_text, own_path, prune, read_marker, remove_own, site_files, write_marker

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
    if os.path.isdir(out) and os.listdir(out) and read_marker(out) is None:
        if not os.path.lexists(os.path.join(out, MARKER)):
            raise DocsOutError(f"--out {out} is a folder that holds files ledgerflow docs did not write (it has no "
                               f"{MARKER} marker): it is left as it is. Give an empty or new folder, or one an "
                               "earlier `ledgerflow docs` wrote.")
        raise DocsOutError(f"--out {out} has a {MARKER} marker that does not list the files ledgerflow docs wrote "
                           "(an earlier version's marker, or one edited by hand): which files are the site's "
                           "cannot be told, so the folder is left as it is. Remove the folder yourself once you "
                           "have checked it holds only an old site, or give an empty or new folder.")
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
    """A new temporary folder beside ``out`` to write the site into; on leaving without error its files are put
    at ``out`` (:func:`_replace`), else it is removed and ``out`` is untouched. OS errors become one paragraph
    (:class:`DocsOutError`)."""
    parent = os.path.dirname(out)
    try:
        os.makedirs(parent, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=".ledgerflow-docs-", dir=parent)
    except OSError as err:
        raise DocsOutError(f"--out {out} cannot be written: {err.strerror or err} ({err.filename or parent}).") from None
    try:
        yield tmp
        with open(os.path.join(tmp, MARKER), "w", encoding="utf-8") as fh:
            fh.write(marker_text(site_files(tmp)))
        _replace(tmp, out)
    except OSError as err:
        shutil.rmtree(tmp, ignore_errors=True)
        raise DocsOutError(f"the site could not be written to {out}: {err.strerror or err}"
                           f"{f' ({err.filename})' if err.filename else ''}; {out} is left as it was.") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _replace(tmp: str, out: str) -> None:
    """Put the site of ``tmp`` at ``out``: a new ``out`` is ``tmp`` renamed, an empty one (perhaps the user's) is
    kept and filled, one with a marker is updated file by file (checked again here: it may have changed since
    :func:`check_out`)."""
    if not os.path.lexists(out):
        os.rename(tmp, out)
        return
    check_out(out)
    if not os.listdir(out):
        _fill(tmp, out)
        return
    _update(tmp, out, read_marker(out) or set())


def _update(tmp: str, out: str, old: set[str]) -> None:
    """Replace the files of the earlier site (``old``, its marker's list) by those of ``tmp``. The marker lists
    the old and new files while they are moved, so whatever happens it names every file that may be the site's;
    then the old files the new site does not have are deleted, and the marker lists the new ones."""
    new = site_files(tmp)
    foreign = sorted(rel for rel in new if _foreign(out, rel, old))
    if foreign:
        raise DocsOutError(f"--out {out} holds {os.path.join(out, foreign[0])}, which the earlier site's marker does "
                           "not list, where the new site puts a file: it is left as it is and nothing was changed. "
                           "Move it away, or give another folder.")
    write_marker(out, old | new)
    for rel in sorted(new):
        path = own_path(out, rel)
        try:
            if path is None:
                raise NotADirectoryError(f"a folder on the way to {rel} became a link or a file")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            os.replace(os.path.join(tmp, *rel.split("/")), path)
        except OSError as err:
            raise DocsOutError(f"the site at {out} is only partly updated: {err.strerror or err} ({rel}). Its marker "
                               "lists every file that may be the site's, old or new: run ledgerflow docs again once "
                               "the cause is fixed.") from None
    for rel in sorted(old - new):
        remove_own(out, rel)
    write_marker(out, new)
    prune(out, old - new)
    shutil.rmtree(tmp, ignore_errors=True)


def _foreign(out: str, rel: str, old: set[str]) -> bool:
    """Whether the new site's file ``rel`` would replace something not the earlier site's: a file its marker does
    not list, a link or a folder, or a path through a link."""
    path = own_path(out, rel)
    if path is None:
        return True
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    return rel not in old or not stat.S_ISREG(st.st_mode)


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

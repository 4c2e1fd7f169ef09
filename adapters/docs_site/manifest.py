"""The site's marker (:data:`MARKER`): a JSON file naming every file an earlier ``ledgerflow docs`` wrote in the
folder, the only files a later one may replace or delete.

The marker is read as hostile input (anyone can edit it): an entry is accepted only as a plain relative path
of the site's own characters, never absolute, never ``..``, never the marker itself, and a file is removed
only when it is a regular file reached through real folders of the site (no symbolic link on the way). A
marker of the first format (text, naming no files) names nothing, so the folder is refused, never guessed at."""
from __future__ import annotations

import json
import os
import re
import stat
import tempfile
from typing import Iterable, Optional

MARKER = ".ledgerflow-docs"
FORMAT = 2
NOTE = ("Written by `ledgerflow docs`. The next `ledgerflow docs` into this folder replaces or deletes the files "
        "listed here and nothing else. Remove this file to keep ledgerflow from ever changing the folder.")
_ENTRY = re.compile(r"^[A-Za-z0-9_.+-]+(?:/[A-Za-z0-9_.+-]+)*$")


def _plain(entry: object) -> bool:
    """Whether a marker entry is a relative path ledgerflow docs could have written."""
    return (isinstance(entry, str) and bool(_ENTRY.match(entry)) and entry != MARKER
            and all(part not in (".", "..") for part in entry.split("/")))


def marker_text(files: Iterable[str]) -> str:
    """The marker listing ``files`` (paths relative to the site's folder, ``/``-separated)."""
    return json.dumps({"written_by": "ledgerflow docs", "format": FORMAT, "note": NOTE, "files": sorted(set(files))},
                      indent=1) + "\n"


def read_marker(folder: str) -> Optional[set[str]]:
    """The files the marker of ``folder`` lists; None when it is of the first format, is not a regular file, or
    lists anything that is not a plain relative path (then nothing of the folder may be touched)."""
    path = os.path.join(folder, MARKER)
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("files"), list):
        return None
    files = data["files"]
    return set(files) if all(_plain(f) for f in files) else None


def write_marker(folder: str, files: Iterable[str]) -> None:
    """Replace the marker of ``folder`` at once (written beside it, then renamed over it)."""
    fd, tmp = tempfile.mkstemp(prefix=MARKER + "-", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(marker_text(files))
        os.replace(tmp, os.path.join(folder, MARKER))
    except BaseException:
        os.unlink(tmp)
        raise


def site_files(folder: str) -> set[str]:
    """The files of a freshly written site folder (the marker excepted), relative and ``/``-separated."""
    out = set()
    for top, _, names in os.walk(folder):
        for name in names:
            rel = os.path.relpath(os.path.join(top, name), folder).replace(os.sep, "/")
            if rel != MARKER:
                out.add(rel)
    return out


def own_path(folder: str, rel: str) -> Optional[str]:
    """The path of ``rel`` in ``folder`` when every folder on the way is a real folder (no link), else None."""
    head = folder
    for part in rel.split("/")[:-1]:
        head = os.path.join(head, part)
        try:
            if not stat.S_ISDIR(os.lstat(head).st_mode):
                return None
        except FileNotFoundError:
            return os.path.join(folder, *rel.split("/"))  # the rest does not exist: no link there
    return os.path.join(folder, *rel.split("/"))


def remove_own(folder: str, rel: str) -> None:
    """Delete ``rel`` from ``folder`` when it is a regular file reached through real folders; anything else (a
    link, a folder, a path through a link) is left where it is."""
    path = own_path(folder, rel)
    try:
        if path is not None and stat.S_ISREG(os.lstat(path).st_mode):
            os.unlink(path)
    except FileNotFoundError:
        pass


def prune(folder: str, removed: Iterable[str]) -> None:
    """Remove the folders of removed files that are now empty, deepest first (a folder holding anything stays)."""
    dirs = set()
    for rel in removed:
        parts = rel.split("/")[:-1]
        dirs.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    for rel in sorted(dirs, key=lambda d: -d.count("/")):
        path = own_path(folder, rel + "/x")
        if path is None:
            continue
        try:
            os.rmdir(os.path.dirname(path))
        except OSError:
            pass  # not empty (or gone): left as it is

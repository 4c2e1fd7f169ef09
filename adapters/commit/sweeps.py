"""Remove the folders of links swaps exchanged out, only when removing one loses no data.

A swap (:func:`.shown.show`) leaves what the partition showed before beside the versions, as
``.lf_versions/_period=P/.show.<version>.<tag>``: a folder of hard links to the files of a version folder (or, from
an earlier release, a symbolic link to one), kept until the commit ends so that a reader that opened the partition
just before the swap still reads it whole. Then :func:`sweep_exchanged` removes the one a swap of this process
exchanged out, by its name, and :func:`sweep` the others of a period (a rollback's, a recovery's, those a process
left when it died, an environment's dropped partitions), each only when :func:`only_links`: every file in it a hard
link of a version's file beside it, nothing else, in a versions folder reached through no link.
"""
from __future__ import annotations

import os
import stat
from typing import Optional

from ..layout.real_path import real_path
from . import folder_stats
from .shown import MARKER, SHOWING, discard


def _safe_versions(versions: str) -> bool:
    """Whether ``versions`` (``<dest>/.lf_versions/_period=P``) is a real folder reached through no link at its
    own or its parent's level (the only place :func:`sweep` removes anything). A real folder's real path is its
    parent's followed by its name, so two ``lstat`` calls answer."""
    name = os.path.basename(versions)
    return (name not in ("", ".", "..") and folder_stats.is_folder(folder_stats.lstat(versions))
            and not folder_stats.is_link(folder_stats.lstat(os.path.dirname(versions))))


def only_links(folder: str, kept: Optional[set] = None) -> bool:
    """Whether removing ``folder`` (an entry ``.show.*`` of ``.lf_versions/_period=P``) loses no data and nothing
    ledgerflow did not make: a symbolic link to a version folder beside it (a partition of an earlier release,
    exchanged out), or a folder whose every file but the marker is a hard link of a file of a version folder
    beside it (``kept``: those files' (device, inode), when the caller has them), holding nothing else. Two names
    of one file inside the folder itself are no copy elsewhere: such a folder is kept."""
    versions = os.path.dirname(folder)
    if folder_stats.is_link(folder_stats.lstat(folder)):
        try:
            target = os.path.join(versions, os.readlink(folder))
        except OSError:
            return False
        return os.path.dirname(real_path(target)) == real_path(versions) and os.path.isdir(target)
    kept = _version_inodes(versions) if kept is None else kept
    try:
        for rel, st in folder_stats.stats_by_name(folder).items():
            if stat.S_ISDIR(st.st_mode):
                continue
            if rel == MARKER and stat.S_ISREG(st.st_mode) and st.st_size <= 256:
                continue
            if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) not in kept:
                return False
    except OSError:
        return False
    return True


def _version_inodes(versions: str, listed: Optional[list] = None) -> set:
    """(device, inode) of every file in the version folders of ``versions`` (not the ``.show.*`` entries);
    ``listed``: ``versions``' entries (``os.DirEntry``) when the caller has them."""
    if listed is None:
        with os.scandir(versions) as entries:
            listed = list(entries)
    found = set()
    for entry in listed:
        if entry.name.startswith(SHOWING) or not entry.is_dir(follow_symlinks=False):
            continue
        for st in folder_stats.stats_by_name(entry.path).values():
            if stat.S_ISREG(st.st_mode):
                found.add((st.st_dev, st.st_ino))
    return found


def sweep(versions: str, names=lambda name: True) -> list[str]:
    """Remove the folders of links in ``versions`` (``.lf_versions/_period=P``) that no partition shows any more
    (exchanged out by :func:`show`, hidden by :func:`hide`, or left by a process that died while building one),
    each only when :func:`only_links`; ``names`` limits which (by the part of the name after ``.show.``).
    They are kept until the commit that exchanged them out ends, so that a reader that opened the partition just
    before the exchange still reads it whole. Returns the folders removed."""
    removed: list[str] = []
    if not _safe_versions(versions):
        return removed  # never followed into a folder ledgerflow did not create
    kept: Optional[set] = None
    with os.scandir(versions) as entries:
        listed = sorted(entries, key=lambda e: e.name)
    for entry in listed:
        name = entry.name
        if not name.startswith(SHOWING) or not names(name[len(SHOWING):]):
            continue
        path = os.path.join(versions, name)
        if kept is None:
            kept = _version_inodes(versions, listed)  # once per sweep, when there is something to sweep
        if only_links(path, kept):
            discard(path)
            removed.append(path)
    return removed


def sweep_exchanged(folder: str, version: Optional[str]) -> bool:
    """Remove ``folder``, the folder (or link) one :func:`show` of this process exchanged out of a partition that
    showed the version folder ``version``, when removing it loses no data: :func:`only_links`, its files hard links
    of ``version``'s (listed once here, where :func:`sweep` lists every version of the period). Returns whether it
    is gone; anything else is left for a later :func:`sweep`."""
    versions = os.path.dirname(folder)
    if not os.path.basename(folder).startswith(SHOWING) or not _safe_versions(versions):
        return False
    try:
        kept = folder_stats.inodes(version) if version is not None else set()
    except OSError:
        return False
    if not only_links(folder, kept):
        return False
    discard(folder)
    return True


def made_for(*versions: Optional[str]):
    """A :func:`sweep` filter: the folders built (or hidden) for one of ``versions`` (version folder paths)."""
    names = {os.path.basename(v) for v in versions if v}
    return lambda rest: rest.rsplit(".", 1)[0] in names

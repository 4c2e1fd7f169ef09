"""What a folder holds, each entry with its ``lstat``, read with as few system calls as the answer needs.

Deciding what a partition shows and what may be deleted asks these questions of every partition of a commit or
a promotion (thousands in one promotion): what a folder holds, what one small file says, whether a name is a
folder, a link or nothing. ``os.path.islink``, ``isdir`` and ``lexists`` each ask the kernel once, and
a text-mode ``open`` takes seven calls to read one line; here one ``lstat`` answers all three questions about
a name, a listing's entry types cost nothing, and a small file is read in four calls. Links are never followed.
"""
from __future__ import annotations

import os
import shutil
import stat
from typing import Iterator, Optional

_READ_ONLY = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def lstat(path: str) -> Optional[os.stat_result]:
    """``os.lstat(path)``, or None when there is nothing there (or it cannot be asked)."""
    try:
        return os.lstat(path)
    except (OSError, ValueError):
        return None


def is_link(st: Optional[os.stat_result]) -> bool:
    """Whether an ``lstat`` result is a symbolic link."""
    return st is not None and stat.S_ISLNK(st.st_mode)


def is_folder(st: Optional[os.stat_result]) -> bool:
    """Whether an ``lstat`` result is a real folder (a link to one is not)."""
    return st is not None and stat.S_ISDIR(st.st_mode)


def stats(folder: str, below: str = "") -> Iterator[tuple[str, os.stat_result]]:
    """(relative path, ``lstat``) of everything in ``folder``, recursively, sorted by name within each folder,
    links never followed: one ``lstat`` per entry."""
    for rel, entry in _sorted_entries(folder, below):
        st = entry.stat(follow_symlinks=False)
        yield rel, st
        if stat.S_ISDIR(st.st_mode):
            yield from stats(folder, rel)


def stats_by_name(folder: str) -> dict[str, os.stat_result]:
    """``dict(stats(folder))``, read in one listing when ``folder`` holds no folder (a partition's and a version's
    usual shape; in the listing's order, which a caller comparing names or inodes does not need sorted)."""
    with os.scandir(folder) as entries:
        listed = list(entries)
    if any(e.is_dir(follow_symlinks=False) for e in listed):
        return dict(stats(folder))
    return {e.name: e.stat(follow_symlinks=False) for e in listed}


def _sorted_entries(folder: str, below: str) -> list[tuple[str, os.DirEntry]]:
    """(path relative to ``folder``, entry) of what ``folder/below`` holds, sorted by name."""
    with os.scandir(os.path.join(folder, below) if below else folder) as entries:
        listed = sorted(entries, key=lambda e: e.name)
    return [(os.path.join(below, e.name) if below else e.name, e) for e in listed]


def read_small(path: str, limit: int = 256) -> Optional[bytes]:
    """The first ``limit`` bytes of ``path`` when it is a regular file reached through no link at its own name
    (None otherwise, or when it cannot be read): an ``lstat``, an ``open`` refusing a link, a read, a close."""
    st = lstat(path)
    if st is None or not stat.S_ISREG(st.st_mode):
        return None  # a FIFO or device is never opened
    try:
        fd = os.open(path, _READ_ONLY)
    except OSError:
        return None
    try:
        return os.read(fd, limit)
    except OSError:
        return None
    finally:
        os.close(fd)


def write_small(path: str, data: bytes) -> None:
    """Create ``path`` (it must not exist: never written through a link or over a file) holding ``data``."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def remove_flat(folder: str) -> None:
    """Remove ``folder`` and what it holds, never following a link: the folder opened once without following a
    link at its name and its files unlinked through it, then the folder removed; a folder holding folders is
    left to ``shutil.rmtree`` (which never follows links either). Errors are ignored, as ``rmtree``'s here."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return
    try:
        with os.scandir(fd) as entries:
            listed = [(e.name, e.is_dir(follow_symlinks=False)) for e in entries]
        if any(is_dir for _name, is_dir in listed):
            shutil.rmtree(folder, ignore_errors=True)
            return
        for name, _is_dir in listed:
            try:
                os.unlink(name, dir_fd=fd)
            except OSError:
                pass
    except OSError:
        return
    finally:
        os.close(fd)
    try:
        os.rmdir(folder)
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)  # something was added meanwhile


def names(folder: str, below: str = "") -> Iterator[tuple[str, bool]]:
    """(relative path, is a folder) of everything in ``folder``, recursively, sorted by name within each folder,
    links never followed: no system call per entry (a listing says each entry's type)."""
    for rel, entry in _sorted_entries(folder, below):
        is_dir = entry.is_dir(follow_symlinks=False)
        yield rel, is_dir
        if is_dir:
            yield from names(folder, rel)


def inodes(folder: str) -> set:
    """(device, inode) of every file in ``folder``, recursively, links never followed."""
    return {(st.st_dev, st.st_ino) for _rel, st in stats(folder) if not stat.S_ISDIR(st.st_mode)}


def sole_names(version: str) -> bool:
    """Whether no file of ``version`` has a second name (every hard link count is 1), so that no folder anywhere
    holds one of its files: no partition shows it. False when unsure."""
    try:
        return all(stat.S_ISDIR(st.st_mode) or st.st_nlink == 1 for st in stats_by_name(version).values())
    except OSError:
        return False

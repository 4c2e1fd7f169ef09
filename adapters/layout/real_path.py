"""A path's real path, asked of the kernel in three system calls where ``os.path.realpath`` takes one per folder.

Deciding what a partition shows and what ledgerflow may delete compares real paths (``commit/partitions.py``),
a dozen per partition: ``os.path.realpath`` walks the path folder by folder in Python (an ``lstat`` each), which
made those checks most of the time of a promotion of 1,800 partitions. On Linux, :func:`real_path` opens the path
without reading it (``O_PATH``) and reads the name the kernel resolved it to from ``/proc/self/fd``: the same
answer for a path that exists (every link resolved, ``..`` after a link taken from where it leads). Anything else
(a path that does not exist or no longer does, a dangling link or one that loops, no ``/proc``, another system)
is answered by ``os.path.realpath`` itself.

A pass of checks that changes nothing on disk (a promotion's plan) resolves the same folders several times per
partition; inside :func:`remembered` each path is resolved once: its folder's real path (remembered too: the
partitions of one destination share their folders) followed by its name, when one ``lstat`` says the name is no
link. The writes that follow check again for themselves (a swap exchanges only the very folder it checked, by
inode).
"""
from __future__ import annotations

import os
import stat
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator, Optional

from ...compiler.realpaths import inside

_REMEMBERED: ContextVar[Optional[dict]] = ContextVar("real_paths_remembered", default=None)

_O_PATH = getattr(os, "O_PATH", None)
_DELETED = " (deleted)"


def real_path(path: str) -> str:
    """``os.path.realpath(path)``, faster for a path that exists (see the module docstring)."""
    memo = _REMEMBERED.get()
    if memo is None:
        return _resolve(path)
    if path not in memo:
        memo[path] = _through_parent(path, memo)
    return memo[path]


def _through_parent(path: str, memo: dict) -> str:
    """``path``'s real path, inside :func:`remembered`: its folder's (remembered) followed by its name when the name
    itself is no link (one ``lstat``: the folders of one destination share their parents), else :func:`_resolve`."""
    parent, name = os.path.split(path)
    if not isinstance(path, str) or not os.path.isabs(path) or name in ("", ".", "..") or parent == path \
            or "\0" in path:
        return _resolve(path)
    try:
        st = os.lstat(path)
    except OSError:
        return _resolve(path)
    if stat.S_ISLNK(st.st_mode):
        return _resolve(path)
    if parent not in memo:
        memo[parent] = _through_parent(parent, memo) if parent != "/" else _resolve(parent)
    return os.path.join(memo[parent], name)


@contextmanager
def remembered() -> Iterator[None]:
    """Within the block (of checks that change nothing on disk), :func:`real_path` resolves each path once."""
    outer = _REMEMBERED.get()  # a block inside another shares its memory
    token = _REMEMBERED.set({} if outer is None else outer)
    try:
        yield
    finally:
        _REMEMBERED.reset(token)


def _resolve(path: str) -> str:
    if _O_PATH is None or not isinstance(path, str) or "\0" in path:
        return os.path.realpath(path)
    try:
        fd = os.open(path, _O_PATH | os.O_CLOEXEC)
    except OSError:
        return os.path.realpath(path)
    try:
        resolved = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return os.path.realpath(path)
    finally:
        os.close(fd)
    if not resolved.startswith("/") or resolved.endswith(_DELETED):
        return os.path.realpath(path)  # removed meanwhile, or not a path of this file system's tree
    return resolved


def within(path: str, folder: str) -> bool:
    """Whether ``path``'s real path lies in ``folder`` (a real path, e.g. a workspace's): what a record or journal
    names must, before ledgerflow acts on it (a copy of a workspace holds the original's absolute paths)."""
    return inside(real_path(path), folder, strict=False)

"""Renaming with Linux ``renameat2``: exchanging two names in one atomic step (``RENAME_EXCHANGE``) and renaming
without replacing (``RENAME_NOREPLACE``), through the C library (:mod:`.shown` builds partitions on them). Where the
C library or the file system has neither, :class:`Unsupported` says so and the caller falls back."""
from __future__ import annotations

import ctypes
import errno
import functools
import os

_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2
# errors of making a hard link that say the file system cannot (not that something is wrong with the files)
UNSUPPORTED = {errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM, errno.EXDEV, errno.EMLINK}


class Unsupported(OSError):
    """The file system cannot exchange two names or make hard links: the partition stays a symbolic link."""


@functools.lru_cache(maxsize=1)
def _libc_renameat2():
    """The C library's ``renameat2`` (None where it has none), looked up once."""
    call = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if call is not None:
        call.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return call


def _renameat2(source: str, target: str, flags: int) -> None:
    """``renameat2(source, target, flags)``; :class:`Unsupported` where the C library or file system lacks it."""
    call = _libc_renameat2()
    if call is None:
        raise Unsupported(errno.ENOSYS, "renameat2 is not available")
    if call(_AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(target), flags) != 0:
        code = ctypes.get_errno()
        if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise Unsupported(code, os.strerror(code), source)
        raise OSError(code, os.strerror(code), source)


def exchange(a: str, b: str) -> None:
    """Swap the names ``a`` and ``b`` (both exist) in one atomic step."""
    _renameat2(a, b, _RENAME_EXCHANGE)


def place(source: str, target: str) -> None:
    """Rename ``source`` to ``target``, which must not exist (never replaces anything that appeared there)."""
    _renameat2(source, target, _RENAME_NOREPLACE)

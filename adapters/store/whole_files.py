"""Files ledgerflow writes whole, and the check before it writes over one: a temporary file beside the target,
renamed over it, so a reader (or a process killed mid-write) sees the old file or the new one, never half; and a
file a user names (``--out``, ``--results``) is replaced only when it is one ledgerflow wrote."""
from __future__ import annotations

import json
import os
import uuid
from typing import Any, Callable, Optional


def write_whole(path: str, text: str, durable: bool = False) -> None:
    """Write ``text`` to ``path`` whole: a new temporary file beside it (created exclusively under a random name,
    so nothing planted at a predictable name is written through), renamed over it; a link at ``path`` itself is
    replaced, never followed. The file gets the mode a plain ``open`` would give it. ``durable``: flushed to disk
    first (a journal that recovery reads after a crash)."""
    folder, name = os.path.split(os.path.abspath(path))
    tmp = os.path.join(folder, f".{name}.{uuid.uuid4().hex}.tmp")
    # created, never opened if there: no link is followed; the umask applies as to any new file
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_json_whole(path: str, data: Any, durable: bool = False, **dumps: Any) -> None:
    """:func:`write_whole` of ``json.dumps(data, **dumps)``."""
    write_whole(path, json.dumps(data, **dumps), durable)


def may_keep(path: str) -> bool:
    """Whether ledgerflow may keep a file of its own at ``path`` (a cache under ``target/``): neither the file nor
    its folder is a link, the folder is not a file, and the file is a file or not there yet."""
    folder = os.path.dirname(path)
    if os.path.islink(folder) or (os.path.lexists(folder) and not os.path.isdir(folder)):
        return False
    return not os.path.lexists(path) or (not os.path.islink(path) and os.path.isfile(path))


def not_ours(path: str, ours: Callable[[Any], bool]) -> Optional[str]:
    """Why ``path`` may not be written over, or None: "a symbolic link", "a folder", or "a file ledgerflow did not
    write" when it exists and its JSON does not pass ``ours``. A path that does not exist is free."""
    if os.path.islink(path):
        return "a symbolic link"
    if os.path.isdir(path):
        return "a folder"
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            return None if ours(json.load(fh)) else "a file ledgerflow did not write"
    except (OSError, ValueError, UnicodeDecodeError):
        return "a file ledgerflow did not write"

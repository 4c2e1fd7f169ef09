"""Whether a path stays inside a folder (the workspace), as text and as a real path: the one home of that
check for destinations (``validate`` and the run), staged partitions and test fixtures.

The text of a path says nothing about where it leads once a folder on the way is a symbolic link:
``data/escape/out`` is inside the workspace as text and anywhere at all when ``data/escape`` links
elsewhere. So a path is compared twice: as normalised text (``..`` climbs, the workspace folder
itself), then as a real path (``os.path.realpath``: the longest prefix that exists, every link in it
resolved, a dangling link to where it points, then the rest, which does not exist yet and so cannot
be a link). A link that loops (``data/loop -> loop``) leads nowhere and is said to. Reading links is
the only file-system access here; nothing is created. As a real path, a backslash separates folders
only where the operating system says so (Windows): on Linux ``data\\out`` is one folder's name.
"""
from __future__ import annotations

import errno
import os
import re
from typing import Optional

SEPARATORS = os.sep + (os.altsep or "")
LOOP = "(ELOOP)"  # in the clause :func:`outside` gives for a link that loops
_SPLIT = re.compile("[" + re.escape(SEPARATORS) + "]")


def inside(path: str, root: str, strict: bool = True) -> bool:
    """Whether the absolute ``path`` lies inside the folder ``root``, both compared as normalised text
    (``strict``: ``root`` itself is not inside)."""
    path, root = _normal(path), _normal(root)
    if path == root:
        return not strict
    return path.startswith(root if root.endswith(os.sep) else root + os.sep)  # as commonpath, a tenth the time


def _normal(path: str) -> str:
    """``os.path.normpath``, with the two leading slashes POSIX lets it keep made one (Linux reads them as one)."""
    path = os.path.normpath(path)
    return path[1:] if path.startswith("//") else path


def link_loop(path: str) -> Optional[str]:
    """The first folder on the way to ``path`` (``path`` included) that is a symbolic link whose
    resolution loops (ELOOP), or None."""
    chain, head = [], os.path.abspath(path)
    while True:
        chain.append(head)
        parent = os.path.dirname(head)
        if parent == head:
            break
        head = parent
    for step in reversed(chain):
        if not os.path.islink(step):
            if not os.path.lexists(step):
                return None  # the rest does not exist: no link there
            continue
        try:
            os.stat(step)
        except OSError as err:
            if err.errno == errno.ELOOP:
                return step
    return None


def outside(root: str, path: str, strict: bool = True) -> Optional[str]:
    """None when ``path`` (absolute, or relative to the workspace folder ``root``) lies inside ``root``
    as text and as a real path; else a clause saying where it leads, to follow "the path 'x' ...".
    ``strict``: ``root`` itself is outside (a destination); else it is accepted (a prefix of one)."""
    top = os.path.normpath(os.path.abspath(root))
    full = os.path.normpath(os.path.join(top, path))
    if not inside(full, top, strict):
        return "is the workspace folder itself" if full == top else "leaves the workspace"
    loop = link_loop(full)
    if loop is not None:
        return f"goes through {loop}, a symbolic link that loops back on itself {LOOP}, so it leads nowhere"
    real, real_top = os.path.realpath(full), os.path.realpath(top)
    if inside(real, real_top, strict):
        return None
    if real == real_top:
        return "leads back to the workspace folder itself through a symbolic link"
    return f"leads to {real} through a symbolic link, not inside the workspace"


def fixed_part(template: str) -> str:
    """The leading folders of a path template up to the first one holding a ``{{token}}``: what can be
    checked before a run gives the tokens their values (``out/{{YYYY}}/gl`` -> ``out``)."""
    fixed = []
    for part in _SPLIT.split(template):
        if "{{" in part:
            break
        fixed.append(part)
    return os.sep.join(fixed)

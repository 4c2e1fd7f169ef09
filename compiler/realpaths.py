"""Whether a path stays inside a folder, decided on real paths (symbolic links resolved).

The text of a path says nothing about where it leads once a folder on the way is a symbolic link:
``data/escape/out`` is inside the workspace as text and anywhere at all when ``data/escape`` links
elsewhere. Destinations a project writes are therefore compared as real paths: the longest prefix
that exists, every link in it resolved (a dangling link to where it points), then the rest of the
path, which does not exist yet and so cannot be a link. Reading links is the only file-system
access here; nothing is created.
"""
from __future__ import annotations

import os
import re
from typing import Optional


def real_path(path: str) -> str:
    """The real path of ``path`` (absolute): its longest existing prefix with every symbolic link
    resolved, followed by the rest of the path, normalised (``os.path.realpath``, not strict)."""
    return os.path.realpath(path)


def escape(root: str, path: str) -> Optional[str]:
    """None when ``path`` lies strictly inside the folder ``root``, both compared as real paths; else
    the real path ``path`` reaches (outside ``root``, or ``root`` itself)."""
    real, top = real_path(path), real_path(root)
    if real != top and os.path.commonpath([real, top]) == top:
        return None
    return real


def fixed_part(template: str) -> str:
    """The leading folders of a path template up to the first one holding a ``{{token}}``: what can be
    checked before a run gives the tokens their values (``out/{{YYYY}}/gl`` -> ``out``)."""
    parts = re.split(r"[/\\]", template)
    fixed = []
    for part in parts:
        if "{{" in part:
            break
        fixed.append(part)
    return "/".join(fixed)

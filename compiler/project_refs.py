"""A project named on the command line (by name, id or the path of its YAML file), found in a loaded workspace
without loading the SQL parser: commands that compute nothing (``promote``, ``envs``, ``runs``) name projects
too."""
from __future__ import annotations

import os
from typing import Optional

from .errors import LedgerflowError
from .model import Project, Workspace


def require_project(workspace: Workspace, ref: str) -> Project:
    """:func:`find_project`, or a :class:`LedgerflowError` naming the workspace and its projects."""
    project = find_project(workspace, ref)
    if project is None:
        raise LedgerflowError(f"no project '{ref}' in {workspace.root}; projects: "
                              f"{', '.join(sorted(p.name for p in workspace.projects)) or 'none'}.")
    return project


def find_project(workspace: Workspace, ref: str) -> Optional[Project]:
    """A project by name, id, or path of its YAML file."""
    found = workspace.find_project(ref)
    if found:
        return found
    if ref.endswith((".yml", ".yaml")):
        target = os.path.abspath(ref)
        for p in workspace.projects:
            if os.path.abspath(os.path.join(workspace.root, p.file)) == target:
                return p
    return None

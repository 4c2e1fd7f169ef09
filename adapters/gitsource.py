"""The two sides of ``ledgerflow diff``: a git revision of the repository holding the workspace, the
working tree, or a workspace folder.

A revision is read straight from git, never checked out: ``git ls-tree`` lists the workspace's
``ledgerflow.yml``, ``datasets/`` and ``projects/`` at that revision (the workspace may be a subfolder
of the repository; ``data/`` is never read), ``git archive`` writes those files into a temporary
folder, which is loaded like any workspace and removed afterwards. The working tree is untouched.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from typing import Optional

from ..compiler.errors import LedgerflowError
from ..compiler.workspace import MARKER

WORKSPACE_PARTS = (MARKER, "datasets", "projects")


class GitSourceError(LedgerflowError):
    """A side cannot be read (not a revision, no workspace at that revision, git failed)."""

    exit_code = 1


class SideUsageError(LedgerflowError):
    """A BASE or HEAD argument is neither a git revision nor a workspace folder."""

    exit_code = 2


@dataclass
class Side:
    """One side, readable as a workspace folder at ``root`` (a temporary export for a revision)."""

    role: str  # base | head
    label: str  # what the user sees: "HEAD (1a2b3c4d5e6f)", "working tree", a folder
    root: str
    export: Optional[str] = None  # the temporary folder holding an exported revision

    def close(self) -> None:
        """Remove a temporary export."""
        if self.export:
            shutil.rmtree(self.export, ignore_errors=True)


def _git(cwd: str, *args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", "-C", cwd, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except FileNotFoundError:
        raise GitSourceError("git is not installed (or not on PATH): give two workspace folders instead.") from None


def repository_of(workspace_root: str) -> tuple[str, str]:
    """(repository top level, the workspace's path inside it, '' or ending with '/')."""
    top = _git(workspace_root, "rev-parse", "--show-toplevel")
    if top.returncode != 0:
        raise GitSourceError(f"{workspace_root} is not inside a git repository: give two workspace folders "
                             f"instead ({top.stderr.decode(errors='replace').strip()}).")
    prefix = _git(workspace_root, "rev-parse", "--show-prefix").stdout.decode().strip()
    return top.stdout.decode().strip(), prefix


def resolve_revision(workspace_root: str, rev: str) -> Optional[str]:
    """The commit ``rev`` names in the repository holding the workspace, or None."""
    if rev.startswith("-"):
        return None
    found = _git(workspace_root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    return found.stdout.decode().strip() if found.returncode == 0 else None


def export_revision(workspace_root: str, commit: str, dest: str) -> str:
    """Write the workspace files of ``commit`` under ``dest``; returns the exported workspace folder."""
    top, prefix = repository_of(workspace_root)
    paths = [prefix + p for p in WORKSPACE_PARTS]
    listed = _git(top, "ls-tree", "-r", "-z", "--name-only", commit, "--", *paths)
    if listed.returncode != 0:
        raise GitSourceError(f"git ls-tree failed: {listed.stderr.decode(errors='replace').strip()}")
    files = [f for f in listed.stdout.decode("utf-8", errors="surrogateescape").split("\0") if f]
    if prefix + MARKER not in files:
        raise GitSourceError(f"revision {commit[:12]} has no workspace at '{prefix or './'}' (no {MARKER} there).")
    archive = subprocess.Popen(["git", "-C", top, "archive", "--format=tar", commit, "--", *files],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        with tarfile.open(fileobj=archive.stdout, mode="r|") as tar:
            tar.extractall(dest, filter="data")
    finally:
        archive.stdout.close()
        err = archive.stderr.read().decode(errors="replace").strip()
        archive.stderr.close()
        if archive.wait() != 0:
            raise GitSourceError(f"git archive of {commit[:12]} failed: {err}")
    return os.path.join(dest, prefix) if prefix else dest


def _is_workspace(path: str) -> bool:
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, MARKER))


def open_side(role: str, spec: Optional[str], workspace_root: Optional[str]) -> Side:
    """The side ``spec`` names: a workspace folder, a git revision of the repository holding
    ``workspace_root``, or (``spec`` None) the working tree of ``workspace_root``."""
    if spec is None:
        if workspace_root is None:
            raise SideUsageError(f"no workspace for the {role} side: run inside one or pass --workspace.")
        return Side(role, "working tree", workspace_root)
    if _is_workspace(spec):
        return Side(role, spec, os.path.abspath(spec))
    if workspace_root is None:
        raise SideUsageError(f"{role.upper()} '{spec}' is not a workspace folder, and there is no workspace "
                             "whose git repository could hold it as a revision.")
    commit = resolve_revision(workspace_root, spec)
    if commit is None and _git(workspace_root, "rev-parse", "--show-toplevel").returncode != 0:
        raise SideUsageError(f"{workspace_root} is not inside a git repository, so {role.upper()} '{spec}' "
                             "cannot be a revision: `ledgerflow diff BASE_FOLDER HEAD_FOLDER` compares two "
                             "workspace folders.")
    if commit is None:
        if os.path.isdir(spec):
            raise SideUsageError(f"{role.upper()} '{spec}' is a folder without {MARKER}, not a workspace.")
        raise SideUsageError(f"{role.upper()} '{spec}' is neither a git revision of the repository holding "
                             f"{workspace_root} nor a workspace folder.")
    dest = tempfile.mkdtemp(prefix=f"lf-diff-{role}-")
    label = spec if spec == commit else f"{spec} ({commit[:12]})"
    try:
        root = export_revision(workspace_root, commit, dest)
    except GitSourceError as err:
        shutil.rmtree(dest, ignore_errors=True)
        raise GitSourceError(f"{role} ({label}): {err}") from None
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    return Side(role, label, root, export=dest)

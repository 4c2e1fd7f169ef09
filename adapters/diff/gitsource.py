"""The two sides of ``ledgerflow diff``: a git revision of the repository holding the workspace, the
working tree, or a workspace folder.

A revision is read straight from git, never checked out: one ``git cat-file --batch
--follow-symlinks`` process streams the workspace's ``ledgerflow.yml`` and the ``*.yml``/``*.yaml``
files directly in ``datasets/`` and ``projects/`` (what :func:`load_workspace` reads; the workspace
may be a subfolder of the repository; ``data/`` is never read) into a temporary folder, which is
loaded like any workspace and removed afterwards. No path is ever passed on a command line, so a
revision of any size is read. The working tree is untouched.

A committed symbolic link is resolved by git inside that revision's tree, as the working tree would
follow it; a link that leaves the repository (an absolute path, or ``..`` past the top), points at
nothing or loops is reported (:class:`GitSourceError`), never followed: nothing outside the
repository is read.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Optional

from ...compiler.errors import LedgerflowError
from ...compiler.workspace import MARKER

WORKSPACE_PARTS = (MARKER, "datasets", "projects")
_TYPE_BITS = 0o170000  # the type part of a tree entry's mode (git keeps permissions of old entries: 100664)
_FILE, _LINK = 0o100000, 0o120000


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


class _Objects:
    """One ``git cat-file --batch --follow-symlinks`` process: objects asked for one at a time."""

    def __init__(self, top: str):
        try:
            self.proc = subprocess.Popen(["git", "-C", top, "cat-file", "--batch", "--follow-symlinks"],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except FileNotFoundError:
            raise GitSourceError("git is not installed (or not on PATH): give two workspace folders instead.") from None

    def __enter__(self) -> "_Objects":
        return self

    def __exit__(self, *exc) -> None:
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def get(self, name: str) -> tuple[str, bytes]:
        """(kind, content) of the object ``name`` (an id or ``REV:PATH``): kind ``blob``/``tree``/... with
        its content, or git's ``missing``, ``symlink`` (a link out of the tree: content is its target),
        ``dangling``, ``loop`` or ``notdir``."""
        if "\n" in name:
            raise GitSourceError(f"the path {name!r} holds a line break, which git cat-file cannot be asked for.")
        try:
            self.proc.stdin.write(name.encode("utf-8", errors="surrogateescape") + b"\n")
            self.proc.stdin.flush()
            header = self.proc.stdout.readline()
        except OSError:
            header = b""
        if not header:
            raise GitSourceError(f"git cat-file stopped: {self.proc.stderr.read().decode(errors='replace').strip()}")
        parts = header.rstrip(b"\n").split(b" ")
        if parts[-1] in (b"missing", b"ambiguous"):
            return parts[-1].decode(), b""
        kind, size = (parts[0], parts[1]) if len(parts) == 2 else (parts[1], parts[2])
        content = self.proc.stdout.read(int(size))
        self.proc.stdout.read(1)  # the newline after the content
        return kind.decode(), content


def _tree_entries(content: bytes, id_bytes: int):
    """(mode, name, object id) of each entry of a raw tree object."""
    at = 0
    while at < len(content):
        space = content.index(b" ", at)
        nul = content.index(b"\0", space)
        yield (content[at:space].decode(), content[space + 1:nul].decode("utf-8", errors="surrogateescape"),
               content[nul + 1:nul + 1 + id_bytes].hex())
        at = nul + 1 + id_bytes


def _link_problem(kind: str, path: str, detail: bytes, commit: str) -> GitSourceError:
    target = detail.decode("utf-8", errors="replace")
    why = {"symlink": f"a symbolic link to {target}, outside the repository",
           "dangling": "a symbolic link to nothing in that revision",
           "loop": "a symbolic link in a loop of links",
           "notdir": "a path through a file that is not a folder"}.get(kind, f"not readable ({kind})")
    return GitSourceError(f"{path} is {why} in revision {commit[:12]}: ledgerflow diff reads a revision from git "
                          "and never follows a link out of it. Commit the file itself (or a link to a file inside "
                          "the repository).")


def _write(path: str, content: bytes, commit: str) -> None:
    try:
        with open(path, "xb") as fh:  # a fresh folder: two names that differ only in case meet here
            fh.write(content)
    except FileExistsError:
        raise GitSourceError(f"revision {commit[:12]} holds two files named like {os.path.basename(path)} "
                             "that this file system cannot tell apart (they differ only in case).") from None


def export_revision(workspace_root: str, commit: str, dest: str) -> str:
    """Write the workspace files of ``commit`` under ``dest``; returns the exported workspace folder."""
    top, prefix = repository_of(workspace_root)
    root = os.path.join(dest, prefix) if prefix else dest
    id_bytes = len(commit) // 2  # 20 (SHA-1) or 32 (SHA-256 repositories)
    with _Objects(top) as objects:
        marker = prefix + MARKER
        kind, content = objects.get(f"{commit}:{marker}")
        if kind in ("missing", "tree"):
            raise GitSourceError(f"revision {commit[:12]} has no workspace at '{prefix or './'}' (no {MARKER} there).")
        if kind != "blob":
            raise _link_problem(kind, marker, content, commit)
        os.makedirs(root, exist_ok=True)
        _write(os.path.join(root, MARKER), content, commit)
        for part in WORKSPACE_PARTS[1:]:
            kind, content = objects.get(f"{commit}:{prefix}{part}")
            if kind in ("missing", "blob"):
                continue  # no such folder: the working tree would find nothing there either
            if kind != "tree":
                raise _link_problem(kind, prefix + part, content, commit)
            folder = os.path.join(root, part)
            os.makedirs(folder, exist_ok=True)
            for mode, name, oid in _tree_entries(content, id_bytes):
                kind_bits = int(mode, 8) & _TYPE_BITS
                if not name.endswith((".yml", ".yaml")) or kind_bits not in (_FILE, _LINK) or "/" in name:
                    continue  # what load_workspace reads: the YAML files directly in the folder ('/': a forged tree)
                path = f"{prefix}{part}/{name}"
                kind, data = objects.get(oid if kind_bits == _FILE else f"{commit}:{path}")
                if kind == "tree":
                    continue  # a link to a folder: not a file the workspace reads
                if kind != "blob":
                    raise _link_problem(kind, path, data, commit)
                _write(os.path.join(folder, name), data, commit)
    return root


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

"""``ledgerflow init DIR``: write a new workspace (:mod:`.starter`) into an empty or new folder; with
``force``, into a folder that holds files already, writing only the files that are missing. An existing
file is never opened for writing: each file is created exclusively, so a file that appears meanwhile is
skipped too."""
from __future__ import annotations

import json
import os
import re
import shlex
import uuid
from typing import Callable

from ...compiler.errors import LedgerflowError
from ...compiler.realpaths import outside
from . import starter

_PLAIN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class InitError(LedgerflowError):
    """``init`` refused: the folder is not empty (without ``--force``), is a file, cannot be written, or holds
    a link out of it where a file would be written."""


def _workspace_name(folder: str) -> str:
    """The ``name:`` of ledgerflow.yml: the folder's name, quoted as YAML when it is not a plain word."""
    name = os.path.basename(os.path.abspath(folder)) or "workspace"
    return name if _PLAIN_NAME.match(name) else json.dumps(name)


def _refuse_non_empty(folder: str) -> None:
    entries = sorted(os.listdir(folder))
    if entries:
        shown = ", ".join(entries[:5]) + (f" and {len(entries) - 5} more" if len(entries) > 5 else "")
        raise InitError(
            f"INIT-001 {folder} is not empty (it holds {shown}): `ledgerflow init` writes a new workspace into an "
            "empty or new folder. Give another folder, or add --force to write only the files that are missing "
            "(an existing file is never overwritten).")


def _refuse_links(folder: str, rels: list[str]) -> None:
    """Refuse (nothing written yet) when a file ``init`` would write leads out of ``folder`` through a
    symbolic link inside it (``data -> /elsewhere``): ``--force`` writes only into the folder it was given."""
    leaving = [f"{rel} {why}" for rel in rels if (why := outside(folder, rel))]
    if leaving:
        shown = "; ".join(leaving[:3]) + (f"; and {len(leaving) - 3} more" if len(leaving) > 3 else "")
        raise InitError(f"INIT-001 {folder} holds symbolic links that lead out of it: {shown}. `ledgerflow init` "
                        "never writes through a link; nothing was written. Remove the link, or init into another "
                        "folder.")


def _write_new(path: str, text: str) -> bool:
    """Create ``path`` holding ``text``; False (nothing written) when it exists. A failed write removes
    only the file this call created."""
    try:
        fh = open(path, "x", encoding="utf-8", newline="\n")
    except FileExistsError:
        return False
    try:
        with fh:
            fh.write(text)
    except BaseException:
        os.remove(path)
        raise
    return True


def init_workspace(folder: str, force: bool, echo: Callable[[str], None]) -> None:
    """Write the starter workspace into ``folder`` (created when missing), reporting each file written and
    each one skipped because it exists; raises :class:`InitError` (``INIT-001``) for a non-empty folder
    without ``force``, a folder that is a file, a file that cannot be written, or one that a symbolic link
    in the folder would lead out of it (checked before anything is written)."""
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise InitError(f"INIT-001 {folder} is a file, not a folder: give the folder the new workspace goes into.")
    try:
        if os.path.isdir(folder) and not force:
            _refuse_non_empty(folder)
        texts = starter.files(_workspace_name(folder), str(uuid.uuid4()), str(uuid.uuid4()))
        _refuse_links(folder, list(texts))
        written, skipped = [], []
        for rel, text in texts.items():
            path = os.path.join(folder, *rel.split("/"))
            parent = os.path.dirname(path)
            if os.path.exists(parent) and not os.path.isdir(parent):
                skipped.append(f"{rel} ({os.path.relpath(parent, folder)} is a file)")
                continue
            os.makedirs(parent, exist_ok=True)
            if os.path.isdir(path):
                skipped.append(f"{rel} (a folder of that name exists)")
            elif _write_new(path, text):
                written.append(rel)
            else:
                skipped.append(f"{rel} (exists, left as it is)")
    except OSError as err:
        raise InitError(f"INIT-001 cannot write the new workspace into {folder}: {err.strerror or err} "
                        f"({err.filename or folder}).") from None
    echo(f"Wrote {len(written)} file{'s' if len(written) != 1 else ''} into {folder}" + (":" if written else "."))
    for rel in written:
        echo(f"  {rel}")
    if skipped:
        echo(f"Skipped {len(skipped)} that exist:")
        for rel in skipped:
            echo(f"  {rel}")
    echo("Next:")
    for line in (f"cd {shlex.quote(folder)}", "ledgerflow validate", "ledgerflow run journal_summary --period 2026-01",
                 "ledgerflow test"):
        echo(f"  {line}")

"""The manifest kept between invocations (``target/manifest.cache.json``), used only while nothing it depends on
changed, like dbt's partial parsing: a workspace of a thousand projects prints its manifest without compiling them
all again.

The cache's key is a SHA-256 of everything the manifest is made from: the content of ``ledgerflow.yml`` and of every
file in ``datasets/``, ``projects/`` and ``tests/``; the registered datasets the run store holds (names, versions,
columns); ledgerflow's version and the size and modification time of every file of its installed code. Any
difference, and the cache is not used (a file that cannot be read as one is ignored too); it is rewritten after
the manifest is built. A workspace with errors is never cached. Nothing but that one file under ``target/`` is
ever written, and a link or folder at its name is left alone (the manifest is then built every time).
"""
from __future__ import annotations

import hashlib
import json
import os
from typing import Optional

from ..compile_out.script_cache import code_fingerprint
from ..store.whole_files import may_keep, write_json_whole

CACHE = os.path.join("target", "manifest.cache.json")
_WORKSPACE_FILES = (("datasets", (".yml", ".yaml")), ("projects", (".yml", ".yaml")), ("tests", (".yml", ".yaml")))


def cache_key(root: str, registrations: list) -> str:
    """The key of the manifest of the workspace at ``root`` with ``registrations`` (the run store's rows)."""
    digest = hashlib.sha256(code_fingerprint().encode())
    files = [os.path.join(root, "ledgerflow.yml")]
    for folder, endings in _WORKSPACE_FILES:
        path = os.path.join(root, folder)
        if os.path.isdir(path):
            files += [os.path.join(path, n) for n in sorted(os.listdir(path)) if n.endswith(endings)]
    for path in files:
        with open(path, "rb") as fh:
            digest.update(f"{os.path.relpath(path, root)}\0".encode() + hashlib.sha256(fh.read()).digest())
    digest.update(json.dumps(registrations, sort_keys=True, default=str).encode())
    return digest.hexdigest()


def as_parsed(ws) -> bool:
    """Whether ``ledgerflow.yml`` and every dataset and project file still hold the bytes the load of ``ws``
    parsed (their digests taken as they were read): a manifest built from them may be kept under the key of the
    files as they are now."""
    files = [(ws.config.file or "ledgerflow.yml", ws.config.text_sha256)]
    files += [(d.file, d.text_sha256) for d in ws.datasets if d.file and not d.registered]
    files += [(p.file, p.text_sha256) for p in ws.projects]
    for relative, digest in files:
        try:
            with open(os.path.join(ws.root, relative), "rb") as fh:
                if hashlib.sha256(fh.read()).hexdigest() != digest:
                    return False
        except OSError:
            return False
    return True


def read(root: str, key: str) -> Optional[str]:
    """The cached manifest text when the cache holds ``key`` (and is a manifest, kept in a real ``target/``);
    None otherwise."""
    path = os.path.join(root, CACHE)
    if not may_keep(path) or not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            kept = json.load(fh)
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(kept, dict) or kept.get("key") != key or not isinstance(kept.get("text"), str):
        return None
    return kept["text"] if kept["text"].startswith('{\n  "') else None  # as manifest_text writes one


def write(root: str, key: str, text: str) -> None:
    """Keep ``text`` under ``key`` (nothing when ``target`` or the cache's name is a link or not ours to write)."""
    path = os.path.join(root, CACHE)
    if not may_keep(path):
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    write_json_whole(path, {"key": key, "text": text})

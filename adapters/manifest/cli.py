"""``ledgerflow manifest [--out FILE]``: its option and output; the document is :func:`.build.build_manifest`'s."""
from __future__ import annotations

import json
import os

import click

from ...compiler.errors import CompileError, LedgerflowError
from ..console.invocation import Invocation, command
from ..store.whole_files import not_ours, write_whole


class ManifestOutRefused(LedgerflowError):
    """``--out`` names something ledgerflow did not write as a manifest: nothing is written."""


def _check_out(path: str) -> None:
    """Refuse ``--out`` when it is a folder, a link, or a file that is not a manifest ledgerflow wrote (which is
    never replaced)."""
    if not os.path.isdir(os.path.dirname(path)):
        raise ManifestOutRefused(f"MANIFEST-001 --out {path}: its folder {os.path.dirname(path)} does not exist. "
                                 "Nothing was written. Hint: create the folder, or give another path.")
    what = not_ours(path, lambda old: isinstance(old, dict) and "manifest_version" in old and "ledgerflow_version" in old)
    if what in ("a symbolic link", "a folder"):
        raise ManifestOutRefused(f"MANIFEST-001 --out {path} is {what}: the manifest is one file. Nothing was written. "
                                 "Hint: give a file's path.")
    if what is not None:
        raise ManifestOutRefused(f"MANIFEST-001 --out {path} exists and is not a manifest ledgerflow wrote: it is "
                                 "never replaced. Nothing was written. Hint: give another path, or move the file away.")


def manifest_text(inv: Invocation) -> tuple[str, list]:
    """The manifest of the invocation's workspace as JSON text (sorted keys, two-space indent, a final newline) and
    the errors its projects have: the cached text while nothing it depends on changed (:mod:`.cache`)."""
    from . import cache
    from ..compile_out.script_cache import ScriptCache
    from .build import build_manifest
    store = os.path.exists(os.path.join(inv.root, ".ledgerflow", "state.db"))
    key = cache.cache_key(inv.root, inv.store.registrations() if store else [])
    kept = cache.read(inv.root, key)
    if kept is not None:
        return kept, []
    scripts = ScriptCache(inv.root)
    manifest, errors = build_manifest(inv.workspace, scripts)
    scripts.save()
    text = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    # kept only when every file still holds what the build parsed: an edit made meanwhile is built next time
    if not errors and cache.cache_key(inv.root, inv.store.registrations() if store else []) == key \
            and cache.as_parsed(inv.workspace):
        cache.write(inv.root, key, text)
    return text, errors


@click.command("manifest")
@click.option("--out", metavar="FILE", default=None,
              help="Write the manifest to FILE (replacing only a manifest ledgerflow wrote) instead of printing it.")
@command
def manifest_cmd(inv: Invocation, out):
    """Print (or write to --out) the workspace as one JSON document, without starting a JVM: projects with their
    operations, inputs, outputs (columns, types, destinations), registered datasets, dependencies, checks,
    tests and each project's compiled SQL hash (docs/manifest.md; its JSON Schema: docs/manifest.schema.json).
    A workspace with errors still gets its manifest (each project's errors in it), then exit 1."""
    if out is not None:
        _check_out(os.path.abspath(out))
    text, errors = manifest_text(inv)
    if out is None:
        click.echo(text, nl=False)
    else:
        path = os.path.abspath(out)
        write_whole(path, text)
        click.echo(f"Wrote the manifest to {path}.")
    if errors:
        raise CompileError(errors)

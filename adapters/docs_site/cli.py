"""``ledgerflow docs [--out DIR]``: its option and help (registered on the ``ledgerflow`` group by
:mod:`..cli`); the work is :func:`build_docs`."""
from __future__ import annotations

import os
from typing import Callable, Optional

import click

from ...compiler.errors import CompileError
from ..console.invocation import Invocation, command, env_option


def build_docs(inv: Invocation, out: Optional[str], echo: Callable[[str], None]) -> None:
    """Write the site of the invocation's workspace to ``out`` (default ``target/docs`` of the workspace);
    a workspace with errors still gets its site (the errors on its first page), then :class:`CompileError`
    (exit 1) reports them. No Spark: the workspace is compiled and the run store read."""
    from ..compile_out.script_cache import ScriptCache
    from .collect import broken_site, collect_site
    from .protected import check_clear
    from .target import check_out, staged_site
    from .writer import write_site
    root = inv.root
    target = os.path.abspath(out if out is not None else os.path.join(root, "target", "docs"))
    store = inv.store if os.path.exists(os.path.join(root, ".ledgerflow", "state.db")) else None
    if store is not None:
        from ..envs.views import environments
        lines = environments(inv)
    else:
        lines = []
    try:
        ws, problems = inv.workspace, None
    except CompileError as err:  # the workspace's files cannot be loaded: a first page with their errors
        ws, problems = None, err.diagnostics
    check_clear(target, root, ws, store)
    check_out(target)
    scripts = ScriptCache(root)
    try:
        site = broken_site(problems) if ws is None else collect_site(ws, store, lines, scripts)
    except CompileError as err:
        site = broken_site(err.diagnostics)
    with staged_site(target) as folder:
        files = write_site(site, folder)
    scripts.save()
    pages = len(site.pages)
    echo(f"Wrote the docs site to {target} ({pages} page{'s' if pages != 1 else ''}, {files} files): open "
         f"{os.path.join(target, 'index.html')} in a browser (it needs no server and no network).")
    if site.errors:
        echo(f"The workspace has {len(site.errors)} error{'s' if len(site.errors) != 1 else ''}: they are listed "
             "on the site's first page too.")
        raise CompileError(site.errors)


@click.command("docs")
@click.option("--out", metavar="DIR", default=None,
              help="Folder of the site (default target/docs of the workspace). Only the files an earlier `ledgerflow "
                   "docs` listed in the folder's marker are replaced or deleted; a non-empty folder without that "
                   "marker, or a place ledgerflow keeps data or records in, is refused.")
@env_option
@command
def docs_cmd(inv: Invocation, out):
    """Write a static site of the workspace that opens from disk with no network: the workspace graph, each
    project (YAML, compiled SQL, outputs, checks, tests), each output column's lineage, each dataset, and the
    runs with their timings, checks and bridge, the closed and stale periods, as --env publishes them."""
    build_docs(inv, out, click.echo)

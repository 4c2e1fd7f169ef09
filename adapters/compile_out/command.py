"""The bodies of ``ledgerflow compile``: one project (printed, ``--out DIR``, ``--resolved --period P``) or
every project (``--all --out DIR``, ``--all --check DIR``). The command's options are declared in cli.py."""
from __future__ import annotations

import os
import sys

import click


def compile_one(inv, project, out, period, resolved) -> None:
    """``compile PROJECT [--out DIR] [--resolved --period P]`` (``inv``: the command's
    :class:`..invocation.Invocation`): the SQL printed, or written to ``DIR/<project>/<project>.sql``."""
    from ...compiler.compile import compile_project
    from ...compiler.periods import parse_period
    from . import folders
    from ..store.whole_files import write_whole
    from .paths import check_folder, write_failed
    if out:
        check_folder(out, "--out")
    proj = inv.project(project)
    compiled = compile_project(inv.workspace, proj)
    if resolved:
        if not period:
            raise click.UsageError("--resolved needs --period")
        from .resolved_script import resolved_script
        text = resolved_script(inv.workspace, proj, compiled, parse_period(period), inv.store)
    else:
        if period:
            raise click.UsageError("--period is only used with --resolved")
        text = compiled.script()
    if out:
        name = folders.segment(proj.name)  # a project name never climbs out of DIR
        folder = os.path.join(out, name)
        path = os.path.join(folder, f"{name}{'.' + period if resolved else ''}.sql")
        try:
            os.makedirs(folder, exist_ok=True)
            write_whole(path, text + "\n")  # a link planted at the file's name is replaced, never written through
        except OSError as err:
            raise write_failed(path, err, f"the SQL of project '{proj.name}'") from None
        click.echo(path)
    else:
        click.echo(text)


def compile_all(inv, project, out, check, resolved, all_projects) -> None:
    """``compile --all --out DIR | --all --check DIR`` (see :mod:`.all_projects`): every project's SQL written,
    or DIR checked against a fresh compile (exit 4 when it differs)."""
    from . import all_projects as every  # (the parameter all_projects is --all)
    if not all_projects:
        raise click.UsageError("--check needs --all")
    if project is not None or resolved:
        raise click.UsageError("--all compiles every project: give no PROJECT, --period or --resolved")
    if bool(out) == bool(check):
        raise click.UsageError("--all needs exactly one of --out DIR or --check DIR")
    if out:
        from .paths import check_folder
        check_folder(out, "--out")
    ws = inv.workspace
    if out:
        written, removed = every.write_all(ws, out)
        for path in written:
            click.echo(path)
        for path in removed:  # a project's file of an older layout or of a project that is gone
            click.echo(f"removed {path}")
        return
    result = every.check_all(ws, check)
    if not result.ok:
        for line in result.lines(check):
            click.echo(line, err=True)
        sys.exit(every.EXIT_STALE)
    click.echo(f"ok: {check} is up to date ({len(ws.projects)} projects)")

"""``ledgerflow promote`` and ``ledgerflow envs path | list``: their options and output; the work is
:mod:`.promote`'s and :mod:`.views`'."""
from __future__ import annotations

import contextlib

import click

from ...compiler.gcpause import loading_paused
from ..console.invocation import Invocation, command, who


def promotion_events(inv: Invocation, workspace=None):
    """The ``emit`` a promotion calls: its OpenLineage events, when the workspace has them on (``workspace``: the
    one the command loaded already, else the invocation's, loaded when first needed)."""
    from ..events.emitter import emit_promotion
    return lambda kind, record: emit_promotion(inv.root, (workspace or inv.workspace).config, kind, record)


@click.command("promote")
@click.argument("project", required=False)
@click.option("--from", "from_env", required=True, metavar="ENV", help="The environment whose versions are promoted.")
@click.option("--to", "to_env", default="prod", show_default=True, metavar="ENV", help="The environment to publish them.")
@click.option("--select", "select", multiple=True, help="The selected projects (NAME, +NAME, NAME+, ...).")
@click.option("--all", "all_projects", is_flag=True, default=False, help="Every project.")
@click.option("--period", required=True, help="A period, a range of one level or a list.")
@click.option("--by", default=None, help="Who promotes (default: $USER).")
@click.option("--dry-run", is_flag=True, default=False,
              help="Publish nothing: print the data diff between what --to publishes now and what it would publish.")
@command
def promote_cmd(inv: Invocation, project, from_env, to_env, select, all_projects, period, by, dry_run):
    """Make --to publish exactly the versions --from published for the project-periods (re-pointing partitions:
    no rows recomputed, no data copied), all in one journal: all or nothing."""
    from ...compiler.periods import PeriodError, parse_periods
    from ..commit.open_store import open_store
    from ..layout.env_names import check_env_name
    from .promote import plan, promote
    from .promoted_records import Recording
    if sum([bool(project), bool(select), all_projects]) != 1:
        raise click.UsageError("give exactly one of PROJECT, --select SEL or --all")
    try:
        periods = [p.identifier for p in parse_periods(period)]
    except PeriodError as err:
        raise click.BadParameter(str(err), param_hint="--period")
    source = open_store(inv.root, check_env_name(from_env, "--from"))
    target = open_store(inv.root, check_env_name(to_env, "--to"))
    loaded = None
    if project:
        names = [inv.project(project).name]
    else:
        from ..run.selection import plan_selection
        graph, names = plan_selection(inv.root, None if all_projects else " ".join(select), env=source.env,
                                      bind=False)  # promotion re-points what was computed: nothing is bound
        loaded = graph.workspace
    # A promotion parses thousands of records and makes little cyclic garbage: the collector's passes over what it
    # holds are all cost (about a tenth of a promotion of 1,800 partitions), so it is paused, unless Spark runs (a
    # dry run's diff, a copy into a catalog table or a URI). Its id, time and author are fixed first: each promoted
    # record is written as the plan checks its project-period (.promoted_records)
    recording = None if dry_run else Recording.start(who(by))
    with loading_paused():
        items = plan(source, target, names, periods, recording=recording)
    if dry_run:
        from ..diff.data_formats import render_data
        from .dry_run import reports
        factory, _label = inv.session_factory()
        for report in reports(factory(), items, source.env, target):
            click.echo(render_data(report, "text"))
        click.echo(f"Dry run: nothing promoted ({len(items)} project-period{'s' if len(items) != 1 else ''} "
                   f"from '{source.env}' to '{target.env}' would be).")
        return
    with contextlib.nullcontext() if any(i.copies for i in items) else loading_paused():
        record = promote(source, target, items, recording.by, emit=promotion_events(inv, loaded),
                         session=lambda: inv.session_factory()[0](), recording=recording)
    moved = sum(len(i.swaps) for i in items)
    copied = len(record.get("copies") or [])
    how = (f"{moved} partition{'s' if moved != 1 else ''} re-pointed, no data copied" if not copied else
           f"{moved} partition{'s' if moved != 1 else ''} re-pointed; {copied} partition{'s' if copied != 1 else ''} "
           "of a catalog table or URI copied with Spark")
    click.echo(f"Promoted {len(items)} project-period{'s' if len(items) != 1 else ''} from '{source.env}' to "
               f"'{target.env}' ({how}): promotion {record['promotion_id']}")
    if record.get("unfinished"):
        click.echo(f"ledgerflow: warning: interrupted after the commit point ({record['unfinished']}): the promotion "
                   "stands; the next command finishes its journal and deletes the versions it replaced.", err=True)
    by_project: dict[str, list] = {}
    for item in items:
        by_project.setdefault(item.project, []).append(item)
    for name, its in by_project.items():
        runs = its[0].record["run_id"] if len(its) == 1 else f"{len(its)} runs"
        click.echo(f"  {name}: {', '.join(i.period for i in its) if len(its) <= 3 else f'{its[0].period} .. {its[-1].period} ({len(its)} periods)'} ({runs})")


@click.group("envs")
def envs_group():
    """Environments: `envs path PROJECT.OUTPUT --env NAME`, `envs list`, `envs drop NAME`."""


@envs_group.command("path")
@click.argument("output")
@click.option("--env", "env", default=None, metavar="NAME", help="Environment (default: $LEDGERFLOW_ENV, else prod).")
@command
def envs_path_cmd(inv: Invocation, output, env):
    """The folder an external reader opens to see OUTPUT's rows (PROJECT.OUTPUT: the output operation's seq or
    name) as environment --env publishes them."""
    inv.env_option = env
    from .views import output_folder
    click.echo(output_folder(inv, output))


@envs_group.command("drop")
@click.argument("name")
@click.option("--by", default=None, help="Who drops it (default: $USER).")
@command
def envs_drop_cmd(inv: Invocation, name, by):
    """Remove environment NAME's pointers (the partitions it shows, the registered versions promoted to it); its
    runs stay in the history and no version folder is deleted. Never prod."""
    from ..layout.env_names import check_env_name
    from .drop import drop
    removed, left = drop(inv.store, check_env_name(name, "envs drop"), who(by))
    click.echo(f"Dropped environment '{name}': {len(removed)} partition{'s' if len(removed) != 1 else ''} removed, "
               "no version deleted.")
    for line in left:
        click.echo(f"  left: {line}", err=True)


@envs_group.command("list")
@command
def envs_list_cmd(inv: Invocation):
    """Each environment and, per project-period, whether it is ahead of, behind or the same as prod."""
    from .views import environments
    from ..console.terminal_text import echo_lines
    echo_lines(environments(inv))

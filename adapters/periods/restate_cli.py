"""``ledgerflow restate PROJECT --period P --reason TEXT``: its options and help (registered on the ``ledgerflow``
group by :mod:`..cli`); the work is :mod:`.restate`'s."""
from __future__ import annotations

import click

from ..console.cli_options import spark_options
from ..console.invocation import Invocation, command, env_option, started_early


@click.command("restate")
@click.argument("project")
@click.option("--period", required=True, help="The closed period to restate (YYYY-MM, YYYY-Qn, YYYY or YYYY-MM-DD).")
@click.option("--reason", required=True, help="Why the closed period's numbers change (required; recorded).")
@click.option("--by", default=None, help="On whose word (default: $USER, else the login name; recorded).")
@click.option("--dry-run", is_flag=True, default=False,
              help="Compute the outputs and print the data diff against the published rows; publish and record "
                   "nothing.")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True,
              help="How to print the data diff.")
@click.option("--from-env", "from_env", default=None, metavar="ENV",
              help="Publish exactly what environment ENV published for the period (re-pointed, not recomputed).")
@spark_options()
@click.option("--allow-draft", is_flag=True, default=False, help="Restate a project whose status is draft.")
@env_option
@command
def restate_cmd(inv: Invocation, project, period, reason, by, dry_run, fmt, from_env, master, remote, conf,
                allow_draft):
    """Run PROJECT for its CLOSED period on purpose (or, with --from-env, publish what that environment
    published for it): the data diff against the published rows is computed before publishing and recorded
    with the reason and who (`restatement` in the run record); the superseded rows stay readable
    (docs/commands.md, Restating a closed period)."""
    from ...compiler.periods import PeriodError, parse_period
    from ..layout.env_names import check_env_name
    from ..layout.partition_paths import PROD
    from .restate_publish import RestateError
    try:
        p = parse_period(period)
    except PeriodError as err:
        raise click.BadParameter(str(err), param_hint="--period")
    if inv.env != PROD:
        raise RestateError(f"RESTATE-002 periods are closed in prod only, so period {p.identifier} of project "
                           f"'{project}' is open in environment '{inv.env}': run it there instead (`ledgerflow run "
                           f"{project} --period {p.identifier} --env {inv.env}`). Nothing was run or written.")
    factory, label = inv.session_factory(master, remote, conf)
    from .restate import RestateAsk, plan, render, restate
    if from_env is not None:
        from .restate_from_env import restate_from_env
        ask = RestateAsk(project, p, reason, by, dry_run, allow_draft)
        click.echo(render(restate_from_env(inv.root, inv.workspace, ask, check_env_name(from_env, "--from-env"),
                                           factory), fmt))
        return
    from ..run.runner import Runner
    early: list = []  # the session's factory, once every refusal is behind (the JVM starts then)
    runner = Runner(inv.root, echo=click.echo, session_factory=lambda: early[0](), spark_label=label)
    ask = RestateAsk(project, p, reason, by, dry_run, allow_draft)
    planned = plan(runner, ask, inv.workspace)  # every refusal before Spark starts
    early.append(started_early(factory))
    from ..run.interrupts import outside_a_run
    with outside_a_run():
        click.echo(render(restate(runner, ask, inv.workspace, planned), fmt))

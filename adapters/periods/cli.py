"""``ledgerflow periods close | reopen | list`` and ``ledgerflow status``: their options and help (registered on
the ``ledgerflow`` group by :mod:`..cli`); the work is :mod:`.command`'s and :mod:`.stale`'s."""
from __future__ import annotations

import click

from ..console.invocation import Invocation, command, env_option


@click.group("periods")
def periods_group():
    """Closed periods: `periods close P`, `periods reopen P`, `periods list` (docs/commands.md, Closed periods)."""


_BY_HELP = "Who closes or reopens (default: $USER, else the operating system's login name)."
_PROJECT_HELP = "Only this project (repeatable; default: every project of the workspace now, each recorded on its own)."


def _periods_arg(text: str):
    """The periods PERIOD names (one, a range of one level or a list, as `run --period`); usage error otherwise."""
    from ...compiler.periods import PeriodError, parse_periods
    try:
        return parse_periods(text)
    except PeriodError as err:
        raise click.BadParameter(str(err), param_hint="PERIOD")


def _state_command(action: str, help_text: str):
    """The ``periods close`` or ``periods reopen`` command (``action``): PERIOD, ``--project`` (repeatable),
    ``--note``, ``--by``; the work is :func:`.command.set_state`'s."""
    @click.argument("period")
    @click.option("--project", "projects", multiple=True, help=_PROJECT_HELP)
    @click.option("--note", default=None, help=f"Why (recorded with the {action}).")
    @click.option("--by", default=None, help=_BY_HELP)
    @command
    def state_cmd(inv: Invocation, period, projects, note, by):
        from .command import set_state
        from ..console.terminal_text import echo_line
        set_state(inv, action, _periods_arg(period), projects, note, by, echo_line)
    state_cmd.__doc__ = help_text
    return periods_group.command(action)(state_cmd)


periods_close_cmd = _state_command(
    "close", """Close PERIOD (2026-01, a range 2026-01..2026-03 or a list) for the projects: a run of a closed
    project-period is refused (`ledgerflow restate` changes it on purpose).""")
periods_reopen_cmd = _state_command(
    "reopen", """Reopen PERIOD for the projects (each must be closed): runs of it are allowed again.""")


@periods_group.command("list")
@click.option("--project", "projects", multiple=True, help="Only this project (repeatable).")
@click.option("--period", default=None, help="Only this period (or range, or list).")
@env_option
@command
def periods_list_cmd(inv: Invocation, projects, period):
    """Per project and period: open or closed (by whom, when, the note), the run whose outputs are published
    (the last completed one) and whether it is stale."""
    from ..console.terminal_text import echo_line
    from .command import list_periods
    list_periods(inv, projects, _periods_arg(period) if period else None, echo_line)


@click.command("status")
@click.option("--period", default=None, help="Only this period (or range, or list); default: every period run.")
@env_option
@command
def status_cmd(inv: Invocation, period):
    """The stale project-periods: those whose last completed run read inputs that changed since (files added,
    removed or edited; a newer version read unpinned; a changed project or dataset declaration), with why.
    Exit 0 whatever it finds; `ledgerflow run --stale --period P` runs the open ones."""
    from .stale import render_status, stale_report
    periods = _periods_arg(period) if period else None
    asked = period or ""
    report = stale_report(inv.store, inv.workspace, None if periods is None else [p.identifier for p in periods])
    from ..console.terminal_text import echo_lines
    echo_lines(render_status(report, asked))

"""``ledgerflow init DIR`` and ``ledgerflow datasets infer LOCATION --name NAME``: their options and help
(registered on the ``ledgerflow`` group by :mod:`..cli`); the work is :mod:`.init_workspace`'s and
:mod:`.infer`'s. Neither needs a workspace, and neither starts Spark."""
from __future__ import annotations

import click

from ..console.invocation import Invocation, command


@click.command("init")
@click.argument("folder", metavar="DIR", default=".", required=False)
@click.option("--force", is_flag=True, default=False,
              help="Write into a folder that is not empty: only the files that are missing (an existing file is "
                   "never overwritten; each one skipped is named; a link out of DIR is refused).")
@command
def init_cmd(inv: Invocation, folder, force):
    """Write a new workspace into DIR (default: the current folder), which must be empty or new: ledgerflow.yml,
    a sample dataset with its data file, a sample project, a scenario test and a .gitignore. It validates,
    runs (`ledgerflow run journal_summary --period 2026-01`) and tests as written."""
    from .init_workspace import init_workspace
    init_workspace(folder, force, click.echo)


@click.command("infer")
@click.argument("location")
@click.option("--name", required=True, help="The dataset's name (its file: datasets/NAME.yml).")
@click.option("--table", default=None, help="The main table's name, which expressions use (default: NAME).")
@click.option("--temporal-mode", type=click.Choice(["period", "bitemporal", "snapshot"]), default=None,
              help="Default: from the system columns in the data (_period: period; _period_from and _period_to: "
                   "bitemporal; neither: snapshot).")
@click.option("--format", "fmt", type=click.Choice(["parquet", "orc", "csv", "json"]), default=None,
              help="The files' format (default: from their names, else their first bytes).")
@command
def infer_cmd(inv: Invocation, location, name, table, temporal_mode, fmt):
    """Print a dataset YAML for the data at LOCATION (a Parquet, ORC, CSV or JSON-lines file, or a folder of
    them, `_period=` partition folders included): Parquet and ORC types exactly, CSV and JSON typed from a
    sample of rows, system columns recognised. A name that cannot be a column is an error naming each one and
    the rename to make (nothing printed)."""
    from .infer import infer_dataset
    click.echo(infer_dataset(location, name, table, temporal_mode, fmt), nl=False)


_INFER_HELP = " `datasets infer LOCATION --name NAME`: a dataset YAML from data files (--help for its options)."


class _DatasetsGroup(click.Group):
    """``datasets infer ...`` is this group's sub-command; every other ``datasets ...`` goes to the command it
    wraps, as it always did (``datasets``, ``datasets list``, ``datasets show NAME``)."""

    def __init__(self, legacy: click.Command):
        super().__init__(legacy.name, commands={"infer": infer_cmd}, help=legacy.help,
                         context_settings=legacy.context_settings)
        self.legacy = legacy

    def make_context(self, info_name, args, parent=None, **extra):
        """The context of ``infer``'s group, or else of the wrapped command (click invokes its ``command``)."""
        if args[:1] == ["infer"]:
            return super().make_context(info_name, args, parent=parent, **extra)
        return self.legacy.make_context(info_name, args, parent=parent, **extra)


def with_infer(datasets_cmd: click.Command) -> click.Group:
    """``datasets_cmd`` (list, show) with the ``infer`` sub-command, under the same name."""
    if _INFER_HELP not in (datasets_cmd.help or ""):
        datasets_cmd.help = (datasets_cmd.help or "").rstrip() + _INFER_HELP
    return _DatasetsGroup(datasets_cmd)

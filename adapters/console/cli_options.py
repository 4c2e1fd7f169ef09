"""Options several executing commands share (``run``, ``retry``, ``replay``, ``restate``): where Spark runs."""
from __future__ import annotations

import click


def spark_options(master_help: str = "Spark master URL.", remote_help: str = "Spark Connect URL."):
    """``--master``, ``--remote`` and ``--conf KEY=VALUE`` (repeatable), in that order, on a click command."""
    def decorate(function):
        function = click.option("--conf", multiple=True, help="Spark setting KEY=VALUE (repeatable).")(function)
        function = click.option("--remote", default=None, help=remote_help)(function)
        return click.option("--master", default=None, help=master_help)(function)
    return decorate


def results_option(function):
    """``--results FILE`` on ``run`` and ``retry``: the invocation's results as JSON, whatever the exit code
    (:mod:`..run.results_file`)."""
    return click.option("--results", "results_path", metavar="FILE", default=None,
                        help="Write the project x period results (status, run id, rows, checks, bridge, timings) as "
                             "JSON to FILE, whatever the exit code (a new file, or results ledgerflow wrote).")(function)

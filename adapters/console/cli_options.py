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

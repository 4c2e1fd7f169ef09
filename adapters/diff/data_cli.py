"""The command-line side of ``ledgerflow diff --data``: its options checked, the run store and the Spark
session found, :func:`.data_command.run_data_diff` called."""
from __future__ import annotations

import dataclasses
import os
from typing import Optional

import click

from ...compiler.periods import parse_period
from .data_command import DataDiffAsk, run_data_diff
from .data_keys import split_keys
from .data_sides import NoRegistrations


def data_diff_command(inv, ask: DataDiffAsk, period: Optional[str], fail_on, data: bool) -> int:
    """``diff --data``: a usage error (exit 2) for ``--period``/``--by``/``--key`` without ``--data``, ``--data``
    without ``--period``, or ``--fail-on`` with it (a data diff exits 4 on any difference); else the exit code
    of the data diff. ``ask``: as the command line gave it (its ``key``: ``--key`` as given, repeatable, each a
    comma-separated list), ``period`` its text."""
    by, key, root = ask.by, ask.key, ask.workspace_root
    if not data:
        raise click.UsageError(f"{'--period' if period else '--by' if by else '--key'} belongs to `ledgerflow diff "
                               "--data`: add "
                               "--data to compare the rows the outputs compute, or leave it out to compare the SQL.")
    if period is None:
        raise click.UsageError("diff --data needs --period P: the period both sides run for (e.g. --period 2026-01).")
    if fail_on is not None:
        raise click.UsageError("--fail-on is for the compiled diff: `diff --data` exits 4 whenever a row differs.")
    parsed = parse_period(period)
    has_store = root is not None and os.path.exists(os.path.join(root, ".ledgerflow", "state.db"))
    store = inv.store if has_store else NoRegistrations()
    registered = inv.registered() if root else None

    def session():
        if root is not None:
            return inv.session_factory()[0]()
        from ..spark.session import session_factory
        return session_factory()[0]()

    return run_data_diff(dataclasses.replace(ask, period=parsed, key=split_keys(key)), click.echo, session, store,
                         registered)

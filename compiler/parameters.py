"""The named parameters of compiled statements: their names, their values for a run, and which ones
a statement uses.

Compiled SQL is period-independent: the period and the run's start are named parameter markers
(``:period_identifier``, ...) that the runner binds with ``spark.sql(sql, args=...)`` and
``compile --resolved`` inlines. Spark is given only the parameters a statement mentions:
:func:`used` finds the markers with a small lexer (one regular expression) that skips string
literals, quoted identifiers, comments and ``::`` casts, so a marker-like text inside a name or a
description never counts. It gives what sqlglot's parse gives (``exp.Placeholder`` nodes), which
``tests/test_parameters.py`` checks on every compiled statement of the sample workspaces, without
the cost of a parse (a 500-operation project's statements are ~300 kB of SQL).
"""
from __future__ import annotations

import datetime
import re

from .periods import Period

# The parameters, in the order the compiled script's header names them.
NAMES = ("period_identifier", "period_start", "period_end", "run_started_at")

# Tokens that can hold a colon which is not a marker come first, so the marker alternative only
# sees colons in SQL text proper. Spark strings take backslash escapes; `` ` `` doubles itself.
_LEXER = re.compile(r"""
      '(?:[^'\\]|\\.)*'             # 'string'
    | "(?:[^"\\]|\\.)*"             # "string"
    | `(?:[^`]|``)*`                # `identifier`
    | --[^\n]*                      # -- comment
    | /\*.*?\*/                     # /* comment */
    | ::                            # a cast, not a marker
    | :([A-Za-z_][A-Za-z0-9_]*)     # :name
""", re.VERBOSE | re.DOTALL)


def values(period: Period, started_at: datetime.datetime) -> dict:
    """The value of every parameter for a run of ``period`` started at ``started_at`` (naive: UTC)."""
    return {"period_identifier": period.identifier, "period_start": period.start, "period_end": period.end,
            "run_started_at": started_at}


def utc_aware(moment: datetime.datetime) -> datetime.datetime:
    """``moment`` with its time zone: a naive one is the UTC wall clock, as ledgerflow records times.

    PySpark reads a naive datetime bound to a TIMESTAMP in the Python process's local time zone, so a
    run on a machine set to, say, Europe/Berlin would otherwise stamp ``_updated_at`` an hour early."""
    return moment.replace(tzinfo=datetime.timezone.utc) if moment.tzinfo is None else moment


def used(sql: str) -> set[str]:
    """The names of the parameter markers in ``sql`` (outside literals, quoted identifiers, comments)."""
    return {m.group(1) for m in _LEXER.finditer(sql) if m.group(1)}


def arguments(sql: str, args: dict) -> dict:
    """The entries of ``args`` that ``sql`` uses: what to pass as ``spark.sql(sql, args=...)``, times as
    UTC instants (:func:`utc_aware`)."""
    names = used(sql)
    return {k: utc_aware(v) if isinstance(v, datetime.datetime) else v for k, v in args.items() if k in names}


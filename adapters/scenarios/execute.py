"""Run a prepared test's compiled statements on Spark and collect its outputs; nothing is written.

The statements run as ``ledgerflow run`` runs them (adapters/run/runner.py): the inputs are loaded by
the normal loaders (system columns, period filter, row ids), every stage before the last output is
materialised unless its one reader is an output, with the same parameters bound. Every output is
computed and collected instead of written: a run fails when any of its statements fails, so a test
passes only when the whole run would succeed. No run store record, no staging folder.
"""
from __future__ import annotations

import datetime
import time
from dataclasses import dataclass, field
from typing import Any, Optional

from ...compiler.errors import LedgerflowError
from ..spark.error_text import spark_error_text
from ..inputs.loaders import load_inputs
from ...compiler import parameters
from ...compiler.checks.sql import input_rows_query
from ...compiler.render import ident
from ..run import check_eval
from . import given
from .prepare import PreparedTest


@dataclass
class OutputRows:
    """The rows one output would write: column names, their Spark types and the row values."""

    seq: int
    name: str
    columns: list[str]
    types: dict[str, str]
    rows: list[tuple]


@dataclass
class Outcome:
    """What running a test gave: every output's rows, or the run's error."""

    outputs: dict[int, OutputRows] = field(default_factory=dict)
    error: Optional[str] = None
    seconds: float = 0.0
    checks: dict[str, dict] = field(default_factory=dict)  # check name -> its result, as a run records it
    checks_failed: Optional[str] = None  # the paragraph a run would fail with (exit 4), when a check failed


def collect(df) -> tuple[list[str], dict[str, str], list[tuple]]:
    """Rows as Python values; timestamps as the UTC wall clock (naive), whatever the local time zone.

    PySpark turns a TIMESTAMP into a naive datetime in the Python process's local zone; that is turned
    back into its instant and then into UTC here. Casting in Spark instead (to TIMESTAMP_NTZ) makes a
    second query, which Spark analyses and optimises again from the start (0.3-0.5 s of a test): it is
    done only when a value is beyond what Python's local time can hold (year 1, or year 9999 east of UTC)."""
    names = [f.name for f in df.schema.fields]
    kinds = [f.dataType.simpleString() for f in df.schema.fields]
    zoned = {i for i, kind in enumerate(kinds) if kind == "timestamp"}
    try:
        rows = [tuple(r) for r in df.collect()]
        if zoned:
            rows = [tuple(utc_wall_clock(v) if i in zoned else v for i, v in enumerate(row)) for row in rows]
    except (ValueError, OverflowError, OSError):  # "year 0 is out of range": read them without a zone
        columns = [ident(n) for n in names]
        df = df.selectExpr(*[f"CAST({c} AS timestamp_ntz) AS {c}" if i in zoned else c for i, c in enumerate(columns)])
        rows = [tuple(r) for r in df.collect()]
    return names, dict(zip(names, kinds)), rows


_EPOCH = datetime.datetime(1970, 1, 1)


def utc_wall_clock(local: Optional[datetime.datetime]) -> Optional[datetime.datetime]:
    """The UTC wall clock (naive) of a naive datetime PySpark made in the local zone from an instant.

    Exact: PySpark made it with ``datetime.fromtimestamp`` (which sets ``fold`` in a repeated hour), and
    ``timestamp()`` inverts that; whole seconds and microseconds are kept apart (no float rounding)."""
    if local is None:
        return None
    seconds = int(local.replace(microsecond=0).timestamp())
    return _EPOCH + datetime.timedelta(seconds=seconds, microseconds=local.microsecond)


def run(spark, prepared: PreparedTest, key_prefix: str = "") -> Outcome:
    """Load the given data, run every statement, collect every output (``prepared.compiled`` is set)."""
    clock = time.monotonic()
    outcome = Outcome()
    compiled = prepared.compiled
    args = parameters.values(prepared.period, prepared.started_at)
    views: list[str] = []
    keys: list[str] = []
    try:
        inputs, keys = given.register(spark, prepared, key_prefix)
        views += [i.view for i in inputs] + [f"raw_{i.view}_0" for i in inputs]
        load_inputs(spark, inputs, args)
        statements = compiled.statements
        last_output = max((i for i, s in enumerate(statements) if s.kind == "output"), default=-1)
        for i, st in enumerate(statements):
            df = spark.sql(st.sql, args=parameters.arguments(st.sql, args))
            if st.kind == "stage":
                if i > last_output:
                    continue
                readers = [s for s in statements[i + 1:] if st.name in s.reads]
                if not (len(readers) == 1 and readers[0].kind == "output"):
                    df = df.localCheckpoint()
                df.createOrReplaceTempView(st.name)
                views.append(st.name)
                continue
            df = _judge_output(spark, prepared, st.operation.seq, df, outcome)
            columns, types, rows = collect(df)
            outcome.outputs[st.operation.seq] = OutputRows(st.operation.seq, st.operation.name, columns, types, rows)
        _judge_input(spark, prepared, args, outcome)
    except LedgerflowError as err:  # e.g. a fixture lacking a declared column
        outcome.error = str(err)
    except Exception as exc:  # Spark failed: the run would have failed (exit 3)
        outcome.error = spark_error_text(exc, None)
    finally:
        given.release(keys)
        drop_views(spark, views)
    outcome.seconds = time.monotonic() - clock
    return outcome


def _checks(prepared: PreparedTest) -> list:
    plan = prepared.compiled.plan
    return [c for c in (plan.checks if plan is not None else []) if c.kind.value != "reconcile"]


def _judge_output(spark, prepared: PreparedTest, seq: int, df, outcome: Outcome):
    """The checks on output ``seq`` judged over its rows ``df`` (docs/checks.md); returns the rows the output
    keeps (a quarantine check's violating rows leave it)."""
    checks = [c for c in _checks(prepared) if c.on == seq]
    if not checks:
        return df
    results, kept = check_eval.judge_output(spark, checks, df)
    outcome.checks.update(results)
    return kept


def _judge_input(spark, prepared: PreparedTest, args: dict, outcome: Outcome) -> None:
    """The ``on: input`` checks judged, then the paragraph a run would fail with when a ``fail`` check failed."""
    checks = _checks(prepared)
    on_input = [c for c in checks if c.on_input]
    if on_input:
        query = input_rows_query(prepared.compiled.statements[0].sql)
        rows = spark.sql(query, args=parameters.arguments(query, args))
        outcome.checks.update(check_eval.judge_frame(spark, on_input, rows))
    ordered = [outcome.checks[c.name] for c in checks if c.name in outcome.checks]
    outcome.checks = {r["name"]: r for r in ordered}
    if any(r["status"] == "failed" for r in ordered):
        outcome.checks_failed = check_eval.failure_report("the run would fail its checks, publishing nothing (exit 4)",
                                                          check_eval.describe_failures(ordered, checks))


def drop_views(spark, views: list[str]) -> None:
    """Forget a test's temporary views. Straight from the session's catalog: ``Catalog.dropTempView``
    first looks for cached data of the view, which analyses its whole plan again (~0.1 s a test);
    a test caches nothing."""
    jsession = getattr(spark, "_jsparkSession", None)
    for view in views:
        try:
            if jsession is not None:
                jsession.sessionState().catalog().dropTempView(view)
            else:  # not a classic session (Spark Connect)
                spark.catalog.dropTempView(view)
        except Exception:  # the session is gone: nothing left to clean
            return


def first_line(text: Any) -> str:
    """The first line of an error, for one-line summaries."""
    return str(text).strip().splitlines()[0] if text else ""

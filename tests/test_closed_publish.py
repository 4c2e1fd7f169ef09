"""A closed project-period is never republished through a catalog table (or URI) output: such a destination is
written in place before the commit point and no rollback undoes it, so the refusal must come before that write
(the Python API, which has no command-line check before Spark; a close that lands while a run computes)."""
from __future__ import annotations

import pytest

from cli_support import add_project, run_ok

DB = "lf_closed_publish_test"
TABLE = f"{DB}.gl_closed"
PROJECT, PERIOD = "closed_cat", "2026-01"


@pytest.fixture
def published(spark, finance, tmp_path):
    """``closed_cat`` (the GL's rows to a catalog table) run for January, then January closed."""
    spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")
    spark.sql(f"CREATE DATABASE {DB} LOCATION '{tmp_path / 'warehouse'}'")
    add_project(finance, PROJECT, f"- {{seq: 1, name: Out, type: output, arguments: {{destination: "
                                  f"{{catalog_table: {TABLE}}}}}}}")
    first = run_ok(finance, PROJECT, PERIOD)
    rows = _rows(spark)
    assert len(rows) > 0
    try:
        yield finance, first, rows
    finally:
        spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")


def _rows(spark) -> list:
    return sorted(map(repr, spark.table(TABLE).where(f"_period = '{PERIOD}'").collect()))


def _runs(ws) -> list[tuple]:
    from ledgerflow.adapters.store.runstore import RunStore
    return sorted((r["run_id"], r["status"]) for r in RunStore(str(ws)).list_runs())


def test_the_python_api_refuses_a_closed_period_before_its_table_is_written(spark, published):
    from ledgerflow.adapters import api
    from ledgerflow.adapters.store.closure_table import PeriodClosed
    from ledgerflow.adapters.store.runstore import RunStore
    ws, first, rows = published
    RunStore(str(ws)).set_closed([(PROJECT, PERIOD)], "close", "alice", "2026-02-03T10:00:00Z", "reported")
    with pytest.raises(PeriodClosed, match="PERIOD-001 period 2026-01 of project 'closed_cat' is closed"):
        api.run(str(ws), PROJECT, PERIOD, spark=spark, echo=lambda _: None)
    assert _rows(spark) == rows  # the published rows (their _row_ids: run 1's) stand
    assert _runs(ws) == [(first["run_id"], "completed")]  # refused before anything ran, as the command does


def test_a_close_landing_as_the_run_starts_is_refused_before_its_table_is_written(spark, published, monkeypatch):
    """The close lands after every check before Spark, as the run takes its leases (before it is recorded
    running, so the close is not held back): the run is refused before its first in-place write, not after it
    at the commit point (which could no longer undo the table's rows)."""
    from ledgerflow.adapters.run import leases
    from ledgerflow.adapters.run.runner import Runner
    from ledgerflow.adapters.store.closure_table import PeriodClosed
    ws, first, rows = published
    runner = Runner(str(ws), echo=lambda _: None, session_factory=lambda: spark)
    take = leases.take

    def closing_meanwhile(store, *args, **kwargs):
        store.set_closed([(PROJECT, PERIOD)], "close", "bob", "2026-02-03T10:00:00Z", None)
        return take(store, *args, **kwargs)
    monkeypatch.setattr(leases, "take", closing_meanwhile)
    with pytest.raises(PeriodClosed, match="PERIOD-001 period 2026-01 of project 'closed_cat' is closed: closed by bob"):
        runner.run(PROJECT, PERIOD)
    assert _rows(spark) == rows
    runs = dict(_runs(ws))
    assert runs.pop(first["run_id"]) == "completed" and list(runs.values()) == ["failed"]


def test_a_close_while_a_run_computes_is_refused_and_the_run_publishes(spark, published, monkeypatch):
    """A run recorded running whose process is alive holds a close back (PERIOD-004, nothing closed): the table
    it writes in place could not be rolled back once the period is closed. The close succeeds once it is done."""
    from ledgerflow.adapters.run.compute import compute
    from ledgerflow.adapters.run.evaluator import PeriodRun
    from ledgerflow.adapters.run.runner import Runner
    from ledgerflow.adapters.store.closure_table import PeriodStateError
    ws, first, rows = published
    runner = Runner(str(ws), echo=lambda _: None, session_factory=lambda: spark)
    refused = []

    def closing_meanwhile(spark_, ctx, metrics, echo, destinations=None):
        with pytest.raises(PeriodStateError) as err:
            runner.store.set_closed([(PROJECT, PERIOD)], "close", "bob", "2026-02-03T10:00:01Z", None)
        refused.append(str(err.value))
        return compute(spark_, ctx, metrics, echo, destinations)
    monkeypatch.setattr(PeriodRun, "compute", staticmethod(closing_meanwhile))
    second = runner.run(PROJECT, PERIOD)
    assert second["status"] == "completed" and len(refused) == 1
    assert refused[0].startswith(f"PERIOD-004 a run is under way: 2026-01 of 'closed_cat' (run {second['run_id']}, "
                                 "process ") and "Nothing was closed" in refused[0]
    assert runner.store.closed(PROJECT, PERIOD) is None  # nothing closed while it ran
    runner.store.set_closed([(PROJECT, PERIOD)], "close", "bob", "2026-02-03T10:00:02Z", None)
    assert runner.store.closed(PROJECT, PERIOD)["at"] == "2026-02-03T10:00:02Z"

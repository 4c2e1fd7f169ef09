"""A run reads observed metrics (DataFrame.observe) only once they arrived, and never waits forever.

Spark's ``Observation.get`` blocks with no timeout until an action ran the observed plan. The run hung for
ever in CI when an observation's plan never delivered its metrics: Spark completes an observation only for
an action whose plan names it, and the frame of ``spark.sql`` over an observed view names the view, so the
checkpoint of a stage read by several outputs (or of an output written to a catalog table) computed the
bridge's points without ever delivering them (adapters/run/observations.py)."""
from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import pytest

from cli_support import add_project
from test_hardening_commit import STAMP

from ledgerflow.adapters.run import bridge, observations
from ledgerflow.adapters.run.checks import RunChecks
from ledgerflow.adapters.run.runner import Runner
from ledgerflow.adapters.store.summaries import bridge_table
from ledgerflow.compiler.bridge import bridge_plan
from ledgerflow.compiler.compile import compile_project
from ledgerflow.compiler.errors import ChecksFailed
from ledgerflow.compiler.workspace import load_workspace

PERIOD = "2026-01"


def _observed(spark, name: str):
    from pyspark.sql import Observation
    from pyspark.sql import functions as F
    observation = Observation(f"{name}_{time.monotonic_ns()}")
    return observation, spark.range(3).observe(observation, F.count(F.lit(1)).alias("n"))


def _in_thread(call, timeout: float):
    """``call()``'s result, run in a thread; fails (instead of hanging the suite) past ``timeout`` seconds."""
    box: dict = {}

    def target():
        try:
            box["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box["error"] = exc
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), f"still waiting after {timeout} s (an observation read that never returns)"
    if "error" in box:
        raise box["error"]
    return box["value"]


def test_an_observation_never_executed_is_reported_not_waited_for(spark):
    ran, frame = _observed(spark, "ran")
    never, _unused = _observed(spark, "never")
    frame.collect()
    clock = time.monotonic()
    got, missing = _in_thread(lambda: observations.read({"ran": ran, "never": never}, wait=0.5), 30)
    assert time.monotonic() - clock < 10
    assert got == {"ran": {"n": 3}}
    assert list(missing) == ["never"] and "never arrived" in missing["never"]


def test_an_action_on_spark_sql_over_an_observed_view_delivers_the_view_s_metrics(spark):
    """The root cause: the checkpoint of ``spark.sql`` over an observed view, as the run materialises a stage."""
    observation, frame = _observed(spark, "view")
    frame.createOrReplaceTempView("lf_test_observed_view")
    observations.runnable(spark.sql("SELECT id FROM lf_test_observed_view")).localCheckpoint()
    assert observations.one(observation, wait=5) == ({"n": 3}, None)


def test_a_run_whose_stage_is_checkpointed_for_a_table_and_a_folder_measures_its_bridge(spark, finance):
    """A stage read by two outputs (a folder, a catalog table) is checkpointed: its bridge points arrive
    (before: the run waited for them for ever in ``bridge.collect``)."""
    db = "observed_tables_db"
    spark.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")
    spark.sql(f"CREATE DATABASE {db} LOCATION '{finance / 'warehouse' / db}'")
    try:
        add_project(finance, "observed", STAMP.format(stamp="x") + (
            "- {seq: 2, name: Local copy, type: output, arguments: {destination: {path: out/local, format: csv}}}\n"
            f"- {{seq: 3, name: Table, type: output, arguments: {{destination: {{catalog_table: {db}.t}}}}}}\n"),
            extra="checks:\n- {name: rows_written, on: 3, row_count: {min: 0}}\n")  # checks: the bridge is observed
        runner = Runner(str(finance), echo=lambda _s: None, session_factory=lambda: spark)
        rec = _in_thread(lambda: runner.run("observed", PERIOD), 240)
    finally:
        spark.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")
    assert rec["status"] == "completed"
    counts = {(b["output"], b["measure"]): (b["input"], b["output_value"]) for b in rec["bridge"]}
    assert counts[(2, "count")] == counts[(3, "count")] == (10, 10)
    assert not any(b.get("not_measured") for b in rec["bridge"])


def test_a_bridge_stage_that_never_ran_is_not_measured_and_its_reconcile_fails(spark, finance, monkeypatch):
    monkeypatch.setattr(observations, "WAIT", 0.3)
    ws = load_workspace(str(finance))
    plan = compile_project(ws, ws.find_project("ts04_delete_inactive")).plan
    observer = bridge.BridgeObserver(bridge_plan(plan))
    for o in observer.plan.outputs:
        observer.stages["lf_stage_1"] = _observed(spark, "stage")[0]  # attached, never run
        observer.stage_of[o.seq] = "lf_stage_1"
        observer.outputs[o.seq], frame = _observed(spark, f"out{o.seq}")
        observer.frames[o.seq] = frame
        frame.collect()
    rows = _in_thread(lambda: bridge._rows(observer), 60)
    assert rows and all(r["input"] is None and r["output_value"] is None and r["changes"] == [] for r in rows)
    assert "the working rows before it: its metrics never arrived" in rows[0]["not_measured"]
    assert any("not measured: the working rows" in line for line in bridge_table(rows))
    [result] = bridge.reconcile_results(plan.checks, rows)
    assert result["status"] == "failed" and "was not measured" in result["error"]


def test_a_row_check_whose_metrics_never_arrived_fails_the_run(spark, finance, monkeypatch):
    """Not passed on nothing: a row check observed on a frame that never ran cannot be judged, so it fails."""
    monkeypatch.setattr(observations, "WAIT", 0.3)
    ws = load_workspace(str(finance))
    plan = compile_project(ws, ws.find_project("journal_controls")).plan
    check = next(c for c in plan.checks if c.name == "known_accounts")
    ctx = SimpleNamespace(compiled=SimpleNamespace(plan=SimpleNamespace(checks=[check])), run_id="r1", bridge=None,
                          period=SimpleNamespace(identifier=PERIOD))
    hook = RunChecks(spark, ctx, {}, echo=lambda _s: None)
    never, frame = _observed(spark, "check")
    hook._observed[check.on] = (never, [(check, "c0_")])
    out = SimpleNamespace(statement=SimpleNamespace(operation=SimpleNamespace(seq=check.on)), frame=frame, rows=None)
    _in_thread(lambda: hook.written(out, None), 60)
    record: dict = {}
    with pytest.raises(ChecksFailed) as failed:
        hook.evaluate(record)
    assert record["checks"][0]["status"] == "failed" and "not measured" in record["checks"][0]["error"]
    assert "check 'known_accounts' (not_null on output 3) could not be judged: its row metrics were not measured" \
        in str(failed.value)

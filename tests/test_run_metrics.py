"""Per-statement timings and Spark job counts: the run record's ``timings`` and ``ledgerflow runs show``."""
from __future__ import annotations

import json

from cli_support import cli, describe, edit, record, run, run_id_of, run_ok

from ledgerflow.adapters.run.metrics import RunMetrics


def check_entry(entry: dict) -> None:
    assert isinstance(entry["seconds"], float) and entry["seconds"] >= 0, entry
    for key in ("spark_jobs", "spark_stages", "spark_tasks"):
        assert isinstance(entry[key], int) and entry[key] >= 0, entry


def test_ts03_records_timings_of_every_statement(spark, finance):
    rec = run_ok(finance, "ts03_fx_conversion")
    t = rec["timings"]
    assert set(t) == {"total_s", "setup_s", "load_inputs_s", "statements", "outputs", "checks", "spark_jobs",
                      "job_counts"}
    assert t["checks"] is None  # TS-03 declares no checks
    assert t["job_counts"] == "spark_status_tracker"
    # every statement the runner executed, in order: loading the inputs, the stage, the output's query
    assert [(s["name"], s["kind"], s["operations"]) for s in t["statements"]] == [
        ("load_inputs", "load", []), ("lf_stage_1", "stage", [0, 1]), ("output_002", "output", [2])]
    for entry in t["statements"] + t["outputs"]:
        check_entry(entry)
    load, stage, output = t["statements"]
    assert t["load_inputs_s"] == load["seconds"]
    assert load["spark_jobs"] == 0  # ledgerflow reads each CSV's header itself: no inference job (issue 9.3)
    # the stage's one reader is the output, whose query is computed once by its staged write
    assert stage["materialised"] is False and output["materialised"] is False
    [write] = t["outputs"]
    assert (write["operation_seq"], write["name"]) == (2, "Write converted lines")
    assert write["spark_jobs"] > 0 and write["spark_tasks"] >= write["spark_stages"] > 0
    assert t["spark_jobs"] == sum(e["spark_jobs"] for e in t["statements"] + t["outputs"])
    parts = sum(e["seconds"] for e in t["statements"] + t["outputs"])
    assert t["setup_s"] >= 0 and t["total_s"] >= parts
    # the run left no job group behind on the session's thread
    assert spark.sparkContext.getLocalProperty("spark.jobGroup.id") is None


def test_materialised_stage_counts_its_jobs(spark, finance):
    """TS-04: one stage read by two outputs is materialised (localCheckpoint): its jobs are its own."""
    rec = run_ok(finance, "ts04_delete_inactive")
    t = rec["timings"]
    stage = next(s for s in t["statements"] if s["kind"] == "stage")
    assert stage["materialised"] is True and stage["spark_jobs"] > 0, stage
    assert [o["operation_seq"] for o in t["outputs"]] == [3, 4]
    assert all(o["spark_jobs"] > 0 for o in t["outputs"]), t["outputs"]


def test_runs_show_prints_the_timing_table(spark, finance):
    rec = run_ok(finance, "ts03_fx_conversion")
    shown = cli(finance, "runs", "show", rec["run_id"])
    assert shown.exit_code == 0, describe(shown)
    lines = shown.stdout.splitlines()
    assert lines[0] == f"Run {rec['run_id']}  completed"
    head = next(i for i, line in enumerate(lines) if line.split()[:3] == ["statement", "kind", "operations"])
    rows = {line.split()[0]: line.split() for line in lines[head + 1:head + 4]}
    t = rec["timings"]
    for s in t["statements"]:
        row = rows[s["name"]]
        assert row[1] == s["kind"]
        assert row[3:6] == [f"{s['seconds']:.2f}", str(s["spark_jobs"]), str(s["spark_stages"])], row
    write = next(line for line in lines if line.strip().startswith("write output 2"))
    assert write.split()[3:7] == ["write", "2", f"{t['outputs'][0]['seconds']:.2f}",
                                  str(t["outputs"][0]["spark_jobs"])], write
    assert any(line.strip().startswith(f"total {t['total_s']:.2f} s") for line in lines)
    # --json: the raw record, as before
    raw = cli(finance, "runs", "show", rec["run_id"], "--json")
    assert raw.exit_code == 0 and json.loads(raw.stdout) == rec


def test_failed_run_keeps_the_timings_up_to_the_failure(spark, finance):
    edit(finance, "data/gl/v1/transactions.csv", "JE-001,1,2026-01-05,4100,CC-100,USD,15000.00",
         "JE-001,1,2026-01-05,4100,CC-100,USD,abc")
    result = run(finance, "ts03_fx_conversion", expect=3)
    rec = record(finance, run_id_of(result))
    assert rec["status"] == "failed"
    [write] = rec["timings"]["outputs"]  # the bad value is met by the output's (staged) write
    assert write["failed"] is True and write["spark_jobs"] >= 1
    assert spark.sparkContext.getLocalProperty("spark.jobGroup.id") is None
    shown = cli(finance, "runs", "show", rec["run_id"])
    assert "write output 2" in shown.stdout and "failed" in shown.stdout


class ConnectLike:
    """A session without a SparkContext, as on Spark Connect."""

    @property
    def sparkContext(self):
        raise RuntimeError("[JVM_ATTRIBUTE_NOT_SUPPORTED] sparkContext is not supported in Spark Connect")


def test_spark_connect_records_null_job_counts():
    metrics = RunMetrics(ConnectLike(), "run-1")
    with metrics.measure(metrics.statement("lf_stage_1", "stage", [1, 2])):
        pass
    metrics.start_output(3, "out")
    metrics.end_output(3)
    t = metrics.to_json(1.0)
    assert t["job_counts"] == "unavailable (Spark Connect)" and t["spark_jobs"] is None
    [stage] = t["statements"]
    assert stage["seconds"] >= 0 and stage["spark_jobs"] is None and stage["operations"] == [1, 2]
    assert t["outputs"][0]["spark_jobs"] is None


def test_job_ids_are_fetched_in_one_call_whatever_the_session_retains(spark, monkeypatch):
    """A long-lived session (a test session, a Dagster code server) retains up to a thousand jobs without a
    group; pyspark's ``getJobIdsForGroup`` fetches that array one Py4J call per element, which cost every
    measured block of every run about 70 ms. RunMetrics reads the array in one call, and counts the same."""
    from pyspark.core.status import StatusTracker
    sc = spark.sparkContext
    for _ in range(30):
        sc.parallelize([1]).count()
    everyone = set(StatusTracker.getJobIdsForGroup(sc.statusTracker(), None))

    def refuse(*_args, **_kwargs):
        raise AssertionError("one Py4J call per job id")

    monkeypatch.setattr(StatusTracker, "getJobIdsForGroup", refuse)
    metrics = RunMetrics(spark, "r1")
    assert metrics._ungrouped() == everyone and len(everyone) >= 30
    entry = metrics.statement("two_jobs", "stage", [1])
    with metrics.measure(entry):
        spark.range(3).collect()
        spark.range(4).count()
    timings = metrics.to_json()
    assert timings["statements"][0]["spark_jobs"] >= 2 and timings["statements"][0]["spark_stages"] >= 2


def test_the_session_keeps_the_generated_code_of_a_thousand_plans(spark):
    """A process running many projects or periods reuses the classes Spark generated for a plan it ran before
    (Spark's default keeps 100); a workspace's own conf still wins (session_settings)."""
    from ledgerflow.adapters.spark.session import session_settings
    assert spark.conf.get("spark.sql.codegen.cache.maxEntries") == "1000"
    assert session_settings({"spark.sql.codegen.cache.maxEntries": "50"})["spark.sql.codegen.cache.maxEntries"] == "50"

"""The bridge never waits (docs/checks.md "The bridge"): every run records it, including runs whose observed
rows Spark can simplify or optimise away. An empty period and a delete of every row give exact zeros; an
output whose selector is never true, the only reader of its stage, makes Spark optimise the observed rows
away: the bridge then says "not observed", and why, rather than waiting or making numbers up. None of them
waits for metrics that never come: the time spent polling for metrics is counted, never timed."""
from __future__ import annotations

from cli_support import add_project

from ledgerflow.adapters.run import observations
from ledgerflow.adapters.run.runner import Runner


def _runner(spark, root):
    return Runner(str(root), echo=lambda _s: None, session_factory=lambda: spark)


def _polls(monkeypatch) -> list:
    """Each time the observations' reader found an observation not complete yet (it then sleeps
    :data:`observations.POLL` seconds before it looks again)."""
    slept: list = []
    original = observations.completed

    def counted(observation) -> bool:
        done = original(observation)
        if not done:
            slept.append(observation)
        return done
    monkeypatch.setattr(observations, "completed", counted)
    return slept


def _by_measure(record: dict, output: int) -> dict:
    return {b["measure"]: b for b in record["bridge"] if b["output"] == output}


def test_an_empty_period_and_a_delete_of_every_row_give_exact_zeros_without_waiting(spark, finance, monkeypatch):
    add_project(finance, "wipe", """
- {seq: 1, name: Delete every line, type: delete, selector: "TRUE", arguments: {}}
- {seq: 2, name: Totals, type: aggregate, arguments: {group_by: [transactions.currency], aggregations: [{column: amount_local, expression: SUM(transactions.amount_local)}]}}
- {seq: 3, name: Write, type: output, arguments: {destination: {path: out/wipe, format: parquet}}}""")
    slept = _polls(monkeypatch)
    runner = _runner(spark, finance)
    wiped = _by_measure(runner.run("wipe", "2026-01"), 3)
    assert wiped["count"]["input"] == 10 and wiped["count"]["output_value"] == 0
    assert [c["change"] for c in wiped["count"]["changes"]] == [-10, 0]  # the delete, and an aggregate of no rows
    assert wiped["SUM(amount_local)"]["input"] == "5074000.00"
    assert [c["change"] for c in wiped["SUM(amount_local)"]["changes"]] == ["-5074000.00", "0.00"]
    assert wiped["SUM(amount_local)"]["output_value"] == "0.00"
    empty = _by_measure(runner.run("wipe", "2026-05"), 3)  # the sample's data has no line in May
    assert set(empty) == {"count", "SUM(amount_local)", "SUM(amount_reporting)"}
    for measure, row in empty.items():
        zero = 0 if measure == "count" else "0.00"
        assert (row["input"], row["output_value"], row["quarantined"]) == (zero, zero, zero), row
        assert [c["change"] for c in row["changes"]] == [zero, zero] and not row.get("not_measured")
    assert len(slept) * observations.POLL < 1.0, slept  # metrics that were computed arrive with the action


def test_rows_spark_optimises_away_are_not_observed_and_say_why(spark, finance, monkeypatch):
    add_project(finance, "nothing", """
- {seq: 1, name: Write nothing, type: output, selector: "FALSE", arguments: {destination: {path: out/nothing, format: parquet}}}""")
    slept = _polls(monkeypatch)
    record = _runner(spark, finance).run("nothing", "2026-01")
    assert record["status"] == "completed" and record["outputs"][0]["rows"] == 0
    rows = _by_measure(record, 1)
    assert set(rows) == {"count", "SUM(amount_local)", "SUM(amount_reporting)"}
    for row in rows.values():  # never numbers made up: the input's figures were not computed by the run
        assert row["input"] is None and row["output_value"] is None and row["changes"] == []
        assert row["not_measured"].endswith(observations.OPTIMISED_AWAY), row
    assert len(slept) * observations.POLL < 1.0, slept

"""`ledgerflow run --all` and `run --select` on Spark: the close chain of the finance sample end to end (issue 12).

close_conversion registers close_converted, close_consolidation reads it and registers
close_consolidated, close_reporting reads that. The workspaces are copies of projects/finance; the first
test keeps only the chain (the eight TS projects are run by their own tests, and `--all` treats them
like any independent project: the second test runs one beside the chain).
"""
from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

from cli_support import cli, describe, edit, read_output
from ledgerflow.adapters.store.runstore import RunStore

REGION = {"CC-100": "AMER", "CC-200": "EMEA", "CC-300": "EMEA", "CC-400": "AMER"}
TYPES = {"total_reporting": "decimal(38,2)", "report_line": "string", "region": "string", "account_type": "string"}


def _records(ws) -> dict[str, dict]:
    """The newest run record of each project."""
    out: dict[str, dict] = {}
    for rec in RunStore(str(ws)).list_runs():  # newest first
        out.setdefault(rec["project"]["name"], rec)
    return out


def test_run_all_runs_the_chain_in_order_each_reading_what_its_upstream_registered(spark, finance):
    for f in [*(finance / "projects").glob("ts0*.yml"), finance / "projects" / "journal_controls.yml"]:
        f.unlink()
    result = cli(finance, "run", "--all", "--period", "2026-01")
    assert result.exit_code == 0, describe(result)
    out = result.stdout
    assert out.index("[1/3] close_conversion") < out.index("[2/3] close_consolidation") < out.index("[3/3] close_reporting")
    summary = out[out.index("Summary for period 2026-01:"):].splitlines()
    assert summary[1].split() == ["project", "status", "rows", "seconds", "run", "/", "reason"]
    assert [line.split()[:3] for line in summary[2:5]] == [
        ["close_conversion", "completed", "10"], ["close_consolidation", "completed", "8"],
        ["close_reporting", "completed", "8"]]
    assert summary[5].strip() == "3 completed, 0 failed, 0 skipped"

    recs = _records(finance)
    conversion, consolidation, reporting = (recs[n] for n in ("close_conversion", "close_consolidation",
                                                             "close_reporting"))
    assert all(r["status"] == "completed" for r in (conversion, consolidation, reporting))
    registered = conversion["outputs"][0]
    assert (registered["registered_dataset"], registered["registered_version"]) == ("close_converted", 1)
    assert "upstream_runs" not in conversion
    assert consolidation["upstream_runs"] == [{"dataset": "close_converted", "version": 1,
                                               "run_id": conversion["run_id"], "project": "close_conversion"}]
    assert consolidation["resolver_snapshot"]["input_dataset_version"] == 1
    assert reporting["upstream_runs"] == [{"dataset": "close_consolidated", "version": 1,
                                           "run_id": consolidation["run_id"], "project": "close_consolidation"}]

    # the numbers flow through: reporting's totals are the converted lines summed by region and account type
    _, lines = read_output(spark, conversion, 3, TYPES)
    expected: dict = defaultdict(lambda: [Decimal(0), 0])
    for row in lines:
        key = (REGION[row["cost_center_code"]], row["account_type"])
        expected[key][0] += row["amount_reporting"]
        expected[key][1] += 1
    _, report = read_output(spark, reporting, 2, TYPES)
    got = {(r["region"], r["account_type"]): [r["total_reporting"], r["line_count"]] for r in report}
    assert got == dict(expected)
    assert sum(n for _, n in got.values()) == 10
    assert {r["report_line"] for r in report} == {f"{region} {kind.upper()}" for region, kind in expected}


def test_a_failure_in_the_middle_skips_its_downstream_and_the_rest_goes_on(spark, finance):
    # a second CC-100 row: the join of close_consolidation matches two rows and its fan-out guard fails on Spark
    edit(finance, "data/cost_centers/v1/cost_centers.csv", "CC-100,Sales NA,Sales,AMER,true,2026-01\n",
         "CC-100,Sales NA,Sales,AMER,true,2026-01\nCC-100,Sales NA (copy),Sales,AMER,true,2026-01\n")
    result = cli(finance, "run", "--select", "+close_reporting ts01_output_only", "--period", "2026-01")
    assert result.exit_code == 3, describe(result)
    summary = result.stdout[result.stdout.index("Summary for period 2026-01:"):].splitlines()
    rows = {line.split()[0]: line for line in summary[2:6]}
    assert rows["close_conversion"].split()[1:3] == ["completed", "10"]
    assert rows["close_consolidation"].split()[1:3] == ["failed", "-"]
    assert "close_reporting" in rows and rows["close_reporting"].split()[1:3] == ["skipped", "-"]
    assert "upstream project 'close_consolidation' failed" in rows["close_reporting"]
    assert rows["ts01_output_only"].split()[1:3] == ["completed", "10"]
    assert summary[6].strip() == "2 completed, 1 failed, 1 skipped"
    assert "1 of 4 projects failed (close_consolidation); 1 skipped" in result.stderr

    recs = _records(finance)
    assert recs["close_consolidation"]["status"] == "failed"
    assert recs["close_consolidation"]["run_id"] in rows["close_consolidation"]
    assert "close_reporting" not in recs  # never started
    assert recs["ts01_output_only"]["status"] == "completed"
    store = RunStore(str(finance))
    assert [r["version"] for r in store.registrations("close_converted")] == [1]
    assert store.registrations("close_consolidated") == []  # the failed run's reservation was released

"""``run ... --results FILE`` (issue 47 point 3): the invocation's project x period results as JSON, whatever the
exit code; a bad path refused before anything runs."""
from __future__ import annotations

import json

from cli_support import cli, describe

TS03 = "ts03_fx_conversion"


def test_results_of_a_range_a_failed_run_and_a_refused_invocation(spark, finance, tmp_path):
    path = tmp_path / "results.json"
    ok = cli(finance, "run", TS03, "--period", "2026-01..2026-02", "--results", str(path), "--mode", "each")
    assert ok.exit_code == 0, describe(ok)
    doc = json.loads(path.read_text())
    assert (doc["results_version"], doc["command"], doc["exit_code"], doc["error"], doc["env"]) == (1, "run", 0, None,
                                                                                                   "prod")
    assert [(r["project"], r["period"], r["status"]) for r in doc["results"]] == [
        (TS03, "2026-01", "completed"), (TS03, "2026-02", "completed")]
    first = doc["results"][0]
    assert first["run_id"] and first["batch_id"] == doc["batch_ids"][0]
    assert first["outputs"][0]["rows"] == 10 and first["outputs"][0]["location"].endswith("_period=2026-01")
    # the record's figures, each with its output and group (input_value was always null before)
    assert (2, None, "count", 10, 10) in [(b["output"], b["group"], b["measure"], b["input_value"],
                                                b["output_value"]) for b in first["bridge"]], first["bridge"]
    assert first["timings"]["total_s"] > 0

    # a check that fails: nothing published (exit 4), and the results say which check and why
    project = finance / "projects" / "journal_controls.yml"
    project.write_text(project.read_text().replace("row_count: {min: 1}", "row_count: {min: 100000}"))
    failed = cli(finance, "run", "journal_controls", "--period", "2026-01", "--results", str(path))
    assert failed.exit_code == 4, describe(failed)
    doc = json.loads(path.read_text())
    assert doc["exit_code"] == 4 and doc["error"] and len(doc["results"]) == 1, doc
    entry = doc["results"][0]
    assert (entry["project"], entry["period"], entry["status"]) == ("journal_controls", "2026-01", "failed")
    assert {c["name"]: c["status"] for c in entry["checks"]}["some_lines"] == "failed", entry["checks"]

    # refused before any batch began (a bad period): still the document, with its exit code and no result
    refused = cli(finance, "run", TS03, "--period", "2026-13", "--results", str(path))
    assert refused.exit_code == 2, describe(refused)
    doc = json.loads(path.read_text())
    assert doc["exit_code"] == 2 and doc["results"] == [] and "2026-13" in doc["error"]


def test_a_results_path_ledgerflow_did_not_write_is_refused_before_anything_runs(finance, tmp_path):
    mine = tmp_path / "mine.json"
    mine.write_text('{"keep": 1}')
    for target in (mine, tmp_path):
        refused = cli(finance, "run", TS03, "--period", "2026-01", "--results", str(target))
        assert refused.exit_code == 1 and "RESULTS-001" in refused.stderr, describe(refused)
    assert mine.read_text() == '{"keep": 1}'
    assert not (finance / ".ledgerflow").exists()  # nothing ran


def test_a_missing_folder_is_refused_and_a_usage_error_still_writes_the_results(finance, tmp_path):
    missing = tmp_path / "no" / "such" / "results.json"
    refused = cli(finance, "run", TS03, "--period", "2026-01", "--results", str(missing))
    assert refused.exit_code == 1 and "RESULTS-001" in refused.stderr and "does not exist" in refused.stderr, \
        describe(refused)
    assert not missing.parent.exists() and not (finance / ".ledgerflow").exists()  # nothing ran
    path = tmp_path / "usage.json"
    usage = cli(finance, "run", TS03, "--select", TS03, "--period", "2026-01", "--results", str(path))
    assert usage.exit_code == 2, describe(usage)
    doc = json.loads(path.read_text())
    assert doc["exit_code"] == 2 and doc["results"] == [] and "exactly one of PROJECT" in doc["error"], doc


def test_an_interrupted_run_is_listed_interrupted():
    from ledgerflow.adapters.run.results_file import _entry
    rec = {"status": "failed", "run_id": "r", "error": "interrupted: KeyboardInterrupt in the process that ran it"}
    assert _entry(TS03, "2026-01", rec)["status"] == "interrupted"
    assert _entry(TS03, "2026-01", dict(rec, error="CHECK-001 ..."))["status"] == "failed"

"""A restatement on the docs site and in ``runs list`` (issue 43 point 8), and ``docs --out`` on a place a real run
published into (issue 43 point 5, the red team's case), on real runs of the sample: TS-03 runs January, January
is closed, the GBP closing rate is corrected and the period restated (as tests/test_restate.py does)."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from cli_support import cli, describe, edit, record, run_id_of
from conftest import copy_workspace
from docs_site_support import page_data, page_of
from partition_support import shown

PROJECT, PERIOD = "ts03_fx_conversion", "2026-01"
REASON = "GBP closing rate corrected"


@pytest.fixture(scope="module")
def restated(spark, tmp_path_factory) -> dict:
    """The workspace after TS-03's January ran, was closed and restated by bob; the two runs' records."""
    ws = copy_workspace("finance", tmp_path_factory.mktemp("restated") / "finance")
    first = cli(ws, "run", PROJECT, "--period", PERIOD)
    assert first.exit_code == 0, describe(first)
    closed = cli(ws, "periods", "close", PERIOD, "--project", PROJECT, "--by", "alice", "--note", "reported")
    assert closed.exit_code == 0, describe(closed)
    edit(ws, "data/exchange_rates/v1/exchange_rates.csv", "GBP,USD,1.2710,closing,2026-01-01,",
         "GBP,USD,1.2800,closing,2026-01-01,")
    again = cli(ws, "restate", PROJECT, "--period", PERIOD, "--reason", REASON, "--by", "bob")
    assert again.exit_code == 0, describe(again)
    return {"ws": ws, "old": record(ws, run_id_of(first)), "new": record(ws, run_id_of(again))}


def _tree(root: Path) -> dict[str, str]:
    """Every file under ``root``: path -> sha256 of its content."""
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*") if p.is_file()}


def test_a_restatement_is_on_its_run_page_the_superseded_run_the_period_and_the_search(restated):
    ws, old, new = restated["ws"], restated["old"], restated["new"]
    result = cli(ws, "docs")
    assert result.exit_code == 0, describe(result)
    site = ws / "target" / "docs"

    page = page_data(site, page_of(site, "run", new["run_id"]))
    block = page["restatement"]
    assert (block["reason"], block["by"], block["supersedes_run_id"], block["published"]) == (
        REASON, "bob", old["run_id"], True)
    assert block["supersedes_href"] == page_of(site, "run", old["run_id"])
    assert (site / block["supersedes_href"]).is_file()
    # the data diff as the record holds it, every field (the page draws whatever it finds)
    assert block["data_diff"] == new["restatement"]["data_diff"]
    [diff] = block["data_diff"]["outputs"]
    assert diff["rows"]["changed"] == 2 and any(t["column"] == "amount_reporting" for t in diff["totals"])
    assert block["superseded_outputs"] == new["restatement"]["superseded_outputs"] != []

    superseded = page_data(site, page_of(site, "run", old["run_id"]))
    assert superseded["restatement"] is None
    assert [(s["run_id"], s["reason"], s["by"], s["href"]) for s in superseded["superseded_by"]] == [
        (new["run_id"], REASON, "bob", page_of(site, "run", new["run_id"]))]

    runs = page_data(site, "runs.html")
    [period] = [p for p in runs["periods"] if (p["project"], p["period"]) == (PROJECT, PERIOD)]
    assert period["state"] == "closed" and period["published_run"] == new["run_id"]
    assert [(r["run_id"], r["reason"], r["by"], r["supersedes_run_id"], r["supersedes_href"])
            for r in period["restatements"]] == [
        (new["run_id"], REASON, "bob", old["run_id"], page_of(site, "run", old["run_id"]))]
    summaries = {r["run_id"]: r for r in runs["runs"]}
    assert summaries[new["run_id"]]["restatement"]["reason"] == REASON
    assert [s["run_id"] for s in summaries[old["run_id"]]["superseded_by"]] == [new["run_id"]]
    project = page_data(site, page_of(site, "project", PROJECT))
    assert {r["run_id"]: bool(r["restatement"]) for r in project["runs"]} == {new["run_id"]: True, old["run_id"]: False}

    index = page_data(site, "index.html")
    found = [e for e in index["search"] if "restat" in e["text"]]
    assert [(e["href"], e["kind"]) for e in found] == [(page_of(site, "run", new["run_id"]), "restatement")]
    assert "gbp closing rate" in found[0]["text"] and "bob" in found[0]["text"]


def test_runs_list_marks_the_restatement_and_the_run_it_superseded(restated):
    ws, old, new = restated["ws"], restated["old"], restated["new"]
    result = cli(ws, "runs", "list")
    assert result.exit_code == 0, describe(result)
    lines = {line.split()[0]: line for line in result.stdout.splitlines()}
    assert f"restatement of {old['run_id']} by bob: '{REASON}'" in lines[new["run_id"]]
    assert f"superseded by restatement {new['run_id']}" in lines[old["run_id"]]
    assert "restatement" not in lines[old["run_id"]].replace(f"superseded by restatement {new['run_id']}", "")


def test_docs_out_on_a_published_destination_or_the_run_store_deletes_nothing(restated):
    ws, new = restated["ws"], restated["new"]
    destination = ws / "data" / "ts03_fx_converted"  # the resolver's folder of every version of the output
    assert Path(shown(new["outputs"][0]["location"])).is_relative_to(shown(destination))
    before = _tree(ws)
    for out, relation in ((destination, "is"), (ws / "target", "holds"), (ws / "data", "holds")):
        for _ in range(2):  # the red team's second `docs` deleted what the first one had not
            result = cli(ws, "docs", "--out", str(out))
            assert result.exit_code == 2, describe(result)
            assert f"--out {out} {relation} " in result.stderr and "Nothing was written or deleted" in result.stderr
            assert _tree(ws) == before
    for rec in (restated["old"], new):  # the closed period's versions and both run records are all still there
        assert os.path.isdir(rec["outputs"][0]["location"])
        assert (ws / "target" / "runs" / rec["run_id"] / "run.json").is_file()

"""``ledgerflow docs`` (issue 32 point 1, docs/docs-site.md): the site of the sample workspace holds what the
compiler and the run store know, page by page; each page's data is its own script. The pages as drawn in a
browser: tests/test_docs_site_browser.py; bad input: tests/test_docs_site_out.py."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from docs_site_support import REPO, docs, page_data, page_of, sample_copy, with_runs

from ledgerflow.adapters.docs_site import ids
from ledgerflow.adapters.store.runstore import RunStore


def test_sample_site_has_the_workspace_graph(tmp_path):
    root = sample_copy(tmp_path)
    result = docs(root)
    assert result.exit_code == 0, result.output
    site = root / "target" / "docs"
    assert f"Wrote the docs site to {site}" in result.output
    assert (site / "index.html").is_file() and (site / ".ledgerflow-docs").is_file()
    index = page_data(site, "index.html")
    assert index["workspace"] == "finance"
    assert len(index["nodes"]) == 19 and len(index["edges"]) == 23  # as `ledgerflow dag --format json` has them
    by_id = {n["id"]: n for n in index["nodes"]}
    assert by_id["project:ts03_fx_conversion"]["href"] == page_of(site, "project", "ts03_fx_conversion")
    assert by_id["dataset:close_converted"]["kind"] == "dataset"
    assert {"from": "project:close_conversion", "to": "dataset:close_converted", "role": "output"} in index["edges"]
    assert {"from": "dataset:exchange_rates", "to": "project:ts03_fx_conversion", "role": "join"} in index["edges"]
    assert index["errors"] == []
    # every node's page exists, with its shell loading its own data script
    for node in index["nodes"]:
        shell = (site / node["href"]).read_text()
        data_script = "data/" + node["href"][:-len(".html")] + ".js"
        assert f'src="../{data_script}"' in shell and (site / data_script).is_file()
        assert "http://" not in shell and "https://" not in shell


def test_project_page_has_operations_sql_outputs_checks_and_tests(tmp_path):
    root = sample_copy(tmp_path)
    assert docs(root).exit_code == 0
    site = root / "target" / "docs"
    ts03 = page_data(site, page_of(site, "project", "ts03_fx_conversion"))
    assert [(o["seq"], o["kind"], o["first_line"], o["last_line"]) for o in ts03["operations"]] == [
        (1, "update", 8, 18), (2, "output", 19, 23)]
    assert ts03["source"][1] == "name: ts03_fx_conversion"
    assert ts03["sql"].startswith("-- ledgerflow") and "transactions.amount_local * fx.fx__rate" in ts03["sql"].replace("`", "")
    assert [o["name"] for o in ts03["outputs"]] == ["ts03_fx_converted"]
    columns = {c["name"]: c for c in ts03["outputs"][0]["columns"]}
    assert columns["amount_reporting"]["type"] == "decimal(18,2)"
    assert columns["amount_reporting"]["lineage_href"].startswith(page_of(site, "lineage", "ts03_fx_conversion") + "#c=")
    assert [t["name"] for t in ts03["tests"]] and all(t["file"].startswith("tests") for t in ts03["tests"])
    controls = page_data(site, page_of(site, "project", "journal_controls"))
    assert [(c["name"], c["kind"], c["on"]) for c in controls["checks"]][:2] == [
        ("journals_balance", "balanced", "3"), ("one_row_per_line", "unique", "3")]
    assert controls["tests"][0]["file"] == os.path.join("tests", "journal_controls.yml")


def test_lineage_page_names_each_input_and_its_kind_across_registered_datasets(tmp_path):
    root = sample_copy(tmp_path)
    assert docs(root).exit_code == 0
    site = root / "target" / "docs"
    ts03 = page_data(site, page_of(site, "lineage", "ts03_fx_conversion"))
    column = next(c for c in ts03["columns"] if c["column"] == "amount_reporting")
    inputs = {(i["dataset"], i["column"], i["kind"]) for i in column["inputs"]}
    assert {("gl", "amount_local", "transformation"), ("exchange_rates", "rate", "transformation"),
            ("gl", "currency", "join"), ("exchange_rates", "from_currency", "join")} <= inputs
    assert ts03["kinds"]["join"] == "read in a runtime join's condition"
    reporting = page_data(site, page_of(site, "lineage", "close_reporting"))
    total = next(c for c in reporting["columns"] if c["column"] == "total_reporting")
    crossed = [i for i in total["inputs"] if i["dataset"] == "gl" and i["column"] == "amount_local"]
    assert crossed and crossed[0]["via"] == ["close_consolidation.3 -> close_consolidated",
                                             "close_conversion.3 -> close_converted"]
    assert crossed[0]["href"] == ids.dataset_page("gl")


def test_dataset_page_has_columns_versions_resolver_and_readers(tmp_path):
    root = sample_copy(tmp_path)
    assert docs(root).exit_code == 0
    site = root / "target" / "docs"
    gl = page_data(site, page_of(site, "dataset", "gl"))
    assert gl["temporal_mode"] == "period" and gl["declared"] and gl["table"] == "transactions"
    assert ("amount_local", "decimal(18,2)") in [(c["name"], c["type"]) for c in gl["columns"]]
    assert [v["version"] for v in gl["versions"]] == [1]
    assert gl["resolver"]["name"] == "local" and gl["resolver"]["rules"][0]["type"] == "path"
    readers = {r["project"]: r["roles"] for r in gl["readers"]}
    assert readers["ts03_fx_conversion"] == ["input"] and len(readers) == 9
    registered = page_data(site, page_of(site, "dataset", "close_converted"))
    assert registered["registered"] and registered["versions"] == []
    assert [p["project"] for p in registered["producers"]] == ["close_conversion"]


def test_runs_and_periods_from_the_run_store(tmp_path):
    root = sample_copy(tmp_path)
    records = with_runs(root)
    assert docs(root).exit_code == 0
    site = root / "target" / "docs"
    runs = page_data(site, "runs.html")
    assert {(r["project"], r["period"], r["status"]) for r in runs["runs"]} == {
        ("journal_controls", "2026-01", "completed"), ("close_conversion", "2026-01", "completed")}
    closed = next(p for p in runs["periods"] if p["project"] == "journal_controls")
    assert (closed["state"], closed["closure"]["by"], closed["closure"]["note"]) == ("closed", "ana", "reported")
    assert closed["published_run"] == records[0]["run_id"]
    # the records' inputs were read at /workspace/..., which this copy does not have: stale, saying why
    assert closed["stale"] and any("dataset 'gl' v1" in r and "no longer exists" in r for r in closed["stale_reasons"])
    converted = page_data(site, page_of(site, "dataset", "close_converted"))
    assert [(v["version"], v["periods"], v["run_id"]) for v in converted["versions"]] == [
        (1, ["2026-01"], records[1]["run_id"])]
    assert converted["versions"][0]["run_href"] == page_of(site, "run", records[1]["run_id"])
    assert ("amount_reporting", "decimal(18,2)") in [(c["name"], c["type"]) for c in converted["columns"]]
    run = page_data(site, page_of(site, "run", records[0]["run_id"]))
    assert run["status"] == "completed" and run["rows"] == 10
    assert [(i["role"], i["dataset"], i["version"]) for i in run["inputs"]] == [("input", "gl", 1), ("join [1] acct", "accounts", 2)]
    assert [(t["name"], t["kind"]) for t in run["timings"]] == [
        ("load_inputs", "load"), ("lf_stage_1", "stage"), ("output_003", "output"), ("write output 3", "write")]
    assert run["timings"][3]["seconds"] == 13.11
    assert [c["status"] for c in run["checks"]] == ["passed"] * 7
    assert run["bridge"][1]["measure"] == "SUM(amount_local)" and run["bridge"][1]["output_value"] == "5074000.00"
    project = page_data(site, page_of(site, "project", "journal_controls"))
    assert [r["run_id"] for r in project["runs"]] == [records[0]["run_id"]]
    index = page_data(site, "index.html")
    assert index["runs"] == 2


def test_docs_imports_no_pyspark(tmp_path):
    root = sample_copy(tmp_path)
    code = ("import sys; from ledgerflow.adapters.cli import main\n"
            "try:\n    main(['--workspace', sys.argv[1], 'docs'])\nexcept SystemExit as e:\n    code = e.code\n"
            "print('pyspark' in sys.modules or any(m.startswith('pyspark.') for m in sys.modules), code)")
    done = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, cwd=REPO)
    assert done.stdout.strip().splitlines()[-1] == "False 0", done.stdout + done.stderr
    assert (root / "target" / "docs" / "index.html").is_file()


def test_every_static_file_is_package_data():
    import fnmatch
    import tomllib
    globs = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"][
        "ledgerflow.adapters.docs_site"]
    package = REPO / "adapters" / "docs_site"
    files = [str(p.relative_to(package)) for p in (package / "static").rglob("*") if p.is_file()]
    assert len(files) >= 18
    assert [f for f in files if not any(fnmatch.fnmatch(f, g) for g in globs)] == []


def test_vendored_libraries_ship_with_their_licences():
    vendor = REPO / "adapters" / "docs_site" / "static" / "vendor"
    names = {p.name for p in vendor.iterdir()}
    assert {"cytoscape.min.js", "cytoscape-dagre.min.js", "highlight.min.js", "LICENSE.cytoscape",
            "LICENSE.cytoscape-dagre", "LICENSE.dagre", "LICENSE.graphlib", "LICENSE.highlight.js"} <= names
    versions = (vendor / "VERSIONS.txt").read_text()
    script = (REPO / "scripts" / "update-docs-vendor.sh").read_text()
    for pin in ("CYTOSCAPE=3.35.0", "CYTOSCAPE_DAGRE=4.0.1", "HIGHLIGHT=11.12.0"):
        assert pin in script and pin.split("=")[1] in versions
    assert sum(p.stat().st_size for p in vendor.iterdir()) < 1_000_000  # minified builds only
    for js in vendor.glob("*.js"):
        assert "sourceMappingURL" not in js.read_text()[-300:]  # a page from disk requests nothing it lacks


# A restatement's data diff as a later version might record it: the fields of today's format and more (a gross
# change per total, how rows were matched, a field beside the outputs); the site draws every one of them.
DATA_DIFF = {"outputs": [{"name": "Write journal lines", "seq": 3, "status": "compared",
                          "matched_by": "journal_id, line_number",
                          "rows": {"base": 10, "head": 10, "added": 0, "removed": 0, "changed": 2},
                          "columns": [{"column": "amount_local", "changed_rows": 2}],
                          "totals": [{"column": "amount_local", "base": "100.00", "head": "100.00", "change": "0.00",
                                      "gross_change": "136.00"}],
                          "samples": [{"status": "changed", "row_id": "r1",
                                       "changes": {"amount_local": ["68.00", "136.00"]}}]}],
             "ignored_columns": ["_updated_at"], "report": "restatement"}


def _restated(root, records) -> dict:
    """A completed restatement of journal_controls' closed 2026-01 (superseding the recorded run), saved through
    the run store's API as `ledgerflow restate` saves it."""
    old = records[0]
    new = json.loads(json.dumps(old))
    new.update(run_id=old["run_id"][:-4] + "beef", started_at="2026-12-01T09:00:00.000",
               finished_at="2026-12-01T09:01:00.000")
    new["restatement"] = {"reason": "JE-007 posted to <the wrong> account", "by": "bob",
                          "supersedes_run_id": old["run_id"],
                          "superseded_outputs": [{"operation_seq": 3, "name": "Write journal lines",
                                                  "location": "/workspace/out/journal_lines/_period=2026-01",
                                                  "version_folder": "/workspace/out/journal_lines/.v/1",
                                                  "format": "parquet", "rows": 10}],
                          "emptied_outputs": [], "data_diff": DATA_DIFF}
    RunStore(str(root)).save_run(new)
    return new


def _drawn(site, page: str) -> dict:
    """The page as its scripts draw it (tests/docs_site_dom.js, in Node): its text, links and sections."""
    assert shutil.which("node"), "this test runs the page's scripts in Node: apt-get install -y nodejs (.ci/run does)"
    done = subprocess.run(["node", str(REPO / "tests" / "docs_site_dom.js"), str(site), page], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_restatement_is_drawn_on_its_page_with_every_field_of_its_data_diff(tmp_path):
    root = sample_copy(tmp_path)
    records = with_runs(root)
    new = _restated(root, records)
    assert docs(root).exit_code == 0
    site = root / "target" / "docs"
    old_page, new_page = page_of(site, "run", records[0]["run_id"]), page_of(site, "run", new["run_id"])
    data = page_data(site, new_page)
    assert data["restatement"]["data_diff"] == DATA_DIFF  # as the record holds it, fields it does not know included
    drawn = _drawn(site, new_page)
    assert "restatement" in drawn["sections"]
    assert "Reason: JE-007 posted to <the wrong> account. By: bob." in drawn["text"]
    assert ["../" + old_page, "run " + records[0]["run_id"]] in drawn["links"]
    for shown in ("matched_by: journal_id, line_number", "gross_change", "136.00", "ignored_columns: _updated_at",
                  "report: restatement", "changed_rows", "/workspace/out/journal_lines/.v/1"):
        assert shown in drawn["text"], shown
    superseded = _drawn(site, old_page)
    assert "superseded" in superseded["sections"] and ["../" + new_page, "run " + new["run_id"]] in superseded["links"]
    runs = _drawn(site, "runs.html")
    assert [new_page, "restatement " + new["run_id"]] in runs["links"]
    assert "by bob: JE-007 posted to <the wrong> account; superseding " in runs["text"]
    assert f"restatement of {records[0]['run_id']} by bob" in runs["text"]
    assert f"superseded by restatement {new['run_id']}" in runs["text"]
    index = page_data(site, "index.html")
    assert [e["href"] for e in index["search"] if "restat" in e["text"]] == [new_page]

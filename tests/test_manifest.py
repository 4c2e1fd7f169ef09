"""``ledgerflow manifest`` (issue 47 point 2, docs/manifest.md): the workspace as one JSON document valid against
docs/manifest.schema.json, the same bytes every time, without a JVM; bad --out refused with nothing written."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import jsonschema

from cli_support import add_checked_copy, cli, describe
from conftest import REPO

SCHEMA = json.loads((REPO / "docs" / "manifest.schema.json").read_text())


def test_the_sample_manifest_is_valid_and_holds_projects_outputs_dependencies_checks_and_tests(finance):
    result = cli(finance, "manifest")
    assert result.exit_code == 0, describe(result)
    manifest = json.loads(result.stdout)
    jsonschema.validate(manifest, SCHEMA)
    projects = manifest["projects"]
    assert len(projects) == len(list((finance / "projects").glob("*.yml")))
    consolidation = projects["close_consolidation"]
    assert consolidation["depends_on"] == ["close_conversion"]
    assert {"dataset": "close_converted", "role": "input", "registered": True} in consolidation["reads"]
    out = consolidation["outputs"][0]
    assert (out["registers"], out["destination"]["kind"], out["destination"]["target"]) == (
        "close_consolidated", "table", "close_consolidated")
    assert {"name": "total_reporting", "type": "decimal(28,2)"} in out["columns"]
    compiled = cli(finance, "compile", "close_consolidation")
    assert consolidation["sql_sha256"] == hashlib.sha256(compiled.stdout.encode()).hexdigest()
    journal = projects["journal_controls"]
    assert len(journal["checks"]) == 7 and journal["tests"], journal
    assert manifest["datasets"]["close_converted"]["registered_by"] == ["close_conversion"]
    assert "close_consolidation" in manifest["datasets"]["close_converted"]["read_by"]
    assert cli(finance, "manifest").stdout == result.stdout  # the same bytes every time


def test_manifest_starts_no_jvm_and_out_replaces_only_its_own_file(finance, tmp_path):
    out = tmp_path / "manifest.json"
    code = ("import sys; from ledgerflow.adapters.cli import main\n"
            "try:\n    main(['--workspace', sys.argv[1], 'manifest', '--out', sys.argv[2]])\n"
            "except SystemExit as e:\n    code = e.code\n"
            "print('pyspark' in sys.modules or any(m.startswith('pyspark.') for m in sys.modules), code)")
    for _ in range(2):  # the second replaces the manifest the first wrote
        done = subprocess.run([sys.executable, "-c", code, str(finance), str(out)], capture_output=True, text=True,
                              cwd=REPO)
        assert done.stdout.strip().splitlines()[-1] == "False 0", done.stdout + done.stderr
    jsonschema.validate(json.loads(out.read_text()), SCHEMA)
    other = tmp_path / "notes.json"
    other.write_text('{"mine": true}')
    for target in (other, tmp_path, tmp_path / "missing" / "manifest.json"):
        refused = cli(finance, "manifest", "--out", str(target))
        assert refused.exit_code == 1 and "MANIFEST-001" in refused.stderr, describe(refused)
        assert refused.stderr.strip().count("\n") == 0, refused.stderr  # one paragraph, no traceback
    assert other.read_text() == '{"mine": true}' and not (tmp_path / "missing").exists()


def test_a_project_with_errors_is_in_the_manifest_with_them_and_exit_1(finance):
    bad = finance / "projects" / "ts03_fx_conversion.yml"
    bad.write_text(bad.read_text().replace("transactions.amount_local * fx.rate", "transactions.no_such_column"))
    result = cli(finance, "manifest")
    assert result.exit_code == 1, describe(result)
    manifest = json.loads(result.stdout)
    jsonschema.validate(manifest, SCHEMA)
    broken = manifest["projects"]["ts03_fx_conversion"]
    assert broken["errors"] and broken["sql_sha256"] is None and "no_such_column" in json.dumps(broken["errors"])
    assert manifest["projects"]["ts01_output_only"]["errors"] == []


def test_the_manifest_is_kept_and_a_stale_one_is_never_used(finance, monkeypatch):
    """The second manifest comes from target/manifest.cache.json; a change to any workspace file, a damaged cache
    file or a link at its name is never mistaken for it."""
    from ledgerflow.adapters.manifest import build
    first = cli(finance, "manifest")
    assert first.exit_code == 0 and (finance / "target" / "manifest.cache.json").is_file()

    def refuse(ws):
        raise AssertionError("built again")
    with monkeypatch.context() as m:
        m.setattr(build, "build_manifest", refuse)
        assert cli(finance, "manifest").stdout == first.stdout  # kept: nothing built
    project = finance / "projects" / "ts03_fx_conversion.yml"
    project.write_text(project.read_text().replace("description: TS-03.", "description: changed after the manifest "
                                                   "was kept. TS-03.", 1))
    changed = json.loads(cli(finance, "manifest").stdout)
    assert changed["projects"]["ts03_fx_conversion"]["description"].startswith("changed after the manifest was kept")
    test_file = next((finance / "tests").glob("*.yml"))
    test_file.write_text(test_file.read_text() + "\n# a comment changes the file, so the key\n")
    cache = finance / "target" / "manifest.cache.json"
    key = json.loads(cache.read_text())["key"]
    assert cli(finance, "manifest").exit_code == 0 and json.loads(cache.read_text())["key"] != key
    cache.write_text('{"key": "')  # damaged: built again and rewritten
    assert json.loads(cli(finance, "manifest").stdout)["projects"]["ts03_fx_conversion"]["description"]
    assert json.loads(cache.read_text())["key"]
    cache.unlink()
    elsewhere = finance.parent / "elsewhere.json"
    elsewhere.write_text("{}")
    cache.symlink_to(elsewhere)  # a link at its name: neither followed nor replaced
    assert cli(finance, "manifest").exit_code == 0 and elsewhere.read_text() == "{}" and cache.is_symlink()


def test_each_check_names_the_output_the_compiler_bound_it_to(finance):
    """A check's ``on`` may name an output by seq, by name or by what it writes or registers: the manifest gives the
    output the compiler bound (``output_seq``), so a reader (Dagster) never guesses; a check of the input has none."""
    add_checked_copy(finance)
    result = cli(finance, "manifest")
    assert result.exit_code == 0, describe(result)
    manifest = json.loads(result.stdout)
    jsonschema.validate(manifest, SCHEMA)
    judged = {c["name"]: c["output_seq"] for c in manifest["projects"]["journal_controls"]["checks"]}
    assert judged["copy_has_lines"] == 4 and judged["copy_by_name"] == 4
    assert judged["journals_balance"] == 3 and judged["lines_numbered"] is None

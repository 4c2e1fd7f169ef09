"""What a review of the kept scripts, the kept manifest and the files ledgerflow writes found, each shown failing
before its mend: a key made from the files as the load parsed them (an edit made during a build is never kept
under the edited content's key), the libraries that shape SQL in the key, no write through a link planted at a
temporary or output name, no kept manifest read through a linked ``target/``, and periods in ASCII digits only."""
from __future__ import annotations

import hashlib
import json
import os

import pytest

from cli_support import cli, describe
from ledgerflow.adapters.compile_out import script_cache
from ledgerflow.adapters.manifest import build as manifest_build
from ledgerflow.compiler.compile import plan_project
from ledgerflow.compiler.periods import PeriodError, parse_period
from ledgerflow.compiler.workspace import load_workspace

TS03 = os.path.join("projects", "ts03_fx_conversion.yml")


def test_a_projects_key_is_the_text_the_load_parsed_not_the_file_read_again(finance):
    ws = load_workspace(str(finance))
    project = ws.find_project("ts03_fx_conversion")
    plan = plan_project(ws, project)
    before = script_cache.project_key(ws, project, plan)
    path = finance / TS03
    path.write_text(path.read_text().replace("fx_converted", "fx_edited"))  # an edit after the load
    assert script_cache.project_key(ws, project, plan) == before
    fresh = load_workspace(str(finance))
    edited = fresh.find_project("ts03_fx_conversion")
    assert script_cache.project_key(fresh, edited, plan_project(fresh, edited)) != before


def test_a_manifest_built_while_a_file_changed_is_not_kept(finance, monkeypatch):
    """The file is edited after the cache's key was taken and before the workspace loads: the manifest built
    from the edited file is not kept under the key of the file as it was."""
    from ledgerflow.adapters.manifest import cache
    path = finance / TS03
    original = path.read_text()

    def edited_meanwhile(root, key):
        path.write_text(original.replace("fx_converted", "fx_edited"))
        return None
    monkeypatch.setattr(cache, "read", edited_meanwhile)
    first = cli(finance, "manifest")
    assert first.exit_code == 0, describe(first)
    monkeypatch.undo()
    path.write_text(original)  # back as it was when the key was taken
    compiled = cli(finance, "compile", "ts03_fx_conversion")
    again = cli(finance, "manifest")
    sha = json.loads(again.stdout)["projects"]["ts03_fx_conversion"]["sql_sha256"]
    assert sha == hashlib.sha256(compiled.stdout.encode()).hexdigest()


def test_the_libraries_that_shape_sql_are_in_the_key(monkeypatch):
    import sqlglot
    base = script_cache.code_fingerprint.__wrapped__()
    monkeypatch.setattr(sqlglot, "__version__", "0.0.1")
    assert script_cache.code_fingerprint.__wrapped__() != base


def test_no_write_goes_through_a_link_planted_at_a_temporary_or_output_name(finance, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (finance / "target").mkdir(exist_ok=True)
    for name in ("manifest.cache.json", "compiled.cache.json"):  # the names a temporary file had
        for pid in range(os.getpid() - 5, os.getpid() + 200):
            os.symlink(victim, finance / "target" / f"{name}.{pid}.tmp")
    assert cli(finance, "manifest").exit_code == 0
    out = tmp_path / "sql"
    (out / "ts01_output_only").mkdir(parents=True)
    os.symlink(victim, out / "ts01_output_only" / "ts01_output_only.sql")
    written = cli(finance, "compile", "ts01_output_only", "--out", str(out))
    assert written.exit_code == 0, describe(written)
    assert victim.read_text() == "precious"
    assert not os.path.islink(out / "ts01_output_only" / "ts01_output_only.sql")


def test_a_kept_manifest_is_never_read_through_a_linked_target(finance, tmp_path):
    assert cli(finance, "manifest").exit_code == 0
    elsewhere = tmp_path / "elsewhere"
    os.rename(finance / "target", elsewhere)
    kept = json.loads((elsewhere / "manifest.cache.json").read_text())
    kept["text"] = json.dumps({"hostile": True, "manifest_version": 1})
    (elsewhere / "manifest.cache.json").write_text(json.dumps(kept))
    os.symlink(elsewhere, finance / "target")
    result = cli(finance, "manifest")
    assert result.exit_code == 0 and "hostile" not in result.stdout, describe(result)


@pytest.mark.parametrize("text", ["２０２６-01", "2026-٠١", "２０２６"])
def test_a_period_in_other_digits_is_refused(text):
    with pytest.raises(PeriodError):
        parse_period(text)

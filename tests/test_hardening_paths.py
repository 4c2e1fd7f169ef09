"""A project writes only inside its workspace (issue 8, report point 6): an absolute path, a URI or a
path climbing out with ``..`` in an inline ``destination.path`` is OUT-VR-002, reported by
``validate`` with file:line and refused by ``run`` before anything is written."""
from __future__ import annotations

import pytest

from cli_support import add_project, cli, describe

BAD = ["/tmp/lf-escape-abs", "file:/tmp/lf-escape-uri", "hdfs://nn:8020/x", "../escape", "../../x",
       "out/../../x", "./..", ".", "out/..", "\\\\server\\share"]


@pytest.mark.parametrize("path", BAD)
def test_validate_refuses_a_destination_outside_the_workspace(finance, path):
    quoted = path.replace("\\", "\\\\")
    add_project(finance, "escape", f"""
        - {{seq: 1, name: Out, type: output, arguments: {{destination: {{path: "{quoted}", format: csv}}}}}}
        """)
    result = cli(finance, "validate", "escape")
    assert result.exit_code == 1, describe(result)
    assert "projects/escape.yml:" in result.stderr and "OUT-VR-002" in result.stderr, result.stderr
    assert f"'{path}'" in result.stderr


@pytest.mark.parametrize("path", ["out/report", "out/./report", "out/a/../report", "reports/{{YYYY}}/gl"])
def test_validate_accepts_folders_inside_the_workspace(finance, path):
    add_project(finance, "inside", f"""
        - {{seq: 1, name: Out, type: output, arguments: {{destination: {{path: "{path}", format: csv}}}}}}
        """)
    result = cli(finance, "validate", "inside")
    assert result.exit_code == 0, describe(result)


def test_run_refuses_an_absolute_destination_before_writing(spark, finance, tmp_path):
    target = tmp_path / "outside"
    add_project(finance, "abs_out", f"""
        - {{seq: 1, name: Out, type: output, arguments: {{destination: {{path: "{target}", format: csv}}}}}}
        """)
    result = cli(finance, "run", "abs_out", "--period", "2026-01")
    assert result.exit_code == 1, describe(result)
    assert "OUT-VR-002" in result.stderr
    assert not target.exists()


def test_a_workspace_whose_folder_name_has_glob_characters_is_read_whole(tmp_path):
    """Datasets and projects are listed by pattern inside the workspace: its own folder's name is literal."""
    from conftest import copy_workspace
    plain = copy_workspace("finance", tmp_path / "plain")
    odd = copy_workspace("finance", tmp_path / "close [2026]*?")
    expected = cli(plain, "compile", "ts03_fx_conversion")
    result = cli(odd, "compile", "ts03_fx_conversion")
    assert expected.exit_code == 0 and result.exit_code == 0, describe(result)
    assert result.stdout == expected.stdout


def test_compile_resolved_reads_the_header_of_a_csv_folder_whose_name_has_glob_characters(tmp_path):
    from ledgerflow.adapters.compile_out.resolved_script import peek_columns
    folder = tmp_path / "gl [v1]*?"
    (folder / "_period=2026-01").mkdir(parents=True)
    (folder / "_period=2026-01" / "part-0.csv").write_text("journal_id,amount\nJE-1,1.00\n")
    assert list(peek_columns(str(folder), "csv", ["journal_id", "amount", "declared_only"])) == ["journal_id", "amount", "_period"]

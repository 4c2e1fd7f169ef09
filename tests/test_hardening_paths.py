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

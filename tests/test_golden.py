"""Golden SQL of every example project: compiled output is reviewed as a diff.

Regenerate with ``pytest tests/test_golden.py --update-golden`` and review ``git diff tests/golden``.
"""
from __future__ import annotations

import sqlglot
import pytest

from ledgerflow.compiler.compile import compile_project
from ledgerflow.compiler.workspace import load_workspace

from conftest import PROJECTS, REPO
from sqlcheck import analyse

GOLDEN = REPO / "tests" / "golden"
WORKSPACES = ["finance", "orders"]
CASES = [(ws, p.name) for ws in WORKSPACES for p in load_workspace(str(PROJECTS / ws)).projects]


def _compiled(ws_name: str, project: str):
    ws = load_workspace(str(PROJECTS / ws_name))
    return compile_project(ws, ws.find_project(project))


@pytest.mark.parametrize("ws_name,project", CASES)
def test_golden_sql(ws_name, project, request):
    """The script matches its golden file byte for byte."""
    script = _compiled(ws_name, project).script() + "\n"
    path = GOLDEN / ws_name / f"{project}.sql"
    if request.config.getoption("--update-golden"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(script)
    assert path.exists(), f"missing golden file {path}: run pytest --update-golden"
    assert script == path.read_text(), f"compiled SQL of {project} changed: rerun with --update-golden and review"


@pytest.mark.parametrize("ws_name,project", CASES)
def test_compile_is_deterministic(ws_name, project):
    """Two compilations give the same bytes."""
    assert _compiled(ws_name, project).script() == _compiled(ws_name, project).script()


@pytest.mark.parametrize("ws_name,project", CASES)
def test_every_statement_parses_with_sqlglot(ws_name, project):
    """Each statement round-trips through sqlglot's Spark dialect to the same AST."""
    for st in _compiled(ws_name, project).statements:
        tree = sqlglot.parse_one(st.sql, read="spark")
        assert tree == sqlglot.parse_one(tree.sql("spark"), read="spark")


@pytest.mark.parametrize("ws_name,project", CASES)
def test_spark_analyzer_accepts_every_statement(spark, ws_name, project):
    """Spark analyses and plans every statement against empty views of the declared schemas."""
    compiled = _compiled(ws_name, project)
    plans = analyse(spark, compiled)
    assert len(plans) == len(compiled.statements)

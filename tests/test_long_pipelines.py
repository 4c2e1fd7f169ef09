"""Long pipelines: the compiler cuts the CTE chain into stages Spark's analyzer accepts."""
from __future__ import annotations

import sqlglot
import pytest
from sqlglot import exp

from bench.projectgen import write_chain_workspace
from ledgerflow.compiler.compile import compile_project
from ledgerflow.compiler.planner import STAGE_MAX_CTES
from ledgerflow.compiler.workspace import load_workspace

from sqlcheck import analyse


@pytest.fixture(scope="module")
def chain_ws(tmp_path_factory):
    folder = tmp_path_factory.mktemp("chains")
    write_chain_workspace(str(folder), [10, 120, 500])
    return load_workspace(str(folder))


def _ctes(sql: str) -> int:
    return len(list(sqlglot.parse_one(sql, read="spark").find_all(exp.CTE)))


def test_500_operations_compile_into_bounded_stages(chain_ws):
    compiled = compile_project(chain_ws, chain_ws.find_project("chain_500"))
    stages = compiled.stages
    assert len(stages) == -(-501 // STAGE_MAX_CTES)  # input + 500 updates, one CTE each
    assert all(_ctes(s.sql) <= STAGE_MAX_CTES for s in stages)
    assert sum(len([o for o in s.operations if o]) for s in stages) == 500
    # each stage after the first reads the previous stage's view, and the boundary is visible in the script
    for prev, st in zip(stages, stages[1:]):
        assert f"FROM `{prev.name}`" in st.sql
    script = compiled.script()
    assert script.count("materialised by the runner") == len(stages)
    assert compiled.outputs[0].reads == [stages[-1].name]


def test_spark_accepts_every_stage_of_500_operations(spark, chain_ws):
    compiled = compile_project(chain_ws, chain_ws.find_project("chain_500"))
    plans = analyse(spark, compiled)
    assert len(plans) == len(compiled.statements)


def test_one_statement_of_120_operations_is_refused_by_spark(spark, chain_ws):
    """Why stages exist: without the cut, Spark's analyzer gives up on the chain."""
    compiled = compile_project(chain_ws, chain_ws.find_project("chain_120"), stage_max_ctes=10_000)
    assert len(compiled.stages) == 1
    with pytest.raises(Exception, match="Max iterations"):
        analyse(spark, compiled)

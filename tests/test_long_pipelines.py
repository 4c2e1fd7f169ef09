"""Long pipelines: the compiler cuts the CTE chain into stages Spark's analyzer accepts."""
from __future__ import annotations

import sqlglot
import pytest
from sqlglot import exp

from bench.projectgen import write_chain_workspace
from ledgerflow.compiler.compile import compile_project
from ledgerflow.compiler.stage import STAGE_MAX_CTES
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


def test_a_multi_stage_pipeline_runs_and_computes_the_chain(spark, compiled_code, chain_ws):
    """The runner materialises the stages in order; values prove every operation ran once, in order."""
    from decimal import Decimal

    from ledgerflow.adapters import api
    frame = spark.createDataFrame(
        [("JE-1", 1, "4100", "USD", Decimal("100.00"), None, "2026-01"),
         ("JE-1", 2, "1200", "USD", Decimal("-100.00"), None, "2026-01")],
        "journal_id string, line_number int, account_code string, currency string, "
        "amount_local decimal(18,2), amount_reporting decimal(18,2), _period string")
    lines: list[str] = []
    record = api.run(chain_ws.root, "chain_120", "2026-01", data={"gl": frame}, spark=spark, echo=lines.append)
    assert record["status"] == "completed" and record["outputs"][0]["rows"] == 2
    assert sum("[" in line and "] update" in line for line in lines) == 120
    rows = spark.read.parquet(record["outputs"][0]["location"]).orderBy("amount_local").collect()
    k = 120  # after op k: acc_b = line + (k - 1); acc_a = amount + (k - 1) * line + (k - 1)(k - 2) / 2
    for row, (line, amount) in zip(rows, [(2, Decimal("-100.00")), (1, Decimal("100.00"))]):
        assert row.acc_b == line + k - 1
        assert row.acc_a == amount + (k - 1) * line + (k - 1) * (k - 2) // 2

"""The typed plan answers questions about a compiled project (what ``diff`` and ``lineage`` will ask)."""
from __future__ import annotations

import sqlglot
from sqlglot import exp

from ledgerflow.compiler.compile import compile_project, plan_project
from ledgerflow.compiler.lower import lower
from ledgerflow.compiler.model import OperationKind
from ledgerflow.compiler.plan import ConditionKind, Role, operation, output_columns
from ledgerflow.compiler.stage import cut_stages
from ledgerflow.compiler.workspace import load_workspace

from conftest import PROJECTS

FINANCE = load_workspace(str(PROJECTS / "finance"))


def _plan(project: str):
    plan = plan_project(FINANCE, FINANCE.find_project(project))
    assert plan.diagnostics == []
    return plan


def _spark(text: str) -> str:
    """``text`` as sqlglot writes it back: plan nodes compare by their Spark SQL."""
    return sqlglot.parse_one(text, read="spark").sql("spark")


def _sql(node: exp.Expression) -> str:
    return node.sql("spark")


def test_expression_of_an_updated_column():
    update = operation(_plan("ts03_fx_conversion"), 1)
    assert update.kind is OperationKind.UPDATE and update.writes == "op_001_update"
    assert _sql(update.columns["amount_reporting"].expression) == _spark(
        "CASE WHEN NOT `transactions`.`_deleted` THEN CAST(`transactions`.`amount_local` * `fx`.`fx__rate` "
        "AS DECIMAL(18, 2)) ELSE `transactions`.`amount_reporting` END")
    assert update.columns["currency"].identity and not update.columns["amount_reporting"].identity
    [read] = update.reads
    assert (read.view, read.role, read.alias, read.column("fx__rate")) == ("ds_exchange_rates", Role.JOIN, "fx", "rate")


def test_join_condition_filters_and_as_of():
    update = operation(_plan("ts03_fx_conversion"), 1)
    [on] = update.conditions_of(ConditionKind.JOIN)
    assert _sql(on) == _spark("`transactions`.`currency` = `fx`.`fx__from_currency` AND NOT `transactions`.`_deleted`")
    assert [_sql(e) for e in update.conditions_of(ConditionKind.JOIN_FILTER)] == [_spark("`to_currency` = 'USD'"),
                                                               _spark("`rate_type` = 'closing'")]
    [as_of] = update.conditions_of(ConditionKind.AS_OF)
    assert {c.name for c in as_of.find_all(exp.Column)} == {"_period_from", "_period_to"}
    assert [_sql(k) for k in update.joins[0].guard.partition_by] == ["`from_currency`"]  # the fan-out guard's keys


def test_delete_condition_is_the_selector():
    delete = operation(_plan("ts04_delete_inactive"), 2)
    assert delete.kind is OperationKind.DELETE
    assert [_sql(e) for e in delete.conditions_of(ConditionKind.DELETE)] == [_spark("`account_active` = FALSE")]
    assert delete.columns["_deleted"].expression.sql("spark").startswith("`_deleted` OR COALESCE(")


def test_selector_and_group_by_of_an_aggregate():
    plan = _plan("ts05_aggregate_by_type")
    agg = operation(plan, 2)
    assert agg.kind is OperationKind.AGGREGATE and agg.group_by == ["account_type"]
    assert _sql(agg.summary["total_amount"]) == _spark("SUM(`amount_local`)")
    assert agg.conditions_of(ConditionKind.SELECTOR) == []  # no selector: every row not deleted
    # the working rows' period filter belongs to the input
    assert [c.kind for c in plan.input.conditions] == [ConditionKind.PERIOD]


def test_output_columns_expand_to_input_dataset_columns():
    columns = output_columns(_plan("ts03_fx_conversion"))[2]
    assert [_sql(e) for e in columns["currency"]] == [_spark("`ds_gl`.`currency`")]
    [amount] = columns["amount_reporting"]
    sources = {(c.table, c.name) for c in amount.find_all(exp.Column)}
    assert sources == {("ds_gl", "_deleted"), ("ds_gl", "amount_local"), ("ds_exchange_rates", "rate"),
                       ("ds_gl", "amount_reporting")}


def test_output_columns_of_appended_rows_read_the_source():
    columns = output_columns(_plan("ts06_append_budgets"))[2]
    working, appended = columns["amount_local"]
    assert _sql(working) == _spark("`ds_gl`.`amount_local`")
    assert _sql(appended) == _spark("CAST(SUM(`ds_budgets`.`amount`) AS DECIMAL(18, 2))")


def test_stage_cut_counts_the_ctes_the_templates_make():
    """ts03's update renders 2 CTEs (the join side carrying its fan-out count, the update) after the input's one."""
    plan = _plan("ts03_fx_conversion")
    steps = [s for s in lower(plan) if hasattr(s, "ctes")]
    assert [len(s.ctes) for s in steps] == [1, 2]
    assert [st.operations for st in cut_stages(lower(plan), budget=2) if st.kind == "stage"] == [[0], [1]]
    assert [st.operations for st in cut_stages(lower(plan), budget=3) if st.kind == "stage"] == [[0, 1]]


def test_the_compiled_project_keeps_its_plan():
    compiled = compile_project(FINANCE, FINANCE.find_project("ts03_fx_conversion"))
    assert compiled.plan is not None and [o.seq for o in compiled.plan.operations] == [1, 2]

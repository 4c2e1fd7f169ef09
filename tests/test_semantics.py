"""Operation semantics that are easy to get wrong (docs/workspace.md, docs/dsl.md), shown on the compiled SQL and on Spark."""
from __future__ import annotations

import datetime

import sqlglot
from sqlglot import exp

from ledgerflow.compiler.compile import compile_project
from ledgerflow.compiler.workspace import load_workspace

from cli_support import read_output, run_ok
from conftest import PROJECTS

GL_COLUMNS = ["journal_id", "line_number", "posting_date", "account_code", "cost_center_code", "currency",
              "amount_local", "amount_reporting", "description", "source_system", "_row_id", "_deleted",
              "_updated_at", "_period", "_labels", "_source_dataset", "_operation_seq"]
BRIDGE = ["_lf_origin", "_lf_deleted_by"]  # the bridge's columns, last (compiler/bridge_columns.py): never written


def _stage(project: str) -> exp.Expression:
    ws = load_workspace(str(PROJECTS / "finance"))
    compiled = compile_project(ws, ws.find_project(project))
    return sqlglot.parse_one(compiled.stages[0].sql, read="spark")


def _cte(tree: exp.Expression, name: str) -> exp.Select:
    return next(c.this for c in tree.find_all(exp.CTE) if c.alias == name)


def test_join_side_gets_pushed_filters_and_prefixed_columns():
    tree = _stage("ts03_fx_conversion")
    side = _cte(tree, "op_001_join_fx")
    assert [p.alias for p in side.expressions][:4] == ["fx__from_currency", "fx__to_currency", "fx__rate",
                                                        "fx__rate_type"]
    join_rows = side.find(exp.Subquery).this  # the join side's rows, read in one task, carrying their fan-out count
    assert side.expressions[-1].alias == "fx___lf_matches"
    where = join_rows.args["where"].this
    pushed = {c.sql("spark") for c in where.flatten()} if isinstance(where, exp.And) else {where.sql("spark")}
    assert "`to_currency` = 'USD'" in pushed and "`rate_type` = 'closing'" in pushed
    update = _cte(tree, "op_001_update")
    # joined columns exist only inside the operation: the step's output is exactly the working columns, then
    # the bridge's, with the change the update made to a measured decimal column
    assert [p.alias_or_name for p in update.expressions] == GL_COLUMNS + BRIDGE + ["_lf_before_1_amount_reporting"]
    join = update.args["joins"][0]
    on = join.args["on"]
    assert on == sqlglot.parse_one("`transactions`.`currency` = `fx`.`fx__from_currency` AND NOT "
                                   "`transactions`.`_deleted`", read="spark")
    assert join.side == "LEFT"


def test_aggregate_rows_get_typed_nulls_and_new_columns():
    tree = _stage("ts05_aggregate_by_type")
    union = _cte(tree, "op_002_aggregate")
    existing, summary = union.left, union.right
    names = [p.alias_or_name for p in summary.expressions]
    assert names == GL_COLUMNS + ["account_type", "total_amount", "line_count"] + BRIDGE
    by_name = {p.alias_or_name: p.this if isinstance(p, exp.Alias) else p for p in summary.expressions}
    assert by_name["amount_reporting"] == sqlglot.parse_one("CAST(NULL AS DECIMAL(18, 2))", read="spark")
    assert by_name["posting_date"] == sqlglot.parse_one("CAST(NULL AS DATE)", read="spark")
    assert by_name["_operation_seq"] == sqlglot.parse_one("2", read="spark")
    assert by_name["_period"] == sqlglot.parse_one(":period_identifier", read="spark")
    assert by_name["_lf_origin"] == sqlglot.parse_one("2", read="spark")  # the bridge: rows operation 2 created
    assert [p.alias_or_name for p in existing.expressions][-4:] == ["total_amount", "line_count"] + BRIDGE


def test_appended_rows_follow_the_working_column_order():
    tree = _stage("ts06_append_budgets")
    union = _cte(tree, "op_001_append")
    names = [p.alias_or_name for p in union.right.expressions]
    assert names == GL_COLUMNS + BRIDGE
    by_name = {p.alias_or_name: p.this for p in union.right.expressions}
    assert by_name["journal_id"] == sqlglot.parse_one("CAST(NULL AS STRING)", read="spark")
    assert by_name["amount_local"] == sqlglot.parse_one("CAST(`amount_local` AS DECIMAL(18, 2))", read="spark")


SWAP = """
id: 0b000000-0000-4000-8000-0000000000a1
name: swap
input_dataset_id: gl
operations:
  - seq: 1
    name: swap two columns on EUR rows, add a flag
    type: update
    selector: 'transactions.currency = "EUR"'
    arguments:
      assignments:
        - {column: description, expression: transactions.source_system}
        - {column: source_system, expression: transactions.description}
        - {column: flag, expression: 'TRUE'}
  - seq: 2
    name: delete JE-005
    type: delete
    selector: 'journal_id = "JE-005"'
  - seq: 3
    name: count only visible rows
    type: update
    arguments:
      assignments:
        - {column: seen, expression: '1'}
  - seq: 4
    name: write
    type: output
    arguments:
      destination: {path: target/out/swap, format: csv}
      include_deleted: true
"""


def test_assignments_are_simultaneous_and_touch_only_selected_rows(spark, finance):
    (finance / "projects" / "swap.yml").write_text(SWAP)
    rec = run_ok(finance, "swap")
    started = datetime.datetime.fromisoformat(rec["run_started_at"])
    _, rows = read_output(spark, rec, 4, {"flag": "boolean", "seen": "int"})
    assert len(rows) == 10
    for r in rows:
        if r["currency"] == "EUR":
            # both assignments read the row as it was before the operation
            assert (r["description"], r["source_system"], r["flag"]) in [
                ("EXPENSE", "Office supplies", True), ("EXPENSE", "AP - office supplies", True)]
        else:
            assert r["source_system"] in ("ERP", "EXPENSE") and r["flag"] is None
        if r["journal_id"] == "JE-005":
            # deleted rows are kept but no later operation sees them
            assert r["_deleted"] is True and r["seen"] is None
        else:
            assert r["_deleted"] is False and r["seen"] == 1
    # _updated_at is set by the operations that changed a row, at the run start
    assert all(r["_updated_at"] == started for r in rows)


NULL_DELETE = """
id: 0b000000-0000-4000-8000-0000000000a2
name: null_delete
input_dataset_id: gl
operations:
  - seq: 1
    name: delete large reported amounts (NULL for unconverted lines)
    type: delete
    selector: 'amount_reporting > 10000'
  - seq: 2
    name: delete again, overlapping the first
    type: delete
    selector: 'currency = "USD" AND amount_local < 0'
  - seq: 3
    name: write
    type: output
    arguments:
      destination: {path: target/out/null_delete, format: csv}
      include_deleted: true
"""


def test_delete_flags_only_rows_whose_selector_is_true(spark, finance):
    """A NULL selector value does not delete; a deleted row stays deleted; _deleted is never NULL and
    _updated_at is set only by the operation that deleted the row."""
    (finance / "projects" / "null_delete.yml").write_text(NULL_DELETE)
    rec = run_ok(finance, "null_delete")
    started = datetime.datetime.fromisoformat(rec["run_started_at"])
    _, rows = read_output(spark, rec, 3)
    got = sorted((r["journal_id"], r["line_number"], r["_deleted"], r["_updated_at"]) for r in rows)
    deleted = {("JE-001", 1), ("JE-001", 2), ("JE-004", 2)}  # 15000.00 reported twice; USD -3200.00
    assert got == sorted((j, n, (j, n) in deleted, started if (j, n) in deleted else None)
                         for j, n in [("JE-00%d" % i, k) for i in range(1, 6) for k in (1, 2)])

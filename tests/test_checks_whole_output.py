"""``balanced`` on a whole output and tolerances Spark can hold (issue 43, point 2).

A finance engineer could not say "the whole trial balance nets to zero": ``balanced`` required
``group_by``, and ``ROUND(amount * rate, 2)`` was typed ``number``, so it refused the column
(CHK-010). Without ``group_by`` the check now sums the decimal column over every row of the output;
a tolerance that is not a decimal Spark holds ("1e400", more than 38 digits) is CHK-005 at validate
(it passed validate and failed the run with exit 3).
"""
from __future__ import annotations

from decimal import Decimal

from cli_support import add_project, cli, describe, record, run, run_id_of
from test_checks_compile import _diagnostics, _plan

from ledgerflow.compiler.checks.plan import CheckKind
from ledgerflow.compiler.checks.sql import balanced_bound, set_check_query

WHOLE = "  - {{name: tb, on: 2, balanced: {{amount: amount_local{tolerance}}}}}\n"


def _balanced(tmp_path, tolerance: str = ""):
    plan = _plan(tmp_path, WHOLE.format(tolerance=tolerance))
    assert not plan.diagnostics, [d.render() for d in plan.diagnostics]
    [check] = [c for c in plan.checks if c.kind == CheckKind.BALANCED]
    return check


def test_balanced_without_group_by_judges_the_whole_output(tmp_path, spark):
    check = _balanced(tmp_path)
    assert check.group_by == () and check.amount == "amount_local"
    query = set_check_query(check, "lf_tb")
    assert "GROUP BY" not in query
    rows = "SELECT CAST(v AS DECIMAL(18,2)) AS amount_local FROM VALUES ({}) AS t(v)"
    spark.sql(rows.format("100.00), (-60.00), (-40.00")).createOrReplaceTempView("lf_tb")
    assert spark.sql(query).collect() == []  # the lines net to zero: nothing violates
    spark.sql(rows.format("100.00), (-60.00), (-39.99")).createOrReplaceTempView("lf_tb")
    [found] = spark.sql(query).collect()
    assert (found["amount_local"], found["_lf_rows"]) == (Decimal("0.01"), 3)  # the imbalance of all the rows


def test_a_tolerance_spark_cannot_hold_is_chk_005_at_validate(tmp_path):
    for written in ['"1e400"', '"0.' + "0" * 38 + '1"', '"' + "9" * 39 + '"']:
        found = _diagnostics(tmp_path / written.strip('"')[:8], WHOLE.format(tolerance=f", tolerance: {written}"))
        assert [d.code for d in found] == ["CHK-005"], [d.render() for d in found]
        assert "38" in found[0].message and found[0].text == written.strip('"') and found[0].location.line > 0


def test_a_tolerance_in_exponent_form_is_compared_as_the_decimal_it_is(tmp_path):
    check = _balanced(tmp_path, ', tolerance: "1e2"')
    assert check.tolerance == Decimal("1e2") and balanced_bound(check) == Decimal("100.00")
    query = set_check_query(check, "lf_tb")
    assert "<= 100.00" in query and "E+" not in query.upper()  # 1E+2 would be a double in Spark


def test_the_bound_is_cut_to_the_sums_scale_and_range(tmp_path):
    # amount_local is decimal(18,2): its sum a decimal(28,2), a multiple of 0.01 below 10^26
    assert balanced_bound(_balanced(tmp_path / "a", ', tolerance: "0.019"')) == Decimal("0.01")
    assert balanced_bound(_balanced(tmp_path / "b", ', tolerance: "' + "9" * 30 + '"')) == Decimal("9" * 26 + ".99")


TB = """
- seq: 1
  name: Account type
  type: update
  arguments:
    joins: [{alias: acct, dataset_id: accounts, on: transactions.account_code = acct.code}]
    assignments: [{column: account_type, expression: acct.type}]
- seq: 2
  name: Signed amounts at twice the rate
  type: update
  arguments:
    assignments:
      - column: amount_eur
        expression: 'ROUND(IF(transactions.account_type = "revenue", -transactions.amount_local, transactions.amount_local) * 2.000000, 2)'
- seq: 3
  name: Trial balance lines
  type: output
  arguments:
    destination: {path: "out/tb", format: parquet}
    columns: [journal_id, account_code, amount_eur]
"""
TB_CHECKS = """
checks:
  - {name: tb_nets_to_zero, on: 3, balanced: {amount: amount_eur, tolerance: "0.00"}}
"""


def test_a_balanced_trial_balance_passes_and_an_unbalanced_one_exits_4(spark, finance):
    add_project(finance, "tb", TB, extra=TB_CHECKS)
    assert cli(finance, "validate").exit_code == 0
    rec = record(finance, run_id_of(run(finance, "tb")))
    [check] = [c for c in rec["checks"] if c["name"] == "tb_nets_to_zero"]
    assert rec["status"] == "completed" and check["violations"] == 0, check
    gl = finance / "data" / "gl" / "v1" / "transactions.csv"
    gl.write_text(gl.read_text().replace("JE-002,2,2026-01-10,2100,CC-200,EUR,-8500.00",
                                         "JE-002,2,2026-01-10,2100,CC-200,EUR,-8400.00"))
    result = run(finance, "tb", expect=4)
    assert "tb_nets_to_zero" in result.output, describe(result)
    [check] = [c for c in record(finance, run_id_of(result))["checks"] if c["name"] == "tb_nets_to_zero"]
    assert check["sample"] == [{"amount_eur": "200.00"}], check  # 100.00 short, at twice the rate

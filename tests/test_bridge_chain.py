"""The bridge of a long chain (docs/checks.md, "The bridge"), told from one observation of the working rows at
the end of the stage: every point must equal what the chain *cut there* writes.

The project updates a measured column twice, deletes, aggregates (appended), updates every live row again
(the aggregate's rows too), appends, and writes. For each point k, a second project runs operations 1..k and
writes: its output's count and sums (observed on the written rows alone, nothing derived) are the value
of the long chain's bridge at k. So every ``input`` and every ``change`` of the long chain's bridge is checked
against an independent figure, for every operation kind and for updates before and after rows are created
and deleted."""
from __future__ import annotations

from decimal import Decimal

import pytest

from cli_support import MARKED_UPSTREAM, add_project
from ledgerflow.adapters.run.runner import Runner

PERIOD = "2026-01"

OPERATIONS = [
    """- seq: 1
  name: Double JPY reporting amounts
  type: update
  selector: 'transactions.currency = "JPY"'
  arguments:
    assignments: [{column: amount_reporting, expression: transactions.amount_local * 2}]""",
    """- seq: 2
  name: Add one to revenue
  type: update
  selector: 'transactions.account_code = "4100"'
  arguments:
    assignments: [{column: amount_reporting, expression: transactions.amount_reporting + 1.00}]""",
    """- {seq: 3, name: Drop receivables, type: delete, selector: 'transactions.account_code = "1200"', arguments: {}}""",
    """- seq: 4
  name: Totals per currency
  type: aggregate
  arguments:
    group_by: [transactions.currency]
    aggregations:
      - {column: amount_local, expression: SUM(transactions.amount_local)}
      - {column: amount_reporting, expression: SUM(transactions.amount_reporting)}""",
    """- seq: 5
  name: Triple everything
  type: update
  arguments:
    assignments: [{column: amount_reporting, expression: transactions.amount_reporting * 3}]""",
    """- seq: 6
  name: Append budgets
  type: append
  arguments:
    source: {dataset_id: budgets}
    aggregation:
      group_by: [account_code, cost_center_code, currency]
      aggregations: [{column: amount_local, expression: SUM(amount)}]""",
]


def _output(seq: int, name: str) -> str:
    return (f"- {{seq: {seq}, name: Write, type: output, arguments: {{destination: "
            f"{{path: out/{name}, format: parquet}}}}}}")


def _checked(seq: int) -> str:
    """A check that always holds: the bridge is observed for a project with checks."""
    return f"checks:\n- {{name: rows_written, on: {seq}, row_count: {{min: 0}}}}\n"


@pytest.fixture
def runner(spark, finance):
    return Runner(str(finance), echo=lambda _s: None, session_factory=lambda: spark)


def _values(record: dict, output: int) -> dict:
    return {b["measure"]: b for b in record["bridge"] if b["output"] == output and b["group"] is None}


USD_ONLY = ("- {seq: 8, name: Write USD, type: output, selector: 'transactions.currency = \"USD\"', arguments: "
            "{destination: {path: out/bridge_chain_usd, format: parquet}}}")


def test_every_point_equals_the_output_of_the_chain_cut_there(runner, finance, spark):
    add_project(finance, "bridge_chain", "\n".join(OPERATIONS + [_output(7, "bridge_chain"), USD_ONLY]),
                extra=_checked(7))
    for k in range(len(OPERATIONS)):
        add_project(finance, f"bridge_chain_{k}", "\n".join(OPERATIONS[:k] + [_output(k + 1, f"bridge_chain_{k}")]),
                    extra=_checked(k + 1))
    record = runner.run("bridge_chain", PERIOD)
    bridge = _values(record, 7)
    assert set(bridge) == {"count", "SUM(amount_local)", "SUM(amount_reporting)"}
    cut = {k: _values(runner.run(f"bridge_chain_{k}", PERIOD), k + 1) for k in range(len(OPERATIONS))}
    for measure, row in bridge.items():
        number = int if measure == "count" else Decimal
        at = [number(cut[k][measure]["output_value"]) for k in range(len(OPERATIONS))]
        assert number(row["input"]) == at[0], measure
        changes = {c["seq"]: number(c["change"]) for c in row["changes"]}
        assert sorted(changes) == [1, 2, 3, 4, 5, 6]
        for seq in range(1, len(OPERATIONS)):
            assert changes[seq] == at[seq] - at[seq - 1], (measure, seq)
        assert number(row["output_value"]) == at[-1] + changes[6], measure
    # an output with a selector is observed on its own rows: its value is what it wrote, its selector a change
    selected = _values(record, 8)
    written = spark.read.parquet(str(finance / "out/bridge_chain_usd"))
    assert int(selected["count"]["output_value"]) == written.count() == next(
        o["rows"] for o in record["outputs"] if o["operation_seq"] == 8) > 0
    assert Decimal(selected["SUM(amount_local)"]["output_value"]) == written.agg({"amount_local": "sum"}).first()[0]
    assert [c["seq"] for c in selected["count"]["changes"]] == [1, 2, 3, 4, 5, 6, 8]
    assert int(selected["count"]["changes"][-1]["change"]) < 0
    # the chain really moves every measure: a bridge of zeros would pass the comparisons above
    assert Decimal(bridge["SUM(amount_reporting)"]["changes"][0]["change"]) != 0  # the JPY update
    assert int(bridge["count"]["changes"][2]["change"]) < 0  # the delete
    assert Decimal(bridge["SUM(amount_reporting)"]["changes"][4]["change"]) != 0  # the update after the aggregate


def test_the_bridge_is_observed_once_per_stage_and_with_checks_only_for_a_project_with_checks(runner, finance,
                                                                                              monkeypatch):
    """The plan is never cut for the bridge: one observation of the rows at the end of the stage. Under
    ``bridge: with_checks`` a project without checks observes nothing and records no bridge; Spark then prunes
    the bridge's columns."""
    from ledgerflow.adapters.run import bridge as bridge_module
    stages = []
    original = bridge_module.BridgeObserver.observe_stage

    def counting(self, df, stage, outputs):
        stages.append((stage, tuple(outputs)))
        return original(self, df, stage, outputs)

    monkeypatch.setattr(bridge_module.BridgeObserver, "observe_stage", counting)
    with open(finance / "ledgerflow.yml", "a") as fh:
        fh.write("bridge: with_checks\n")
    record = runner.run("ts03_fx_conversion", PERIOD)
    assert record["status"] == "completed" and "bridge" not in record and stages == []
    add_project(finance, "ts03_checked", """
- seq: 1
  name: Convert
  type: update
  arguments:
    joins: [{alias: fx, dataset_id: exchange_rates, on: 'transactions.currency = fx.from_currency AND fx.to_currency = "USD" AND fx.rate_type = "closing"'}]
    assignments: [{column: amount_reporting, expression: transactions.amount_local * fx.rate}]
- {seq: 2, name: Write, type: output, arguments: {destination: {path: out/ts03_checked, format: parquet}}}""",
                extra=_checked(2))
    record = runner.run("ts03_checked", PERIOD)
    assert stages == [("lf_stage_1", (2,))]
    rows = _values(record, 2)
    assert set(rows) == {"count", "SUM(amount_local)", "SUM(amount_reporting)"}
    assert all(not r.get("not_measured") for r in rows.values())
    reporting = rows["SUM(amount_reporting)"]
    change = Decimal(reporting["changes"][0]["change"])
    assert change != 0 and Decimal(reporting["input"]) + change == Decimal(reporting["output_value"])


def test_a_reconcile_by_a_column_an_update_changes_is_chk_013(finance):
    """The bridge groups a row by its value at the end of the stage; a group an update changed before the output
    would be a wrong group at the points before it, so such a reconcile is refused, located."""
    from ledgerflow.compiler.compile import plan_diagnostics
    from ledgerflow.compiler.workspace import load_workspace
    add_project(finance, "regrouped", """
- {seq: 1, name: Rename currency, type: update, arguments: {assignments: [{column: currency, expression: '"XXX"'}]}}
- {seq: 2, name: Write, type: output, arguments: {destination: {path: out/regrouped, format: parquet}}}""",
                extra="""checks:
- name: per_currency
  reconcile: {from: input, to: 2, by: [currency], measures: [count]}
""")
    ws = load_workspace(str(finance))
    found = plan_diagnostics(ws, ws.find_project("regrouped"))
    assert [d.code for d in found] == ["CHK-013"], [d.render() for d in found]
    assert found[0].text == "currency" and "operation 1" in found[0].message
    assert found[0].location.file == "projects/regrouped.yml" and found[0].location.line > 1


def test_rows_that_arrive_deleted_include_deleted_a_shared_stage_null_amounts_and_a_quarantine(runner, finance, spark):
    """Edge cases of the bookkeeping columns, each figure against the data itself: the input holds rows that
    arrived deleted (an upstream delete written with ``include_deleted`` and registered); an update of every
    live row meets NULL amounts; one stage is read by two outputs (materialised), one of them writing every
    row (a delete removes none of them, the update changes only the live ones), the other quarantining the
    rows without an amount. Derived ``input`` values and the outputs told by the stage's END are checked
    against the upstream's and downstream's written rows, so a wrong bookkeeping column cannot hide."""
    add_project(finance, "marked_upstream", MARKED_UPSTREAM)
    up = runner.run("marked_upstream", PERIOD)
    upstream = spark.read.parquet(next(o["location"] for o in up["outputs"]))
    add_project(finance, "marked_bridge", """
- seq: 1
  name: Double every live amount
  type: update
  arguments:
    assignments: [{column: amount_reporting, expression: marked.amount_reporting * 2}]
- {seq: 2, name: Drop revenue, type: delete, selector: 'marked.account_code = "4100"', arguments: {}}
- {seq: 3, name: Live, type: output, arguments: {destination: {path: out/marked_live, format: parquet}}}
- seq: 4
  name: Everything
  type: output
  arguments: {include_deleted: true, destination: {path: out/marked_all, format: parquet}}""",
                input_dataset="marked", extra="""checks:
- name: amounts_present
  on: 3
  not_null: [amount_reporting]
  on_violation: quarantine
  quarantine: {path: "out/marked_quarantine", format: parquet}
""")
    record = runner.run("marked_bridge", PERIOD)
    assert record["status"] == "completed"
    rows = [r.asDict() for r in upstream.collect()]
    live = [r for r in rows if not r["_deleted"]]
    assert len(live) < len(rows), "the input holds rows that arrived deleted"
    assert any(r["amount_reporting"] is None for r in live), "and NULL amounts"

    def total(rs):
        return sum((r["amount_reporting"] for r in rs if r["amount_reporting"] is not None), Decimal("0.00"))

    def figures(output):
        got = _values(record, output)
        return {m: (r["input"], [(c["seq"], c["change"]) for c in r["changes"]], r["quarantined"], r["output_value"])
                for m, r in got.items() if m in ("count", "SUM(amount_reporting)")}

    def written(name):
        return [r.asDict() for r in spark.read.parquet(str(finance / "out" / name / "_period=2026-01")).collect()]

    revenue = [r for r in live if r["account_code"] == "4100"]
    missing = [r for r in live if r["account_code"] != "4100" and r["amount_reporting"] is None]
    kept = written("marked_live")
    assert len(kept) == len(live) - len(revenue) - len(missing) > 0
    assert figures(3) == {
        "count": (len(live), [(1, 0), (2, -len(revenue))], len(missing), len(kept)),
        "SUM(amount_reporting)": (str(total(live)), [(1, str(total(live))), (2, str(-2 * total(revenue)))],
                                  "0.00", str(total(kept)))}
    everything = written("marked_all")
    assert len(everything) == len(rows)
    assert figures(4) == {
        "count": (len(rows), [(1, 0), (2, 0)], 0, len(everything)),
        "SUM(amount_reporting)": (str(total(rows)), [(1, str(total(live))), (2, "0.00")], "0.00",
                                  str(total(everything)))}


def test_the_bridge_sums_only_decimals_it_can_sum_exactly():
    """A decimal whose sums Spark would round when the bridge subtracts them is not summed (the sums are 10
    digits wider; a difference past 38 digits keeps a scale of at most 6); the count still is. A SUM of a
    decimal(18,2), a decimal(28,2) (a registered total), is summed."""
    from sqlglot import exp

    from ledgerflow.compiler.bridge import _decimal_columns
    from ledgerflow.compiler.plan import Column
    from ledgerflow.compiler.types import from_sql
    columns = {name: Column(name, from_sql(t), exp.column(name)) for name, t in
               (("money", "decimal(18,2)"), ("wide", "decimal(27,9)"), ("total", "decimal(28,2)"),
                ("fine", "decimal(28,6)"), ("finer", "decimal(28,7)"), ("total2", "decimal(38,2)"),
                ("huge", "decimal(38,10)"))}
    assert _decimal_columns(columns) == {"money": 2, "wide": 9, "total": 2, "fine": 6}


def test_an_update_carries_each_measured_column_as_it_was_before_it_and_computes_nothing_per_row():
    """The bridge column of an update is a copy of the column before it, whatever the shape of its value (the
    change is summed from the copies, never computed per row); NULL for a column the update creates."""
    from sqlglot import exp

    from ledgerflow.compiler.bridge_columns import BridgeColumns
    from ledgerflow.compiler.plan import Column
    from ledgerflow.compiler.types import from_sql
    bridge = BridgeColumns({1: {"amount": "decimal(18,2)", "fresh": "decimal(18,2)"}})
    before = {"amount": Column("amount", from_sql("decimal(18,2)"), exp.column("amount"))}
    got = {e.alias: e.this for e in bridge.after_update(1, before, "t") if e.alias.startswith("_lf_before")}
    assert got["_lf_before_1_amount"].sql("spark") == "CAST(`t`.`amount` AS DECIMAL(18, 2))"
    assert got["_lf_before_1_fresh"].sql("spark") == "CAST(NULL AS DECIMAL(18, 2))"

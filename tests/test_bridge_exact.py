"""The bridge's arithmetic in Python is exact for every sum Spark gives it (up to 38 digits): the value after the
period filter (the end's less every change), the changes added up, a reconcile's difference. Python's default
decimal context keeps 28 digits: it rounded such values, or failed to write them at their scale. No Spark."""
from __future__ import annotations

from decimal import Decimal

from ledgerflow.adapters.run import bridge
from ledgerflow.compiler.bridge import END, BridgeMeasure, OutputBridge
from ledgerflow.compiler.compile import compile_project
from ledgerflow.compiler.workspace import load_workspace

from conftest import REPO

BIG = Decimal("123456789012345678901234567890.123456")  # 36 digits, a sum of decimal(28,6) values
TINY = Decimal("0.000001")
MINUS_BIG = Decimal("-123456789012345678901234567890.123456")  # written out: -BIG would round here, at 28 digits
BIG_AND_TINY = Decimal("123456789012345678901234567890.123457")


def test_a_bridge_of_sums_wider_than_28_digits_is_exact(monkeypatch):
    m = BridgeMeasure("SUM(x)", "x", 6)
    o = OutputBridge(3, "live", (m,), (1, 2), (1, 2), False)
    figures = {END: TINY, 1: TINY, 2: MINUS_BIG}  # the end; an update's change, a delete's: the input is BIG
    from ledgerflow.compiler.bridge import input_value

    def rows(_observer):
        f = dict(figures, input=input_value(figures, o.operations))
        return [bridge._bridge_row(o, m, None, f, figures[END], None)]
    monkeypatch.setattr(bridge, "_rows", rows)
    [row] = bridge.collect(type("Ctx", (), {"bridge": type("Obs", (), {"rows": None})()})())
    assert Decimal(row["input"]) == BIG and row["input"] == "123456789012345678901234567890.123456"
    assert [c["change"] for c in row["changes"]] == ["0.000001", "-123456789012345678901234567890.123456"]
    assert row["output_value"] == "0.000001"


def test_a_reconcile_of_sums_wider_than_28_digits_is_judged_exactly():
    ws = load_workspace(str(REPO / "projects" / "finance"))
    plan = compile_project(ws, ws.find_project("ts06_append_budgets")).plan
    [check] = [c for c in plan.checks if c.kind.value == "reconcile"]
    measures = {m.name for m in check.measures}
    assert "SUM(amount_local)" in measures
    explained = [{"seq": s, "change": str(v)} for s, v in zip(check.explained_by * 2, (BIG_AND_TINY, MINUS_BIG))]
    rows = [{"output": check.on, "measure": name, "group": None, "input": "0" if name == "count" else "0.000000",
             "changes": explained if name != "count" else [], "quarantined": 0,
             "output_value": "0" if name == "count" else str(TINY)} for name in measures]
    [result] = bridge.reconcile_results([check], rows)
    assert result["status"] == "passed", result["differences"]
    summed = next(d for d in result["differences"] if d["measure"] == "SUM(amount_local)")
    assert Decimal(summed["difference"]) == 0 and Decimal(summed["explained"]) == TINY

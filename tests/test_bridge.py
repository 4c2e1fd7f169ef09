"""The run's bridge (docs/checks.md, "The bridge"): every figure of TS-04 (a delete) and TS-06 (an append)
built by hand from the sample's data files and compared with the run record; reconcile judged on it,
overall and per group, naming the unexplained difference."""
from __future__ import annotations

import csv
from collections import defaultdict
from decimal import Decimal
from pathlib import Path
from textwrap import dedent

import pytest

from ledgerflow.adapters.run.runner import Runner
from ledgerflow.compiler.errors import LedgerflowError

PERIOD = "2026-01"


def _rows(path: Path) -> list[dict]:
    with open(path, newline="") as fh:
        return [r for r in csv.DictReader(fh) if r.get("_period", PERIOD) == PERIOD]


def _dec(text: str):
    return Decimal(text) if text != "" else None


def _sum(values) -> Decimal:
    return sum((v for v in values if v is not None), Decimal("0.00"))


def _figures(rows: list[dict]) -> dict:
    return {"count": len(rows), "SUM(amount_local)": _sum(_dec(r["amount_local"]) for r in rows),
            "SUM(amount_reporting)": _sum(_dec(r["amount_reporting"]) for r in rows)}


def _expected(output: int, start: dict, changes: list[tuple[int, dict]]) -> list[dict]:
    out = []
    for measure in ("count", "SUM(amount_local)", "SUM(amount_reporting)"):
        value = start[measure]
        for _, delta in changes:
            value += delta[measure]
        text = (lambda v: int(v)) if measure == "count" else (lambda v: str(Decimal(v).quantize(Decimal("0.01"))))
        out.append({"output": output, "measure": measure, "group": None, "input": text(start[measure]),
                    "changes": [{"seq": s, "change": text(d[measure])} for s, d in changes],
                    "quarantined": text(0), "output_value": text(value)})
    return out


ZERO = {"count": 0, "SUM(amount_local)": Decimal("0.00"), "SUM(amount_reporting)": Decimal("0.00")}


@pytest.fixture
def runner(spark, finance):
    return Runner(str(finance), echo=lambda _s: None, session_factory=lambda: spark)


def test_ts04_delete_bridge_built_by_hand(runner, finance):
    gl = _rows(finance / "data/gl/v1/transactions.csv")
    active = {a["code"]: a["is_active"] == "true" for a in _rows(finance / "data/accounts/v2/accounts.csv")}
    deleted = [r for r in gl if active.get(r["account_code"]) is False]  # `account_active = FALSE`; unknown: kept
    assert deleted, "the sample has a line on an inactive account"
    start = _figures(gl)
    removed = {k: -v for k, v in _figures(deleted).items()}
    record = runner.run("ts04_delete_inactive", PERIOD)
    expected = (_expected(3, start, [(1, ZERO), (2, removed)])  # the update changes no measure
                + _expected(4, start, [(1, ZERO), (2, ZERO)]))  # include_deleted: the delete removes nothing
    assert record["bridge"] == expected
    rows = {o["operation_seq"]: o["rows"] for o in record["outputs"]}
    assert rows == {3: len(gl) - len(deleted), 4: len(gl)}
    # the finance sample's reconcile: input count = output count + the delete's change
    check = next(c for c in record["checks"] if c["name"] == "lines_accounted_for")
    assert check["status"] == "passed" and check["violations"] == 0
    assert check["differences"] == [{"group": None, "measure": "count", "from": len(gl),
                                     "explained": -len(deleted), "to": len(gl) - len(deleted), "difference": 0}]


def test_ts06_append_bridge_built_by_hand(runner, finance):
    gl = _rows(finance / "data/gl/v1/transactions.csv")
    budgets = _rows(finance / "data/budgets/v1/budgets.csv")
    groups = defaultdict(Decimal)
    for b in budgets:
        groups[(b["account_code"], b["cost_center_code"], b["currency"])] += Decimal(b["amount"])
    appended = {"count": len(groups), "SUM(amount_local)": sum(groups.values(), Decimal("0.00")),
                "SUM(amount_reporting)": Decimal("0.00")}  # appended rows have no reporting amount
    record = runner.run("ts06_append_budgets", PERIOD)
    assert record["bridge"] == _expected(2, _figures(gl), [(1, appended)])
    assert record["outputs"][0]["rows"] == len(gl) + len(groups)


def _add(finance: Path, name: str, body: str) -> None:
    text = (finance / "projects/ts04_delete_inactive.yml").read_text().split("checks:")[0]
    text = text.replace("0b000000-0000-4000-8000-000000000004", "0b000000-0000-4000-8000-0000000000b4")
    text = text.replace("name: ts04_delete_inactive", f"name: {name}")
    text = text.replace("{table: ts04_", f"{{table: {name}_")  # tables of its own: one writer per destination
    (finance / f"projects/{name}.yml").write_text(text + dedent(body))


def test_reconcile_per_group_names_the_unexplained_difference(runner, finance):
    """A reconcile by currency that does not explain the delete: the group holding the deleted line fails
    with its difference; the overall bridge stays, and groups are bridged per currency."""
    _add(finance, "ts04_reconcile_by", """\
        checks:
          - name: per_currency
            reconcile: {from: input, to: 3, by: [currency], measures: [count, "SUM(amount_local)"], tolerance: "0.00"}
            severity: warn
        """)
    gl = _rows(finance / "data/gl/v1/transactions.csv")
    active = {a["code"]: a["is_active"] == "true" for a in _rows(finance / "data/accounts/v2/accounts.csv")}
    deleted = [r for r in gl if active.get(r["account_code"]) is False]
    record = runner.run("ts04_reconcile_by", PERIOD)
    check = next(c for c in record["checks"] if c["name"] == "per_currency")
    assert check["status"] == "warned"
    cur = deleted[0]["currency"]
    lost = -_sum(_dec(r["amount_local"]) for r in deleted if r["currency"] == cur)
    failing = {(d["group"]["currency"], d["measure"]): d["difference"] for d in check["differences"]
               if d["difference"] not in (0, "0.00")}
    assert failing == {(cur, "count"): -sum(1 for r in deleted if r["currency"] == cur),
                       (cur, "SUM(amount_local)"): str(lost)}
    assert check["violations"] == 2 and check["amount_impact"] == {"amount_local": str(lost)}
    assert check["sample"][0]["currency"] == cur
    grouped = [b for b in record["bridge"] if b["output"] == 3 and b["group"] is not None and b["measure"] == "count"]
    assert sum(b["input"] for b in grouped) == len(gl)
    assert {b["group"]["currency"]: b["changes"][-1]["change"] for b in grouped}[cur] == \
        -sum(1 for r in deleted if r["currency"] == cur)


def test_failing_reconcile_fails_the_run_with_its_difference(runner, finance):
    _add(finance, "ts04_reconcile_fail", """\
        checks:
          - name: unexplained
            reconcile: {from: input, to: 3, measures: [count]}
        """)
    with pytest.raises(LedgerflowError) as err:
        runner.run("ts04_reconcile_fail", PERIOD)
    assert getattr(err.value, "exit_code", None) == 4
    assert "unexplained" in str(err.value)


def test_runs_show_prints_the_bridge_and_json_holds_it(runner, finance):
    from ledgerflow.adapters.store.summaries import render_run
    record = runner.run("ts06_append_budgets", PERIOD)
    stored = runner.store.get_run(record["run_id"])
    assert stored["bridge"] == record["bridge"]  # what `runs show --json` prints
    text = render_run(stored)
    table = text.split("Bridge (")[1].splitlines()[1:5]
    assert table[0].split() == ["output", "group", "measure", "input", "changes", "quarantined", "output", "value"]
    assert table[1].split() == ["2", "all", "count", "10", "[1]", "4", "0", "14"]
    assert table[2].split() == ["2", "all", "SUM(amount_local)", "5074000.00", "[1]", "60000.00", "0.00", "5134000.00"]


def test_a_reconcile_without_a_bridge_never_passes(finance):
    from ledgerflow.adapters.run.bridge import reconcile_results
    from ledgerflow.compiler.compile import compile_project
    from ledgerflow.compiler.workspace import load_workspace
    ws = load_workspace(str(finance))
    checks = compile_project(ws, ws.find_project("ts04_delete_inactive")).plan.checks
    [result] = reconcile_results(checks, [])
    assert result["status"] == "failed" and "no bridge" in result["error"]

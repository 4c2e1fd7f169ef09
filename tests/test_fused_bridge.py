"""The bridge of a fused range (issue 30, docs/fused.md "The bridge"): each period's run records the same
``bridge`` as its period-by-period run, every figure, observed in the fused pass (no Spark job added).

The Spark test computes both ways in this process (tests/fused_support.py) on the finance sample over
2026-01..03: TS-04 (a delete) and TS-06 (an append)."""
from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from fused_support import STARTED, extend_finance
from ledgerflow.compiler.fused import PERIOD_KEY
from ledgerflow.compiler.fused_bridge import metric_for, period_metrics, period_values
from ledgerflow.compiler.periods import parse_period

MONTHS = ["2026-01", "2026-02", "2026-03"]


def test_every_aggregate_is_taken_once_per_period_over_that_periods_rows_only():
    metrics = [("input|live|count", "COUNT_IF(`_lf_origin` = 0)"), ("end|all|count", "COUNT(*)"),
               ("2|live|SUM(x)", "-SUM(IF(`_lf_deleted_by` = 2, `x`, NULL))")]
    periods = [parse_period(p) for p in MONTHS]
    out = dict(period_metrics(metrics, periods))
    assert list(out) == [metric_for(n, i) for n, _ in metrics for i in range(3)]
    for (name, _), i in [(m, i) for m in metrics for i in range(3)]:
        tree = sqlglot.parse_one(out[metric_for(name, i)], read="spark")
        conditions = [e for e in tree.find_all(exp.EQ) if e.this.name == PERIOD_KEY]
        assert [c.expression.this for c in conditions] == [MONTHS[i]], out[metric_for(name, i)]
    assert "COUNT_IF(" in out[metric_for("end|all|count", 0)]  # COUNT(*) of one period's rows
    assert out[metric_for("2|live|SUM(x)", 1)].startswith("-SUM(")
    values = {metric_for("end|all|count", 1): 4, metric_for("end|all|count", 0): 10}
    assert period_values(values, ["end|all|count"], 1) == {"end|all|count": 4}


def test_an_aggregate_the_rewrite_does_not_know_is_refused():
    with pytest.raises(ValueError, match="cannot restrict"):
        period_metrics([("m", "MAX(`x`)")], [parse_period("2026-01")])


@pytest.mark.parametrize("name", ["ts04_delete_inactive", "ts06_append_budgets"])
def test_each_periods_bridge_fused_is_its_period_by_period_bridge(spark, finance, name):
    from ledgerflow.adapters.inputs.resolution import resolve_inputs
    from ledgerflow.adapters.run import bridge
    from ledgerflow.adapters.run import compute as period_compute
    from ledgerflow.adapters.run.fused import compute_fused, period_context, period_outputs
    from ledgerflow.adapters.run.metrics import RunMetrics
    from ledgerflow.adapters.store.runstore import RunStore
    from ledgerflow.compiler.compile import compile_project
    from ledgerflow.compiler.fused import fuse
    from ledgerflow.compiler.workspace import load_workspace
    root = extend_finance(finance)
    store = RunStore(str(root))
    ws = load_workspace(str(root))
    compiled = compile_project(ws, ws.find_project(name))
    periods = [parse_period(p) for p in MONTHS]
    each, resolutions = {}, {}
    for p in periods:
        ctx = period_context(ws, compiled, p, STARTED)
        resolve_inputs(ctx, store)
        resolutions[p.identifier] = dict(ctx.resolutions)
        period_compute.compute(spark, ctx, RunMetrics(spark, ctx.run_id), lambda _l: None, {})
        each[p.identifier] = bridge.collect(ctx)
    fused = fuse(compiled, periods)
    result = compute_fused(spark, fused, resolutions, STARTED, lambda _l: None, ctx.row_identity)
    for p in periods:
        ctx = period_context(ws, compiled, p, STARTED)
        frames = {o.statement.operation.seq: o.frame for o in period_outputs(fused, result, p, {})}
        ctx.bridge = result.bridge.for_period(p, frames)
        got = bridge.collect(ctx)
        assert got == each[p.identifier], (p.identifier, got, each[p.identifier])
        assert got and not any(r.get("not_measured") for r in got)
    changes = {p: [c["change"] for r in each[p] if r["measure"] == "count" for c in r["changes"]] for p in MONTHS}
    if name == "ts04_delete_inactive":  # the delete removed lines in some month, not in every one
        assert any(c != 0 for cs in changes.values() for c in cs), changes
    else:  # the append added February's budget totals
        assert changes["2026-02"] and changes["2026-02"][0] > 0, changes
    assert len({repr(each[p]) for p in MONTHS}) == 3  # three different bridges, each period's own

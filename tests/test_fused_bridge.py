"""The bridge of a fused range (issue 30, docs/fused.md "The bridge"): each period's run records the same
``bridge`` as its period-by-period run, every figure, taken once for the range grouped by period (issue 45:
never one observed aggregate per period in the fused pass, which doubled a year's time at 10M rows).

The Spark test computes both ways in this process (tests/fused_support.py) on the finance sample over
2026-01..04 (April has no rows): TS-04 (a delete) and TS-06 (an append)."""
from __future__ import annotations

import pytest

from fused_support import STARTED, extend_finance
from ledgerflow.compiler.periods import parse_period

MONTHS = ["2026-01", "2026-02", "2026-03", "2026-04"]  # April: no rows, a bridge of zeros


def _carrying_operation_seq(root, seq: int) -> None:
    """Give every GL line an ``_operation_seq`` of ``seq`` (as an upstream ledgerflow output's rows may carry):
    the rows an operation ``seq`` creates can then not be told from the lines by the column."""
    path = root / "data" / "gl" / "v1" / "transactions.csv"
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0] + ",_operation_seq"] + [ln + f",{seq}" for ln in lines[1:] if ln]) + "\n")


@pytest.mark.parametrize("name,carried", [("ts04_delete_inactive", None), ("ts06_append_budgets", None),
                                          ("ts06_append_budgets", 1)])
def test_each_periods_bridge_fused_is_its_period_by_period_bridge(spark, finance, name, carried):
    """Every figure equal; for TS-06 the appended rows' figures are the written rows' with their
    ``_operation_seq`` (compiler/bridge_written.py), and, when the lines carry that seq too, the stage's."""
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
    if carried is not None:
        _carrying_operation_seq(root, carried)
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
    DataFrame = type(spark.range(1))  # the classic DataFrame, whose observe a run calls
    observed = []
    original = DataFrame.observe
    DataFrame.observe = lambda self, *a, **k: observed.append(a) or original(self, *a, **k)
    try:
        result = compute_fused(spark, fused, resolutions, STARTED, lambda _l: None, ctx.row_identity)
    finally:
        DataFrame.observe = original
    assert observed == []  # every period's figures grouped after the pass, none observed per period in it
    if name == "ts06_append_budgets":  # the appended rows' figures from the written rows, unless mistaken
        assert set(result.bridge.written) == {2}
        mistaken = {p: f.get("written|mistaken") for p, f in result.bridge.got[("stage", result.bridge.written[2][0])].items()}
        assert (("created", 2) in result.bridge.got) == bool(carried) and any(mistaken.values()) == bool(carried)
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
    assert len({repr(each[p]) for p in MONTHS}) == 4  # four different bridges, each period's own
    april = [r for r in each["2026-04"] if r["measure"] == "count"]
    assert april and all(r["input"] == 0 and r["output_value"] == 0 for r in april), april

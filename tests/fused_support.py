"""The exactness harness of fused execution (issue 30): a project's outputs computed period by period
and fused, in this process, with the same run start, compared row for row on every column."""
from __future__ import annotations

import datetime
from collections import Counter
from pathlib import Path

from ledgerflow.adapters.inputs.resolution import resolve_inputs
from ledgerflow.adapters.run import compute as period_compute
from ledgerflow.adapters.run.fused import compute_fused, period_context, period_outputs
from ledgerflow.adapters.run.fused_plan import broadcast_views, uniform_views
from ledgerflow.adapters.run.metrics import RunMetrics
from ledgerflow.adapters.store.runstore import RunStore
from ledgerflow.compiler.compile import compile_project
from ledgerflow.compiler.fused import fuse
from ledgerflow.compiler.periods import parse_period
from ledgerflow.compiler.workspace import load_workspace

STARTED = datetime.datetime(2026, 4, 2, 9, 30, 15, 123000)


def _quiet(_line: str) -> None:
    pass


def outputs_both_ways(spark, root: Path, project: str, periods: list[str], started=STARTED):
    """``(each, fused)``: per (period identifier, output seq) the frame period-by-period runs compute and the
    frame the fused statements give that period (both materialised)."""
    store = RunStore(str(root))
    ws = load_workspace(str(root), extra_datasets=store.registered_datasets)
    compiled = compile_project(ws, ws.find_project(project))
    parsed = [parse_period(p) for p in periods]
    each, resolutions = {}, {}
    for p in parsed:
        ctx = period_context(ws, compiled, p, started)
        resolve_inputs(ctx, store)
        resolutions[p.identifier] = dict(ctx.resolutions)
        for out in period_compute.compute(spark, ctx, RunMetrics(spark, ctx.run_id), _quiet, {}):
            each[(p.identifier, out.statement.operation.seq)] = out.frame
    fused = fuse(compiled, parsed, uniform=uniform_views(resolutions),
                 broadcast=broadcast_views(compiled, resolutions, 10 << 20))
    result = compute_fused(spark, fused, resolutions, started, _quiet, ctx.row_identity)
    got = {}
    for p in parsed:
        for out in period_outputs(fused, result, p, {}):
            got[(p.identifier, out.statement.operation.seq)] = out.frame
    return each, got


def fused_only(spark, root: Path, project: str, periods: list[str], started=STARTED):
    """The fused statements' outputs alone (materialised), per output seq."""
    store = RunStore(str(root))
    ws = load_workspace(str(root), extra_datasets=store.registered_datasets)
    compiled = compile_project(ws, ws.find_project(project))
    parsed = [parse_period(p) for p in periods]
    resolutions = {}
    for p in parsed:
        ctx = period_context(ws, compiled, p, started)
        resolve_inputs(ctx, store)
        resolutions[p.identifier] = dict(ctx.resolutions)
    fused = fuse(compiled, parsed, uniform=uniform_views(resolutions),
                 broadcast=broadcast_views(compiled, resolutions, 10 << 20))
    return compute_fused(spark, fused, resolutions, started, _quiet, ctx.row_identity).frames


def assert_identical(each: dict, fused: dict, by_rows: bool = False) -> dict:
    """Every output of every period: same columns and types, same row count, and no row of one missing
    from the other (``exceptAll`` both ways, so duplicates count; ``by_rows``: the collected rows compared as
    multisets instead, the same test without two shuffles per output, for tiny data). Returns the row counts."""
    assert sorted(each) == sorted(fused)
    counts = {}
    for key in each:
        a, b = each[key], fused[key]
        assert [(f.name, f.dataType) for f in a.schema.fields] == [(f.name, f.dataType) for f in b.schema.fields], key
        if by_rows:
            rows_a, rows_b = Counter(map(tuple, a.collect())), Counter(map(tuple, b.collect()))
            assert rows_a == rows_b, (key, list((rows_a - rows_b).items())[:3], list((rows_b - rows_a).items())[:3])
            counts[key] = sum(rows_a.values())
            continue
        n = a.count()
        assert b.count() == n, (key, n, b.count())
        missing, extra = a.exceptAll(b).collect(), b.exceptAll(a).collect()
        assert not missing and not extra, (key, missing[:3], extra[:3])
        counts[key] = n
    return counts


# ------------------------------------------------------------------ a finance sample over three months
def _append(path: Path, lines: list[str]) -> None:
    text = path.read_text()
    path.write_text(text + ("" if text.endswith("\n") else "\n") + "\n".join(lines) + "\n")


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new))


def extend_finance(root: Path) -> Path:
    """projects/finance with data for 2026-01..2026-03: GL lines of February (one posted on a day period)
    and March (two identical lines: ids from an ordinal among identical rows), a junk period that no run
    reads, accounts and cost centers that change by month (March has no cost centers: the join finds
    nothing), budgets for February, and an EUR closing rate that changes on 2026-03-01 (as-of per period)."""
    data = root / "data"
    _append(data / "gl/v1/transactions.csv", [
        "JE-101,1,2026-02-03,4100,CC-100,USD,1000.00,1000.00,Product revenue Feb,ERP,2026-02",
        "JE-101,2,2026-02-03,1200,CC-100,USD,1000.00,1000.00,AR Feb,ERP,2026-02",
        "JE-102,1,2026-02-14,5200,CC-300,EUR,400.00,,Travel Feb,EXPENSE,2026-02-14",
        "JE-102,2,2026-02-14,2100,CC-300,EUR,-400.00,,AP travel Feb,EXPENSE,2026-02",
        "JE-201,1,2026-03-09,4200,CC-200,EUR,700.00,,Consulting Mar,ERP,2026-03",
        "JE-201,1,2026-03-09,4200,CC-200,EUR,700.00,,Consulting Mar,ERP,2026-03",
        "JE-202,1,2026-03-30,6100,CC-400,GBP,50.00,,Depreciation Mar,ERP,2026-03",
        "JE-999,1,2026-02-01,4100,CC-100,USD,1.00,1.00,Junk period,ERP,2026-2-1",
    ])
    for v in ("v1", "v2"):
        lines = (data / f"accounts/{v}/accounts.csv").read_text().splitlines()[1:]
        feb = [ln.replace(",2026-01", ",2026-02") for ln in lines]
        mar = [ln.replace(",2026-01", ",2026-03").replace("Consulting Revenue,revenue", "Consulting Revenue,services")
               for ln in lines]
        _append(data / f"accounts/{v}/accounts.csv", feb + mar)
    ccs = (data / "cost_centers/v1/cost_centers.csv").read_text().splitlines()[1:]
    _append(data / "cost_centers/v1/cost_centers.csv",
            [ln.replace(",2026-01", ",2026-02").replace("Consulting UK,Consulting,EMEA", "Consulting UK,Consulting,AMER")
             for ln in ccs])
    _append(data / "budgets/v1/budgets.csv", ["BUD-002,1,4100,CC-100,USD,1500.00,original,2026-02",
                                              "BUD-002,2,4100,CC-100,USD,500.00,revised,2026-02"])
    _replace(data / "exchange_rates/v1/exchange_rates.csv", "EUR,USD,1.0920,closing,2026-01-01,",
             "EUR,USD,1.0920,closing,2026-01-01,2026-03-01\nEUR,USD,1.1000,closing,2026-03-01,")
    return root

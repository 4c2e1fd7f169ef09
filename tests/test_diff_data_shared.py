"""`ledgerflow diff --data` reads an input both sides load alike once (issue 31 point 5): one load of its files,
one materialisation, and the comparison's plan reads that input's rows from it on both sides, no file scan.

The repository is test_diff_data.py's: C0 the finance sample, C1 a corrected GBP rate (exchange_rates v2), so
`close_conversion` reads gl and accounts alike on both sides and exchange_rates v1 (BASE) and v2 (HEAD).
"""
from __future__ import annotations

import dataclasses
import json
from collections import Counter

from ledgerflow.adapters.diff.data_inputs import input_key
from ledgerflow.adapters.inputs import loaders

from test_diff_data import output_of, repo, run  # noqa: F401  (repo: the module's repository fixture)


def reads(plan, seen=None) -> list:
    """Every read a physical plan runs, each reused exchange and each cached relation once:
    ``("file", its root paths)`` for a file scan, ``("rows", rdd id, column names)`` for materialised rows."""
    seen = set() if seen is None else seen
    name, kind = plan.nodeName(), plan.getClass().getSimpleName()
    if kind == "AdaptiveSparkPlanExec":
        return reads(plan.executedPlan(), seen)
    if kind.endswith("QueryStageExec"):
        return reads(plan.plan(), seen)
    if name == "ReusedExchange":
        return []
    if kind == "InMemoryTableScanExec":
        builder = plan.relation().cacheBuilder()
        if builder.hashCode() in seen:
            return []
        seen.add(builder.hashCode())
        return reads(builder.cachedPlan(), seen)
    if kind == "FileSourceScanExec":
        paths = plan.relation().location().rootPaths()
        return [("file", " ".join(paths.apply(i).toString() for i in range(paths.size())))]
    if kind == "RDDScanExec":
        output = plan.output()
        return [("rows", plan.rdd().id(), tuple(output.apply(i).name() for i in range(output.size())))]
    children = plan.children()
    return [r for i in range(children.size()) for r in reads(children.apply(i), seen)]


def diff_noting_checkpoints(repo, monkeypatch) -> list:
    """Run test_diff_data's diff of ``close_conversion`` (C0 against C1; its figures checked) and return every
    frame it kept with ``localCheckpoint``, among them the joined rows of the two sides (columns ``b0``, ``h0``)."""
    from pyspark.sql.classic.dataframe import DataFrame

    kept = []
    local_checkpoint = DataFrame.localCheckpoint

    def noted_checkpoint(self, *args, **kwargs):
        kept.append(self)
        return local_checkpoint(self, *args, **kwargs)
    monkeypatch.setattr(DataFrame, "localCheckpoint", noted_checkpoint)
    result = run(repo["ws"], "--period", "2026-01", repo["c0"], repo["c1"], "--project", "close_conversion",
                 "--format", "json")
    monkeypatch.undo()
    assert result.exit_code == 4, result.output
    out = output_of(json.loads(result.stdout), "close_conversion")
    assert (out["rows"]["changed"], out["totals"][1]["change"]) == (2, "396.00")  # test_diff_data's figures
    return kept


def test_an_input_both_sides_load_alike_is_read_once(spark, repo, monkeypatch):
    loads = []
    load_input = loaders.load_input

    def counted_load(spark, load, *args, **kwargs):
        loads.append((load.dataset.name, load.version))
        return load_input(spark, load, *args, **kwargs)
    monkeypatch.setattr(loaders, "load_input", counted_load)
    kept = diff_noting_checkpoints(repo, monkeypatch)

    # gl and accounts: one load for both sides; exchange_rates: one per version
    assert Counter(name for name, _ in loads) == {"gl": 1, "accounts": 1, "exchange_rates": 2}
    assert sorted(v for name, v in loads if name == "exchange_rates") == [1, 2]

    # the comparison (the join of both sides' rows, which its first job computes) scans only the two versions of
    # the rates from files; both sides' GL lines come from one materialised set of rows
    joined = [frame for frame in kept if "b0" in frame.columns]
    assert len(joined) == 1
    found = reads(joined[0]._jdf.queryExecution().executedPlan())
    files = [text for kind, text in (r[:2] for r in found) if kind == "file"]
    assert len(files) == 2 and sum("exchange_rates/v1/" in f for f in files) == 1 \
        and sum("exchange_rates/v2/" in f for f in files) == 1, files
    gl_rows = [r for r in found if r[0] == "rows" and "journal_id" in r[2]]
    assert len(gl_rows) == 2 and len({r[1] for r in gl_rows}) == 1, gl_rows


def test_inputs_loaded_differently_are_not_shared():
    """The key of an input: its declared columns and types, version, locations, row ids and parameter values —
    not where the declaration was read from (a git export on the BASE side)."""
    from ledgerflow.compiler.model import ColumnDef, Dataset
    from ledgerflow.compiler.resolver import ResolvedLocation

    ds = Dataset("id-1", "gl", "active", "transactions", "period", [ColumnDef("amount", "decimal(18,2)")], [],
                 file="/ws/datasets/gl.yml")
    loc = ResolvedLocation("path", "/ws/data/gl/v1/transactions.csv", "csv")
    args = {"period_identifier": "2026-01"}
    item = loaders.InputLoad("ds_gl", ds, 1, [loc])
    elsewhere = dataclasses.replace(ds, file="/tmp/export/datasets/gl.yml", description="exported",
                                    columns=[ColumnDef("amount", "decimal(18,2)", location="somewhere")])
    assert input_key(dataclasses.replace(item, view="other_view", dataset=elsewhere), args) == input_key(item, args)
    retyped = dataclasses.replace(ds, columns=[ColumnDef("amount", "decimal(18,4)")])
    moved = [dataclasses.replace(loc, target="/ws/x.csv")]
    for other, other_args in [(dataclasses.replace(item, dataset=retyped), args),
                              (dataclasses.replace(item, version=2), args),
                              (dataclasses.replace(item, locations=moved), args),
                              (dataclasses.replace(item, row_ids=False), args),
                              (item, {"period_identifier": "2026-02"})]:
        assert input_key(other, other_args) != input_key(item, args)

"""A period's run observes the figures of the rows an ``append`` or an ``aggregate`` created on those rows, under
the output's write, with their ``_operation_seq`` (issue 45; compiler/bridge_written.py, docs/checks.md "What
the bridge costs"), not on every working row of the stage: the same bridge, every figure, as when the stage
observes them; and when an input's rows carry that seq of their own, the figures are taken from the stage's
rows again (one more job), never from the mistaken rows.

The Spark tests compute each period both ways in this process, on the finance sample over 2026-01..04 (April has
no rows): TS-06 (an append of budget totals), as shipped and with every GL line carrying ``_operation_seq`` 1."""
from __future__ import annotations

import pytest

from cli_support import add_project
from fused_support import STARTED, extend_finance
from ledgerflow.compiler.bridge import bridge_plan
from ledgerflow.compiler.bridge_written import Stamps, stamped, written_creates
from ledgerflow.compiler.compile import compile_project
from ledgerflow.compiler.workspace import load_workspace
from test_fused_bridge import MONTHS, _carrying_operation_seq

APPEND = """
  - seq: 1
    name: Append budget totals
    type: append
    arguments:
      source: {dataset_id: budgets}
      aggregation:
        group_by: [account_code, cost_center_code, currency]
        aggregations:
          - {column: amount_local, expression: SUM(amount)}"""


def _project(root, name: str, columns: str = "") -> None:
    add_project(root, name, APPEND + f"""
  - seq: 2
    name: Write
    type: output
    arguments:
      destination: {{path: out/{name}, format: parquet}}{columns}""")


def _bridges(spark, root, name: str, stamps: bool = True) -> tuple[dict, list, list]:
    """(period -> the bridge its run records, the names each observation holds, the figures read from staged
    files), the created rows' figures read from the staged files (``stamps``) or, as before, observed on the
    stage's rows."""
    DataFrame = type(spark.range(1))  # the classic DataFrame, whose observe a run calls

    from ledgerflow.adapters.run import compute, written_figures
    from ledgerflow.adapters.run.runner import Runner
    bridges, observed, read = {}, [], []
    original, kept, reader = DataFrame.observe, compute.stamped, written_figures.created_figures
    DataFrame.observe = lambda self, o, *a: observed.append([str(c) for c in a]) or original(self, o, *a)
    compute.stamped = stamped if stamps else (lambda _plan: Stamps())
    written_figures.created_figures = lambda *a: read.append(reader(*a)) or read[-1]
    try:
        runner = Runner(str(root), echo=lambda _s: None, session_factory=lambda: spark)
        for month in MONTHS:
            record = runner.run(name, month)
            assert record["status"] == "completed"
            bridges[month] = record["bridge"]
    finally:
        DataFrame.observe, compute.stamped, written_figures.created_figures = original, kept, reader
    return bridges, observed, read


@pytest.mark.parametrize("carried", [None, 1])
def test_the_appended_rows_figures_read_from_the_staged_files_are_the_stages(spark, finance, carried):
    root = extend_finance(finance)
    if carried is not None:
        _carrying_operation_seq(root, carried)
    _project(root, "with_seq")
    before, _, _ = _bridges(spark, root, "with_seq", stamps=False)
    got, observed, read = _bridges(spark, root, "with_seq")
    assert got == before
    assert all(not any(r.get("not_measured") for r in rows) for rows in got.values())
    assert got["2026-02"][0]["changes"][0]["change"] > 0  # February's budget totals were appended
    assert len(read) == len(MONTHS) and any(r["1|live|count"] > 0 for r in read)  # one read per period's run
    # no observation holds a figure of the appended rows; the stage's, only whether a line carries their seq,
    # when a GL location has an _operation_seq column: else there is nothing to observe on the stage
    assert not any("1|live|" in n for names in observed for n in names)
    stage = [names for names in observed if any("written|mistaken" in n for n in names)]
    assert len(stage) == (len(MONTHS) if carried else 0)
    assert len(observed) == len(MONTHS) * (2 if carried else 1)  # and the written rows' under the write


def test_without_the_stages_job_lines_carrying_the_seq_would_be_counted_as_appended(spark, finance, monkeypatch):
    """The fallback is what keeps the figures right: taking them from the written rows regardless counts the
    GL lines that carry seq 1 as appended budget totals."""
    from ledgerflow.adapters.run import bridge
    root = extend_finance(finance)
    _carrying_operation_seq(root, 1)
    _project(root, "with_seq")
    before, _, _ = _bridges(spark, root, "with_seq", stamps=False)
    monkeypatch.setattr(bridge, "MISTAKEN", "never there")
    got, _, _ = _bridges(spark, root, "with_seq")
    assert got["2026-02"] != before["2026-02"]


def test_an_output_that_does_not_write_operation_seq_keeps_the_figures_on_the_stage(finance):
    """Its rows cannot tell which were appended: the stage observes them (and a fused range takes them from the
    stage's rows, never from a column its written files do not have)."""
    _project(finance, "without_seq", "\n      columns: [journal_id, account_code, cost_center_code, currency, "
                                      "amount_local, _period]")
    _project(finance, "with_seq")
    ws = load_workspace(str(finance))
    for name, creates in (("without_seq", ()), ("with_seq", (1,))):
        plan = compile_project(ws, ws.find_project(name)).plan
        assert written_creates(bridge_plan(plan), stamped(plan), 2) == creates, name


def test_figures_read_from_parquet_are_exact_and_skip_row_groups_without_the_seq(tmp_path):
    """Sums past 38 digits are exact (Arrow's own sum of such a column wraps around), a NULL counts as 0, and a row
    group whose footer says it holds no created row is never read."""
    from decimal import Decimal, localcontext

    import pyarrow as pa
    import pyarrow.parquet as pq

    from ledgerflow.adapters.run.written_figures import created_figures, output_figures
    from ledgerflow.compiler.bridge import BridgeMeasure
    big = Decimal("9" * 36 + ".99")
    with localcontext() as exact:
        exact.prec = 100
        big2, big4 = big * 2, big * 4
    seq = [0, 0, 3, 3, 3]
    wide = [big, big, big, big, None]
    small = [Decimal("1.10"), None, Decimal("2.25"), Decimal("-0.05"), Decimal("0.01")]
    table = pa.table({"_operation_seq": pa.array(seq, pa.int32()), "wide": pa.array(wide, pa.decimal128(38, 2)),
                      "small": pa.array(small, pa.decimal128(18, 2))})
    pq.write_table(table, tmp_path / "part-00000.parquet", row_group_size=2)  # groups: [0, 0], [3, 3], [3]
    measures = (BridgeMeasure("count"), BridgeMeasure("SUM(wide)", "wide", 2), BridgeMeasure("SUM(small)", "small", 2))
    out = output_figures(str(tmp_path), measures, (3,), "live")
    assert out["count"] == 5 and out["SUM(wide)"] == big4 and out["SUM(small)"] == Decimal("3.31")
    assert out["3|live|count"] == 3 and out["3|live|SUM(wide)"] == big2 and out["3|live|SUM(small)"] == Decimal("2.21")
    read = []
    original = pq.ParquetFile.read_row_groups
    pq.ParquetFile.read_row_groups = lambda self, groups, **k: read.append(list(groups)) or original(self, groups, **k)
    try:
        created = created_figures(str(tmp_path), (3,), "live", measures)
    finally:
        pq.ParquetFile.read_row_groups = original
    assert read == [[1, 2]]  # the first row group holds only 0s
    assert created == {k: v for k, v in out.items() if k.startswith("3|")}
    assert created_figures(str(tmp_path), (7,), "live", measures)["7|live|count"] == 0


def test_a_fused_ranges_parquet_output_gives_its_figures_from_its_files(spark, finance, tmp_path, monkeypatch):
    """A fused range's output written as Parquet: each period's value at the end and its appended rows' figures
    read from the period's prestaged files (no Spark read back), every figure as the period's own run records."""
    import shutil

    from fused_support import STARTED
    from ledgerflow.adapters.run import fused_writes, written_figures
    from ledgerflow.adapters.run.fused import run_range
    from ledgerflow.adapters.run.runner import Runner
    from ledgerflow.compiler.periods import parse_period
    read, spark_reads = [], []
    original = written_figures.output_figures
    monkeypatch.setattr(written_figures, "output_figures", lambda *a: read.append(a) or original(*a))
    monkeypatch.setattr(fused_writes, "read_back", lambda *a: spark_reads.append(a))
    root = extend_finance(finance)
    _project(root, "with_seq")
    twin = shutil.copytree(root, tmp_path / "twin")
    months = ["2026-01", "2026-02", "2026-03"]
    lines: list[str] = []
    runner = Runner(str(root), echo=lines.append, session_factory=lambda: spark)
    results = dict((p.identifier, r) for p, r in run_range(runner, "with_seq", [parse_period(m) for m in months],
                                                           started_at=STARTED))
    assert any("(fused, 3 periods)" in line for line in lines), lines
    assert len(read) == 3 and spark_reads == []
    assert all(a[2] == (1,) for a in read)  # with the appended rows' figures
    each = Runner(str(twin), echo=lambda _s: None, session_factory=lambda: spark)
    for m in months:
        assert results[m]["bridge"] == each.run("with_seq", m)["bridge"], m
    assert results["2026-02"]["bridge"][0]["changes"][0]["change"] > 0

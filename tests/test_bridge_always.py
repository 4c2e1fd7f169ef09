"""``bridge: always`` in ledgerflow.yml (docs/checks.md "The bridge"): every run records its bridge, a project
without checks too, figure for figure what the run wrote, in a period's own run and in a fused range (each
period's bridge what its own run records). The setting is validated like every other key."""
from __future__ import annotations

import shutil
from decimal import Context, Decimal, localcontext

from cli_support import cli, describe, read_output
from fused_support import STARTED, extend_finance
from test_bridge import PERIOD, _figures, _rows

from ledgerflow.adapters.run.runner import Runner
from ledgerflow.compiler.periods import parse_period


def _always(root) -> None:
    with open(root / "ledgerflow.yml", "a") as fh:
        fh.write("bridge: always\n")


def _setting(root, value) -> None:
    """``bridge: value`` in ``root``'s ledgerflow.yml (None: the line removed, the default)."""
    lines = [line for line in (root / "ledgerflow.yml").read_text().splitlines() if not line.startswith("bridge:")]
    (root / "ledgerflow.yml").write_text("\n".join(lines + ([f"bridge: {value}"] if value else [])) + "\n")


def test_the_setting_is_validated_and_defaults_to_every_run(finance):
    from ledgerflow.compiler.workspace import load_workspace
    assert load_workspace(str(finance)).config.bridge == "always"
    with open(finance / "ledgerflow.yml", "a") as fh:
        fh.write("bridge: allways\n")
    result = cli(finance, "validate")
    assert result.exit_code == 1, describe(result)
    assert "YAML-005" in result.output and "'bridge'" in result.output and "always, with_checks, off" in result.output
    assert "always" in result.output.split("allways", 1)[1]  # the closest choice is suggested
    for setting in ("off", "with_checks", "always"):
        text = (finance / "ledgerflow.yml").read_text()
        (finance / "ledgerflow.yml").write_text(text[:text.index("bridge:")] + f"bridge: {setting}\n")
        assert load_workspace(str(finance)).config.bridge == setting


def test_bridge_off_refuses_a_reconcile_check_with_its_location(finance):
    """``bridge: off`` records no bridge, so a ``reconcile`` (judged on the bridge) could never be judged:
    validation names the check, its file and line, and nothing runs."""
    with open(finance / "ledgerflow.yml", "a") as fh:
        fh.write("bridge: off\n")
    result = cli(finance, "validate")
    assert result.exit_code == 1, describe(result)
    assert "CHK-014" in result.output and "bridge: off" in result.output and ".yml:" in result.output
    assert "with_checks" in result.output  # the hint names the settings that record it


def test_a_project_without_checks_records_its_bridge_when_the_workspace_asks(spark, finance):
    """TS-03 declares no checks: with ``bridge: always`` its run records the bridge, built here by hand from
    the data file (input) and the written rows (output); the update's change is the difference."""
    runner = Runner(str(finance), echo=lambda _s: None, session_factory=lambda: spark)
    for setting in ("off", "with_checks"):  # neither records the bridge of a project without checks
        _setting(finance, setting)
        assert "bridge" not in runner.run("ts03_fx_conversion", PERIOD)
    _setting(finance, None)  # the default: every run records it
    record = runner.run("ts03_fx_conversion", PERIOD)
    assert "checks" not in record or not record["checks"]
    start = _figures(_rows(finance / "data/gl/v1/transactions.csv"))
    _, written = read_output(spark, record, 2)
    end = _figures([{k: "" if v is None else str(v) for k, v in r.items()} for r in written])
    assert end["count"] == start["count"] == record["outputs"][0]["rows"]
    changed = end["SUM(amount_reporting)"] - start["SUM(amount_reporting)"]
    assert changed != 0  # the conversion moves the reporting amounts: a bridge of zeros would not pass
    got = {b["measure"]: b for b in record["bridge"]}
    assert set(got) == {"count", "SUM(amount_local)", "SUM(amount_reporting)"}
    for measure, b in got.items():
        as_value = int if measure == "count" else Decimal
        assert (b["group"], as_value(b["input"]), as_value(b["output_value"])) == (None, start[measure], end[measure])
        assert [c["seq"] for c in b["changes"]] == [1] and b["quarantined"] in (0, "0.00")
    assert Decimal(got["SUM(amount_reporting)"]["changes"][0]["change"]) == changed
    assert Decimal(got["SUM(amount_local)"]["changes"][0]["change"]) == 0


def test_a_fused_range_records_each_periods_bridge_as_its_own_run_does(spark, finance, tmp_path, monkeypatch):
    """...and its output is still written once for the range (prestaged), the observations read after that
    write: the bridge does not make a fused range materialise its outputs."""
    from ledgerflow.adapters.run import fused_writes
    from ledgerflow.adapters.run.fused import run_range
    written_once: list = []
    original = fused_writes.prestage_outputs

    def spy(frames, destinations, run_id):
        written_once.extend(frames)
        return original(frames, destinations, run_id)
    monkeypatch.setattr(fused_writes, "prestage_outputs", spy)
    root = extend_finance(finance)
    _always(root)
    twin = shutil.copytree(root, tmp_path / "twin")
    months = ["2026-01", "2026-02", "2026-03"]
    lines: list[str] = []
    runner = Runner(str(root), echo=lines.append, session_factory=lambda: spark)
    results = dict((p.identifier, r) for p, r in run_range(runner, "ts03_fx_conversion",
                                                           [parse_period(m) for m in months], started_at=STARTED))
    assert any("(fused, 3 periods)" in line for line in lines), lines  # computed once, for the range
    assert written_once == [2]  # written once for the three periods
    each = Runner(str(twin), echo=lambda _s: None, session_factory=lambda: spark)
    bridges = set()
    for m in months:
        own = each.run("ts03_fx_conversion", m)
        assert results[m]["bridge"] == own["bridge"], m
        bridges.add(repr(own["bridge"]))
        assert {b["measure"]: b["output_value"] for b in own["bridge"]}["count"] == own["outputs"][0]["rows"]
    assert len(bridges) == 3  # each period's own figures


def test_a_registered_total_is_summed_by_the_bridge_of_the_project_reading_it(spark, finance):
    """close_consolidation registers totals, SUM(amount_reporting): a decimal(28,2). The bridge sums a decimal
    of 28 digits with a scale of at most 6 exactly, so close_reporting's bridge has SUM(total_reporting), from
    the registered rows to the report's, in the batch that ran the whole close."""
    import json
    _always(finance)
    result = cli(finance, "run", "--select", "close_conversion+", "--period", PERIOD)
    assert result.exit_code == 0, describe(result)
    records = {}
    for path in (finance / "target/runs").glob("*/run.json"):
        rec = json.loads(path.read_text())
        records[rec["project"]["name"]] = rec
    report = records["close_reporting"]
    _, written = read_output(spark, report, 2)
    _, registered = read_output(spark, records["close_consolidation"], 3)
    total = sum(Decimal(str(r["total_reporting"])) for r in written)
    assert total == sum(Decimal(str(r["total_reporting"])) for r in registered) != 0
    got = {b["measure"]: b for b in report["bridge"]}
    assert set(got) == {"count", "SUM(total_reporting)"}
    b = got["SUM(total_reporting)"]
    assert (Decimal(b["input"]), Decimal(b["output_value"])) == (total, total)
    assert b["output_value"] == f"{total:.2f}" and [c["change"] for c in b["changes"]] == ["0.00"]


def test_rows_computed_for_no_record_observe_no_bridge(spark, finance):
    """A ``diff --data`` side computes an output's rows for no run record: with ``bridge: always`` (and with
    checks) it observes no bridge, whose figures nothing would read."""
    from ledgerflow.adapters.diff.data_command import output_frames
    from ledgerflow.adapters.diff.data_sides import side_context
    from ledgerflow.adapters.inputs.resolution import resolve_inputs
    from ledgerflow.adapters.run.context import utcnow
    from ledgerflow.adapters.store.runstore import RunStore
    from ledgerflow.compiler.compile import compile_project
    from ledgerflow.compiler.periods import parse_period
    from ledgerflow.compiler.workspace import load_workspace
    _always(finance)
    ws = load_workspace(str(finance))
    for name in ("ts03_fx_conversion", "ts04_delete_inactive"):  # no checks; checks
        side = side_context(ws, compile_project(ws, ws.find_project(name)), parse_period(PERIOD), utcnow(), "head",
                            "HEAD")
        resolve_inputs(side.ctx, RunStore(str(finance)))
        frames, _ = output_frames(spark, side)
        assert side.ctx.bridge is None and frames, name
        plans = [f._jdf.queryExecution().optimizedPlan().toString() for f in frames.values()]
        assert not any("CollectMetrics" in p for p in plans), name


WIDE = """id: 0a000000-0000-4000-8000-0000000000ee
name: wide
status: active
description: Amounts of 28 digits with a scale of 6.
versions:
  - {version: 1}
main_table:
  name: wide
  temporal_mode: period
  columns:
    - {name: id, type: string}
    - {name: amount, type: "decimal(28,6)"}
"""
WIDE_ROWS = ["a,1234567890123456789012.123456,2026-01", "b,9876543210987654321098.765432,2026-01",
             "c,-1111111111111111111111.111111,2026-01"]


def test_a_bridge_of_28_digit_decimals_with_a_scale_of_6_is_exact(spark, finance):
    """The widest decimal the bridge sums (28 digits, scale 6): an update that moves two rows by 0.000001 and a
    delete, figure for figure against Python's exact arithmetic."""
    from cli_support import add_project
    (finance / "datasets" / "wide.yml").write_text(WIDE)
    folder = finance / "data" / "wide" / "v1"
    folder.mkdir(parents=True)
    (folder / "wide.csv").write_text("id,amount,_period\n" + "\n".join(WIDE_ROWS) + "\n")
    add_project(finance, "wide_moves", """
        - {seq: 1, name: Nudge, type: update, selector: 'wide.id <> "c"', arguments: {assignments: [{column: amount, expression: 'wide.amount + 0.000001'}]}}
        - {seq: 2, name: Drop b, type: delete, selector: 'wide.id = "b"', arguments: {}}
        - {seq: 3, name: Write, type: output, arguments: {destination: {path: out/wide, format: parquet}}}
        """, input_dataset="wide")
    _always(finance)
    runner = Runner(str(finance), echo=lambda _s: None, session_factory=lambda: spark)
    record = runner.run("wide_moves", PERIOD)
    values = {r.split(",")[0]: Decimal(r.split(",")[1]) for r in WIDE_ROWS}
    with localcontext(Context(prec=60)):  # Python's default 28 digits would round a + b (29 digits)
        start = values["a"] + values["b"] + values["c"]
        dropped = values["b"] + Decimal("0.000001")
        end = values["a"] + Decimal("0.000001") + values["c"]
    nudged = Decimal("0.000002")
    got = {b["measure"]: b for b in record["bridge"]}
    assert set(got) == {"count", "SUM(amount)"}, got
    b = got["SUM(amount)"]
    assert Decimal(b["input"]) == start and b["input"] == f"{start:.6f}"
    assert [(c["seq"], Decimal(c["change"])) for c in b["changes"]] == [(1, nudged), (2, -dropped)]
    assert Decimal(b["output_value"]) == end
    written = spark.read.parquet(record["outputs"][0]["location"]).collect()
    assert len(written) == record["outputs"][0]["rows"] == 2
    with localcontext(Context(prec=60)):
        assert sum(r["amount"] for r in written) == end

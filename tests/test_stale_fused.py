"""``run --stale`` over several periods runs as ``run --period RANGE`` does (docs/commands.md "Stale periods"):
a project stale for two periods or more is fused over them, a closed one is listed ``closed`` and not run, the
projects upstream first, each downstream run reading what its upstream registered for that period in this
batch; the rows are those of the same stale runs period by period (``--mode each``)."""
from __future__ import annotations

import re
import shutil

from cli_support import cli, describe, edit, read_output, record
from fused_support import extend_finance

MONTHS = "2026-01..2026-03"
CHAIN = ("close_conversion", "close_consolidation", "close_reporting")


def _outcomes(stdout: str) -> dict[tuple[str, str], tuple[str, str]]:
    """(period, project) -> (status, run id or reason) from a batch summary of several periods."""
    out = {}
    for line in stdout.split("project by period:", 1)[1].splitlines():
        m = re.match(r"^  (\d{4}-\d{2})\s+(\S+)\s+(completed|failed|skipped|closed)\s+\S+\s+\S+\s+(.*)$", line)
        if m:
            out[(m.group(1), m.group(2))] = (m.group(3), m.group(4))
    return out


def _published_then_stale(ws) -> None:
    """The close chain run for the three months; then the GL file changes, so every period of the chain that
    reads it is stale; February of close_conversion is closed."""
    first = cli(ws, "run", "--select", "close_conversion+", "--period", MONTHS)
    assert first.exit_code == 0, describe(first)
    edit(ws, "data/gl/v1/transactions.csv", "Product revenue Feb", "Product revenue February")
    assert cli(ws, "periods", "close", "2026-02", "--project", "close_conversion", "--by", "alice").exit_code == 0


def test_stale_periods_of_a_project_are_fused_and_write_what_each_period_writes(spark, finance, tmp_path):
    root = extend_finance(finance)
    twin = shutil.copytree(root, tmp_path / "twin")  # before any run: the same steps, run period by period
    _published_then_stale(root)
    _published_then_stale(twin)
    fused = cli(root, "run", "--stale", "--period", MONTHS)
    assert fused.exit_code == 0, describe(fused)
    assert "close_conversion: 2 periods fused (2026-01, 2026-03)" in fused.stdout, fused.stdout
    got = _outcomes(fused.stdout)
    assert got[("2026-02", "close_conversion")][0] == "closed"
    done = {k: rid for k, (status, rid) in got.items() if status == "completed"}
    assert {p for _, p in done} == set(CHAIN) and all(m in ("2026-01", "2026-03") for m, _ in done), got
    each = cli(twin, "run", "--stale", "--period", MONTHS, "--mode", "each")
    assert each.exit_code == 0, describe(each)
    assert "fused" not in each.stdout.split("Batch", 1)[0].split("Stale:", 1)[1]
    want = {k: rid for k, (status, rid) in _outcomes(each.stdout).items() if status == "completed"}
    assert set(want) == set(done)
    for (month, project), rid in done.items():
        rec, other = record(root, rid), record(twin, want[(month, project)])
        assert rec["batch_id"] == record(root, done[(month, "close_conversion")])["batch_id"]
        if project != "close_conversion":  # what its upstream registered for that period, in this batch
            upstream = {u["project"]: u["run_id"] for u in rec["upstream_runs"]}
            assert set(upstream.values()) <= set(done.values()), (project, month, upstream)
        seq = rec["outputs"][0]["operation_seq"]
        _, rows = read_output(spark, rec, seq)
        _, expected = read_output(spark, other, seq)
        strip = lambda rs: sorted(repr({k: v for k, v in r.items() if k not in ("_row_id", "_updated_at")})
                                  for r in rs)  # noqa: E731
        assert strip(rows) == strip(expected) and rows, (month, project)

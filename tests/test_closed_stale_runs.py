"""Closed and stale periods with real runs (issue 31 points 1 and 4): the month-end close chain of the finance
sample, in-process on the shared SparkSession. One scenario, because every step needs the runs before it."""
from __future__ import annotations

import re

from cli_support import cli, describe, edit, record

GL = "data/gl/v1/transactions.csv"
CHAIN = ("close_conversion", "close_consolidation", "close_reporting")


def _summary(stdout: str) -> dict[str, tuple[str, str]]:
    """project -> (status, run id or reason) from a one-period batch summary."""
    out = {}
    for line in stdout.split("Summary for period", 1)[1].splitlines()[2:]:
        m = re.match(r"^  (\S+)\s+(completed|failed|skipped|closed)\s+\S+\s+\S+\s+(.*)$", line)
        if m:
            out[m.group(1)] = (m.group(2), m.group(3))
    return out


def _status(ws) -> str:
    r = cli(ws, "status", "--period", "2026-01")
    assert r.exit_code == 0, describe(r)
    return r.stdout


def test_closed_projects_in_a_batch_status_and_run_stale(spark, finance):
    first = cli(finance, "run", "--select", "close_conversion+", "--period", "2026-01")
    assert first.exit_code == 0, describe(first)
    converted = {p: rid for p, (_, rid) in _summary(first.stdout).items()}
    assert cli(finance, "periods", "close", "2026-01", "--project", "close_conversion", "--by", "alice").exit_code == 0

    # a closed upstream is listed closed and not run; downstream runs on what it published; exit 0
    again = cli(finance, "run", "--select", "close_conversion+", "--period", "2026-01")
    assert again.exit_code == 0, describe(again)
    rows = _summary(again.stdout)
    assert rows["close_conversion"][0] == "closed" and "closed by alice at" in rows["close_conversion"][1]
    assert rows["close_consolidation"][0] == rows["close_reporting"][0] == "completed"
    assert "0 failed, 0 skipped, 1 closed" in again.stdout
    reads = record(finance, rows["close_consolidation"][1])["resolver_snapshot"]["resolutions"]
    assert [r["version"] for r in reads.values() if r["dataset_name"] == "close_converted"] == [1]
    assert "Up to date: none of the 3 published" in _status(finance)

    # a late journal: the closed one is stale and needs restate; it makes nothing downstream stale
    edit(finance, GL, "Product revenue JP", "Product revenue Japan")
    text = _status(finance)
    assert "Stale: 1 of 3" in text and f"close_conversion  run {converted['close_conversion']}  closed by alice" in text
    assert "changed transactions.csv" in text
    stale_closed = cli(finance, "run", "--stale", "--period", "2026-01")
    assert stale_closed.exit_code == 0, describe(stale_closed)
    assert "Nothing to run: every stale project-period is closed" in stale_closed.stdout
    assert "Batch" not in stale_closed.stdout and "Run " not in stale_closed.stdout

    # reopened: the chain is stale, upstream first
    assert cli(finance, "periods", "reopen", "2026-01", "--project", "close_conversion").exit_code == 0
    text = _status(finance)
    assert "Stale: 3 of 3" in text and "upstream project 'close_conversion' is stale for 2026-01" in text
    fixed = cli(finance, "run", "--stale", "--period", "2026-01")
    assert fixed.exit_code == 0, describe(fixed)
    done = _summary(fixed.stdout)
    assert list(done) == list(CHAIN) and {s for s, _ in done.values()} == {"completed"}
    assert fixed.stdout.index("[1/3] close_conversion") < fixed.stdout.index("[3/3] close_reporting")
    reporting = record(finance, done["close_reporting"][1])
    assert [u["project"] for u in reporting["upstream_runs"]] == ["close_consolidation"]
    assert "Up to date" in _status(finance)
    nothing = cli(finance, "run", "--stale", "--period", "2026-01")
    assert nothing.exit_code == 0 and "Up to date" in nothing.stdout and "Batch" not in nothing.stdout


def test_a_closed_period_inside_a_fused_range_is_listed_closed_and_the_rest_fused(spark, finance):
    assert cli(finance, "periods", "close", "2026-02", "--project", "ts01_output_only", "--by", "alice").exit_code == 0
    r = cli(finance, "run", "ts01_output_only", "--period", "2026-01..2026-03", "--mode", "fused")
    assert r.exit_code == 0, describe(r)
    assert "ts01_output_only: 2 periods fused (2026-01, 2026-03)" in r.stdout
    lines = [l.split() for l in r.stdout.split("project by period:", 1)[1].splitlines() if "ts01_output_only" in l]
    assert [(l[0], l[2]) for l in lines] == [("2026-01", "completed"), ("2026-02", "closed"), ("2026-03", "completed")]
    assert "2 completed, 0 failed, 0 skipped, 1 closed" in r.stdout

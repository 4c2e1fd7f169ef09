"""The range benchmark's ``--quick`` check inside the test session: pipeline P over the first quarter of
20,000 generated source-shaped GL rows, fused (one ``ledgerflow run`` process for the range) and period by
period (one process per month), as whole processes; ``bench/range_cost.py`` compares what they wrote and
exits 0 only when the rows agree. Its times are printed, never judged here (the measured figures are in
BENCHMARKS.md). Run as a test so that it shares the session's class archive and overlaps the other worker's
tests instead of running alone after them (it was a phase of ``.ci/run`` of its own)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import REPO, cli_env

pytestmark = pytest.mark.spark


def test_the_range_benchmarks_fused_quarter_writes_what_each_month_writes(tmp_path):
    out = tmp_path / "range_quick.txt"
    proc = subprocess.run([sys.executable, "-m", "bench.range_cost", "--quick", "--out", str(out)], cwd=REPO,
                          env=cli_env(LEDGERFLOW_BENCH_DATA=str(tmp_path / "data")), capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert "rows agree: True" in proc.stdout, proc.stdout[-4000:]
    assert "| yes (" in out.read_text()  # the results table's "identical rows" column

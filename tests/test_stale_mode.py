"""``run --stale`` runs period by period: ``--mode fused`` with it is said to be a usage error (exit 2), before
anything is resolved or Spark starts, instead of being ignored."""
from __future__ import annotations

from cli_support import cli


def test_stale_with_mode_fused_is_a_usage_error_and_nothing_runs(finance):
    result = cli(finance, "run", "--stale", "--period", "2026-01..2026-03", "--mode", "fused")
    assert result.exit_code == 2
    assert "--stale runs the stale project-periods period by period" in result.stderr
    assert "--mode fused does not apply" in result.stderr
    assert not (finance / "target" / "runs").exists() or not any((finance / "target" / "runs").iterdir())

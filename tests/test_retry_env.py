"""`retry BATCH` publishes in the environment the batch ran in, unless --env or $LEDGERFLOW_ENV names another: a
dev batch's retry never lands in prod unasked (as a replay's never does)."""
from __future__ import annotations

import re

from cli_support import cli, describe

OUT = "data/ts03_fx_converted/v1/ts03_fx_converted.csv"


def test_a_retry_of_a_dev_batch_publishes_in_dev(spark, finance, monkeypatch):
    monkeypatch.delenv("LEDGERFLOW_ENV", raising=False)
    ws = finance
    project = ws / "projects" / "ts03_fx_conversion.yml"
    project.write_text(project.read_text().replace("input_dataset_id: gl\n",
                                                   "input_dataset_id: gl\nresolver_overrides: {gl: monthly}\n"))
    february = ws / "data" / "gl" / "monthly" / "2026-02.csv"
    good = february.read_text()
    february.write_text(good + 'JE-999,1,2026-02-01,"unterminated\n')  # February fails, January completes
    first = cli(ws, "run", "ts03_fx_conversion", "--period", "2026-01..2026-02", "--env", "dev", "--mode", "each")
    assert first.exit_code != 0, describe(first)
    batch = re.search(r"Batch ([0-9a-f-]{36})", first.stdout + first.stderr).group(1)
    february.write_text(good)
    retried = cli(ws, "retry", batch[:13])  # a unique prefix, as retry takes it
    assert retried.exit_code == 0, describe(retried)
    out = ws / OUT
    assert not (out / "_period=2026-02").exists() and not (out / "_period=2026-01").exists()
    assert sorted(p.name for p in (out / ".lf_envs" / "dev").iterdir()) == ["_period=2026-01", "_period=2026-02"]

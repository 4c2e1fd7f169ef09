"""A version a restatement superseded stays readable for good (docs/guarantees.md): no later commit that replaces a
partition showing it, and no `runs clean`, deletes it; the folders of links the restatement exchanged out go."""
from __future__ import annotations

from pathlib import Path

from cli_support import cli, describe, record, run_id_of

TS03 = "ts03_fx_conversion"
OUT = Path("data/ts03_fx_converted/v1/ts03_fx_converted.csv")


def _ok(ws, *args):
    result = cli(ws, *args)
    assert result.exit_code == 0, describe(result)
    return result


def _shown(ws) -> str:
    return (ws / OUT / "_period=2026-01" / ".lf_version").read_text().strip()


def test_superseded_versions_survive_later_runs_and_runs_clean(spark, finance):
    ws = finance
    versions = ws / OUT / ".lf_versions" / "_period=2026-01"
    _ok(ws, "run", TS03, "--period", "2026-01", "--env", "dev")
    _ok(ws, "promote", TS03, "--from", "dev", "--period", "2026-01")
    first = _shown(ws)  # prod and dev both show it
    _ok(ws, "periods", "close", "2026-01")
    restated = record(ws, run_id_of(_ok(ws, "restate", TS03, "--period", "2026-01", "--reason", "late journal")))
    assert [o["version_folder"] for o in restated["restatement"]["superseded_outputs"]] == [str(versions / first)]
    assert not [p.name for p in versions.iterdir() if p.name.startswith(".show.")]  # exchanged out, swept
    # a run in dev replaces dev's partition, which showed the superseded version: it is not retired
    _ok(ws, "run", TS03, "--period", "2026-01", "--env", "dev")
    assert (versions / first).is_dir() and (versions / first / ".lf_kept").read_text().strip() == restated["run_id"]

    # restated again from dev: the version the first restatement published is superseded and kept too
    second = _shown(ws)
    project = ws / "projects" / "ts03_fx_conversion.yml"
    project.write_text(project.read_text().replace("transactions.amount_local * fx.rate",
                                                   "transactions.amount_local * fx.rate * 2"))
    _ok(ws, "run", TS03, "--period", "2026-01", "--env", "dev")
    _ok(ws, "restate", TS03, "--period", "2026-01", "--reason", "fix", "--from-env", "dev")
    _ok(ws, "run", TS03, "--period", "2026-01", "--env", "dev")
    _ok(ws, "runs", "clean")
    assert (versions / first).is_dir() and (versions / second).is_dir()
    for kept in (first, second):  # still every row
        assert len(spark.read.option("header", "true").csv(str(versions / kept)).collect()) == 10

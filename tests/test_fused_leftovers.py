"""What a fused range (issue 30) leaves when its process dies: the folder where it wrote every period's rows at
once (``<dest>/.lf_versions/.fused-<run_id>``, adapters/commit/prestage.py) is removed by the next command that
recovers the dead run, or by ``runs clean`` when the process died between two of its runs; never a folder of
another process's range, never what a link points at.

The state a dead process leaves is built deterministically (as tests/test_hardening_interrupted.py does):
records of one batch and one dead process, and the folders their range wrote.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from cli_support import cli, describe, record, run_ok, versions_dir
from test_hardening_interrupted import dead_pid, entry, fake_dead_run

from partition_support import shown
from ledgerflow.adapters.run.context import new_run_id, utcnow
from ledgerflow.adapters.store.runstore import RunStore

BATCH = "01a20000-0000-7000-8000-00000000b000"


def fused_root(location: str, run_id: str, periods: tuple[str, ...] = ("2026-02", "2026-03")) -> Path:
    """A folder like the one a fused range writes every period's rows to, named after ``run_id``, with the
    periods no run adopted yet."""
    root = versions_dir(location).parent / f".fused-{run_id}"
    for p in periods:
        (root / f"__lf_period_identifier={p}").mkdir(parents=True)
        (root / f"__lf_period_identifier={p}" / "part-00000.parquet").write_bytes(b"PAR1")
    return root


def range_runs(ws: Path, template: dict, location: str, pid: int, statuses: tuple[str, ...]) -> list[str]:
    """Records of one batch run by the process ``pid``, one per status (the last may be ``running``)."""
    store = RunStore(str(ws))
    ids = []
    for status in statuses:
        if status == "running":
            ids.append(fake_dead_run(ws, dict(template, batch_id=BATCH), staging=[entry(location)], pid=pid))
            continue
        rec = json.loads(json.dumps(template))
        rec.update(run_id=new_run_id(utcnow()), status=status, batch_id=BATCH, staging=[entry(location)],
                   process={"pid": pid, "host": template["process"]["host"]})
        store.save_run(rec)
        ids.append(rec["run_id"])
    return ids


def test_a_dead_range_s_rows_folder_is_removed_with_its_interrupted_run_and_nothing_else(spark, finance, tmp_path):
    first = run_ok(finance, "ts01_output_only")
    location = first["outputs"][0]["location"]
    pid = dead_pid()
    computing, dead = range_runs(finance, first, location, pid, ("completed", "running"))
    left = fused_root(location, computing)
    other_process = fused_root(location, range_runs(finance, first, location, os.getpid(), ("completed",))[0])
    unknown = fused_root(location, new_run_id(utcnow()))  # no run of this batch named it
    outside = tmp_path / "outside"
    (outside / "__lf_period_identifier=2026-04").mkdir(parents=True)
    os.symlink(outside, versions_dir(location).parent / f".fused-{dead}")  # named after the run, but a link

    cleaned = cli(finance, "runs", "clean")
    assert cleaned.exit_code == 0, describe(cleaned)
    assert f"{dead}  marked failed: interrupted" in cleaned.stdout
    assert f"    removed {left}" in cleaned.stdout
    assert not left.exists()
    rec = record(finance, dead)
    assert str(left) in rec["interrupted"]["removed"]
    link = versions_dir(location).parent / f".fused-{dead}"
    assert f"could not remove {link} (or it is not a folder ledgerflow created): left alone" in rec["error"]
    assert link.is_symlink() and (outside / "__lf_period_identifier=2026-04").is_dir()
    assert other_process.is_dir() and unknown.is_dir()  # a live process's range, a folder no run of it named
    assert shown(location) == shown(first["outputs"][0]["location"])


def test_a_range_whose_process_died_between_two_runs_is_cleaned_by_runs_clean(spark, finance):
    first = run_ok(finance, "ts01_output_only")
    location = first["outputs"][0]["location"]
    computing, later = range_runs(finance, first, location, dead_pid(), ("completed", "completed"))
    left = fused_root(location, computing)
    live = fused_root(location, range_runs(finance, first, location, os.getpid(), ("completed",))[0])

    listed = cli(finance, "runs", "list")  # recovery on open sees no running run: the folder stays
    assert listed.exit_code == 0, describe(listed)
    assert left.is_dir()
    cleaned = cli(finance, "runs", "clean")
    assert cleaned.exit_code == 0, describe(cleaned)
    assert f"    removed {left}" in cleaned.stdout
    assert not left.exists() and live.is_dir()
    assert record(finance, later)["status"] == "completed"
    again = cli(finance, "runs", "clean")
    assert str(left) not in again.stdout

"""A promotion killed at any point (issue 46 point 3): every partition shows its old version or its new one,
whole, and the next command that opens the run store completes the promotion (killed after its commit point) or
undoes it (before), as it does a run's commit; the promotion then succeeds and nothing is lost or left behind.

No Spark: the workspace is the promotion benchmark's (``bench/promotion_scale.py``: prod and dev versions of each
partition and dev's run records, as runs write them). A child process runs ``ledgerflow promote`` and kills itself
with SIGKILL at its N-th step: each file-system call that creates, renames, links, removes or syncs, each
``renameat2`` exchange, and the entry to and return from the commit point. N is drawn at random over every step a
whole promotion takes (counted by the same hook without a kill)."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from cli_support import cli, describe
from conftest import REPO

PERIODS = ["2024-01", "2024-02", "2024-03"]
PROJECTS = 2
KILL_AT_STEP = textwrap.dedent("""\
    import os, signal, sys
    from ledgerflow.adapters import cli
    from ledgerflow.adapters.envs import promote as module
    STEPS_C = {"mkdir", "rmdir", "link", "unlink", "remove", "rename", "replace", "symlink", "fsync"}
    STEPS_PY = {"_renameat2", "record_promotion"}
    kill_at, steps = int(sys.argv[1]), []

    def hook(frame, event, arg):
        if event == "c_call":
            if getattr(arg, "__module__", None) != "posix" or arg.__name__ not in STEPS_C:
                return
            steps.append(arg.__name__)
        elif event in ("call", "return") and frame.f_code.co_name in STEPS_PY:
            steps.append(f"{frame.f_code.co_name}:{event}")
        else:
            return
        if len(steps) == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    real = module.promote

    def promote(*args, **kwargs):
        sys.setprofile(hook)
        try:
            return real(*args, **kwargs)
        finally:
            sys.setprofile(None)
            print(f"STEPS {len(steps)}", file=sys.stderr)
    module.promote = promote
    cli.main(sys.argv[2:])
""")


def _workspace(root: Path) -> dict:
    """The benchmark's workspace; returns {partition: (prod's version name, dev's)}."""
    from bench.promotion_scale import build
    root.mkdir()
    build(root, PROJECTS, PERIODS)
    shown = {}
    for out in sorted((root / "out").iterdir()):
        for p in PERIODS:
            prod, dev = out / f"_period={p}", out / ".lf_envs" / "dev" / f"_period={p}"
            shown[prod] = (_marker(prod), _marker(dev))
    return shown


def _marker(folder: Path) -> str:
    return (folder / ".lf_version").read_text().strip()


def _promote(ws: Path, kill_at: int) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", KILL_AT_STEP, str(kill_at), "--workspace", str(ws), "promote",
                           "--all", "--from", "dev", "--period", f"{PERIODS[0]}..{PERIODS[-1]}"],
                          capture_output=True, text=True, timeout=120, cwd=REPO)


def _whole_version(partition: Path) -> str:
    """The version the partition shows, asserted whole: a real folder holding exactly that version's files (the
    same inodes) and its marker."""
    from ledgerflow.adapters.commit.shown import shown_version
    versions = partition.parent / ".lf_versions" / partition.name
    version = shown_version(str(partition), str(versions))
    assert version is not None and not partition.is_symlink(), f"{partition} shows no whole version"
    return os.path.basename(version)


def _committed(ws: Path) -> bool:
    with sqlite3.connect(ws / ".ledgerflow" / "state.db") as conn:
        return conn.execute("SELECT COUNT(*) FROM promotions").fetchone()[0] == 1


_STEPS: dict = {}


def _steps(tmp_root: Path) -> int:
    """How many steps a whole promotion of the workspace takes (counted once, without a kill)."""
    if "n" not in _STEPS:
        ws = tmp_root / "count"
        _workspace(ws)
        proc = _promote(ws, 0)
        assert proc.returncode == 0, proc.stderr
        _STEPS["n"] = int(proc.stderr.split("STEPS ")[1].split()[0])
    return _STEPS["n"]


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=st.floats(min_value=0, max_value=1, exclude_max=True))
def test_a_promotion_killed_at_a_random_step_leaves_every_partition_old_or_new_and_recovers(tmp_path_factory, where):
    steps = _steps(tmp_path_factory.mktemp("steps"))
    kill_at = 1 + int(where * steps)
    ws = tmp_path_factory.mktemp("ws") / "ws"
    shown = _workspace(ws)
    data_files = {f: f.stat().st_ino for f in (ws / "out").rglob("part-*") if ".lf_versions" in f.parts}
    dev_versions = {old_new[1] for old_new in shown.values()}

    proc = _promote(ws, kill_at)
    assert proc.returncode == -signal.SIGKILL, f"step {kill_at} of {steps}: {proc.stderr}"
    # at the kill: each partition old or new, whole (a mix across partitions, until recovery)
    for partition, (old, new) in shown.items():
        assert _whole_version(partition) in (old, new), f"step {kill_at} of {steps}"

    listed = cli(ws, "runs", "list")  # opening the run store recovers the promotion
    assert listed.exit_code == 0, describe(listed)
    committed = _committed(ws)
    journal = json.loads(next((ws / "target" / "promotions").glob("*.json")).read_text()) \
        if (ws / "target" / "promotions").is_dir() and any((ws / "target" / "promotions").glob("*.json")) else None
    for partition, (old, new) in shown.items():  # all new after the commit point, all old before it
        assert _whole_version(partition) == (new if committed else old), f"step {kill_at} of {steps}"
        assert _marker(partition.parent / ".lf_envs" / "dev" / partition.name) == new  # dev untouched
    if journal is not None:
        assert journal["status"] == ("completed" if committed else "failed"), journal["status"]

    if not committed:
        again = cli(ws, "promote", "--all", "--from", "dev", "--period", f"{PERIODS[0]}..{PERIODS[-1]}")
        assert again.exit_code == 0, describe(again)
    for partition, (_old, new) in shown.items():
        assert _whole_version(partition) == new
    # no data file of a version dev shows was lost or rewritten; prod's old versions retired; no folder of links left
    for f, inode in data_files.items():
        if f.parent.name in dev_versions:
            assert f.stat().st_ino == inode
    left = [p for p in (ws / "out").rglob(".show.*")]
    assert not left, left
    for partition, (old, _new) in shown.items():
        assert not (partition.parent / ".lf_versions" / partition.name / old).exists()


def test_a_refusal_of_many_project_periods_is_one_short_paragraph(tmp_path):
    """24 project-periods dev never published: the first ten reasons and a count of the rest, nothing changed."""
    ws = tmp_path / "ws"
    shown = _workspace(ws)
    refused = cli(ws, "promote", "--all", "--from", "dev", "--period", "2023-01..2023-12")
    assert refused.exit_code == 1, describe(refused)
    assert refused.stderr.count("ENV-004") == 10 and "and 14 more reasons" in refused.stderr, refused.stderr
    assert len(refused.stderr) < 3000 and refused.stderr.strip().count("\n") == 0, refused.stderr
    assert {p: _marker(p) for p in shown} == {p: old for p, (old, _new) in shown.items()}

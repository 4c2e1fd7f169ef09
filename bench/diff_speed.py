"""Diff-speed benchmark (issue 11): ``ledgerflow diff`` of a 500-operation project between two git
revisions, as a whole process (interpreter start, git export of both sides, two compiles, the plan
comparison, the unified SQL diff, JSON printing).

The repository holds the generated ``chain_500`` workspace (:mod:`bench.projectgen`); the second
commit changes the expression of operation 250, so both sides must be compiled and every later step
is reached. Prints the median wall and CPU seconds of 5 runs with the load average; target under 3 s.
Run: ``python -m bench.diff_speed`` (``--quick`` for 3 runs). Latest output:
``bench/results/diff_speed_<date>.txt``.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import sqlglot

from bench.projectgen import write_chain_workspace

SIZE = 500
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "bench@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def _git(repo: str, *args: str) -> None:
    subprocess.run(["git", "-C", repo, *args], check=True, env={**os.environ, **GIT_ENV}, capture_output=True)


def make_repository(size: int = SIZE) -> str:
    """A git repository with the workspace in ``ws/`` and two commits; returns the workspace folder."""
    repo = tempfile.mkdtemp(prefix="lf-diffbench-")
    ws = os.path.join(repo, "ws")
    write_chain_workspace(ws, [size])
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    path = os.path.join(ws, "projects", f"chain_{size}.yml")
    with open(path) as fh:
        text = fh.read()
    marker = f"name: step {size // 2}\n"
    at = text.index(marker)
    end = text.index("transactions.acc_b * 2 - transactions.acc_b + 1", at)
    text = text[:end] + "transactions.acc_b * 3 - transactions.acc_b + 1" + text[end + len("transactions.acc_b * 2 - transactions.acc_b + 1"):]
    with open(path, "w") as fh:
        fh.write(text)
    _git(repo, "commit", "-q", "-am", f"change step {size // 2}")
    return ws


def _timed(cmd: list[str], cwd: str) -> tuple[float, float, subprocess.CompletedProcess]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), proc


def phases(ws: str) -> dict[str, float]:
    """CPU seconds of the parts of one diff, in this process (the critical path's pieces: the base side is
    compiled in a forked process while this one compiles the head)."""
    from ledgerflow.compiler.diff.summary import summarise_project
    from ledgerflow.compiler.workspace import load_workspace
    out = {}
    start = time.process_time()
    workspace = load_workspace(ws)
    out["load one side"] = time.process_time() - start
    project = workspace.projects[0]
    summarise_project(workspace, project)  # warm-up: templates, caches
    start = time.process_time()
    summarise_project(workspace, project)
    out["compile + plan prints, one side"] = time.process_time() - start
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 runs instead of 5")
    args = parser.parse_args()
    ws = make_repository()
    cmd = [sys.executable, "-m", "ledgerflow.adapters.cli", "--workspace", ws, "diff", "HEAD~1", "HEAD",
           "--format", "json"]
    _, _, first = _timed(cmd, ws)  # untimed: .pyc files, page cache
    if first.returncode != 0:
        sys.exit(f"diff failed: {first.stderr}")
    doc = json.loads(first.stdout)
    project = doc["projects"][0]
    changed = [o["seq"] for o in project["operations"] if o["status"] != "unchanged"]
    load_before = os.getloadavg()
    runs = [_timed(cmd, ws)[:2] for _ in range(3 if args.quick else 5)]
    load_after = os.getloadavg()
    wall = [w for w, _ in runs]
    cpu = [c for _, c in runs]
    print(f"# ledgerflow diff as a process  (python {platform.python_version()}, sqlglot {sqlglot.__version__}, "
          f"{platform.machine()}, {os.cpu_count()} cores); diff HEAD~1 HEAD --format json of chain_{SIZE}")
    print(f"# load average before: {' '.join(f'{x:.2f}' for x in load_before)}; "
          f"after: {' '.join(f'{x:.2f}' for x in load_after)}")
    print(f"# result: {project['name']} {project['status']} {project['category']}, operations changed {changed}, "
          f"{len(project['outputs'])} output(s) changed, sql_diff {len(project['sql_diff'])} chars")
    print(f"diff chain_{SIZE} (whole process)  wall median {statistics.median(wall):.2f} s, min {min(wall):.2f} s "
          f"({', '.join(f'{x:.2f}' for x in wall)}); CPU median {statistics.median(cpu):.2f} s "
          f"({', '.join(f'{x:.2f}' for x in cpu)}); target < 3 s: "
          f"{'met' if statistics.median(wall) < 3 else 'NOT met'}")
    print("# in-process CPU: " + ", ".join(f"{k} {v:.2f} s" for k, v in phases(ws).items()))


if __name__ == "__main__":
    main()

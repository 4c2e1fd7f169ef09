"""How every command grows with the workspace (issue 48 point 5): whole processes on generated workspaces of N
projects, in two shapes, at N = 100, 300 and 1,000 (``--sizes`` for others, e.g. 3000).

    python -m bench.workspace_scale                       # both shapes, N = 100, 300, 1000
    python -m bench.workspace_scale --sizes 100 --shapes chain   # a quick look

Shapes (no data: nothing here starts Spark):

- ``chain``: N projects, each reading the dataset the one before registers (the first reads ``gl``), so the graph
  is N deep;
- ``wide``: E entities x 20 steps, each entity a chain of 20 projects, plus 20 consolidation projects, step k's
  reading entity 0's step k and appending every other entity's (fan-out and fan-in); E = (N - 20) / 20.

Timed, each a fresh ``python -m ledgerflow.adapters.cli`` process: ``validate``, ``dag --format json``,
``dag --select +LAST --format json`` (what planning ``run --select +LAST`` selects), ``lineage LAST.amount``,
``manifest`` (built) and ``manifest`` again (kept: ``target/manifest.cache.json``), ``status``, ``docs --out DIR``,
then after a change to the first project (the workspace is a git repository): ``diff HEAD``, ``manifest`` and
``docs`` (each project's compiled script kept: ``target/compiled.cache.json``). Raw output: ``bench/results/workspace_scale_<date>.txt``; times are printed, never asserted.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
STEPS = 20
_HEAD = ("name: scale\nresolvers:\n  local:\n    rules:\n      - name: files\n        strategy: {type: path, path: "
         "\"data/{{dataset}}/v{{version}}\", format: parquet}\ndefault_resolver: local\n")
_GL = ("id: 0a000000-0000-4000-8000-000000000001\nname: gl\nstatus: active\nversions:\n  - {version: 1}\nmain_table:\n"
       "  name: gl\n  temporal_mode: period\n  columns:\n    - {name: code, type: string}\n"
       "    - {name: amount, type: \"decimal(18,2)\"}\n")


def _project(root: Path, k: int, name: str, source: str, registers: str, appends: tuple = ()) -> None:
    ops = ("  - seq: 1\n    name: bump\n    type: update\n    arguments:\n      assignments:\n"
           "        - column: amount\n          expression: amount + 1\n")
    for j, other in enumerate(appends, start=2):
        ops += f"  - seq: {j}\n    name: add {other}\n    type: append\n    arguments:\n      source: {{dataset_id: {other}}}\n"
    seq = 2 + len(appends)
    ops += (f"  - seq: {seq}\n    name: out\n    type: output\n    arguments:\n      register_as_dataset: {registers}\n"
            f"      destination: {{table: {registers}}}\n")
    (root / "projects" / f"{name}.yml").write_text(
        f"id: 0d000000-0000-4000-8000-{k:012d}\nname: {name}\nversion: 1\nstatus: active\n"
        f"input_dataset_id: {source}\noperations:\n{ops}")


def _start(root: Path) -> None:
    (root / "datasets").mkdir(parents=True)
    (root / "projects").mkdir()
    (root / "ledgerflow.yml").write_text(_HEAD)
    (root / "datasets" / "gl.yml").write_text(_GL)


def chain(root: Path, n: int) -> str:
    """The ``chain`` shape (see the module docstring); returns the last project's name."""
    _start(root)
    for k in range(n):
        _project(root, k, f"p{k:04d}", "gl" if k == 0 else f"d{k - 1:04d}", f"d{k:04d}")
    return f"p{n - 1:04d}"


def wide(root: Path, n: int) -> str:
    """The ``wide`` shape (see the module docstring); returns the last consolidation project's name."""
    _start(root)
    entities = max(2, (n - STEPS) // STEPS)
    k = 0
    for e in range(entities):
        for s in range(STEPS):
            _project(root, k, f"e{e:03d}_s{s:02d}", "gl" if s == 0 else f"d_e{e:03d}_s{s - 1:02d}", f"d_e{e:03d}_s{s:02d}")
            k += 1
    for s in range(STEPS):
        _project(root, k, f"c_s{s:02d}", f"d_e000_s{s:02d}", f"d_c_s{s:02d}",
                 tuple(f"d_e{e:03d}_s{s:02d}" for e in range(1, entities)))
        k += 1
    return f"c_s{STEPS - 1:02d}"


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
                        "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"})


def time_commands(root: Path, last: str, first: str) -> list[tuple[str, float, int]]:
    """(command, seconds, exit code) of each timed command on the workspace at ``root``."""
    cli = [sys.executable, "-m", "ledgerflow.adapters.cli", "--workspace", str(root)]
    site = tempfile.mkdtemp(prefix="ledgerflow-scale-site-")
    commands = [("validate", ["validate"]), ("dag", ["dag", "--format", "json"]),
                ("dag --select +LAST", ["dag", "--select", f"+{last}", "--format", "json"]),
                ("lineage", ["lineage", f"{last}.amount"]), ("manifest", ["manifest"]),
                ("manifest again (kept)", ["manifest"]), ("status", ["status"]),
                ("docs", ["docs", "--out", os.path.join(site, "site")])]
    out = []
    for label, args in commands:
        clock = time.perf_counter()
        done = subprocess.run(cli + args, capture_output=True, text=True)
        out.append((label, time.perf_counter() - clock, done.returncode))
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "workspace")
    project = root / "projects" / f"{first}.yml"
    project.write_text(project.read_text().replace("amount + 1", "amount + 2"))
    clock = time.perf_counter()
    done = subprocess.run(cli + ["diff", "HEAD"], capture_output=True, text=True)
    out.append(("diff HEAD (first project changed)", time.perf_counter() - clock, done.returncode))
    for label, args in (("manifest (first project changed)", ["manifest"]),
                        ("docs (first project changed)", ["docs", "--out", os.path.join(site, "site")])):
        clock = time.perf_counter()
        done = subprocess.run(cli + args, capture_output=True, text=True)
        out.append((label, time.perf_counter() - clock, done.returncode))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 1000])
    parser.add_argument("--shapes", nargs="+", default=["chain", "wide"], choices=["chain", "wide"])
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))
    from bench.common import dated_result, loadavg
    from bench.pairing import machine
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    lines = [f"# {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, commit {commit}; {machine('no Spark')}; "
             f"load average {loadavg()}", "shape  N  command  seconds  exit"]
    for shape in args.shapes:
        for n in args.sizes:
            with tempfile.TemporaryDirectory(prefix="ledgerflow-scale-") as tmp:
                root = Path(tmp) / "ws"
                last = (chain if shape == "chain" else wide)(root, n)
                first = "p0000" if shape == "chain" else "e000_s00"
                count = len(list((root / "projects").glob("*.yml")))
                for label, seconds, code in time_commands(root, last, first):
                    lines.append(f"{shape}  {count}  {label}  {seconds:.2f}  {code}")
                    print(lines[-1], flush=True)
    text = "\n".join(lines)
    path = dated_result("workspace_scale")
    Path(path).write_text(text + "\n")
    print(f"written to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

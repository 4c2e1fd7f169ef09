"""Compile-speed benchmark: generated chain projects of 10, 100 and 500 operations.

Prints milliseconds per size (median of several compilations, workspace loading excluded), the
per-operation cost and the growth ratio; target: 500 operations in under 1 s, growing linearly.
Run: ``python -m bench.compile_speed`` (``--quick`` for fewer repetitions). Latest output:
``bench/results/compile_speed_<date>.txt``.

``--process`` (issue 9): the whole cold ``ledgerflow compile`` process of the 500-operation project
(what a user waits for: interpreter start, imports, YAML, compile, printing), median of 5, with
``ledgerflow --version`` (start-up and imports alone) beside it; target under 1.5 s. The command
defaults to this interpreter's ``-m ledgerflow.adapters.cli`` (its ``PYTHONPATH``); ``--command
"ledgerflow"`` times another installation. Latest output: ``bench/results/compile_process_<date>.txt``.
"""
from __future__ import annotations

import argparse
import os
import platform
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

import sqlglot

from bench.projectgen import write_chain_workspace
from ledgerflow.compiler.compile import compile_project
from ledgerflow.compiler.workspace import load_workspace

SIZES = (10, 100, 500)


def measure(repeats: int) -> list[tuple[int, float, int]]:
    """(operations, median ms, stages) per size."""
    folder = tempfile.mkdtemp(prefix="lf-bench-")
    write_chain_workspace(folder, list(SIZES))
    ws = load_workspace(folder)
    rows = []
    for n in SIZES:
        project = ws.find_project(f"chain_{n}")
        compile_project(ws, project)  # warm-up (imports, template cache)
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            compiled = compile_project(ws, project)
            times.append((time.perf_counter() - start) * 1000)
        rows.append((n, statistics.median(times), len(compiled.stages)))
    return rows


# An installed ledgerflow has its bytecode compiled (pip writes it); the untimed first run writes it
# for a source tree, unless the environment forbids writing it (some shells export
# PYTHONDONTWRITEBYTECODE), when every run would compile ledgerflow's ~40 modules again (~0.1 s).
_CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _wall(cmd: list[str], cwd: str) -> tuple[float, float]:
    """(wall, CPU user+sys) seconds of one process; CPU time is the steadier figure on a loaded machine."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, env=_CHILD_ENV)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure_process(command: list[str], repeats: int, size: int = 500) -> dict:
    """(wall, CPU) seconds of whole ``compile chain_<size>`` and ``--version`` processes, alternating."""
    folder = tempfile.mkdtemp(prefix="lf-bench-")
    write_chain_workspace(folder, [size])
    compile_cmd = command + ["--workspace", folder, "compile", f"chain_{size}"]
    version_cmd = command + ["--version"]
    _wall(compile_cmd, folder)  # untimed: .pyc files, page cache
    compiles, versions = [], []
    for _ in range(repeats):
        compiles.append(_wall(compile_cmd, folder))
        versions.append(_wall(version_cmd, folder))
    return {"compile": compiles, "version": versions}


def main_process(args) -> None:
    command = shlex.split(args.command) if args.command else [sys.executable, "-m", "ledgerflow.adapters.cli"]
    repeats = 3 if args.quick else 5
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    r = measure_process(command, repeats)
    print(f"# ledgerflow compile as a process  (python {platform.python_version()}, sqlglot {sqlglot.__version__}, "
          f"{platform.machine()}, {os.cpu_count()} cores); command: {' '.join(command)}")
    print(f"# load average before: {load}; after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for key, label in (("compile", "compile chain_500 (whole process)"), ("version", "--version (start-up + imports)")):
        wall = [w for w, _ in r[key]]
        cpu = [c for _, c in r[key]]
        target = f"; target < 1.5 s: {'met' if statistics.median(wall) < 1.5 else 'NOT met'}" if key == "compile" else ""
        print(f"{label:<34} wall median {statistics.median(wall):.2f} s ({', '.join(f'{x:.2f}' for x in wall)}); "
              f"CPU median {statistics.median(cpu):.2f} s ({', '.join(f'{x:.2f}' for x in cpu)}){target}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 repetitions instead of 7 (5 with --process)")
    parser.add_argument("--process", action="store_true", help="time whole `ledgerflow compile` processes")
    parser.add_argument("--command", default=None, help="with --process: the ledgerflow command to time")
    args = parser.parse_args()
    if args.process:
        main_process(args)
        return
    rows = measure(3 if args.quick else 7)
    print(f"# ledgerflow compile speed  (python {platform.python_version()}, sqlglot {sqlglot.__version__}, "
          f"{platform.machine()}, {platform.processor() or 'cpu'})")
    print(f"{'operations':>10} {'stages':>7} {'ms':>9} {'ms/op':>7}")
    for n, ms, stages in rows:
        print(f"{n:>10} {stages:>7} {ms:>9.1f} {ms / n:>7.2f}")
    base = rows[1]
    big = rows[2]
    growth = (big[1] / base[1]) / (big[0] / base[0])
    print(f"500 ops: {big[1]:.0f} ms (target < 1000 ms: {'met' if big[1] < 1000 else 'NOT met'}); "
          f"time(500)/time(100) = {big[1] / base[1]:.2f} for 5x the operations (linearity ratio {growth:.2f}, 1.00 = linear)")


if __name__ == "__main__":
    main()

"""Compile-speed benchmark: generated chain projects of 10, 100 and 500 operations.

Prints milliseconds per size (median of several compilations, workspace loading excluded), the
per-operation cost and the growth ratio; target: 500 operations in under 1 s, growing linearly.
Run: ``python -m bench.compile_speed`` (``--quick`` for fewer repetitions). Latest output:
``bench/results/compile_speed.txt``.
"""
from __future__ import annotations

import argparse
import platform
import statistics
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 repetitions instead of 7")
    args = parser.parse_args()
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

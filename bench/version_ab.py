"""Two ledgerflow installations against each other: the whole cold ``ledgerflow run`` process of pipeline P
on source-shaped data (the cold-process benchmark's workspaces), alternating, pair by pair.

    python -m bench.version_ab --a /path/to/new/venv/bin/ledgerflow --b /path/to/old/venv/bin/ledgerflow \
        --layout csv --layout flat --layout folders --pairs 3 --out bench/results/version_ab_<date>.txt

Each side runs in its own copy of the workspace (``<cache>/ab-a-<layout>``, ``<cache>/ab-b-<layout>``, copied
from ``<cache>/src-<layout>-<rows>`` when missing; ``bench/datagen.py --source LAYOUT`` writes that), so the
two never share a run store or outputs. Who goes first alternates from pair to pair (A first in pair 1);
``--warmup`` pairs run first, untimed. The figure is the median of the per-pair ratios A / B. The JVM class
archive is off for both (``LEDGERFLOW_JVM_ARCHIVE=off``), so neither maps an archive the other wrote. Times
are printed, never asserted; the load average is printed beside each pair.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

PERIOD = "2026-02"


def _cache() -> str:
    return os.environ.get("LEDGERFLOW_BENCH_DATA", "/tmp/ledgerflow-bench")


def _workspace(side: str, layout: str, rows: int) -> str:
    ws = os.path.join(_cache(), f"ab-{side}-{layout}")
    if not os.path.isdir(ws):
        # the sources and the declarations only: a copy of what runs published there would break its hard links,
        # and ledgerflow rightly refuses to replace a partition that is not its own folder of links
        shutil.copytree(os.path.join(_cache(), f"src-{layout}-{rows}"), ws,
                        ignore=lambda folder, names: {"target", ".ledgerflow"} & set(names)
                        if os.path.samefile(folder, os.path.join(_cache(), f"src-{layout}-{rows}")) else set())
    return ws


def _run(ledgerflow: str, ws: str) -> float:
    cmd = [ledgerflow, "--workspace", ws, "run", "pipeline_p", "--period", PERIOD, "--master", "local[2]",
           "--conf", "spark.driver.memory=4g"]
    env = {**os.environ, "LEDGERFLOW_JVM_ARCHIVE": "off"}
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    took = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    return took


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", required=True, help="the ledgerflow command of side A (e.g. the new installation)")
    parser.add_argument("--b", required=True, help="the ledgerflow command of side B")
    parser.add_argument("--layout", action="append", choices=("flat", "folders", "csv"))
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--out", default=None, help="also append the output to this file")
    args = parser.parse_args(argv)
    lines: list[str] = []

    def say(text: str) -> None:
        print(text, flush=True)
        lines.append(text)

    say(f"== version A/B, {args.rows:,} GL rows, pipeline_p --period {PERIOD}, {args.pairs} pairs "
        f"(+{args.warmup} warm-up) per layout, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    say(f"A: {args.a}\nB: {args.b}")
    for layout in args.layout or ["flat", "folders", "csv"]:
        ws_a, ws_b = _workspace("a", layout, args.rows), _workspace("b", layout, args.rows)
        for _ in range(args.warmup):
            _run(args.a, ws_a), _run(args.b, ws_b)
        ratios = []
        for pair in range(1, args.pairs + 1):
            if pair % 2:
                a = _run(args.a, ws_a)
                b = _run(args.b, ws_b)
            else:
                b = _run(args.b, ws_b)
                a = _run(args.a, ws_a)
            ratios.append(a / b)
            load = " ".join(f"{x:.2f}" for x in os.getloadavg())
            say(f"{layout:>8} pair {pair} ({'A' if pair % 2 else 'B'} first): A {a:6.2f} s  B {b:6.2f} s  "
                f"A/B {a / b:5.3f}  load {load}")
        say(f"{layout:>8} median A/B {statistics.median(ratios):.3f} over {len(ratios)} pairs")
    if args.out:
        with open(args.out, "a") as fh:
            fh.write("\n".join(lines) + "\n\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

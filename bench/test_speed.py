"""``ledgerflow test`` speed: seconds per scenario test once the SparkSession is up.

Runs the finance sample's scenario tests (TS-01..TS-08, ``projects/finance/tests``) in one process
and one SparkSession, ``--rounds`` times (default 3), and prints the session start, each test's
seconds per round and the per-test median and mean of every test after the first of the process
(the first pays Spark's one-time warm-up: code generation, class loading). Target: under 1 s per
further test. Run: ``python -m bench.test_speed [--rounds N] [--out bench/results/test_speed_<date>.txt]``
(``--out`` also appends the output to that file as a dated ``== run`` block).
Timings include everything ``ledgerflow test`` does per test (read and check the file, compile,
build the given data, load, run, collect, compare), nothing of the session start.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import shutil
import statistics
import tempfile
import time

from ledgerflow.adapters.scenarios.suite import run_tests
from ledgerflow.compiler.workspace import load_workspace

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--jvm", choices=["test", "default"], default="test",
                        help="the driver JVM as `ledgerflow test` starts it (default) or as `run` does")
    parser.add_argument("--no-archive", action="store_true",
                        help="start the JVM without its class archive (adapters/spark/class_archive.py)")
    parser.add_argument("--out", help="also append the output to this file, as a dated run block")
    args = parser.parse_args()
    start_load = os.getloadavg()[0]
    folder = tempfile.mkdtemp(prefix="lf-test-speed-")
    ws_dir = os.path.join(folder, "finance")
    shutil.copytree(os.path.join(REPO, "projects", "finance"), ws_dir,
                    ignore=shutil.ignore_patterns("target", ".ledgerflow"))
    try:
        from ledgerflow.adapters.spark import class_archive
        from ledgerflow.adapters.spark.session import local_session, scenario_test_conf
        conf = scenario_test_conf() if args.jvm == "test" else None
        archive = None if args.no_archive else "test"
        mode = _archive_mode(class_archive, archive)
        clock = time.monotonic()
        spark = local_session(args.master, conf, log_file=os.path.join(folder, "spark.log"), archive=archive)
        spark.range(1).collect()
        session_s = time.monotonic() - clock
        ws = load_workspace(ws_dir)
        rounds = []
        for _ in range(args.rounds):
            results, code = run_tests(ws, session_factory=lambda: spark, echo=lambda _: None)
            assert code == 0, [r.details() for r in results if r.status != "passed"]
            rounds.append([(r.name, r.seconds) for r in results])
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    lines = report(rounds, args.rounds, f"{args.master}, {args.jvm} JVM, class archive {mode}", session_s, start_load)
    print("\n".join(lines))
    if args.out:
        append_run(args.out, lines)


def _archive_mode(class_archive, kind) -> str:
    """Whether the JVM will map the class archive, write it (as the first process on a machine does), or neither."""
    if kind is None or not class_archive.enabled():
        return "off"
    return "mapped" if class_archive.existing(kind) else "written at exit (a first process)"


def report(rounds: list, n_rounds: int, master: str, session_s: float, start_load: float) -> list[str]:
    """The benchmark's output lines: per-test seconds per round, then the figures of further tests."""
    further = [s for i, rnd in enumerate(rounds) for j, (_, s) in enumerate(rnd) if (i, j) != (0, 0)]
    load = os.getloadavg()
    lines = [f"ledgerflow test speed: finance scenario tests TS-01..TS-08, {n_rounds} rounds in one process, "
             f"master {master}",
             f"machine: {os.cpu_count()} cores, Python {platform.python_version()}, load average "
             f"{start_load:.2f} at the start, {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the end",
             f"session start (JVM + first job): {session_s:.2f} s",
             f"{'test':<48}" + "".join(f"  round {i + 1:>2}" for i in range(n_rounds))]
    for j, (name, _) in enumerate(rounds[0]):
        lines.append(f"{name[:48]:<48}" + "".join(f"  {rnd[j][1]:7.2f} s" for rnd in rounds))
    lines.append(f"first test of the process (Spark warm-up): {rounds[0][0][1]:.2f} s")
    lines.append(f"every further test ({len(further)}): median {statistics.median(further):.2f} s, mean "
                 f"{statistics.mean(further):.2f} s, max {max(further):.2f} s; target < 1 s per further test")
    once = [s for _, s in rounds[0][1:]]  # what one `ledgerflow test` invocation runs: round 1 after the first
    if once:
        lines.append(f"one invocation (round 1), the {len(once)} tests after the first: {sum(once):.2f} s, mean "
                     f"{statistics.mean(once):.2f} s, max {max(once):.2f} s")
    return lines


def append_run(path: str, lines: list[str]) -> None:
    """Add ``lines`` to ``path`` as the next ``== run N (date time)`` block, newest first like the others."""
    old = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
    numbers = [int(line.split()[2]) for line in old.splitlines()
               if line.startswith("== run ") and line.split()[2].isdigit()]
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    block = "\n".join([f"== run {max(numbers, default=0) + 1} ({stamp})", *lines])
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(block + "\n" + ("\n" + old if old else ""))


if __name__ == "__main__":
    main()

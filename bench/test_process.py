"""``ledgerflow test`` as a user runs it: the whole cold process, C1-only driver JVM against the default.

Runs ``ledgerflow test`` over the finance sample's scenario tests (TS-01..TS-08) as a command, in two
copies of the workspace: one as shipped (the test command's driver JVM: ``spark.TEST_JAVA_OPTIONS``),
one whose ``ledgerflow.yml`` sets ``spark.driver.extraJavaOptions`` itself (the JVM as ``run`` starts
it). Alternating pairs; prints each process's seconds and the median of the per-pair ratios.
Run: ``python -m bench.test_process [--pairs 3] [--out bench/results/test_speed.txt]``.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from bench.test_speed import REPO, append_run


def _workspace(folder: str, name: str, java_options: str | None) -> str:
    path = os.path.join(folder, name)
    shutil.copytree(os.path.join(REPO, "projects", "finance"), path,
                    ignore=shutil.ignore_patterns("target", ".ledgerflow"))
    if java_options is not None:
        config = os.path.join(path, "ledgerflow.yml")
        text = open(config, encoding="utf-8").read()
        old = 'conf: {spark.sql.shuffle.partitions: "4"}'
        assert old in text, "the finance sample's spark conf changed: update this benchmark"
        with open(config, "w", encoding="utf-8") as fh:
            fh.write(text.replace(old, f'conf: {{spark.sql.shuffle.partitions: "4", '
                                       f'spark.driver.extraJavaOptions: "{java_options}"}}'))
    return path


def _timed(workspace: str) -> float:
    clock = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "ledgerflow.adapters.cli", "--workspace", workspace, "test"],
                          capture_output=True, text=True)
    seconds = time.monotonic() - clock
    assert done.returncode == 0, done.stdout + done.stderr
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--out", help="also append the output to this file, as a dated run block")
    args = parser.parse_args()
    if args.pairs < 1:
        parser.error("--pairs must be at least 1")
    folder = tempfile.mkdtemp(prefix="lf-test-process-")
    try:
        shipped = _workspace(folder, "shipped", None)
        default = _workspace(folder, "default", "-Xss16m")
        lines = ["`ledgerflow test` over TS-01..TS-08 as a whole cold process: the shipped test JVM (C1 only) "
                 "against the default JVM, alternating", f"load average at the start {os.getloadavg()[0]:.2f}"]
        ratios = []
        for i in range(args.pairs):
            order = [("shipped", shipped), ("default", default)][:: 1 if i % 2 == 0 else -1]
            seconds = {name: _timed(ws) for name, ws in order}
            ratios.append(seconds["shipped"] / seconds["default"])
            lines.append(f"pair {i + 1} ({order[0][0]} first): test JVM {seconds['shipped']:.2f} s, default JVM "
                         f"{seconds['default']:.2f} s, ratio {ratios[-1]:.2f}")
        lines.append(f"median of per-pair ratios (test JVM / default JVM): {statistics.median(ratios):.2f}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print("\n".join(lines))
    if args.out:
        append_run(args.out, lines)


if __name__ == "__main__":
    main()

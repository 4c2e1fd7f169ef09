"""``ledgerflow test`` as a user runs it: the whole cold process, as shipped against a variant.

Runs ``ledgerflow test`` over the finance sample's scenario tests (TS-01..TS-08) as a command, as
shipped (the test command's driver JVM, ``spark.TEST_JAVA_OPTIONS``, mapping its class archive,
``adapters/spark/class_archive.py``) against ``--against``:

- ``default-jvm``: a workspace whose ``ledgerflow.yml`` sets ``spark.driver.extraJavaOptions`` itself
  (the JVM as ``run`` starts it), with the class archive;
- ``no-archive``: the shipped JVM without the class archive (``LEDGERFLOW_JVM_ARCHIVE=off``);
- ``--against-commit REV``: ledgerflow's code as of git revision REV (a temporary worktree imported
  first through ``PYTHONPATH``), the same JVM and archive: what a change gained.

The archive lives in a cache folder of the benchmark's own; one untimed process writes it first (its
seconds are printed: a user pays them once). Alternating pairs; prints each process's seconds and the
median of the per-pair ratios.
Run: ``python -m bench.test_process [--pairs 3] [--against no-archive | --against-commit REV] [--out bench/results/test_speed_<date>.txt]``.
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


def _commit_code(folder: str, rev: str) -> str:
    """A folder to put first on ``PYTHONPATH`` so that ``import ledgerflow`` finds the code of ``rev``."""
    tree = os.path.join(folder, "commit")
    subprocess.run(["git", "-C", REPO, "worktree", "add", "--detach", tree, rev], check=True, capture_output=True)
    shim = os.path.join(folder, "shim")
    os.makedirs(shim)
    os.symlink(tree, os.path.join(shim, "ledgerflow"))  # the repository's root is the package
    return shim


def _timed(workspace: str, env: dict) -> float:
    clock = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "ledgerflow.adapters.cli", "--workspace", workspace, "test"],
                          capture_output=True, text=True, env=env)
    seconds = time.monotonic() - clock
    assert done.returncode == 0, done.stdout + done.stderr
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--against", choices=["no-archive", "default-jvm"], default="no-archive")
    parser.add_argument("--against-commit", metavar="REV", help="against the code of this git revision instead")
    parser.add_argument("--out", help="also append the output to this file, as a dated run block")
    args = parser.parse_args()
    if args.pairs < 1:
        parser.error("--pairs must be at least 1")
    folder = tempfile.mkdtemp(prefix="lf-test-process-")
    try:
        shipped = _workspace(folder, "shipped", None)
        env = {**os.environ, "LEDGERFLOW_CACHE_DIR": os.path.join(folder, "cache"), "LEDGERFLOW_JVM_ARCHIVE": "on"}
        if args.against_commit:
            other = (shipped, {**env, "PYTHONPATH": _commit_code(folder, args.against_commit)},
                     f"code of {args.against_commit}")
        elif args.against == "default-jvm":
            other = (_workspace(folder, "default", "-Xss16m"), env, "default JVM")
        else:
            other = (shipped, {**env, "LEDGERFLOW_JVM_ARCHIVE": "off"}, "no class archive")
        lines = [f"`ledgerflow test` over TS-01..TS-08 as a whole cold process: as shipped (C1-only test JVM, class "
                 f"archive) against the {other[2]}, alternating", f"load average at the start {os.getloadavg()[0]:.2f}",
                 f"the process that writes the class archive (once): {_timed(shipped, env):.2f} s"]
        ratios = []
        for i in range(args.pairs):
            order = [("shipped", (shipped, env)), ("other", other[:2])][:: 1 if i % 2 == 0 else -1]
            seconds = {name: _timed(*where) for name, where in order}
            ratios.append(seconds["shipped"] / seconds["other"])
            lines.append(f"pair {i + 1} ({'shipped' if order[0][0] == 'shipped' else other[2]} first): shipped "
                         f"{seconds['shipped']:.2f} s, {other[2]} {seconds['other']:.2f} s, ratio {ratios[-1]:.2f}")
        lines.append(f"median of per-pair ratios (shipped / {other[2]}): {statistics.median(ratios):.2f}")
    finally:
        if args.against_commit:
            subprocess.run(["git", "-C", REPO, "worktree", "remove", "--force", os.path.join(folder, "commit")],
                           capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)
    print("\n".join(lines))
    if args.out:
        append_run(args.out, lines)


if __name__ == "__main__":
    main()

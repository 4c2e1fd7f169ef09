"""What the benchmarks of whole cold processes share around their timed pairs: the run start a ledgerflow run
recorded (the hand-written side is given it, so ``_updated_at`` compares exactly), the comparison of the sides'
outputs in a Spark process of its own, the machine they ran on, and the results file with its table."""
from __future__ import annotations

import datetime
import json
import os
import platform
import re
import shlex
import subprocess
import sys

from bench.common import become_subreaper, loadavg, Report

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_started_at(ws: str, stdout: str) -> str:
    """``run_started_at`` of the ledgerflow run whose output is ``stdout`` (from its run record; a fused range's
    runs share it)."""
    m = re.search(r"Run ([0-9a-f-]{36})", stdout)
    if not m:
        raise RuntimeError(f"no run id in ledgerflow's output:\n{stdout[-2000:]}")
    with open(os.path.join(ws, "target", "runs", m.group(1), "run.json")) as fh:
        rec = json.load(fh)
    return rec.get("run_started_at") or rec["started_at"]


def compare_apart(module: str, folders: list[str], driver_memory: str, extra: tuple = (),
                  env: dict | None = None) -> dict:
    """Run ``python -m module --compare FOLDERS... --driver-memory M EXTRA...`` (``env`` added to its environment)
    and return the JSON it prints last; a failure is a result that is not identical, with the reason."""
    cmd = [sys.executable, "-m", module, "--compare", *folders, "--driver-memory", driver_memory, *extra]
    proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env={**os.environ, **(env or {})})
    if proc.returncode != 0:
        return {"identical": False, "reason": proc.stderr[-2000:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def comparison_session(driver_memory: str):
    """The comparing process's own ``local[2]`` SparkSession (UTC, no UI, quiet)."""
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.sql.session.timeZone", "UTC").config("spark.driver.memory", driver_memory).getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def machine(spark_text: str) -> str:
    """One line naming the machine (system, cores, CPU, memory), Python and PySpark, then ``spark_text``."""
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 30
    cpu = "unknown cpu"
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        from importlib.metadata import version
        spark = version("pyspark")
    except Exception:  # pragma: no cover
        spark = "?"
    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores ({cpu}), {mem:.0f} GiB RAM; "
            f"python {platform.python_version()}, pyspark {spark}; {spark_text}")


def ledgerflow_base(command: str | None) -> list[str]:
    """The ledgerflow command a benchmark times: ``command`` split as a shell would, or this interpreter's
    ``-m ledgerflow.adapters.cli`` (its ``PYTHONPATH``)."""
    return shlex.split(command) if command else [sys.executable, "-m", "ledgerflow.adapters.cli"]


def started_report(title: str, quick: bool, driver_memory: str) -> Report:
    """A benchmark's report, opened with its title, the time (UTC) and the machine."""
    log = Report()
    log(f"# ledgerflow {title} benchmark{' (--quick)' if quick else ''}, "
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC")
    log(f"# {machine(f'each process local[2], driver memory {driver_memory}')}")
    return log


def write_table(path: str, log: Report, table: list[str], results: list[dict]) -> list[str]:
    """Write the lines ``log`` kept, ``table`` (with the load average now) and the raw ``results`` to ``path``;
    return ``table``."""
    table.append(f"# load average now {loadavg()}")
    with open(path, "w") as fh:
        fh.write("\n".join(log.lines + table) + "\n")
        fh.write("\n# raw\n" + json.dumps(results, indent=1) + "\n")
    return table


def rounds_report(header: list[str], target_note: str) -> Report:
    """The report of a benchmark of alternating rounds: its ``header`` lines, then ``target_note`` with the load
    average at the start and whose CPU time is counted (this process made the subreaper of what its children
    leave running, where it can be)."""
    counted = become_subreaper()
    out = Report()
    for line in header:
        out(line)
    out(f"{target_note}; load average at start {loadavg()}; CPU time "
        f"{'of each process and its Spark JVM' if counted else 'of each process only'}")
    return out


def pair_summary(name: str, ratios: list[float], cpu_ratios: list[float], target: float,
                 medians: str = "") -> list[str]:
    """The two summary lines of ``name``'s pairs: the median wall ratio (with ``medians`` and the target) and the
    median CPU ratio."""
    import statistics
    return [f"median ratio {name}: {statistics.median(ratios):.3f} over {len(ratios)} pairs (min {min(ratios):.3f}, "
            f"max {max(ratios):.3f}); {medians}target <= {target:.2f}",
            f"median CPU ratio {name}: {statistics.median(cpu_ratios):.3f} (min {min(cpu_ratios):.3f}, max "
            f"{max(cpu_ratios):.3f})"]

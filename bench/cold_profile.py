"""Where a cold process spends its Spark time: counts that load on the machine does not change.

Runs one side of the cold-process benchmark (``bench/cold_process.py``) in this process, with Spark's
event log on, then prints what the JVM did: jobs, stages and tasks (from the event log), classes
compiled by Janino and their compile time (``CodegenMetrics``), and the optimizer's time per rule
(``RuleExecutor``). Wall times on a busy machine mean little; these counts compare two versions of
the SQL on any machine::

    python -m bench.cold_profile ledgerflow [--rows 20000] [--layout flat]
    python -m bench.cold_profile handwritten [--rows 20000] [--layout flat]
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import runpy
import sys
import tempfile
import time

from bench.cold_process import HANDWRITTEN, PERIOD, source_root


def _event_log_conf(log_dir: str) -> dict:
    """One plain JSON-lines event log file (Spark 4 rolls and compresses by default)."""
    return {"spark.eventLog.enabled": "true", "spark.eventLog.dir": log_dir,
            "spark.eventLog.rolling.enabled": "false", "spark.eventLog.compress": "false"}


def _with_event_log(log_dir: str) -> None:
    """Every SparkSession this process builds writes its event log into ``log_dir``."""
    from pyspark.sql import SparkSession
    original = SparkSession.Builder.getOrCreate

    def get_or_create(self):
        for key, value in _event_log_conf(log_dir).items():
            self.config(key, value)
        return original(self)
    SparkSession.Builder.getOrCreate = get_or_create


def _events(log_dir: str) -> list[dict]:
    [path] = glob.glob(os.path.join(log_dir, "*"))
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def _jvm_counters() -> dict:
    from pyspark import SparkContext
    jvm = SparkContext._jvm
    codegen = jvm.org.apache.spark.metrics.source.CodegenMetrics
    compile_ms = codegen.METRIC_COMPILATION_TIME().getSnapshot()
    classes = codegen.METRIC_COMPILATION_TIME().getCount()
    spent = jvm.org.apache.spark.sql.catalyst.rules.RuleExecutor.dumpTimeSpent()
    return {"janino_classes": classes, "janino_ms": sum(compile_ms.getValues()),
            "source_bytes": sum(codegen.METRIC_SOURCE_CODE_SIZE().getSnapshot().getValues()),
            "rules": spent}


def _summary(events: list[dict]) -> dict:
    jobs = [e for e in events if e["Event"] == "SparkListenerJobStart"]
    stages = [e for e in events if e["Event"] == "SparkListenerStageCompleted"]
    tasks = [e for e in events if e["Event"] == "SparkListenerTaskEnd"]
    start = next(e["Timestamp"] for e in events if e["Event"] == "SparkListenerApplicationStart")
    job_lines = []
    ends = {e["Job ID"]: e["Completion Time"] for e in events if e["Event"] == "SparkListenerJobEnd"}
    for j in jobs:
        infos = j.get("Stage Infos", [])
        what = "; ".join(f"{i['Number of Tasks']} task(s): " + " <- ".join(
            r["Name"] for r in i.get("RDD Info", [])[:3]) for i in infos[-1:])
        job_lines.append(f"job {j['Job ID']}: +{(j['Submission Time'] - start) / 1000:.2f} s, "
                         f"{(ends.get(j['Job ID'], j['Submission Time']) - j['Submission Time']) / 1000:.2f} s, "
                         f"{len(j['Stage IDs'])} stage(s); {what}")
    run_ms: dict = {}
    for t in tasks:
        m = t.get("Task Metrics", {})
        run_ms[t["Stage ID"]] = run_ms.get(t["Stage ID"], 0) + m.get("Executor Run Time", 0)
        job_lines.append(f"task {t['Task Info']['Task ID']}: +{(t['Task Info']['Launch Time'] - start) / 1000:.2f} s, "
                         f"stage {t['Stage ID']}: run {m.get('Executor Run Time', 0) / 1000:.2f} s, "
                         f"CPU {m.get('Executor CPU Time', 0) / 1e9:.2f} s, GC {m.get('JVM GC Time', 0) / 1000:.2f} s, "
                         f"read {m.get('Input Metrics', {}).get('Records Read', 0)} rows, "
                         f"wrote {m.get('Output Metrics', {}).get('Records Written', 0)} rows "
                         f"{m.get('Output Metrics', {}).get('Bytes Written', 0) / 1e6:.1f} MB")
    for s in stages:
        i = s["Stage Info"]
        job_lines.append(f"stage {i['Stage ID']}: +{(i['Submission Time'] - start) / 1000:.2f} s, "
                         f"{(i['Completion Time'] - i['Submission Time']) / 1000:.2f} s wall, "
                         f"{run_ms.get(i['Stage ID'], 0) / 1000:.2f} s task time, {i['Number of Tasks']} task(s): "
                         f"{i['Stage Name'][:50]}")
    for e in events:
        if e["Event"].endswith("SparkListenerSQLExecutionStart"):
            job_lines.append(f"sql {e['executionId']}: +{(e['time'] - start) / 1000:.2f} s starts: "
                             f"{e.get('description', '')[:60]!r}")
        elif e["Event"].endswith("SparkListenerSQLExecutionEnd"):
            job_lines.append(f"sql {e['executionId']}: +{(e['time'] - start) / 1000:.2f} s ends")
    job_lines.sort(key=lambda line: float(line.split("+", 1)[1].split(" ", 1)[0]))
    return {"jobs": len(jobs), "stages": len(stages), "tasks": len(tasks), "job_lines": job_lines}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("side", choices=["ledgerflow", "handwritten"])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--layout", default="flat", choices=["flat", "folders", "csv"])
    args = parser.parse_args(argv)
    ws = source_root(args.rows, args.layout)
    log_dir = tempfile.mkdtemp(prefix="lf-eventlog-")
    clock = time.monotonic()
    if args.side == "ledgerflow":
        from ledgerflow.adapters.cli import main as cli
        try:
            confs = [a for k, v in _event_log_conf(log_dir).items() for a in ("--conf", f"{k}={v}")]
            cli(["--workspace", ws, "run", "pipeline_p", "--period", PERIOD, "--master", "local[2]", *confs],
                standalone_mode=False)
        except SystemExit:
            pass
    else:
        _with_event_log(log_dir)
        out = os.path.join(ws, "target", "out", "handwritten-profile")
        sys.argv = [HANDWRITTEN, "--data", os.path.join(ws, "data"), "--layout", args.layout, "--out", out,
                    "--period", PERIOD]
        runpy.run_path(HANDWRITTEN, run_name="__main__")
    took = time.monotonic() - clock
    counters = _jvm_counters()
    summary = _summary(_events(log_dir))
    print(f"{args.side}: {took:.2f} s in process; {summary['jobs']} jobs, {summary['stages']} stages, "
          f"{summary['tasks']} tasks; Janino {counters['janino_classes']} classes, {counters['janino_ms']} ms, "
          f"{counters['source_bytes']} bytes of generated source")
    print("\n".join(summary["job_lines"]))
    rules = counters["rules"].splitlines()
    print("\n".join(rules[:40]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

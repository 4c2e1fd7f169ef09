"""``ledgerflow run ... --results FILE`` (and ``retry``): the invocation's project x period results as one JSON
document, written whatever the exit code, for a scheduler (Airflow, Dagster, a CI job) that maps them to its own
task states.

The document: ``results_version`` (1), the command, ``exit_code`` and ``error`` (the one paragraph a failed
invocation printed, else None), the environment, the batch ids, and ``results``: one entry per project-period
the invocation's batches planned (in their run order), with its status (``completed``, ``failed``,
``interrupted``, ``running`` or ``not run``), the run id, the rows per output (seq, location, rows, the registered
dataset version), the checks (name, kind, status, violations), the bridge summary (per output, group (None for
the whole output) and measure: its value after the period filter and its value written) and the timings (total,
setup, Spark jobs), read back from the run store's records. An invocation
refused before any batch began (a bad option, a closed period) writes ``results: []`` with its exit code.
"""
from __future__ import annotations

import json
import os
import sys
from contextlib import contextmanager
from typing import Iterator, Optional

from ...compiler.errors import LedgerflowError
from ..store.whole_files import not_ours, write_whole

RESULTS_VERSION = 1


def _entry(project: str, period: str, rec: Optional[dict]) -> dict:
    if rec is None:
        return {"project": project, "period": period, "status": "not run", "run_id": None, "outputs": [],
                "checks": [], "bridge": [], "timings": None, "error": None}
    timings = rec.get("timings") or {}
    status = rec.get("status")
    if status == "failed" and str(rec.get("error") or "").startswith("interrupted"):
        status = "interrupted"  # Ctrl-C, SIGTERM, or its process died: recorded failed, nothing published
    return {
        "project": project, "period": period, "status": status, "run_id": rec.get("run_id"),
        "started_at": rec.get("started_at"), "finished_at": rec.get("finished_at"),
        "outputs": [{"seq": o.get("operation_seq"), "location": o.get("location"), "rows": o.get("rows"),
                     "registered_dataset": o.get("registered_dataset"),
                     "registered_version": o.get("registered_version")} for o in rec.get("outputs") or []],
        "checks": [{k: c.get(k) for k in ("name", "kind", "severity", "status", "violations")}
                   for c in rec.get("checks") or []],
        "bridge": [{"output": b.get("output"), "group": b.get("group"), "measure": b.get("measure"),
                    "input_value": b.get("input"), "output_value": b.get("output_value"),
                    **({"not_measured": b["not_measured"]} if b.get("not_measured") else {})}
                   for b in rec.get("bridge") or [] if isinstance(b, dict)],
        "timings": {"total_s": timings.get("total_s"), "setup_s": timings.get("setup_s"),
                    "spark_jobs": timings.get("spark_jobs")},
        "error": (rec.get("error") or "").splitlines()[0][:500] if rec.get("error") else None,
    }


def results(store, batch_ids: list[str]) -> list[dict]:
    """One entry per project-period the batches planned (the last run of each; ``not run`` when none ran)."""
    out = []
    for batch_id in batch_ids:
        plan = store.get_batch(batch_id)["plan"]
        last: dict[tuple[str, str], dict] = {}
        for rec in store.batch_runs(batch_id):  # oldest first: the last one stands
            last[(rec["project"]["name"], rec["period"]["identifier"])] = rec
        pairs = [tuple(p) for p in plan["pairs"]] if plan.get("pairs") else \
            [(name, period) for period in plan["periods"] for name in plan["projects"]]
        seen = set(pairs)
        pairs += sorted(k for k in last if k not in seen)  # a retry's runs of its own batch
        out += [dict(_entry(name, period, last.get((name, period))), batch_id=batch_id) for name, period in pairs]
    return out


class ResultsPathRefused(LedgerflowError):
    """``--results`` names something ledgerflow did not write as results: refused before anything runs."""


def check_results_path(path: Optional[str]) -> None:
    """Refuse ``--results`` (RESULTS-001, before anything runs) when it is a folder, a link, or an existing file
    that is not a results document ledgerflow wrote (which is never replaced)."""
    if path is None:
        return
    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    if not os.path.isdir(folder):
        raise ResultsPathRefused(f"RESULTS-001 --results {path}: its folder {folder} does not exist, so the results "
                                 "could not be written. Nothing was run. Hint: create the folder, or give another "
                                 "path.")
    what = not_ours(path, lambda old: isinstance(old, dict) and "results_version" in old)
    if what is not None:
        raise ResultsPathRefused(f"RESULTS-001 --results {path} is {what}: the results go to a new file or over "
                                 "results ledgerflow wrote. Nothing was run. Hint: give another path.")


def _exit_code(exc: Optional[BaseException]) -> int:
    if exc is None:
        return 0
    if isinstance(exc, SystemExit):
        return exc.code if isinstance(exc.code, int) else 1
    code = getattr(exc, "exit_code", None)
    return code if isinstance(code, int) else 1


class ResultsCollector:
    """What the command hands over while it runs: its scheduler (for the batch ids) and its run store."""

    def __init__(self):
        self.scheduler = None
        self.store = None


@contextmanager
def results_file(path: Optional[str], command: str, env: str) -> Iterator[ResultsCollector]:
    """Around a ``run`` or ``retry`` invocation: ``path`` checked first (:func:`check_results_path`); on the way out,
    however it ends, the results document written to ``path`` (nothing when None), and the outcome (its exception)
    goes on."""
    check_results_path(path)
    collector = ResultsCollector()
    if path is None:
        yield collector
        return
    path = os.path.abspath(path)
    error: Optional[BaseException] = None
    try:
        yield collector
    except BaseException as exc:
        error = exc
        raise
    finally:
        batch_ids = list(getattr(collector.scheduler, "batch_ids", []) or [])
        try:
            found = results(collector.store, batch_ids) if collector.store is not None and batch_ids else []
        except Exception as exc:  # noqa: BLE001 - the results never hide the run's own outcome
            found, error = [], error or exc
        message = None if error is None else (error.render() if hasattr(error, "render") else str(error)) or None
        document = {"results_version": RESULTS_VERSION, "command": command, "exit_code": _exit_code(error),
                    "error": message, "env": env, "batch_ids": batch_ids, "results": found}
        try:
            write_whole(path, json.dumps(document, indent=2, default=str) + "\n")
        except OSError as exc:  # the folder went away meanwhile: said, and the invocation's own outcome stands
            print(f"ledgerflow: warning: the results could not be written to {path} ({exc.strerror or exc}).",
                  file=sys.stderr)

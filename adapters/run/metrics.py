"""Per-statement timings and Spark job counts of a run: the run record's ``timings``.

Every measured block (loading the inputs, each stage and output statement, each output's write)
runs under its own Spark job group (``spark.jobGroup.id``, a thread-local property of the thread
that runs it), and the jobs of each group are looked up in ``SparkContext.statusTracker()`` when
the run ends. Jobs started by other threads (the concurrent input loads) carry no group: the jobs
without a group that appear during a block are counted for it. Spark Connect has no SparkContext:
there ``spark_jobs`` (and stage and task counts) are ``null``; the seconds are still measured.
"""
from __future__ import annotations

import time
import uuid
from contextlib import contextmanager
from typing import Iterator, Optional

_PROPS = ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")


def _context(spark):
    """The SparkContext of ``spark``, or None (Spark Connect)."""
    try:
        sc = spark.sparkContext
        sc.statusTracker()
        return sc
    except Exception:
        return None


class RunMetrics:
    """Collects the ``timings`` of one run."""

    def __init__(self, spark, run_id: str, setup_s: Optional[float] = None):
        self.sc = _context(spark)
        self.run_id = run_id
        self.created = time.monotonic()
        self.prefix = f"ledgerflow-{run_id}-{uuid.uuid4().hex[:6]}"
        self.setup_s = setup_s
        self.statements: list[dict] = []
        self.outputs: list[dict] = []
        self._check_parts: list[dict] = []  # the blocks that judged the run's checks (:meth:`checking`)
        self._groups: dict[int, str] = {}  # id(entry) -> job group
        self._loose: dict[int, set] = {}  # id(entry) -> ungrouped jobs started during the block
        self._open: dict[int, tuple] = {}  # outputs started and not yet finished
        self._done = False
        self._drain()
        self._ungrouped_at_start = self._ungrouped()

    # ------------------------------------------------------------------ Spark status
    def _drain(self) -> None:
        """Let Spark's listener bus deliver pending job events, so the status tracker is up to date."""
        if self.sc is None:
            return
        try:
            self.sc._jsc.sc().listenerBus().waitUntilEmpty()
        except Exception:  # not reachable (e.g. a different Spark build): counts may miss a last job
            pass

    def _job_ids(self, group: Optional[str]) -> set:
        """The retained jobs of ``group`` (None: of no group). One Py4J call for the whole array: pyspark's
        ``getJobIdsForGroup`` fetches it element by element, and a long-lived session retains up to
        ``spark.ui.retainedJobs`` (1,000) jobs without a group, so that cost every measured block a
        thousand round trips."""
        ids = self.sc._jvm.java.util.Arrays.toString(self.sc._jsc.statusTracker().getJobIdsForGroup(group))
        return {int(i) for i in ids.strip("[]").split(",") if i.strip()}

    def _ungrouped(self) -> set:
        if self.sc is None:
            return set()
        try:
            return self._job_ids(None)
        except Exception:
            return set()

    def _begin(self, entry: dict) -> tuple:
        group = f"{self.prefix}-{len(self._groups) + 1}"
        self._groups[id(entry)] = group
        saved = None
        if self.sc is not None:
            saved = {k: self.sc.getLocalProperty(k) for k in _PROPS}
            self.sc.setJobGroup(group, f"ledgerflow {entry.get('name', '')}".strip(), interruptOnCancel=False)
        return saved, self._ungrouped(), time.monotonic()

    def _end(self, entry: dict, state: tuple) -> None:
        saved, loose_before, t0 = state
        entry["seconds"] = round(time.monotonic() - t0, 3)
        if self.sc is not None and saved is not None:
            try:  # never let bookkeeping hide the error that ended the block
                for k, v in saved.items():
                    self.sc.setLocalProperty(k, v)
                self._drain()
                self._loose[id(entry)] = self._ungrouped() - loose_before
            except Exception:
                pass

    @contextmanager
    def measure(self, entry: dict) -> Iterator[dict]:
        """Time the block and count the Spark jobs it starts into ``entry``; marks it ``failed`` on error."""
        state = self._begin(entry)
        try:
            yield entry
        except BaseException:
            entry["failed"] = True
            raise
        finally:
            self._end(entry, state)

    # ------------------------------------------------------------------ what a run measures
    def statement(self, name: str, kind: str, operations: list) -> dict:
        """A new statement entry (``kind`` load | stage | output), appended in execution order."""
        entry = {"name": name, "kind": kind, "operations": list(operations), "seconds": None,
                 "spark_jobs": None, "spark_stages": None, "spark_tasks": None}
        self.statements.append(entry)
        return entry

    def skipped(self, name: str, kind: str, operations: list) -> None:
        """A statement that did not run (no output reads it)."""
        entry = self.statement(name, kind, operations)
        entry.update(seconds=0.0, spark_jobs=0 if self.sc is not None else None, skipped=True)

    def start_output(self, seq: int, name: str) -> None:
        """The write of output ``seq`` begins (finished by :meth:`end_output`)."""
        entry = {"operation_seq": seq, "name": name, "seconds": None, "spark_jobs": None, "spark_stages": None,
                 "spark_tasks": None}
        self.outputs.append(entry)
        self._open[seq] = (entry, self._begin(entry))

    def end_output(self, seq: int) -> None:
        """The write of output ``seq`` has finished."""
        entry, state = self._open.pop(seq)
        self._end(entry, state)

    @contextmanager
    def checking(self) -> Iterator[None]:
        """Time a block judging the run's checks (after an output is staged, and before the commit point): its
        seconds and Spark jobs add up, over every such block, into ``timings["checks"]``."""
        part: dict = {"name": "checks", "seconds": None, "spark_jobs": None, "spark_stages": None, "spark_tasks": None}
        self._check_parts.append(part)
        with self.measure(part):
            yield

    def abort(self) -> None:
        """Close what a failure left open (the failed output write) and restore the job group."""
        for seq in list(self._open):
            self._open[seq][0]["failed"] = True
            self.end_output(seq)

    # ------------------------------------------------------------------ the record
    def _checks(self) -> Optional[dict]:
        """``timings["checks"]``: every block that judged the checks added up (None: the run judged none)."""
        if not self._check_parts:
            return None
        total = {"name": "checks", "seconds": round(sum(p["seconds"] or 0 for p in self._check_parts), 3)}
        for key in ("spark_jobs", "spark_stages", "spark_tasks"):
            counts = [p[key] for p in self._check_parts]
            total[key] = None if None in counts else sum(counts)
        return total

    def _count(self, entry: dict) -> None:
        if self.sc is None or entry.get("skipped"):
            return
        tracker = self.sc.statusTracker()
        jobs = self._job_ids(self._groups[id(entry)]) if id(entry) in self._groups else set()
        jobs |= self._loose.get(id(entry), set())
        stages = tasks = 0
        for job in jobs:
            info = tracker.getJobInfo(job)
            for stage_id in (info.stageIds if info else []):
                stage = tracker.getStageInfo(stage_id)
                if stage is not None and stage.numCompletedTasks + stage.numFailedTasks > 0:
                    stages += 1
                    tasks += stage.numCompletedTasks + stage.numFailedTasks
        entry.update(spark_jobs=len(jobs), spark_stages=stages, spark_tasks=tasks)

    def to_json(self, total_s: Optional[float] = None) -> dict:
        """The record's ``timings``; job counts are looked up on the first call."""
        self.abort()
        if not self._done:
            self._drain()
            for entry in self.statements + self.outputs + self._check_parts:
                try:
                    self._count(entry)
                except Exception:  # status of a job no longer retained: leave the counts null
                    pass
            self._done = True
        load = next((s for s in self.statements if s["kind"] == "load"), None)
        checks = self._checks()
        jobs = [e["spark_jobs"] for e in self.statements + self.outputs + ([checks] if checks else [])]
        return {"total_s": None if total_s is None else round(total_s, 3),
                "setup_s": None if self.setup_s is None else round(self.setup_s, 3),
                "load_inputs_s": load["seconds"] if load else None,
                "statements": self.statements,
                "outputs": self.outputs,
                "checks": checks,
                "spark_jobs": None if self.sc is None or any(j is None for j in jobs) else sum(jobs),
                "job_counts": "spark_status_tracker" if self.sc is not None else "unavailable (Spark Connect)"}


def run_timings(metrics: Optional[RunMetrics], clock: float) -> Optional[dict]:
    """The record's ``timings`` of a run that started at ``clock`` (``time.monotonic()``) and measured
    ``metrics`` (None when it failed before its Spark work began)."""
    if metrics is None:
        return None
    metrics.setup_s = metrics.created - clock
    try:
        return metrics.to_json(time.monotonic() - clock)
    except Exception:  # e.g. the JVM is gone after a failure: the run's own error matters more
        return None


def timing_summary(timings: dict) -> str:
    """One line of a run's timings: load, statements, writes, checks (when the run judged any), Spark jobs."""
    stmts = [s for s in timings["statements"] if s["kind"] != "load" and not s.get("skipped")]
    parts = [f"load inputs {timings['load_inputs_s'] or 0:.1f} s",
             f"{len(stmts)} statement{'s' if len(stmts) != 1 else ''} {sum(s['seconds'] or 0 for s in stmts):.1f} s",
             f"writes {sum(o['seconds'] or 0 for o in timings['outputs']):.1f} s"]
    if timings.get("checks"):
        parts.append(f"checks {timings['checks']['seconds'] or 0:.1f} s")
    jobs = timings.get("spark_jobs")
    parts.append(f"{jobs} Spark job{'s' if jobs != 1 else ''}" if jobs is not None else "Spark jobs not counted")
    return "timings: " + ", ".join(parts)

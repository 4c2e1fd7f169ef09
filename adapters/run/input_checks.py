"""The ``on: input`` checks of a run, judged beside its writes (docs/checks.md "What the run does").

The input's rows are loaded before any output is written and its checks need no output, so they are
judged at once in a daemon thread of their own: their Spark jobs queue beside the writes' and the driver's
planning and scheduling of them overlaps the writes' tasks. Their jobs carry a job group of their own
(classic Spark) or a tag (Spark Connect), so the run's timings do not count them as the writes' and
:meth:`InputChecks.cancel` stops them: a failed write, Ctrl-C or a failed run never leaves them running
into the next run of a ``run --select`` invocation, and the process never waits for them at exit.
"""
from __future__ import annotations

import threading
from concurrent.futures import CancelledError, Future

from ...compiler.checks.plan import CheckPlan
from . import check_eval


class InputChecks:
    """The input's checks over ``frame`` (the input rows after the period filter), judged in a thread."""

    def __init__(self, spark, run_id: str, checks: list[CheckPlan], frame):
        self.spark = spark
        self.group = f"ledgerflow-{run_id}-input-checks"
        self.connect = type(spark).__module__.startswith("pyspark.sql.connect")
        self.future: Future = Future()
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._judge, args=(checks, frame), name="ledgerflow-input-checks",
                                       daemon=True)
        self.thread.start()

    def _judge(self, checks: list[CheckPlan], frame) -> None:
        if not self.future.set_running_or_notify_cancel():
            return
        try:
            if self.connect:
                self.spark.addTag(self.group)  # a Spark Connect tag belongs to the thread that adds it
            else:
                self.spark.sparkContext.setJobGroup(self.group, "the input's checks", interruptOnCancel=True)
            results = check_eval.judge_rows(frame, [c for c in checks if c.kind.row_check])
            for check in checks:
                if self.stopped.is_set():
                    raise CancelledError(f"the input's checks of {self.group} were cancelled")
                if check.kind.set_check:
                    results[check.name] = check_eval.set_result(self.spark, check, frame)
            self.future.set_result(results)
        except BaseException as exc:  # noqa: BLE001 - handed to the thread that waits, re-raised there
            self.future.set_exception(exc)

    def result(self) -> dict[str, dict]:
        """name -> result of each input check (waits for them; raises what judging them raised)."""
        return self.future.result()

    def cancel(self) -> None:
        """Stop judging: no further check starts and the running one's Spark jobs are cancelled."""
        self.stopped.set()
        try:
            if self.connect:
                self.spark.interruptTag(self.group)
            else:
                self.spark.sparkContext.cancelJobGroup(self.group)
        except Exception:  # noqa: BLE001 - a session already stopped has nothing left to cancel
            pass

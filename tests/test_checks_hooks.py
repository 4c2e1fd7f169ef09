"""The checks hook around the writes (adapters/commit/publish.py ``OutputChecks``, adapters/run/checks.py):
a write that fails cancels what is still being judged (the input's checks run in a thread beside the writes)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from ledgerflow.adapters.commit import publish


class _Checks:
    def __init__(self):
        self.calls = []

    def prepare(self, out):
        raise RuntimeError("the write failed")

    def written(self, *args):
        self.calls.append("written")

    def evaluate(self, record):
        self.calls.append("evaluate")

    def cancel(self):
        self.calls.append("cancel")


def test_a_failed_write_cancels_the_checks_still_judging():
    checks = _Checks()
    op = SimpleNamespace(seq=2, name="Write", register_as_dataset=None)
    out = publish.PendingOutput(SimpleNamespace(operation=op), frame=None, rows=None)
    dest = SimpleNamespace(local=True, target=None, format="parquet", within=None)
    stops = SimpleNamespace(check=lambda: None, hold=lambda: None)
    with pytest.raises(RuntimeError, match="the write failed"):
        publish.write_outputs([out], {2: dest}, {"run_id": "r1"}, period="2026-01",
                              hooks=publish.PublishHooks(save_run=lambda _r: None, stops=stops, echo=lambda _s: None,
                                                         checks=checks))
    assert checks.calls == ["cancel"]


def test_cancelling_the_input_checks_cancels_their_jobs_and_starts_no_further_check(monkeypatch):
    """A failed write (or a failed run) stops the input's checks: their job group is cancelled, the next check
    never starts, waiting for them raises CancelledError, and the thread is a daemon (exit never waits)."""
    import threading
    from concurrent.futures import CancelledError

    from ledgerflow.adapters.run import check_eval, input_checks
    started, release, cancelled = threading.Event(), threading.Event(), []
    judged = []

    def slow_set_result(spark, check, frame, rows=None):
        judged.append(check.name)
        started.set()
        release.wait(5)
        return {"name": check.name}

    monkeypatch.setattr(check_eval, "set_result", slow_set_result)
    monkeypatch.setattr(check_eval, "judge_rows", lambda frame, checks, **_k: {})
    context = SimpleNamespace(setJobGroup=lambda *a, **k: None, cancelJobGroup=cancelled.append)
    spark = SimpleNamespace(sparkContext=context)
    kinds = SimpleNamespace(row_check=False, set_check=True)
    checks = [SimpleNamespace(name="first", kind=kinds), SimpleNamespace(name="second", kind=kinds)]
    background = input_checks.InputChecks(spark, "r1", checks, frame=None)
    assert background.thread.daemon
    assert started.wait(5)
    background.cancel()
    release.set()
    with pytest.raises(CancelledError):
        background.result()
    assert cancelled == ["ledgerflow-r1-input-checks"] and judged == ["first"]

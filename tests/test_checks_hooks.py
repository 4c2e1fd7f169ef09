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
        publish.write_outputs([out], {2: dest}, {"run_id": "r1"}, period="2026-01", save_run=lambda _r: None,
                              stops=stops, echo=lambda _s: None, checks=checks)
    assert checks.calls == ["cancel"]


def test_the_input_checks_are_cancelled_with_the_run():
    from concurrent.futures import Future

    from ledgerflow.adapters.run.checks import RunChecks
    hook = RunChecks.__new__(RunChecks)
    hook._on_input = Future()  # still queued: cancel() stops it before it starts
    hook.cancel()
    assert hook._on_input.cancelled()

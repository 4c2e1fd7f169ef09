"""One step of a batch: a fused project over its periods of the batch (:func:`.fused.run_range`).

Its periods that cannot run (a failed upstream for that period, a draft project, a closed period) are skipped
first, as period by period; the others are fused (one left: it runs on its own). Each period is still its
own run with its own outcome, filed by :class:`.batch_state.BatchState` as the run of one unit is.
"""
from __future__ import annotations

import time

from ...compiler.errors import LedgerflowError
from ...compiler.periods import Period
from .batch_state import BatchState
from .fused import run_range
from .interrupts import RunInterrupted
from .outcomes import span


def run_fused(state: BatchState, name: str, periods: list[Period]) -> None:
    """Project ``name`` over ``periods`` (its periods of the batch, ascending), fused where it can run."""
    todo = []
    for p in periods:
        unit = state.unit(name, p)
        if state.why_not(unit) is not None:
            state.skip(unit, state.heading(unit))
        else:
            todo.append(p)
    if len(todo) == 1:
        state.run_one(state.unit(name, todo[0]))
    if len(todo) < 2:
        return
    state.echo(f"\n{name}: {len(todo)} periods fused ({span(todo)})")
    current: dict = {}  # the period whose run is under way: period, clock, known run ids
    fail_fast = state.plan.settings.fail_fast

    def on_start(period: Period) -> None:
        unit = state.unit(name, period)
        state.echo(f"\n{state.heading(unit, ' (fused)')}")
        current.update(period=period, clock=time.monotonic(), known=state.run_ids(unit))

    def ended(period: Period, result: object, seconds: float) -> None:
        unit = state.unit(name, period)
        if isinstance(result, BaseException):
            state.ended_failed(unit, result, seconds, current.get("known", set()))
        else:
            state.ended_completed(unit, result, seconds)

    def on_done(period: Period, result: object) -> bool:
        ended(period, result, time.monotonic() - current["clock"])
        current.clear()
        return state.stopped is not None or (fail_fast and state.failed)

    try:
        # the batch's workspace: with the datasets registered by the upstream runs of this batch, which the
        # planning workspace does not have yet
        run_range(state.runner, name, todo, upstream={p.identifier: state.registered[p.identifier] for p in todo},
                  allow_draft=state.plan.settings.allow_draft, batch_id=state.plan.settings.batch_id,
                  on_start=on_start, on_done=on_done, progress=True, workspace=state.workspace.current())
    except (RunInterrupted, LedgerflowError) as err:  # Ctrl-C during a period's run, or the range did not start
        hit = [current["period"]] if current else [p for p in todo
                                                   if state.outcome(state.unit(name, p)).status == "pending"]
        clock = current.get("clock", time.monotonic())
        for p in hit:
            ended(p, err, time.monotonic() - clock)

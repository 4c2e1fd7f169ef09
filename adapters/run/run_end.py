"""How a run ends: the lines a completed run prints, and the record of a failed one (its local outputs rolled
back first, then what it holds let go)."""
from __future__ import annotations

import contextlib
import signal
from typing import Callable

from ...compiler.errors import LedgerflowError
from ..commit import publish
from ..commit.journal import CommitJournal
from ..commit.signals import signals_deferred
from ..store import liveness
from .context import RunContext
from .metrics import timing_summary
from .record import RunRecord

Echo = Callable[[str], None]


def completed_lines(ctx: RunContext, record: RunRecord, outputs: list[dict], took: float) -> list[str]:
    """The lines saying a run completed: what each output wrote, and its timings."""
    timings = record["timings"]
    lines = [f"Completed run {ctx.run_id} in {took:.1f} s"]
    for out in outputs:
        reg = f" (registered {out['registered_dataset']} v{out['registered_version']})" \
            if out.get("registered_dataset") else ""
        lines.append(f"  output {out['operation_seq']}: {out['rows']} rows -> {out['location']}{reg}")
    if timings:
        lines.append(f"  {timing_summary(timings)}; details: ledgerflow runs show {ctx.run_id}")
    return lines


def settle_committed(store, record: RunRecord, ctx: RunContext, journal: CommitJournal, echo: Echo) -> None:
    """What follows a run's commit point: its run.json written (a warning when it cannot be: the registry holds
    the completed record), the versions it replaced retired, its lock let go."""
    try:
        store.write_files(record.data, ctx.compiled.script())
    except Exception as exc:  # noqa: BLE001 - the registry holds the completed record
        echo(f"Warning: the run completed, but its run.json could not be written ({exc}); `ledgerflow "
             f"runs show {ctx.run_id}` reads its record from {store.db_path}")
    try:
        journal.retire()  # the versions the run replaced
    except OSError:
        pass  # a version folder left behind is not live; `ledgerflow runs clean` deletes it
    liveness.release(ctx.run_id)


def record_failed(store, record: RunRecord, ctx: RunContext, err: LedgerflowError, echo: Echo) -> bool:
    """Record the run failed with ``err`` (its local outputs rolled back first, when it got to its swaps)
    and let go of what it holds: its reserved versions and leases go with the failed record, then its
    lock. Ctrl-C and SIGTERM wait meanwhile (a second Ctrl-C here left the leases and the lock held, and
    the next run failed RUN-001). Returns whether Ctrl-C was pressed meanwhile."""
    final = False
    with signals_deferred(reraise_sigint=False) as arrived:
        try:
            final = _record_failure(store, record, ctx, err, echo)
        finally:
            # a record that is not final (the store failed, or cannot tell whether the run committed) keeps
            # its lock file: the next command finds the lock free and its recovery settles the run
            liveness.release(ctx.run_id, keep_file=not final)
    return signal.SIGINT in arrived


def _record_failure(store, record: RunRecord, ctx: RunContext, err: LedgerflowError, echo: Echo) -> bool:
    """The body of :func:`record_failed`; returns whether the run's record is final now."""
    if CommitJournal.begun(record.data):  # the run got to its swaps
        status = store.run_status(ctx.run_id)
        if status != "running":  # completed after all (an interrupt just after the commit point), or the
            return status is not None  # store cannot tell: the next command's recovery decides
        publish.finish_roll_back(record.data)  # when the rollback was cut short (or never began): from the journal
    error = str(err)
    done = record.get("rolled_back")
    if done and (done["kept"] or done["problems"]):
        sentence = publish.rollback_sentence(record.data)
        error += f" Then {sentence}"
        echo(f"Warning: {sentence}")
    record.failed(error)
    try:
        # its reserved versions (never visible) and its leases (its rollback is done) go with the final record
        store.save_run(record.data, ctx.compiled.script(), release=True)
    except BaseException:
        with contextlib.suppress(Exception):  # the rollback is done: the partitions are free for the next run
            store.release(ctx.run_id)
        raise
    return True

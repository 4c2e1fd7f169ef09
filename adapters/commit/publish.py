"""Publish a run's computed outputs: write them all, then the commit point, or roll the local ones back.

Local partitions are staged first (nothing visible changes), then swapped in together through the
run's :class:`.journal.CommitJournal`; URIs and catalog tables are written after that, one by one by
Spark; the run store's commit transaction then confirms the run. Until it has, a failure rolls the
local partitions back (a URI or table already written stays replaced).
"""
from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Optional, Protocol

from ...compiler.errors import ExecutionError, ResolutionError
from . import prestage, spark_writes, staging
from .destinations import OutputDestination
from .journal import CommitJournal
from .signals import signals_deferred

if TYPE_CHECKING:
    from ...compiler.compile import Statement
    from ..store.runstore import RunStore


class StopPoints(Protocol):
    """Where a run may stop on Ctrl-C (the runner's interrupts module)."""

    def check(self) -> None:
        """Raise ``KeyboardInterrupt`` when Ctrl-C was pressed and the run may still stop."""

    def hold(self) -> None:
        """From here on a first Ctrl-C is only noted: the run goes on to its commit point."""


class OutputChecks(Protocol):
    """The run's checks, judged around the writes before anything is published (the runner's
    ``run/checks.py``: :class:`RunChecks`)."""

    def prepare(self, out: PendingOutput) -> list[tuple[Any, OutputDestination]]:
        """Before ``out`` is written: its frame set up for its checks (observed; its quarantined rows split
        off); returns the quarantined rows to stage, each with its destination."""

    def written(self, out: PendingOutput, staged: Optional[staging.Staged], fmt: Optional[str] = None) -> None:
        """After ``out`` was staged (``staged`` None: an output written elsewhere, materialised, not yet written)."""

    def evaluate(self, record: dict) -> None:
        """Every check judged and ``record["checks"]`` written; raises ChecksFailed when a ``fail`` check failed."""

    def cancel(self) -> None:
        """The writes failed before the checks were judged: anything still judging stops."""


@dataclass
class PendingOutput:
    """An output whose query ran and which is still to be written: ``rows`` is None until its staged
    write counts them (an output to a local folder is computed by that write)."""

    statement: Statement
    frame: Any  # a pyspark DataFrame
    rows: Optional[int]
    prestaged: Optional[str] = None  # its rows already written by a fused range's one write (see .prestage)


@dataclass(frozen=True)
class WrittenOutput:
    """An output written to ``destination``, visible at ``location``."""

    output: PendingOutput
    destination: OutputDestination
    location: str


def _checking(metrics):
    """The block judges the run's checks: timed into ``metrics`` (when collected)."""
    return metrics.checking() if metrics else contextlib.nullcontext()


@dataclass(frozen=True)
class PublishHooks:
    """What :func:`write_outputs` calls while it writes a run's outputs.

    ``save_run`` saves the run's record (with its journal, so recovery can roll a dead run back); ``stops``:
    where Ctrl-C may stop the run; ``echo`` prints progress; ``metrics``: the run's timings (or None).
    ``checks``: the run's checks, judged on the staged outputs before the journal begins (a quarantine's rows
    staged with the outputs and swapped in by the same journal). ``refuse(record)``: called once everything is
    staged, before anything is swapped in or written in place (raises when the run may not publish).
    ``staged(seq, folder)``: called when output ``seq``'s write staged its rows in ``folder`` (the run's bridge
    reads figures from them: run/bridge.py)."""

    save_run: Callable[[dict], None]
    stops: StopPoints
    echo: Callable[[str], None]
    metrics: Any = None
    checks: Optional[OutputChecks] = None
    refuse: Optional[Callable[[dict], None]] = None
    staged: Optional[Callable[[int, str], None]] = None


@dataclass(frozen=True)
class Written:
    """What :func:`write_outputs` wrote: the record's outputs, the registered versions ``(name, version,
    columns)`` to confirm at the commit point and the commit journal."""

    outputs: list[dict]
    registrations: list[tuple]
    journal: CommitJournal


@dataclass(frozen=True)
class Completion:
    """How :func:`commit_point` completes the run's record: its registered versions are created at
    ``started_at``, ``finished_at()`` and ``timings()`` are read as the record completes."""

    started_at: str
    finished_at: Callable[[], str]
    timings: Callable[[], Optional[dict]]


@contextlib.contextmanager
def timed_output(metrics, op):
    """The block writes output ``op``: its start and end go to the run's ``metrics`` (when collected)."""
    if metrics:
        metrics.start_output(op.seq, op.name)
    yield
    if metrics:
        metrics.end_output(op.seq)


def _check_tables(elsewhere: list[PendingOutput], destinations: dict[int, OutputDestination], period: str) -> None:
    """A table that cannot take an output's rows fails the run before anything is written."""
    tables: dict[str, int] = {}
    for out in elsewhere:
        seq, dest = out.statement.operation.seq, destinations[out.statement.operation.seq]
        if dest.kind == "table":
            spark = out.frame.sparkSession
            name = spark_writes.qualified_table(spark, dest.target)
            if name in tables:  # e.g. `db.t` and `spark_catalog.db.t`: the names differ, the table does not
                raise ResolutionError(f"outputs {tables[name]} and {seq} both write the catalog table {name} for "
                                      f"period {period}: the second would replace the first's rows. Give each "
                                      "output a destination of its own.")
            tables[name] = seq
            spark_writes.check_catalog_table(spark, dest.target, out.frame.columns, f"output {seq}")


def write_outputs(pending: list[PendingOutput], destinations: dict[int, OutputDestination], record: dict, *,
                  period: str, hooks: PublishHooks) -> Written:
    """Write every output of the run ``record`` describes, for ``period``: local partitions are staged,
    then swapped in together, each swap journalled first (``record["commit"]``, saved with ``hooks.save_run``,
    so recovery can roll a dead run back); URIs and catalog tables are written after that, one by one by
    Spark. A failure anywhere rolls the local partitions back (a URI or table already written stays
    replaced). A failing check (``hooks.checks``) raises before anything is swapped in or written elsewhere,
    and the staged partitions are discarded; ``hooks.refuse`` raises when the run may not publish, e.g. its
    period was closed meanwhile (a URI or table written cannot be rolled back)."""
    save_run, stops, echo = hooks.save_run, hooks.stops, hooks.echo
    metrics, checks, refuse = hooks.metrics, hooks.checks, hooks.refuse
    run_id = record["run_id"]
    local = [p for p in pending if destinations[p.statement.operation.seq].local]
    elsewhere = [p for p in pending if not destinations[p.statement.operation.seq].local]
    staged: list = []
    written: list[WrittenOutput] = []
    quarantined: list[tuple[Any, OutputDestination]] = []
    try:
        _check_tables(elsewhere, destinations, period)
        for out in elsewhere if checks is not None else []:  # materialised already: judged before any write
            quarantined += checks.prepare(out)
            checks.written(out, None)
        for out in local:  # computed by their staged write: a failure here comes before anything is replaced
            stops.check()
            op = out.statement.operation
            dest = destinations[op.seq]
            if checks is not None:
                quarantined += checks.prepare(out)
            df = out.frame
            with timed_output(metrics, op):
                registers = bool(op.register_as_dataset)  # a new registered version replaces nothing
                if out.prestaged is not None:
                    staged.append(prestage.adopt_partition(out.prestaged, dest.target, period, run_id,
                                                           create_only=registers, within=dest.within, env=dest.env))
                else:
                    staged.append(staging.stage_partition(df, dest.target, dest.format, period, run_id,
                                                          create_only=registers, within=dest.within, env=dest.env))
                    if hooks.staged is not None:
                        hooks.staged(op.seq, staged[-1].staged)
                if out.rows is None:
                    out.rows = staging.count_rows(df, staged[-1].staged, dest.format)
                    echo(f"  [{op.seq}] output '{op.name}': {out.rows} rows")
            written.append(WrittenOutput(out, dest, staged[-1].link))
            if checks is not None:
                with _checking(metrics):
                    checks.written(out, staged[-1], dest.format)
        if checks is not None:
            stops.check()
            with _checking(metrics):
                checks.evaluate(record)  # raises when a check fails: nothing was swapped in
            for rows, dest in quarantined:  # swapped in with the outputs, by the same journal
                staged.append(staging.stage_partition(rows, dest.target, dest.format, period, run_id,
                                                      within=dest.within, env=dest.env))
        if refuse is not None:
            refuse(record)
    except BaseException:
        if checks is not None:
            checks.cancel()
        staging.discard(staged)
        raise
    journal = CommitJournal.begin(record, [destinations[o.statement.operation.seq].target for o in elsewhere],
                                  save_run)
    try:
        stops.check()  # the last moment nothing needs rolling back
        journal.save()
        journal.swap_in(staged)
        for n, out in enumerate(elsewhere):
            if n == 0:
                stops.check()  # the last moment only what the rollback undoes is written
                # a URI or table written cannot be rolled back: stopping from here on would leave a mix of two
                # runs, so a first Ctrl-C is only noted and the run goes on to its commit point
                stops.hold()
            op, df = out.statement.operation, out.frame
            dest = destinations[op.seq]
            with timed_output(metrics, op):
                if dest.kind == "table":
                    location = spark_writes.write_catalog_table(df, dest.target, period, out.rows)
                else:
                    location = spark_writes.write_uri_partition(df, dest.target, dest.format, period, out.rows)
            written.append(WrittenOutput(out, dest, location))
    except BaseException:
        roll_back(record, journal)
        staging.discard(staged)
        raise
    return Written(*_results(written), journal)


def _results(written: list[WrittenOutput]) -> tuple[list[dict], list[tuple]]:
    """The record's outputs and the registered versions ``(name, version, columns)`` to confirm."""
    written.sort(key=lambda w: w.output.statement.operation.seq)
    results, registrations = [], []
    for w in written:
        op, version = w.output.statement.operation, w.destination.version
        entry = {"operation_seq": op.seq, "location": w.location, "rows": w.output.rows,
                 "registered_dataset": None, "registered_version": None}
        if w.destination.stands_for:  # an environment's rows of a catalog table or a URI, kept elsewhere
            entry["stands_for"] = w.destination.stands_for
            if w.destination.kind == "path" and not w.destination.local:
                entry["format"] = w.destination.format  # a URI's: what a promotion reads and writes it in
        if op.register_as_dataset and w.destination.kind == "path":
            schema = [(f.name, f.dataType.simpleString()) for f in w.output.frame.schema.fields]
            registrations.append((op.register_as_dataset, version, schema))
            entry.update(registered_dataset=op.register_as_dataset, registered_version=version)
        results.append(entry)
    return results, registrations


def commit_point(store: RunStore, record: dict, written: Written, lineage: dict[int, dict], *,
                 completion: Completion, stops: StopPoints,
                 defer_signals: Callable[[], object] = lambda: None) -> Optional[BaseException]:
    """The run's commit point: its registered versions confirmed (created at ``completion.started_at``) and its
    record completed (the ``written`` outputs with their ``lineage``, ``completion.finished_at()`` and
    ``timings()``), in one transaction of the run store. Until that transaction commits, a failure rolls the
    local outputs back to the versions before the run (:func:`roll_back`) and is raised. ``defer_signals`` is called as the transaction
    begins: from there to the end of the run Ctrl-C and SIGTERM wait (the caller says what a Ctrl-C
    changed), so none lands between the commit and its report. An exception that came after the
    transaction committed is returned instead: the run stands, and the caller raises it once the run
    is recorded."""
    run_id, outputs, journal = record["run_id"], written.outputs, written.journal
    try:
        for out in outputs:
            out["lineage"] = lineage.get(out["operation_seq"])
        record.update(status="completed", finished_at=completion.finished_at(), outputs=outputs,
                      timings=completion.timings())
        if not journal.elsewhere:
            stops.check()  # else a URI or table holds the run's rows: commit (stops.hold)
        defer_signals()
        store.complete(record, written.registrations, completion.started_at)
    except BaseException as exc:
        status = store.run_status(run_id)
        if status == "completed":
            return exc
        record.update(status="running", finished_at=None, outputs=[])
        if status is None:  # the run store cannot tell whether it committed: recovery decides later
            raise
        undone = roll_back(record, journal)
        if isinstance(exc, (OSError, sqlite3.Error)):  # not Spark's: say what failed
            raise ExecutionError(f"run {run_id} could not record its completion in the run store ({exc}); "
                                 f"{undone}") from exc
        raise
    return None


def roll_back(record: dict, journal: CommitJournal) -> str:
    """Roll the local partitions of ``journal`` back (a Ctrl-C or SIGTERM meanwhile waits until it is done,
    as a rollback cut short would leave the run's rows in some partitions), record what happened in
    ``record["rolled_back"]`` and say it in a sentence."""
    with signals_deferred():
        rolled, kept, problems = journal.roll_back()
        record["rolled_back"] = {"partitions": rolled, "kept": kept, "problems": problems}
    return rollback_sentence(record)


def finish_roll_back(record: dict) -> None:
    """Roll the run ``record`` describes back from its journal, unless a rollback was recorded already
    (the first one was cut short, or never began); nothing to do when it never got to its swaps."""
    if CommitJournal.begun(record) and "rolled_back" not in record:
        roll_back(record, CommitJournal.from_record(record))


def rollback_sentence(record: dict) -> str:
    """What the rollback recorded in ``record["rolled_back"]`` did, in one sentence."""
    done = record["rolled_back"]
    if done["kept"] or done["problems"]:
        return (f"its outputs were rolled back to the versions before it, except: {'; '.join(done['problems'])}"
                + (f" (these partitions keep this run's rows: {', '.join(done['kept'])})" if done["kept"] else ""))
    return "its outputs were rolled back to the versions before it."

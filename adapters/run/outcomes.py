"""The end of a batch, however it ran: each project-period's :class:`ProjectOutcome`, the summary table, the
batch line and the exit (:func:`conclude`: 3 when a project-period failed, 4 when every failure was a failed
check, :class:`~.interrupts.RunInterrupted` when Ctrl-C stopped it)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from ...compiler.errors import ExecutionError
from ...compiler.periods import Period
from .interrupts import RunInterrupted

Echo = Callable[[str], None]


class MultiRunFailed(ExecutionError):
    """At least one selected project failed (exit 3); the summary was printed."""


@dataclass
class ProjectOutcome:
    """What happened to one selected project."""

    project: str
    status: str = "pending"  # completed | failed | skipped | closed (a closed project-period, not run)
    run_id: Optional[str] = None
    rows: Optional[int] = None
    seconds: Optional[float] = None
    reason: str = ""  # the error of a failed project, why a skipped one was skipped
    registered: list = field(default_factory=list)  # [{dataset, version, run_id, project}]
    failed_checks: list = field(default_factory=list)  # the checks that failed the project's run (exit 4)
    period: str = ""  # the period identifier of this project-period


def conclude(outcomes: list[ProjectOutcome], periods: list[Period], stopped: Optional[str], why_skipped: str,
             batch_id: Optional[str], echo: Echo) -> list[ProjectOutcome]:
    """The end of a batch however it ran: every project-period still pending ``skipped`` (``why_skipped``),
    the summary and the batch line printed, then :class:`~.interrupts.RunInterrupted` when Ctrl-C
    ``stopped`` it, :class:`MultiRunFailed` (exit 3, or 4 when every failure is a failed check) when any
    failed; else the outcomes."""
    single = len(periods) == 1
    for o in outcomes:
        if o.status == "pending":
            o.status, o.reason = "skipped", why_skipped
    echo("")
    echo(summary(outcomes, periods[0].identifier) if single else period_summary(outcomes, periods))
    retry = f"`ledgerflow retry {batch_id}` re-runs the failed and skipped ones" if batch_id else ""
    if batch_id:
        echo(f"Batch {batch_id}" + (f": {retry}" if any(o.status in ("failed", "skipped") for o in outcomes) else ""))
    unit = "project" if single else "project-period"
    if stopped is not None:
        done = sum(o.status == "completed" for o in outcomes)
        left = sum(o.reason.startswith("not run: the invocation was stopped") for o in outcomes)
        raise RunInterrupted(f"{stopped}. Not run: {left} {unit}{'s' if left != 1 else ''}; completed (committed, "
                             f"they stand): {done}. See the summary above.")
    failed = [o for o in outcomes if o.status == "failed"]
    if failed:
        which = [o.project if single else f"{o.project} {o.period}" for o in failed]
        err = MultiRunFailed(f"{len(failed)} of {len(outcomes)} {unit}s failed ({', '.join(which[:5])}"
                             f"{', ...' if len(which) > 5 else ''}); {sum(o.status == 'skipped' for o in outcomes)} "
                             f"skipped. See the summary above{'; ' + retry if retry else ''}.")
        if all(o.failed_checks for o in failed):
            err.exit_code = 4  # each ran, and a check stopped its publication
        raise err
    return outcomes


def span(periods: list[Period]) -> str:
    """The periods' identifiers (the first and the last of more than four)."""
    ids = [p.identifier for p in periods]
    return ", ".join(ids) if len(ids) <= 4 else f"{ids[0]} ... {ids[-1]}"


def summary(outcomes: list[ProjectOutcome], period: str) -> str:
    """The summary table: project, status, rows written, seconds, run id or reason."""
    return "\n".join([f"Summary for period {period}:", *_table(outcomes, with_period=False)])


def period_summary(outcomes: list[ProjectOutcome], periods: list[Period]) -> str:
    """The summary table of several periods: period, project, status, rows written, seconds, run id or reason."""
    return "\n".join([f"Summary for {len(periods)} periods ({span(periods)}), project by period:",
                      *_table(outcomes, with_period=True)])


def _table(outcomes: list[ProjectOutcome], with_period: bool) -> list[str]:
    width = max([len("project")] + [len(o.project) for o in outcomes])
    pwidth = max([len("period")] + [len(o.period) for o in outcomes])
    first_col = (lambda text: f"{text:<{pwidth}}  ") if with_period else (lambda _text: "")
    lines = [f"  {first_col('period')}{'project':<{width}}  {'status':<9}  {'rows':>6}  {'seconds':>7}  run / reason"]
    for o in outcomes:
        rows = "-" if o.rows is None else str(o.rows)
        secs = "-" if o.seconds is None else f"{o.seconds:.1f}"
        detail = o.run_id or ""
        if o.status != "completed":
            first = o.reason.splitlines()[0] if o.reason else ""
            if o.failed_checks:
                first = f"failed check{'s' if len(o.failed_checks) != 1 else ''} {', '.join(o.failed_checks)}: " \
                        "nothing published"
            detail = f"{detail}  {first}".strip() if o.status == "failed" else first
        lines.append(f"  {first_col(o.period)}{o.project:<{width}}  {o.status:<9}  {rows:>6}  {secs:>7}  {detail}")
    counts = {s: sum(o.status == s for o in outcomes) for s in ("completed", "failed", "skipped", "closed")}
    lines.append(f"  {counts['completed']} completed, {counts['failed']} failed, {counts['skipped']} skipped"
                 + (f", {counts['closed']} closed (not run: closed periods stand)" if counts["closed"] else ""))
    return lines

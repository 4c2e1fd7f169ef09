"""What recovery and ``ledgerflow runs clean`` found for each run, and how it is said."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Outcome:
    """What recovery found for one run. ``action``: ``interrupted`` (marked failed now),
    ``cleaned`` (leftover staging of an already failed run removed), ``retired`` (versions a completed
    run replaced, left by a process that died before deleting them, removed), ``finished`` (its record was
    final after all: the registry row is brought in line with run.json), ``released`` (reserved versions
    and leases of a process that died before its run was recorded), ``live`` (its process holds
    the lock), ``other_host`` (started on another host: not checked), ``unknown`` (no lock to ask),
    ``converted`` (a partition published as a symbolic link by an earlier release, now a real folder)."""

    run_id: str
    action: str
    detail: str = ""
    removed: list = field(default_factory=list)
    kept: list = field(default_factory=list)
    problems: list = field(default_factory=list)


def describe(removed: list, kept: list, problems: list, rolled: tuple = (), elsewhere: tuple = ()) -> str:
    """What was done to a run's outputs and staging, in one sentence of ``;``-separated parts."""
    parts = []
    if rolled:
        parts.append(f"rolled back {len(rolled)} partition{'s' if len(rolled) != 1 else ''} it had swapped in to "
                     f"the version before it: {', '.join(rolled)}")
    if elsewhere:
        parts.append(f"outputs written by Spark to {', '.join(elsewhere)} are not rolled back (they may hold this "
                     "run's rows)")
    if removed:
        parts.append(f"removed {len(removed)} staging folder{'s' if len(removed) != 1 else ''}")
    if kept:
        parts.append("kept partition version(s) already swapped in before it died (this run's rows are "
                     f"visible there): {', '.join(kept)}")
    parts += problems
    return "; ".join(parts)



def report(outcomes: list[Outcome]) -> list[str]:
    """The lines ``ledgerflow runs clean`` prints."""
    lines = []
    for o in outcomes:
        if o.action == "interrupted":
            lines.append(f"{o.run_id}  marked failed: {o.detail}")
        elif o.action == "cleaned":
            lines.append(f"{o.run_id}  failed run: {o.detail}")
        elif o.action == "retired":
            lines.append(f"{o.run_id}  completed run: {o.detail}")
        elif o.action in ("finished", "released", "converted"):
            lines.append(f"{o.run_id}  {o.detail}")
        else:
            lines.append(f"{o.run_id}  left running ({o.action}): {o.detail}")
        lines += [f"    removed {p}" for p in o.removed]
    return lines or ["nothing to clean: no interrupted run, no leftover staging folder"]

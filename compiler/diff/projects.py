"""Compare two summaries of one project: operations, outputs, columns, the category, the SQL diff.

Categories (docs/diff.md): ``breaking`` when an existing output can write other values or other rows
(a column's expression or type, its row set, its destination) or loses a column, or an output is
removed; else ``no_op`` when the normalised SQL and every output are the same; else ``non_breaking``
(new outputs or columns, or intermediate changes no existing output column sees). A changed check
(docs/checks.md) is ``non_breaking``, except one that quarantines, which changes an output's rows: ``breaking``.
"""
from __future__ import annotations

import difflib
from typing import Optional

from .align import align
from .prints import OutputPrint
from .result import (Category, CheckChange, ColumnChange, ColumnChangeKind, OperationChange, OutputChange, ProjectDiff,
                     Status)
from .summary import ProjectSummary


def sql_diff(base: str, head: str, name: str) -> str:
    """The unified diff of two compiled scripts ("" when equal)."""
    if base == head:
        return ""
    lines = difflib.unified_diff(base.splitlines(), head.splitlines(), fromfile=f"base/{name}.sql",
                                 tofile=f"head/{name}.sql", lineterm="", n=3)
    return "\n".join(lines)


def _output_change(base: Optional[OutputPrint], head: Optional[OutputPrint]) -> Optional[OutputChange]:
    if head is None:
        return OutputChange(base.seq, base.name, True,
                            [ColumnChange(c, ColumnChangeKind.REMOVED) for c in base.columns], Status.REMOVED)
    if base is None:
        return OutputChange(head.seq, head.name, True,
                            [ColumnChange(c, ColumnChangeKind.ADDED, t) for c, (t, _) in head.columns.items()],
                            Status.ADDED)
    columns = []
    for name, (typ, fp) in head.columns.items():
        old = base.columns.get(name)
        if old is None:
            columns.append(ColumnChange(name, ColumnChangeKind.ADDED, typ))
        elif old[0] != typ:
            columns.append(ColumnChange(name, ColumnChangeKind.TYPE, f"{old[0]} -> {typ}"))
        elif old[1] != fp:
            columns.append(ColumnChange(name, ColumnChangeKind.EXPRESSION))
    columns += [ColumnChange(name, ColumnChangeKind.REMOVED) for name in base.columns if name not in head.columns]
    rows = base.rows != head.rows
    destination = base.definition != head.definition
    if not (columns or rows or destination):
        return None
    return OutputChange(head.seq, head.name, rows, columns, Status.MODIFIED, destination)


def check_changes(base: Optional[ProjectSummary], head: Optional[ProjectSummary]) -> list[CheckChange]:
    """The checks added, removed or modified between two sides (head's order, then base's removed ones)."""
    old, new = (base.checks if base else {}), (head.checks if head else {})
    out = []
    for name, (fp, quarantine, _on) in new.items():
        if name not in old:
            out.append(CheckChange(name, Status.ADDED, quarantine))
        elif old[name][0] != fp:
            out.append(CheckChange(name, Status.MODIFIED, quarantine or old[name][1]))
    out += [CheckChange(name, Status.REMOVED, q) for name, (_, q, _on) in old.items() if name not in new]
    return out


def _quarantined(base: ProjectSummary, head: ProjectSummary, checks: list[CheckChange],
                 operations: list[OperationChange]) -> set[int]:
    """The head outputs whose rows a changed quarantine check can change: the output it is on, on either side
    (base's seq followed to head's), or every output for a check on the input."""
    to_head = {o.base_seq: o.seq for o in operations if o.status != Status.REMOVED and o.base_seq is not None}
    hit: set[int] = set()
    for c in checks:
        for side, seqs in ((head.checks, None), (base.checks, to_head)):
            entry = side.get(c.name)
            if entry is None or not entry[1]:
                continue
            if entry[2] is None:
                hit |= set(head.outputs)
            else:
                seq = entry[2] if seqs is None else seqs.get(entry[2])
                if seq in head.outputs:
                    hit.add(seq)
    return hit


def _rows_changed(outputs: list[OutputChange], seqs: set[int], head: ProjectSummary) -> list[OutputChange]:
    """``outputs`` with each of ``seqs`` marked as writing other rows (added as a change when it had none)."""
    changed = {o.seq: o for o in outputs if o.status == Status.MODIFIED}
    added = []
    for seq in sorted(seqs):
        if seq in changed:
            changed[seq].rows_changed = True
        elif not any(o.seq == seq and o.status != Status.REMOVED for o in outputs):
            added.append(OutputChange(seq, head.outputs[seq].name, True, [], Status.MODIFIED))
    return sorted(outputs + added, key=lambda o: o.seq) if added else outputs


def _categorise(base: ProjectSummary, head: ProjectSummary, operations: list[OperationChange],
                outputs: list[OutputChange], checks: list[CheckChange]) -> tuple[Category, list[str]]:
    # A check never changes an output's values; a quarantine check changes its rows (docs/checks.md).
    reasons = [f"check '{c.name}' {c.status.value}: it quarantines rows of an output" for c in checks if c.quarantine]
    for o in outputs:
        if o.status == Status.REMOVED:
            reasons.append(f"output {o.seq} '{o.name}' removed")
            continue
        if o.status == Status.ADDED:
            continue
        if o.rows_changed:
            reasons.append(f"output {o.seq} '{o.name}' can write other rows")
        if o.destination_changed:
            reasons.append(f"output {o.seq} '{o.name}' writes elsewhere (destination or registration)")
        for c in o.columns:
            if c.change != ColumnChangeKind.ADDED:
                reasons.append(f"output {o.seq} column {c.column}: {c.change.value}"
                               + (f" ({c.detail})" if c.detail else ""))
    if reasons:
        return Category.BREAKING, reasons
    if base.normalised_sql == head.normalised_sql and not outputs and not checks:
        return Category.NO_OP, ["the compiled SQL is the same (labels, comments or YAML layout only)"]
    added = [f"output {o.seq} '{o.name}' added" for o in outputs if o.status == Status.ADDED]
    added += [f"check '{c.name}' {c.status.value}" for c in checks]
    added += [f"output {o.seq} column {c.column} added" for o in outputs if o.status == Status.MODIFIED
              for c in o.columns]
    return Category.NON_BREAKING, added or ["the SQL changed; every existing output column computes the same "
                                            "values over the same rows"]


def compare_project(name: str, base: Optional[ProjectSummary], head: Optional[ProjectSummary]) -> ProjectDiff:
    """The diff of one project between two summaries (None: the project does not exist on that side)."""
    if base is None or head is None:
        one = head or base
        status = Status.ADDED if base is None else Status.REMOVED
        operations = [OperationChange(o.seq, o.name, status, o.kind) for o in one.operations]
        outputs = [_output_change(None, o) if base is None else _output_change(o, None) for o in one.outputs.values()]
        category = Category.NON_BREAKING if base is None else Category.BREAKING
        diff = sql_diff(base.script if base else "", head.script if head else "", name)
        return ProjectDiff(name, status, category, operations, outputs, diff,
                           [f"project {status.value}"], check_changes(base, head))
    operations, outputs = [], []
    for b, h in align(base.operations, head.operations):
        if h is None:
            operations.append(OperationChange(b.seq, b.name, Status.REMOVED, b.kind, b.seq))
            if b.seq in base.outputs:
                outputs.append(_output_change(base.outputs[b.seq], None))
            continue
        if b is None:
            operations.append(OperationChange(h.seq, h.name, Status.ADDED, h.kind))
            if h.seq in head.outputs:
                outputs.append(_output_change(None, head.outputs[h.seq]))
            continue
        status = Status.UNCHANGED if b.local == h.local else Status.MODIFIED
        operations.append(OperationChange(h.seq, h.name, status, h.kind, b.seq))
        if h.seq in head.outputs and b.seq in base.outputs:
            change = _output_change(base.outputs[b.seq], head.outputs[h.seq])
            if change is not None:
                outputs.append(change)
    checks = check_changes(base, head)
    outputs = _rows_changed(outputs, _quarantined(base, head, checks, operations), head)
    category, reasons = _categorise(base, head, operations, outputs, checks)
    diff = sql_diff(base.script, head.script, name)
    changed = (base.file_digest != head.file_digest or base.normalised_sql != head.normalised_sql or outputs
               or checks or any(o.status != Status.UNCHANGED for o in operations))
    if not changed:
        return ProjectDiff(name, Status.UNCHANGED, None, operations, [], diff)
    return ProjectDiff(name, Status.MODIFIED, category, operations, outputs, diff, reasons, checks)

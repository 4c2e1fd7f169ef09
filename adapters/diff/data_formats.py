"""``ledgerflow diff --data`` output: text for a terminal, markdown for a pull-request comment, JSON.

The markdown leads with one sentence per decimal column that moved, the way a reviewer says it:
"January 2026: `close_converted`.`amount_reporting` moves by **+2,537,000.00** in 14 rows". Names from
the workspace are escaped for where they land, as in the compiled diff (:mod:`.formats`).
"""
from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from ...compiler.periods import parse_period
from ...compiler.visible_text import visible
from .data_result import IGNORED_COLUMNS, OutputDataDiff, WorkspaceDataDiff, json_value
from .formats import _code, _text

GROUPS_SHOWN = 20  # --by groups per output in text and markdown (JSON keeps up to MAX_GROUPS)


def period_label(identifier: str) -> str:
    """``2026-01`` -> ``January 2026``; other periods as typed."""
    try:
        p = parse_period(identifier)
    except Exception:  # noqa: BLE001 - a label only
        return identifier
    return p.start.strftime("%B %Y") if p.level == "month" else identifier


def signed(value: Decimal) -> str:
    """``+2,537,000.00``: sign always, thousands separators, every digit of the decimal's scale."""
    return f"{value:+,f}"


def _value(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, Decimal):
        return f"{v:,f}"
    return str(json_value(v))


def moved_rows(o: OutputDataDiff, column: str) -> int:
    """Rows in which ``column`` moves: added, removed, and matched rows whose value changed."""
    changed = next((c.changed_rows for c in o.columns if c.column == column), 0)
    return o.added + o.removed + changed


def headlines(report: WorkspaceDataDiff, project: str, o: OutputDataDiff, md: bool) -> list[str]:
    """One sentence per decimal column whose total moved (or whose rows changed)."""
    period = period_label(report.period)
    out = []
    for t in o.totals:
        n = moved_rows(o, t.column)
        if not n and not t.change:
            continue
        rows = f"{n} row{'s' if n != 1 else ''}"
        if md:
            out.append(f"{_text(period)}: {_code(project)} {_code(o.name)} {_code(t.column)} moves by "
                       f"**{signed(t.change)}** in {rows}")
        else:
            out.append(f"{period}: {visible(project)} '{visible(o.name)}' {visible(t.column)} moves by "
                       f"{signed(t.change)} in {rows}")
    return out


def render_data(report: WorkspaceDataDiff, fmt: str) -> str:
    """``report`` in ``fmt`` (text, markdown or json)."""
    if fmt == "json":
        return json.dumps(report.to_json(), indent=2, ensure_ascii=False)
    return render_markdown(report) if fmt == "markdown" else render_text(report)


def _counts(o: OutputDataDiff) -> str:
    return (f"{o.base_rows} -> {o.head_rows} rows: {o.added} added, {o.removed} removed, {o.changed} changed")


def render_text(report: WorkspaceDataDiff) -> str:
    """A terminal report: per compared project and output the counts, the columns, totals, groups, samples."""
    v = visible
    lines = [f"ledgerflow diff --data {v(report.base)} -> {v(report.head)}, period {report.period}"]
    for p in report.projects:
        if p.diff is None:
            continue
        lines.append("")
        lines.append(f"{v(p.name)}: {'differs' if p.diff.found else 'same rows'}")
        for o in p.diff.outputs:
            if o.status != "compared":
                lines.append(f"  output '{v(o.name)}' {o.status}: {o.base_rows or o.head_rows} rows")
                continue
            lines.append(f"  output '{v(o.name)}': {_counts(o)}")
            lines += [f"    {line}" for line in headlines(report, p.name, o, md=False)]
            for c in o.columns:
                if c.changed_rows:
                    lines.append(f"    column {v(c.column)}: {c.changed_rows} changed")
            lines += [f"    column {v(c)}: only on HEAD (not compared)" for c in o.columns_added]
            lines += [f"    column {v(c)}: only on BASE (not compared)" for c in o.columns_removed]
            for t in o.totals:
                lines.append(f"    total {v(t.column)}: {_value(t.base)} -> {_value(t.head)} ({signed(t.change)})")
            for g in o.groups[:GROUPS_SHOWN]:
                key = ", ".join(f"{v(k)}={v(_value(x))}" for k, x in g.key.items())
                moves = "; ".join(f"{v(c)} {signed(d)}" for c, d in g.changes.items())
                lines.append(f"    by {key}: {g.rows} rows" + (f"; {moves}" if moves else ""))
            left = len(o.groups) - GROUPS_SHOWN + o.groups_left_out
            if left > 0:
                lines.append(f"    ... and {left} more groups (--format json lists up to 1000)")
            for s in o.samples:
                vals = ", ".join(f"{v(c)} {v(_value(b))} -> {v(_value(h))}" for c, (b, h) in s.values.items())
                lines.append(f"    {s.status} {s.row_id}: {vals}")
    notes: dict[str, list[str]] = {}
    for p in report.projects:
        if p.diff is None:
            notes.setdefault(p.note, []).append(v(p.name))
    if notes:
        lines.append("")
        lines += [f"{note}: {', '.join(names)}" for note, names in notes.items()]
    lines.append("")
    lines.append(_summary(report) + f" (not compared: {', '.join(IGNORED_COLUMNS)})")
    return "\n".join(lines)


def _summary(report: WorkspaceDataDiff) -> str:
    compared = [p for p in report.projects if p.diff is not None]
    differing = [p for p in compared if p.diff.found]
    return (f"{len(differing)} of {len(compared)} compared project{'s' if len(compared) != 1 else ''} "
            f"differ{'s' if len(compared) == 1 and differing else ''}; {len(report.projects) - len(compared)} not run")


def render_markdown(report: WorkspaceDataDiff) -> str:
    """A pull-request comment: the headline sentences, then per output a table of counts and totals, the
    ``--by`` groups and the sample rows in a collapsible section."""
    out = [f"### ledgerflow diff --data: {_code(report.base)} → {_code(report.head)}, "
           f"{_text(period_label(report.period))}", ""]
    compared = [p for p in report.projects if p.diff is not None]
    if not any(p.diff.found for p in compared):
        out.append(f"No output moves ({len(compared)} project{'s' if len(compared) != 1 else ''} run on the same inputs).")
    for p in compared:
        for o in p.diff.outputs:
            out += [f"- {h}" for h in headlines(report, p.name, o, md=True)]
    for p in compared:
        for o in p.diff.outputs:
            if not o.found:
                continue
            out += ["", f"#### {_code(p.name)} {_code(o.name)}", ""]
            if o.status != "compared":
                out.append(f"Output {o.status}: {o.base_rows or o.head_rows} rows.")
                continue
            out += ["| rows | BASE | HEAD | added | removed | changed |", "|---|---|---|---|---|---|",
                    f"| | {o.base_rows:,} | {o.head_rows:,} | {o.added:,} | {o.removed:,} | {o.changed:,} |"]
            changed_cols = [c for c in o.columns if c.changed_rows]
            if changed_cols or o.columns_added or o.columns_removed:
                out += ["", "| column | rows changed |", "|---|---|"]
                out += [f"| {_code(c.column, in_table=True)} | {c.changed_rows:,} |" for c in changed_cols]
                out += [f"| {_code(c, in_table=True)} | only on HEAD |" for c in o.columns_added]
                out += [f"| {_code(c, in_table=True)} | only on BASE |" for c in o.columns_removed]
            if o.totals:
                out += ["", "| total | BASE | HEAD | change |", "|---|---:|---:|---:|"]
                out += [f"| {_code(t.column, in_table=True)} | {_value(t.base)} | {_value(t.head)} | {signed(t.change)} |"
                        for t in o.totals]
            if o.groups:
                cols = [t.column for t in o.totals]
                out += ["", "| " + " | ".join(_code(b, in_table=True) for b in o.by) + " | rows | "
                        + " | ".join(_code(c, in_table=True) for c in cols) + " |",
                        "|" + "---|" * (len(o.by) + 1) + "---:|" * len(cols)]
                for g in o.groups[:GROUPS_SHOWN]:
                    out.append("| " + " | ".join(_code(_value(x), in_table=True) for x in g.key.values())
                               + f" | {g.rows:,} | " + " | ".join(signed(g.changes[c]) for c in cols) + " |")
                left = len(o.groups) - GROUPS_SHOWN + o.groups_left_out
                if left > 0:
                    out.append(f"\n_… and {left:,} more groups: `--format json` lists up to 1,000._")
            if o.samples:
                out += ["", f"<details><summary>{len(o.samples)} sample rows</summary>", "",
                        "| _row_id | status | column | BASE | HEAD |", "|---|---|---|---|---|"]
                for s in o.samples:
                    for c, (b, h) in s.values.items():
                        out.append(f"| {_code(s.row_id, in_table=True)} | {s.status} | {_code(c, in_table=True)} | "
                                   f"{_code(_value(b), in_table=True)} | {_code(_value(h), in_table=True)} |")
                out += ["", "</details>"]
    skipped = [p for p in report.projects if p.diff is None]
    if skipped:
        out += ["", "_Not run: " + "; ".join(f"{_code(p.name)} ({_text(p.note)})" for p in skipped) + "._"]
    out += ["", f"_Rows matched by `_row_id`; not compared: {', '.join(f'`{c}`' for c in IGNORED_COLUMNS)}._"]
    return "\n".join(out)

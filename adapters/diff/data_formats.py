"""``ledgerflow diff --data`` output: text for a terminal, markdown for a pull-request comment, JSON.

The markdown leads with one sentence per decimal column that moved, the way a reviewer says it:
"January 2026: `close_converted`.`amount_reporting` moves by **+2,537,000.00** net (**2,537,000.00** gross)
in 14 rows": the net change (HEAD's total less BASE's) and the gross change (the sum of every row's absolute
change), so a correction of +68 on a debit and -68 on its credit moves 0.00 net and 136.00 gross. A column
copied from a join (a rate) is said to change in N rows, never totalled. Every report says how rows were
matched; a restatement's is headed as one. Names from the workspace are escaped for where they land, as in the
compiled diff (:mod:`.formats`).
"""
from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from ...compiler.diff.data_match import match_words
from ...compiler.periods import parse_period
from ...compiler.visible_text import visible
from .data_result import IGNORED_COLUMNS, OutputDataDiff, SampleRow, WorkspaceDataDiff, json_value
from .formats import _code, _text, _words

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


def unsigned(value: Decimal) -> str:
    """``136.00``: thousands separators, every digit of the decimal's scale, no sign."""
    return f"{value:,f}"


def headlines(report: WorkspaceDataDiff, project: str, o: OutputDataDiff, md: bool) -> list[str]:
    """One sentence per decimal column whose total moved (or whose rows changed): its net and gross change; and
    one per column copied from a join whose rows changed."""
    period = period_label(report.period)
    out = []
    for t in o.totals:
        n = moved_rows(o, t.column)
        if not n and not t.change and not t.gross:
            continue
        rows = f"{n} row{'s' if n != 1 else ''}"
        gross = "" if t.gross is None else (f" (**{unsigned(t.gross)}** gross)" if md else f" ({unsigned(t.gross)} gross)")
        if md:
            out.append(f"{_text(period)}: {_code(project)} {_code(o.name)} {_code(t.column)} moves by "
                       f"**{signed(t.change)}** net{gross} in {rows}")
        else:
            out.append(f"{period}: {visible(project)} '{visible(o.name)}' {visible(t.column)} moves by "
                       f"{signed(t.change)} net{gross} in {rows}")
    for column in o.copied:
        n = next((c.changed_rows for c in o.columns if c.column == column), 0)
        if not n:
            continue
        what = f"changes in {n} row{'s' if n != 1 else ''} (copied from a join: compared row by row, not totalled)"
        if md:
            out.append(f"{_text(period)}: {_code(project)} {_code(o.name)} {_code(column)} {what}")
        else:
            out.append(f"{period}: {visible(project)} '{visible(o.name)}' {visible(column)} {what}")
    return out


def render_data(report: WorkspaceDataDiff, fmt: str) -> str:
    """``report`` in ``fmt`` (text, markdown or json)."""
    if fmt == "json":
        return json.dumps(report.to_json(), indent=2, ensure_ascii=False)
    return render_markdown(report) if fmt == "markdown" else render_text(report)


def _counts(o: OutputDataDiff) -> str:
    return (f"{o.base_rows} -> {o.head_rows} rows: {o.added} added, {o.removed} removed, {o.changed} changed")


def matched(o: OutputDataDiff) -> str:
    """How ``o``'s rows were matched, in words, with the reason when the plain rule did not apply."""
    return f"rows matched {match_words(o.match, o.key)}" + (f": {o.match_note}" if o.match_note else "")


def title(report: WorkspaceDataDiff) -> str:
    """The report's first line in text: ``diff --data``'s sides and period, or what a restatement restates."""
    r, v = report.restatement, visible
    if r is None:
        return f"ledgerflow diff --data {v(report.base)} -> {v(report.head)}, period {report.period}"
    what = "Restatement (dry run, nothing published)" if r.run_id is None else f"Restatement run {r.run_id}"
    return (f"{what} of project '{v(r.project)}', period {r.period} (reason: {v(r.reason)!r}, by {v(r.by)}): "
            f"{v(report.base)} -> {v(report.head)}")


def _sample_text(o: OutputDataDiff, s: SampleRow) -> str:
    v = visible
    if s.row_id is not None:
        ident = f" {v(s.row_id)}"
    elif s.key is not None:
        ident = " " + ", ".join(f"{v(k)}={v(_value(x))}" for k, x in s.key.items())
    else:
        ident = " row"
    if s.status == "changed":
        vals = ", ".join(f"{v(c)} {v(_value(b))} -> {v(_value(h))}" for c, (b, h) in s.values.items())
    else:  # the side that has the row: its values (the other side has no row, not NULLs)
        vals = ", ".join(f"{v(c)} {v(_value(h if s.status == 'added' else b))}" for c, (b, h) in s.values.items())
    return f"    {s.status}{ident}: {vals}"


def render_text(report: WorkspaceDataDiff) -> str:
    """A terminal report: per compared project and output the counts, how rows were matched, the columns,
    totals (net and gross), groups, samples."""
    v = visible
    lines = [title(report)]
    for p in report.projects:
        if p.diff is None:
            continue
        lines.append("")
        lines.append(f"{v(p.name)}: {'differs' if p.diff.found else 'same rows'}")
        for o in p.diff.outputs:
            if o.status != "compared":
                lines.append(f"  output '{v(o.name)}' {o.status}: {o.base_rows or o.head_rows} rows")
                continue
            lines.append(f"  output '{v(o.name)}': {_counts(o)}; {v(matched(o))}")
            lines += [f"    {line}" for line in headlines(report, p.name, o, md=False)]
            for c in o.columns:
                if c.changed_rows:
                    copied = " (copied from a join: not totalled)" if c.column in o.copied else ""
                    lines.append(f"    column {v(c.column)}: {c.changed_rows} changed{copied}")
            lines += [f"    column {v(c)}: only on HEAD (not compared)" for c in o.columns_added]
            lines += [f"    column {v(c)}: only on BASE (not compared)" for c in o.columns_removed]
            for t in o.totals:
                gross = "" if t.gross is None else f", gross {unsigned(t.gross)}"
                lines.append(f"    total {v(t.column)}: {_value(t.base)} -> {_value(t.head)} (net {signed(t.change)}"
                             f"{gross})")
            for g in o.groups[:GROUPS_SHOWN]:
                key = ", ".join(f"{v(k)}={v(_value(x))}" for k, x in g.key.items())
                moves = "; ".join(f"{v(c)} net {signed(d)}" + (f", gross {unsigned(g.gross[c])}" if c in g.gross else "")
                                  for c, d in g.changes.items())
                lines.append(f"    by {key}: {g.rows} rows" + (f"; {moves}" if moves else ""))
            left = len(o.groups) - GROUPS_SHOWN + o.groups_left_out
            if left > 0:
                lines.append(f"    ... and {left} more groups (--format json lists up to 1000)")
            lines += [_sample_text(o, s) for s in o.samples]
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


def _md_title(report: WorkspaceDataDiff) -> list[str]:
    r = report.restatement
    if r is None:
        return [f"### ledgerflow diff --data: {_code(report.base)} → {_code(report.head)}, "
                f"{_text(period_label(report.period))}"]
    what = "Restatement (dry run, nothing published)" if r.run_id is None else "Restatement"
    return [f"### {what} of {_code(r.project)}, {_text(period_label(r.period))}: {_code(report.base)} → "
            f"{_code(report.head)}", "",
            f"Reason: {_words(r.reason)}; by {_code(r.by)}; supersedes "
            + (f"run {_code(r.supersedes_run_id)}" if r.supersedes_run_id else "nothing published") + "."]


def _md_match(o: OutputDataDiff) -> str:
    cols = ", ".join(_code(c) for c in o.key)
    words = {"group_by": f"by the group-by keys {cols}", "key": f"by `--key` {cols}", "_row_id": "by `_row_id`"}
    text = f"Rows matched {words.get(o.match, 'as whole rows (no `_row_id`, no key)')}"
    return text + (f": {_words(o.match_note)}" if o.match_note else "") + "."


def _md_samples(o: OutputDataDiff) -> list[str]:
    ident = ["`_row_id`"] if o.match == "_row_id" else [_code(c, in_table=True) for c in o.key]
    out = ["", f"<details><summary>{len(o.samples)} sample rows</summary>", "",
           "| " + "".join(f"{c} | " for c in ident) + "status | column | BASE | HEAD |",
           "|" + "---|" * (len(ident) + 4)]
    for s in o.samples:
        first = ([s.row_id] if s.row_id is not None else list((s.key or {}).values()))[:len(ident)]
        cells = "".join(f"{_code(_value(x), in_table=True)} | " for x in first)
        for c, (b, h) in s.values.items():
            base = "—" if s.status == "added" else _code(_value(b), in_table=True)
            head = "—" if s.status == "removed" else _code(_value(h), in_table=True)
            out.append(f"| {cells}{s.status} | {_code(c, in_table=True)} | {base} | {head} |")
    return out + ["", "</details>"]


def _md_output(o: OutputDataDiff) -> list[str]:
    out = ["| rows | BASE | HEAD | added | removed | changed |", "|---|---|---|---|---|---|",
           f"| | {o.base_rows:,} | {o.head_rows:,} | {o.added:,} | {o.removed:,} | {o.changed:,} |", "", _md_match(o)]
    changed_cols = [c for c in o.columns if c.changed_rows]
    if changed_cols or o.columns_added or o.columns_removed:
        out += ["", "| column | rows changed |", "|---|---|"]
        out += [f"| {_code(c.column, in_table=True)} | {c.changed_rows:,}"
                + (" (copied from a join: not totalled)" if c.column in o.copied else "") + " |" for c in changed_cols]
        out += [f"| {_code(c, in_table=True)} | only on HEAD |" for c in o.columns_added]
        out += [f"| {_code(c, in_table=True)} | only on BASE |" for c in o.columns_removed]
    if o.totals:
        out += ["", "| total | BASE | HEAD | net change | gross change |", "|---|---:|---:|---:|---:|"]
        out += [f"| {_code(t.column, in_table=True)} | {_value(t.base)} | {_value(t.head)} | {signed(t.change)} | "
                f"{'' if t.gross is None else unsigned(t.gross)} |" for t in o.totals]
    if o.groups:
        cols = [t.column for t in o.totals]
        out += ["", "| " + " | ".join(_code(b, in_table=True) for b in o.by) + " | rows | "
                + " | ".join(f"{_code(c, in_table=True)} net | {_code(c, in_table=True)} gross" for c in cols) + " |",
                "|" + "---|" * (len(o.by) + 1) + "---:|" * (2 * len(cols))]
        for g in o.groups[:GROUPS_SHOWN]:
            out.append("| " + " | ".join(_code(_value(x), in_table=True) for x in g.key.values())
                       + f" | {g.rows:,} | "
                       + " | ".join(f"{signed(g.changes[c])} | {unsigned(g.gross[c]) if c in g.gross else ''}"
                                    for c in cols) + " |")
        left = len(o.groups) - GROUPS_SHOWN + o.groups_left_out
        if left > 0:
            out.append(f"\n_… and {left:,} more groups: `--format json` lists up to 1,000._")
    return out + (_md_samples(o) if o.samples else [])


def _md_footer(compared: list) -> str:
    """How rows were matched, for every compared output: one phrase when all were matched alike."""
    ways: dict[str, list[str]] = {}
    for p in compared:
        for o in p.diff.outputs:
            if o.status == "compared":
                ways.setdefault(_md_match(o)[len("Rows matched "):-1], []).append(f"{_code(p.name)} {_code(o.name)}")
    if len(ways) == 1:
        said = f"Rows matched {next(iter(ways))}"
    elif ways:
        said = "Rows matched " + "; ".join(f"{way} in {', '.join(outs)}" for way, outs in ways.items())
    else:
        said = "No output compared on both sides"
    return f"_{said}; not compared: {', '.join(f'`{c}`' for c in IGNORED_COLUMNS)}._"


def render_markdown(report: WorkspaceDataDiff) -> str:
    """A pull-request comment: the headline sentences, then per output a table of counts and totals, the
    ``--by`` groups and the sample rows in a collapsible section; the last line says how rows were matched."""
    out = _md_title(report) + [""]
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
            out += _md_output(o)
    skipped = [p for p in report.projects if p.diff is None]
    if skipped:
        out += ["", "_Not run: " + "; ".join(f"{_code(p.name)} ({_text(p.note)})" for p in skipped) + "._"]
    out += ["", _md_footer(compared)]
    return "\n".join(out)

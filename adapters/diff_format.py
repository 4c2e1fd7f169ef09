"""``ledgerflow diff`` output: text for a terminal, markdown for a pull-request comment, JSON (§7).

Text is styled with :func:`click.style`; ``click.echo`` drops the colours when the output is not a
terminal. Markdown: a summary table, then per changed project a ``<details>`` section with its
operation and column changes and the SQL diff in a ```` ```diff ```` block, each SQL diff cut at
:data:`MARKDOWN_SQL_DIFF_CHARS` characters and the whole comment kept under :data:`MARKDOWN_MAX_CHARS`
(GitHub refuses comments over 65,536 characters), with a note saying what was left out. Every name
and text from the workspace is escaped for where it lands (code span, HTML, markdown text).
"""
from __future__ import annotations

import html
import json
import re
import shlex
import unicodedata

import click

from ..compiler.diff.result import Category, ProjectDiff, Status, WorkspaceDiff, to_json

MARKDOWN_SQL_DIFF_CHARS = 12_000
MARKDOWN_MAX_CHARS = 60_000  # the whole comment (GitHub refuses one over 65,536 characters)
MARKDOWN_ITEMS = 50  # reasons, operation lines and column changes shown per project

_COLOURS = {Category.BREAKING: "red", Category.NON_BREAKING: "yellow", Category.NO_OP: "green"}
_MARKS = {Category.BREAKING: "🔴 breaking", Category.NON_BREAKING: "🟡 non_breaking", Category.NO_OP: "⚪ no_op"}


def render_json(diff: WorkspaceDiff) -> str:
    """The §7 JSON document, indented."""
    return json.dumps(to_json(diff), indent=2, ensure_ascii=False)


def _changed(diff: WorkspaceDiff) -> list[ProjectDiff]:
    return [p for p in diff.projects if p.status != Status.UNCHANGED]


def _operation_lines(p: ProjectDiff) -> list[str]:
    out = []
    for o in p.operations:
        if o.status == Status.UNCHANGED and (o.base_seq is None or o.base_seq == o.seq):
            continue
        moved = f" (was {o.base_seq})" if o.base_seq not in (None, o.seq) else ""
        what = o.status.value if o.status != Status.UNCHANGED else "renumbered"
        out.append(f"operation {o.seq}{moved} {o.kind} '{o.name}': {what}")
    return out


def _output_lines(p: ProjectDiff) -> list[tuple[str, list[str]]]:
    out = []
    for o in p.outputs:
        head = f"output {o.seq} '{o.name}'"
        if o.status != Status.MODIFIED:
            head += f" {o.status.value}"
        notes = []
        if o.status == Status.MODIFIED and o.rows_changed:
            notes.append("rows changed")
        if o.destination_changed:
            notes.append("destination changed")
        columns = [f"{c.column}: {c.change.value}" + (f" ({c.detail})" if c.detail else "") for c in o.columns]
        out.append((head + (f": {', '.join(notes)}" if notes else ""), columns))
    return out


def render_text(diff: WorkspaceDiff, sql: bool = False) -> str:
    """A terminal report: one block per changed project, then the datasets; ``sql`` adds the SQL diffs."""
    lines = [click.style(f"ledgerflow diff {diff.base} -> {diff.head}", bold=True)]
    changed = _changed(diff)
    for p in changed:
        category = p.category.value if p.category else "-"
        lines.append("")
        lines.append(click.style(f"{category:<13}", fg=_COLOURS.get(p.category), bold=True)
                     + f" {p.name} ({p.status.value})")
        for reason in p.reasons[:8]:
            lines.append(f"    because {reason}")
        if len(p.reasons) > 8:
            lines.append(f"    ... and {len(p.reasons) - 8} more")
        for line in _operation_lines(p):
            lines.append(f"  {line}")
        for head, columns in _output_lines(p):
            lines.append(f"  {head}")
            for c in columns:
                colour = "green" if c.endswith(": added") or ": added (" in c else "red"
                lines.append("    " + click.style(c, fg=colour))
        if sql and p.sql_diff:
            for line in p.sql_diff.splitlines():
                fg = "green" if line.startswith("+") else "red" if line.startswith("-") else None
                lines.append("    " + click.style(line, fg=fg))
    datasets = [d for d in diff.datasets if d.status != Status.UNCHANGED]
    if datasets:
        lines.append("")
        lines.append(click.style("datasets", bold=True))
        for d in datasets:
            lines.append(f"  {d.name} ({d.status.value})")
            lines += [f"    {c}" for c in d.changes]
    unchanged = len(diff.projects) - len(changed)
    lines.append("")
    worst = diff.worst()
    summary = (f"{len(changed)} project{'s' if len(changed) != 1 else ''} changed"
               + (f" (worst: {worst.value})" if worst else "") + f", {unchanged} unchanged")
    lines.append(click.style(summary, fg=_COLOURS.get(worst)) if worst else summary)
    if diff.impact:
        lines.append("impact: " + ", ".join(f"{i.project}.{i.output}.{i.column}" for i in diff.impact))
    return "\n".join(lines)


# ------------------------------------------------------------------------------------ markdown
# Every name and text taken from a workspace goes through one of these three, by where it lands:
# a code span (names: nothing inside is markdown or HTML), raw HTML (the <summary> line) or markdown
# text (reasons and change lines, which mix our words with names).
_SPECIAL = set("\\`*[]<>&|#!~$")


def _printable(text: str) -> str:
    """``text`` on one line: line breaks become spaces, other control characters ``\\uXXXX`` text."""
    out = []
    for ch in text.replace("\r\n", " "):
        if ch in "\n\r\t\u2028\u2029":
            out.append(" ")
        elif unicodedata.category(ch) in ("Cc", "Cs") or ch in "\ufffe\uffff":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)


def _code(text: str, in_table: bool = False) -> str:
    """``text`` as a code span: fenced by more backticks than it holds in a row, ``|`` escaped in a table."""
    text = _printable(text)
    ticks = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith(("`", " ")) or text.endswith(("`", " ")) or not text else ""
    span = f"{ticks}{pad}{text}{pad}{ticks}"
    return span.replace("|", "\\|") if in_table else span


def _html(text: str) -> str:
    """``text`` inside raw HTML (an HTML block is not markdown: entities, not backslashes)."""
    return html.escape(_printable(text), quote=True)


def _text(text: str) -> str:
    """``text`` as markdown that shows exactly ``text``: characters that start markup are
    backslash-escaped (``_`` only where it could emphasise: not between two letters or digits), and
    a start that would open a block (a list, a heading, a quote, indented code) is escaped too."""
    text = _printable(text)
    out = []
    for i, ch in enumerate(text):
        if ch in _SPECIAL:
            out.append("\\" + ch)
        elif ch == "_" and not (0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()):
            out.append("\\_")
        else:
            out.append(ch)
    escaped = "".join(out)
    lead = re.match(r"^( *)(\d+(?=[.)])|[-+=])?", escaped)
    spaces, marker = lead.group(1), lead.group(2) or ""
    if marker.isdigit():
        marker += "\\"  # 1. or 1) would start an ordered list: escape its delimiter
    elif marker:
        marker = "\\" + marker
    return "&#32;" * len(spaces) + marker + escaped[lead.end():]


def _fence(text: str) -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return ticks


def _cut(text: str, limit: int) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    cut = text[:limit].rsplit("\n", 1)[0]
    return cut, True


def _sql_text(text: str) -> str:
    """A SQL diff for a code block: control characters but line breaks and tabs as ``\\uXXXX`` text."""
    return "\n".join(_printable(line.replace("\t", "    ")) for line in text.split("\n"))


def _capped(lines: list[str], limit: int, what: str) -> list[str]:
    return lines if len(lines) <= limit else lines[:limit] + [f"- … and {len(lines) - limit} more {what}"]


def _section(p: ProjectDiff, sql_chars: int) -> list[str]:
    """A changed project's ``<details>`` section, its SQL diff cut at ``sql_chars`` characters."""
    out = ["", f"<details><summary><b>{_html(p.name)}</b> — {_MARKS.get(p.category, '-')} "
               f"({p.status.value})</summary>", ""]
    out += _capped([f"- {_text(r)}" for r in p.reasons], 20, "reasons")
    ops = _operation_lines(p)
    if ops:
        out += ["", "**Operations**", ""] + _capped([f"- {_text(o)}" for o in ops], MARKDOWN_ITEMS, "operations")
    rows = [(head, c) for head, columns in _output_lines(p) for c in (columns or [""])]
    if rows:
        out += ["", "| output | column change |", "|---|---|"]
        out += [f"| {_text(head)} | {_text(c)} |" for head, c in rows[:MARKDOWN_ITEMS]]
        if len(rows) > MARKDOWN_ITEMS:
            out.append(f"| … and {len(rows) - MARKDOWN_ITEMS} more column changes | |")
    if p.sql_diff:
        sql = _sql_text(p.sql_diff)
        limit = min(MARKDOWN_SQL_DIFF_CHARS, sql_chars)
        text, cut = _cut(sql, limit)
        total = sql.count("\n") + 1
        if text:
            fence = _fence(text)
            out += ["", f"{fence}diff", text, fence]
        if cut:
            command = _code(f"ledgerflow compile {shlex.quote(p.name)}")
            where = (f"cut at {text.count(chr(10)) + 1} of {total} lines ({limit:,} characters)" if text
                     else f"of {total} lines left out to keep the comment short")
            out.append(f"\n_SQL diff {where}; run `ledgerflow diff` or {command} locally for the rest._")
    out += ["", "</details>"]
    return out


def _size(lines: list[str]) -> int:
    return sum(len(line) + 1 for line in lines)


def render_markdown(diff: WorkspaceDiff) -> str:
    """A pull-request comment: summary table, then a collapsible section per changed project; under
    :data:`MARKDOWN_MAX_CHARS` characters in all, what does not fit left out with a line saying so."""
    changed = _changed(diff)
    budget = MARKDOWN_MAX_CHARS - 600  # room for the line saying what was left out
    out = [f"### ledgerflow diff: {_code(diff.base)} → {_code(diff.head)}", ""]
    rows_left = sections_left = datasets_left = 0
    if not changed:
        out.append(f"No project changed ({len(diff.projects)} compared).")
    else:
        out += ["| project | status | category | operations changed | outputs changed |", "|---|---|---|---|---|"]
        for k, p in enumerate(changed):
            ops = sum(1 for o in p.operations if o.status != Status.UNCHANGED)
            row = (f"| {_code(p.name, in_table=True)} | {p.status.value} | {_MARKS.get(p.category, '-')} | {ops} | "
                   f"{len(p.outputs)} |")
            if _size(out) + len(row) + 1 > budget // 2:  # the table takes at most half: details need room
                rows_left = len(changed) - k
                break
            out.append(row)
        unchanged = len(diff.projects) - len(changed)
        if unchanged:
            out += ["", f"{unchanged} project{'s' if unchanged != 1 else ''} unchanged."]
    datasets = [d for d in diff.datasets if d.status != Status.UNCHANGED]
    if datasets:
        out += ["", "**Datasets**", ""]
        for k, d in enumerate(datasets):
            line = f"- {_code(d.name)} ({d.status.value}): " + "; ".join(_text(c) for c in d.changes)
            if _size(out) + len(line) + 1 > budget * 3 // 4:
                datasets_left = len(datasets) - k
                break
            out.append(line)
    # Every project whose section fits (without its SQL diff) gets one; the SQL diffs share what is left.
    shown, used = [], _size(out)
    for k, p in enumerate(changed):
        size = _size(_section(p, 0))
        if used + size > budget:
            sections_left = len(changed) - k
            break
        shown.append(p)
        used += size
    spare = budget - used
    for p in shown:
        bare = _section(p, 0)
        section = _section(p, max(0, spare - 200))
        if _size(section) - _size(bare) > spare:
            section = bare
        spare -= _size(section) - _size(bare)
        out += section
    if rows_left or sections_left or datasets_left:
        parts = [f"{n} {what}" for n, what in ((rows_left, "rows of the project table"),
                                               (sections_left, "changed projects' details"),
                                               (datasets_left, "changed datasets")) if n]
        out += ["", f"_This comment is cut to stay under GitHub's 65,536 characters: {', '.join(parts)} "
                    "left out. Run `ledgerflow diff` (text) or `ledgerflow diff --format json` to see everything._"]
    return "\n".join(out)

"""``ledgerflow diff`` output: text for a terminal, markdown for a pull-request comment, JSON (§7).

Text is styled with :func:`click.style`; ``click.echo`` drops the colours when the output is not a
terminal. Markdown: a summary table, then per changed project a ``<details>`` section with its
operation and column changes and the SQL diff in a ```` ```diff ```` block, each SQL diff cut at
:data:`MARKDOWN_SQL_DIFF_CHARS` characters and all of them together at :data:`MARKDOWN_TOTAL_CHARS`
(GitHub refuses comments over 65,536 characters), with a note saying so when cut.
"""
from __future__ import annotations

import json

import click

from ..compiler.diff.result import Category, ProjectDiff, Status, WorkspaceDiff, to_json

MARKDOWN_SQL_DIFF_CHARS = 12_000
MARKDOWN_TOTAL_CHARS = 50_000

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


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


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


def render_markdown(diff: WorkspaceDiff) -> str:
    """A pull-request comment: summary table, then a collapsible section per changed project."""
    changed = _changed(diff)
    out = [f"### ledgerflow diff: `{diff.base}` → `{diff.head}`", ""]
    if not changed:
        out.append(f"No project changed ({len(diff.projects)} compared).")
    else:
        out += ["| project | status | category | operations changed | outputs changed |", "|---|---|---|---|---|"]
        for p in changed:
            ops = sum(1 for o in p.operations if o.status != Status.UNCHANGED)
            out.append(f"| `{_cell(p.name)}` | {p.status.value} | {_MARKS.get(p.category, '-')} | {ops} | "
                       f"{len(p.outputs)} |")
        unchanged = len(diff.projects) - len(changed)
        if unchanged:
            out += ["", f"{unchanged} project{'s' if unchanged != 1 else ''} unchanged."]
    datasets = [d for d in diff.datasets if d.status != Status.UNCHANGED]
    if datasets:
        out += ["", "**Datasets**", ""]
        for d in datasets:
            out.append(f"- `{d.name}` ({d.status.value}): " + "; ".join(_cell(c) for c in d.changes))
    budget = MARKDOWN_TOTAL_CHARS
    for p in changed:
        out += ["", f"<details><summary><b>{_cell(p.name)}</b> — {_MARKS.get(p.category, '-')} "
                    f"({p.status.value})</summary>", ""]
        out += [f"- {r}" for r in p.reasons[:20]]
        if len(p.reasons) > 20:
            out.append(f"- … and {len(p.reasons) - 20} more")
        ops = _operation_lines(p)
        if ops:
            out += ["", "**Operations**", ""] + [f"- {_cell(o)}" for o in ops]
        rows = [(head, c) for head, columns in _output_lines(p) for c in (columns or [""])]
        if rows:
            out += ["", "| output | column change |", "|---|---|"]
            out += [f"| {_cell(head)} | {_cell(c)} |" for head, c in rows]
        if p.sql_diff:
            limit = min(MARKDOWN_SQL_DIFF_CHARS, max(budget, 0))
            text, cut = _cut(p.sql_diff, limit)
            budget -= len(text)
            total = p.sql_diff.count("\n") + 1
            if text:
                fence = _fence(text)
                out += ["", f"{fence}diff", text, fence]
            if cut:
                shown = text.count("\n") + 1 if text else 0
                out.append(f"\n_SQL diff cut at {shown} of {total} lines ({limit:,} characters); run "
                           f"`ledgerflow diff` or `ledgerflow compile {p.name}` locally for the rest._")
        out += ["", "</details>"]
    return "\n".join(out)

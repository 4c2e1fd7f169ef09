r"""``ledgerflow diff`` output: text for a terminal, markdown for a pull-request comment, JSON (docs/diff.md).

Text is styled with :func:`click.style`; ``click.echo`` drops the colours when the output is not a
terminal. Markdown: a summary table, then per changed project a ``<details>`` section with its
operation and column changes and the SQL diff in a ```` ```diff ```` block, each SQL diff cut at
:data:`MARKDOWN_SQL_DIFF_CHARS` bytes and the whole comment kept under :data:`MARKDOWN_MAX_CHARS`
(GitHub refuses comments over 65,536 characters; sizes are counted in UTF-8 bytes, never fewer than
the characters or UTF-16 units GitHub may count), with a note saying what was left out. Every name
and text from the workspace is escaped for where it lands (code span, HTML, markdown text): in a line
that mixes our words with names, each name is a code span, where GitHub makes no link, @mention,
#reference or emoji. Text for a terminal shows hidden characters of names (escape sequences, bidi
overrides) as ``\uXXXX`` text (:mod:`..compiler.visible_text`).
"""
from __future__ import annotations

import html
import json
import re
import shlex

import click

from ...compiler.diff.result import Category, ColumnChange, ProjectDiff, Status, WorkspaceDiff, to_json
from ...compiler.visible_text import visible

MARKDOWN_SQL_DIFF_CHARS = 12_000
MARKDOWN_MAX_CHARS = 60_000  # the whole comment, in UTF-8 bytes (GitHub refuses one over 65,536 characters)
MARKDOWN_ITEMS = 50  # reasons, operation lines and column changes shown per project

_COLOURS = {Category.BREAKING: "red", Category.NON_BREAKING: "yellow", Category.NO_OP: "green"}
_MARKS = {Category.BREAKING: "🔴 breaking", Category.NON_BREAKING: "🟡 non_breaking", Category.NO_OP: "⚪ no_op"}


def render_json(diff: WorkspaceDiff) -> str:
    """The JSON document of docs/diff.md, indented."""
    return json.dumps(to_json(diff), indent=2, ensure_ascii=False)


def _changed(diff: WorkspaceDiff) -> list[ProjectDiff]:
    return [p for p in diff.projects if p.status != Status.UNCHANGED]


def _quoted(name: str) -> str:
    return f"'{name}'"


def _same(text: str) -> str:
    return text


def _operation_lines(p: ProjectDiff, name=_quoted, words=_same) -> list[str]:
    """One line per changed operation; ``name`` writes a name, ``words`` other text from the workspace."""
    out = []
    for o in p.operations:
        if o.status == Status.UNCHANGED and (o.base_seq is None or o.base_seq == o.seq):
            continue
        moved = f" (was {o.base_seq})" if o.base_seq not in (None, o.seq) else ""
        what = o.status.value if o.status != Status.UNCHANGED else "renumbered"
        out.append(f"operation {o.seq}{moved} {words(o.kind)} {name(o.name)}: {what}")
    return out


def _column_line(c: ColumnChange, name=_same, words=_same) -> str:
    return f"{name(c.column)}: {c.change.value}" + (f" ({words(c.detail)})" if c.detail else "")


def _output_lines(p: ProjectDiff, name=_quoted, words=_same) -> list[tuple[str, list[str]]]:
    """(head line, column change lines) per changed output (``name``, ``words``: see _operation_lines)."""
    out = []
    for o in p.outputs:
        head = f"output {o.seq} {name(o.name)}"
        if o.status != Status.MODIFIED:
            head += f" {o.status.value}"
        notes = []
        if o.status == Status.MODIFIED and o.rows_changed:
            notes.append("rows changed")
        if o.destination_changed:
            notes.append("destination changed")
        columns = [_column_line(c, name, words) for c in o.columns]
        out.append((head + (f": {', '.join(notes)}" if notes else ""), columns))
    return out


def render_text(diff: WorkspaceDiff, sql: bool = False) -> str:
    """A terminal report: one block per changed project, then the datasets; ``sql`` adds the SQL diffs."""
    v = visible  # every name and text from the workspace, before it is styled (escape sequences shown)
    lines = [click.style(f"ledgerflow diff {v(diff.base)} -> {v(diff.head)}", bold=True)]
    changed = _changed(diff)
    for p in changed:
        category = p.category.value if p.category else "-"
        lines.append("")
        lines.append(click.style(f"{category:<13}", fg=_COLOURS.get(p.category), bold=True)
                     + f" {v(p.name)} ({p.status.value})")
        for reason in p.reasons[:8]:
            lines.append(f"    because {v(reason)}")
        if len(p.reasons) > 8:
            lines.append(f"    ... and {len(p.reasons) - 8} more")
        for line in _operation_lines(p):
            lines.append(f"  {v(line)}")
        for head, columns in _output_lines(p):
            lines.append(f"  {v(head)}")
            for c in columns:
                colour = "green" if c.endswith(": added") or ": added (" in c else "red"
                lines.append("    " + click.style(v(c), fg=colour))
        if sql and p.sql_diff:
            for line in p.sql_diff.splitlines():
                fg = "green" if line.startswith("+") else "red" if line.startswith("-") else None
                lines.append("    " + click.style(v(line, keep="\t"), fg=fg))
    datasets = [d for d in diff.datasets if d.status != Status.UNCHANGED]
    if datasets:
        lines.append("")
        lines.append(click.style("datasets", bold=True))
        for d in datasets:
            lines.append(f"  {v(d.name)} ({d.status.value})")
            lines += [f"    {v(c)}" for c in d.changes]
    unchanged = len(diff.projects) - len(changed)
    lines.append("")
    worst = diff.worst()
    summary = (f"{len(changed)} project{'s' if len(changed) != 1 else ''} changed"
               + (f" (worst: {worst.value})" if worst else "") + f", {unchanged} unchanged")
    lines.append(click.style(summary, fg=_COLOURS.get(worst)) if worst else summary)
    if diff.impact:
        lines.append("impact: " + ", ".join(v(f"{i.project}.{i.output}.{i.column}") for i in diff.impact))
    return "\n".join(lines)


# ------------------------------------------------------------------------------------ markdown
# Every name and text taken from a workspace goes through one of these three, by where it lands:
# a code span (names: nothing inside is markdown or HTML), raw HTML (the <summary> line) or markdown
# text (reasons and change lines, which mix our words with names).
_SPECIAL = set("\\`*[]<>&|#!~$")


_LINE_BREAKS = re.compile("\r\n|[\n\r\t\u2028\u2029]")


def _printable(text: str) -> str:
    """``text`` on one line: line breaks become spaces, other hidden characters ``\\uXXXX`` text."""
    return visible(_LINE_BREAKS.sub(" ", text))


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


def _inline(text: str) -> str:
    """Characters of ``text`` (one line already) that start markup, backslash-escaped (``_`` only where
    it could emphasise: not between two letters or digits)."""
    out = []
    for i, ch in enumerate(text):
        if ch in _SPECIAL:
            out.append("\\" + ch)
        elif ch == "_" and not (0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()):
            out.append("\\_")
        else:
            out.append(ch)
    return "".join(out)


def _text(text: str) -> str:
    """``text`` as markdown that shows exactly ``text``: characters that start markup are
    backslash-escaped (:func:`_inline`), and a start that would open a block (a list, a heading, a
    quote, indented code) is escaped too. Our own words only: GitHub still links URLs, e-mail
    addresses, @mentions and #references in escaped text (:func:`_words` for text holding names)."""
    return _block_safe(_inline(_printable(text)))


def _block_safe(escaped: str) -> str:
    """An escaped line whose start cannot open a block (leading spaces as ``&#32;``, a list marker escaped)."""
    lead = re.match(r"^( *)(\d+(?=[.)])|[-+=])?", escaped)
    spaces, marker = lead.group(1), lead.group(2) or ""
    if marker.isdigit():
        marker += "\\"  # 1. or 1) would start an ordered list: escape its delimiter
    elif marker:
        marker = "\\" + marker
    return "&#32;" * len(spaces) + marker + escaped[lead.end():]


# A word GitHub makes nothing of (no link, mention, reference, emoji, commit id): letters, or digits,
# maybe in parentheses, maybe followed by one of , : ; . ? !. Anything else may be (part of) a name.
_PLAIN_WORD = re.compile(r"\(?(?:[A-Za-z]+|[0-9]+)\)?[,:;.?!]?|->")
_COMMIT_LIKE = re.compile(r"[0-9a-fA-F]{7,}")


def _plain_word(token: str) -> bool:
    return bool(_PLAIN_WORD.fullmatch(token)) and not _COMMIT_LIKE.search(token)


def _words(text: str, in_table: bool = False) -> str:
    """Text mixing our words with names (a reason, a dataset change, a column change's detail) as
    markdown: plain words as text, every run of other words (names, quotes, paths, numbers with
    dots...) as one code span, where GitHub makes no autolink, @mention, #reference or emoji."""
    tokens = [t for t in re.split(r"( +)", _printable(text)) if t]
    out, run = [], []

    def flush():
        if run:
            span = "".join(run)
            trail = " " * (len(span) - len(span.rstrip(" ")))
            span = span.rstrip(" ")
            if len(span) > 2 and span[0] == span[-1] == "'":  # a quoted name: the quotes stay text
                out.append("'" + _code(span[1:-1], in_table) + "'" + trail)
            else:
                out.append(_code(span, in_table) + trail)
            run.clear()
    for token in tokens:
        if token.startswith(" ") and run:
            run.append(token)
        elif token.startswith(" ") or _plain_word(token):
            flush()
            out.append(token)
        else:
            run.append(token)
    flush()
    return _block_safe("".join(out))


def _fence(text: str) -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return ticks


def _bytes(text: str) -> int:
    """The size of ``text`` as the comment's limits count it: UTF-8 bytes (at least its characters and
    its UTF-16 units, whichever GitHub counts)."""
    return len(text.encode("utf-8", errors="surrogatepass"))


def _cut(text: str, limit: int) -> tuple[str, bool]:
    """``text`` cut at a line break to at most ``limit`` bytes, and whether it was cut."""
    data = text.encode("utf-8", errors="surrogatepass")
    if len(data) <= limit:
        return text, False
    cut = data[:limit].decode("utf-8", errors="ignore").rsplit("\n", 1)[0]
    return cut, True


def _sql_text(text: str) -> str:
    """A SQL diff for a code block: control characters but line breaks and tabs as ``\\uXXXX`` text."""
    return "\n".join(_printable(line.replace("\t", "    ")) for line in text.split("\n"))


def _capped(lines: list[str], limit: int, what: str) -> list[str]:
    return lines if len(lines) <= limit else lines[:limit] + [f"- … and {len(lines) - limit} more {what}"]


def _section(p: ProjectDiff, sql_chars: int) -> list[str]:
    """A changed project's ``<details>`` section, its SQL diff cut at ``sql_chars`` bytes."""
    out = ["", f"<details><summary><b><code>{_html(p.name)}</code></b> — {_MARKS.get(p.category, '-')} "
               f"({p.status.value})</summary>", ""]
    out += _capped([f"- {_words(r)}" for r in p.reasons], 20, "reasons")
    ops = _operation_lines(p, name=_code, words=_text)
    if ops:
        out += ["", "**Operations**", ""] + _capped([f"- {o}" for o in ops], MARKDOWN_ITEMS, "operations")
    cell_name, cell_words = (lambda n: _code(n, in_table=True)), (lambda t: _words(t, in_table=True))
    rows = [(head, c) for head, columns in _output_lines(p, cell_name, cell_words) for c in (columns or [""])]
    if rows:
        out += ["", "| output | column change |", "|---|---|"]
        out += [f"| {head} | {c} |" for head, c in rows[:MARKDOWN_ITEMS]]
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
            where = (f"cut at {text.count(chr(10)) + 1} of {total} lines ({limit:,} bytes)" if text
                     else f"of {total} lines left out to keep the comment short")
            out.append(f"\n_SQL diff {where}; run `ledgerflow diff` or {command} locally for the rest._")
    out += ["", "</details>"]
    return out


def _size(lines: list[str]) -> int:
    return sum(_bytes(line) + 1 for line in lines)


def render_markdown(diff: WorkspaceDiff) -> str:
    """A pull-request comment: summary table, then a collapsible section per changed project; under
    :data:`MARKDOWN_MAX_CHARS` UTF-8 bytes in all, what does not fit left out with a line saying so."""
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
            if _size(out) + _bytes(row) + 1 > budget // 2:  # the table takes at most half: details need room
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
            line = f"- {_code(d.name)} ({d.status.value}): " + "; ".join(_words(c) for c in d.changes)
            if _size(out) + _bytes(line) + 1 > budget * 3 // 4:
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

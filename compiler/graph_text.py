"""Names as text inside Graphviz DOT and Mermaid sources (``dag`` and ``lineage --format dot|mermaid``).

A name from a workspace may hold quotes, backslashes, line breaks, ``<html>``, ``#``, ``|``, ``%`` or control
characters; each function here gives text that stays one string of its language whatever the name
holds. These are labels: node ids never come from names (the writers number their nodes), so two
names that look alike in a label can never merge two nodes.
"""
from __future__ import annotations

from .visible_text import escape, is_hidden

# Mermaid entity codes (``#name;`` / ``#number;``) for what its parser or its HTML labels would read.
# ``%`` above all: Mermaid finds a ``%%{...}%%`` directive (its configuration: theme, security level,
# even the HTML labels' sanitiser) anywhere in the source, quoted labels included; ``%%`` also starts a
# comment. ``{``, ``}`` and ``'`` are a directive's own syntax: encoded as well.
_MERMAID = {'"': "#quot;", "#": "#35;", "&": "#amp;", "<": "#lt;", ">": "#gt;", "|": "#124;", "`": "#96;",
            "\n": "#10;", "%": "#37;", "{": "#123;", "}": "#125;", "'": "#39;"}


def dot_string(text: str) -> str:
    """``text`` as a quoted DOT string (an escString: a line break stays a line break of the label)."""
    text = text.replace("\r\n", "\n")
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif is_hidden(ch):
            out.append("\\" + escape(ch))  # the backslash escaped: shown, never read as an escape
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def mermaid_string(text: str) -> str:
    """``text`` as a quoted Mermaid label (``"..."``), special characters written as entity codes."""
    text = text.replace("\r\n", "\n")
    out = []
    for ch in text:
        if ch in _MERMAID:
            out.append(_MERMAID[ch])
        elif is_hidden(ch):
            out.append(escape(ch))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'

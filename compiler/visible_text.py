"""Names shown as what they hold: the one rule for characters a reader may not see.

A name from a workspace may hold characters that a terminal, a browser or an editor does not show as
themselves: controls (C0, DEL, C1 — among them ESC, which starts terminal escape sequences, and NEL),
format characters (zero-width spaces and joiners, bidi overrides that reorder what is shown),
surrogates, private-use and unassigned code points (Unicode categories C*), and the line and paragraph
separators (Zl, Zp). Every writer of names (SQL comments, DOT and Mermaid labels, the markdown diff
comment, JUnit XML, terminal output) uses :func:`is_hidden`, so they all show the same characters;
:func:`escape` is the ``\\uXXXX`` text most of them write instead.
"""
from __future__ import annotations

import unicodedata


def is_hidden(ch: str) -> bool:
    """Whether ``ch`` is a character some reader may not show as itself (see the module)."""
    category = unicodedata.category(ch)
    return category[0] == "C" or category in ("Zl", "Zp")


def escape(ch: str) -> str:
    """``ch`` as visible text: ``\\uXXXX`` (``\\UXXXXXXXX`` past the Basic Multilingual Plane)."""
    code = ord(ch)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def visible(text: str, keep: str = "") -> str:
    """``text`` with every hidden character but those in ``keep`` (e.g. ``"\\n"``) written by :func:`escape`."""
    if text.isprintable():  # the common case (no C*, Zl, Zp character): nothing to look at one by one
        return text
    return "".join(escape(ch) if ch not in keep and is_hidden(ch) else ch for ch in text)

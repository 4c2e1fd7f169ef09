"""What a table may be called: the one rule for catalog tables, destination tables and resolver table rules.

A Spark user names a table ``table``, ``database.table`` or ``catalog.database.table``. Each part is
letters, digits and underscores starting with a letter or an underscore, or the same characters in
backquotes (``finance.`2026_gl```: a part starting with a digit, which Spark reads as a number when
it looks like one, ``1e5``). Spark's session catalog itself refuses any other character in a table
or database name, and an empty part, ``.``, a space or a path (``../../x``) is never a table. The
rule is strict on purpose: the name is checked by ``validate`` and again when a run has substituted
a rule's tokens.
"""
from __future__ import annotations

import re
from typing import Optional

_PART = r"(?:[A-Za-z_][A-Za-z0-9_]*|`[A-Za-z0-9_]+`)"
_TABLE = re.compile(rf"^{_PART}(?:\.{_PART}){{0,2}}$")

HINT = ("a table name is table, database.table or catalog.database.table: each part letters, digits and "
        "underscores starting with a letter or underscore (a part starting with a digit in backquotes, e.g. "
        "finance.`2026_gl`)")

# Representative token values for checking a resolver's table template before a run (every value a run
# can give a token is made of the same kinds of characters: digits, letters, '-').
_SAMPLE_TOKENS = {"dataset": "x", "table_name": "x", "version": "1", "identifier": "2026", "YYYY": "2026",
                  "MM": "01", "QQ": "Q1", "DD": "01", "dataset_id": "00000000-0000-0000-0000-000000000000"}


def table_name_problem(name: str) -> Optional[str]:
    """None when ``name`` is a valid table name; else what is wrong with it (one clause)."""
    text = str(name)
    if _TABLE.match(text):
        return None
    if not text.strip():
        return "is empty"
    odd = next((c for c in text if not (c.isascii() and (c.isalnum() or c in "_.`"))), None)
    if odd is not None:
        return f"holds {odd!r}, a character no table name holds"
    parts = text.split(".") if "`" not in text else None
    if parts is not None and "" in parts:
        return "has an empty part"
    if parts is not None and len(parts) > 3:
        return f"has {len(parts)} parts (at most 3: catalog.database.table)"
    digit = next((p for p in parts or [] if p[0].isdigit()), None)
    if digit is not None:
        return (f"has the part '{digit}', which starts with a digit: write it in backquotes (Spark reads 1e5 "
                "as a number)")
    return "is not a table name"


def template_problem(template: str) -> Optional[str]:
    """Like :func:`table_name_problem` for a resolver rule's table template, its ``{{tokens}}`` given
    representative values (the run checks the name it substitutes again)."""
    text = str(template)
    for token, value in _SAMPLE_TOKENS.items():
        text = text.replace("{{" + token + "}}", value)
    if "{{" in text:
        return None  # an unknown token: the run's substitution names it
    return table_name_problem(text)

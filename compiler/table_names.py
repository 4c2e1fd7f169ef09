"""What a table may be called: the one rule for catalog tables, destination tables and resolver table rules.

A Spark user names a table ``table``, ``database.table`` or ``catalog.database.table``. Each part is
ASCII letters, digits and underscores, written as is or in backquotes: Spark's session catalog
refuses any other character in a database or table name, quoted or not (checked on Spark 4.3:
```gl-summary```, ```Café``` and ``a b`` are INVALID_SCHEMA_OR_RELATION_NAME), so ledgerflow takes
the same characters in every part, a catalog's name included. A part may start with a digit
(``2026_gl``, ``1e5x``, ``0x1f``: Spark's parser reads them as names); only a part that Spark's
parser reads as a number must be backquoted: digits alone (``2026``), an exponent (``1e5``) or a
number with a type suffix (``1L``, ``1S``, ``1Y``, ``1F``, ``1D``, ``1BD``, ``1e5D``). An empty part,
``.``, a space or a path (``../../x``) is never a table. The name is checked by ``validate`` and
again when a run has substituted a rule's tokens.
"""
from __future__ import annotations

import re
from typing import Optional

_WORD = re.compile(r"^[A-Za-z0-9_]+$")
# The numeric literals of Spark's SQL lexer that a part of letters and digits can be read as (the lexer
# takes the longest token, a literal winning a tie with an identifier): INTEGER_VALUE, EXPONENT_VALUE,
# BIGINT/SMALLINT/TINYINT_LITERAL, FLOAT/DOUBLE/BIGDECIMAL_LITERAL.
_NUMBER = re.compile(r"^(?:[0-9]+(?:E[0-9]+)?(?:F|D|BD)?|[0-9]+[LSY])$", re.IGNORECASE)

HINT = ("a table name is table, database.table or catalog.database.table: each part ASCII letters, digits and "
        "underscores (a part Spark reads as a number, such as 2026 or 1e5, in backquotes: finance.`2026`)")


def split_parts(name: str) -> Optional[list[tuple[str, bool]]]:
    """The dot-separated parts of ``name`` as (text, backquoted), a doubled backquote inside backquotes
    read as one; None when a backquote is left open or text follows a closing one."""
    parts, i, n = [], 0, len(name)
    while True:
        if i < n and name[i] == "`":
            j, text = i + 1, []
            while True:
                k = name.find("`", j)
                if k < 0:
                    return None
                text.append(name[j:k])
                if name[k + 1:k + 2] == "`":
                    text.append("`")
                    j = k + 2
                    continue
                break
            parts.append(("".join(text), True))
            i = k + 1
            if i < n and name[i] != ".":
                return None
        else:
            k = name.find(".", i)
            k = n if k < 0 else k
            parts.append((name[i:k], False))
            i = k
        if i >= n:
            return parts
        i += 1  # the dot
        if i == n:
            parts.append(("", False))
            return parts


def table_name_problem(name: str) -> Optional[str]:
    """None when ``name`` is a valid table name (see the module docstring); else what is wrong with it
    (one clause, to follow "the table name 'x' ...")."""
    text = str(name)
    if not text.strip():
        return "is empty"
    parts = split_parts(text)
    if parts is None:
        return "has a backquote that is never closed, or text after a closing backquote"
    if any(not p for p, _ in parts):
        return "has an empty part"
    if len(parts) > 3:
        return f"has {len(parts)} parts (at most 3: catalog.database.table)"
    for part, quoted in parts:
        if not _WORD.match(part):
            odd = next(c for c in part if not (c.isascii() and (c.isalnum() or c == "_")))
            return (f"holds {odd!r} (in '{part}'): Spark's session catalog takes only ASCII letters, digits and "
                    "underscores in a database or table name, quoted or not; ledgerflow applies that to every part, "
                    "a catalog's name too (another catalog might accept more)")
        if not quoted and _NUMBER.match(part):
            return f"has the part '{part}', which Spark reads as a number: write it in backquotes (`{part}`)"
    return None

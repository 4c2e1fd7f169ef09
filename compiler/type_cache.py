"""Parse each SQL type name once per process for sqlglot's own type checks.

sqlglot turns a type given as text into a tree by parsing it (``exp.DataType.from_str`` calls
``sqlglot.parse_one(text, into=exp.DataType)`` with the default dialect), and it does so inside its
parser and generator on every ``CAST``: ``Cast.is_type("json")`` when Spark generates a cast, and
Hive's parser's ``is_type("char", "varchar")`` on every type it reads. Each such call builds a new
dialect, tokenizer and parser: about 0.4 ms per ``CAST`` parsed and generated again, 0.2 s of a
500-operation compile whose every update casts a decimal.

:func:`install` wraps ``sqlglot.parse_one`` so that exactly those calls (a string parsed into
``exp.DataType`` with the default dialect and the options ``from_str`` passes) return a copy of the
tree parsed the first time: the same tree a new parse gives, and the caller's own to change. Every
other call goes to sqlglot unchanged. If sqlglot stops looking ``parse_one`` up at call time, the
wrapper is simply no longer used.
"""
from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel

_FROM_STR_OPTIONS = {"error_level": ErrorLevel.IGNORE}  # what DataType.from_str passes
MAX_TYPES = 1024  # distinct type texts kept; type names in a process are a few dozen

_types: dict[str, exp.Expression] = {}


def _parse_one(original):
    def parse_one(sql, read=None, dialect=None, into=None, **opts):
        if into is exp.DataType and read is None and dialect is None and opts == _FROM_STR_OPTIONS \
                and isinstance(sql, str):
            tree = _types.get(sql)
            if tree is None:
                tree = original(sql, into=into, **opts)
                if len(_types) >= MAX_TYPES:
                    return tree
                _types[sql] = tree
            return tree.copy()
        return original(sql, read=read, dialect=dialect, into=into, **opts)
    parse_one.__doc__ = original.__doc__
    parse_one.uncached = original
    return parse_one


def install() -> None:
    """Wrap ``sqlglot.parse_one`` with the type cache (once; later calls do nothing)."""
    if not hasattr(sqlglot.parse_one, "uncached"):
        sqlglot.parse_one = _parse_one(sqlglot.parse_one)

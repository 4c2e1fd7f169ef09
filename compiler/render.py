"""Render the Jinja statement skeletons and normalise the result with sqlglot.

Templates see only SQL snippets produced from sqlglot nodes and identifiers quoted by
:func:`ident`; the rendered text is parsed back (``read="spark"``) so a template can never pass
broken SQL downstream, and pretty-printed so the output is deterministic and reviewable.
"""
from __future__ import annotations

import functools
from importlib import resources

import jinja2
import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError

from . import type_cache
from .errors import LedgerflowError
from .visible_text import is_hidden

type_cache.install()  # sqlglot parses a type name again on every CAST it reads or writes

# One Spark dialect instance for every generation and parse: ``node.sql("spark")`` builds a new
# dialect object per call (a 500-operation project makes ~30,000 such calls).
SPARK = Dialect.get_or_raise("spark")
_GENERATOR = SPARK.generator()  # reusable: ``generate`` resets its per-call state


class TemplateRenderError(LedgerflowError):
    """A template produced SQL that sqlglot cannot parse: a bug in ledgerflow, never the user's fault."""


@functools.lru_cache(maxsize=None)
def _data_type(text: str, dialect: str) -> exp.DataType:
    return exp.DataType.build(text, dialect=dialect or None)


def data_type(text: str, dialect: str = "") -> exp.DataType:
    """``exp.DataType.build(text, dialect=...)`` (a parse per call), built once per type: a fresh copy
    each time, since a node belongs to one tree."""
    return _data_type(text, dialect).copy()


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The shared Jinja environment over the packaged templates (StrictUndefined)."""
    folder = resources.files("ledgerflow.templates")
    # auto_reload off: the packaged templates do not change while a process runs, so Jinja need not
    # stat the file on every render (a 500-operation project renders ~500 times).
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(folder)), undefined=jinja2.StrictUndefined,
                              autoescape=False, keep_trailing_newline=False, auto_reload=False)


@functools.lru_cache(maxsize=None)
def _template(name: str) -> jinja2.Template:
    return environment().get_template(f"{name}.sql.j2")


def render(template: str, **context) -> str:
    """Render ``<template>.sql.j2`` with ``context``."""
    return _template(template).render(**context).strip()


@functools.lru_cache(maxsize=4096)
def ident(name: str) -> str:
    """A quoted Spark identifier (backticks, escaped): names can never inject SQL."""
    return _GENERATOR.generate(exp.to_identifier(name, quoted=True), copy=False)


_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _visible(ch: str) -> str:
    """``ch`` itself, or a Python-style escape for a backslash and for every character that some
    reader may take as a line end or not show at all: controls (C0, DEL, C1 with NEL), format
    characters (zero-width and bidi marks), surrogates, private-use and unassigned code points
    (Unicode categories C*), and the line and paragraph separators (Zl, Zp)."""
    if ch in _ESCAPES:
        return _ESCAPES[ch]
    if is_hidden(ch):  # the shared rule of every writer of names (visible_text.py)
        code = ord(ch)
        return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
    return ch


def comment(text: str) -> str:
    r"""``-- text`` as one line of SQL, whatever ``text`` holds: every SQL comment ledgerflow writes.

    Names and descriptions come from YAML and may hold any character. Each character that could end
    the line for some reader is written as a visible escape, so the text after it can never become a
    statement: ``\n``; ``\r``, which ends a ``--`` comment for Spark's lexer and spark-sql's statement
    splitter; ``\v \f \x85 \u2028 \u2029`` and the other controls, line ends to Python's
    ``splitlines`` and to editors. Backslashes are doubled so the escapes stay unambiguous, and a final
    backslash is written ``\x5c``: Spark's lexer and splitter continue a ``--`` comment over
    backslash-newline, which would swallow the statement on the next line. Inside a ``--`` comment,
    ``;``, quotes, ``/*`` and ``*/`` mean nothing to Spark's lexer or splitter, so they stay as written.
    """
    if text.isprintable() and "\\" not in text:  # no C*, Zl or Zp character, no backslash: nothing to escape
        return f"-- {text}"
    body = "".join(_visible(ch) for ch in text)
    if text.endswith("\\"):
        body = body[:-2] + "\\x5c"
    return f"-- {body}"


def sql(node: exp.Expression) -> str:
    """Spark SQL text of a sqlglot node. The node is generated in place, not copied first: the
    plan's nodes are expressions (no SELECT or CTE), which Spark's generator does not rewrite."""
    return _GENERATOR.generate(node, copy=False)


def normalise(text: str, what: str) -> str:
    """Parse rendered SQL back with sqlglot and pretty-print it; a parse failure is a ledgerflow bug."""
    return pretty(parse(text, what))


def parse_ctes(fragment: str, what: str) -> list[exp.CTE]:
    """The CTE nodes of a rendered fragment ``name AS (...), name AS (...)``: what a stage counts."""
    return parse(f"WITH {fragment}\nSELECT 1", what).ctes


def parse(text: str, what: str) -> exp.Expression:
    """Parse rendered SQL back with sqlglot; a parse failure is a ledgerflow bug."""
    try:
        return sqlglot.parse_one(text, read=SPARK)
    except ParseError as err:
        raise TemplateRenderError(f"internal error: the SQL rendered for {what} does not parse ({err}).\n{text}") from None


def pretty(tree: exp.Expression) -> str:
    """The deterministic, reviewable text of a statement tree (generated in place: the tree is ours)."""
    return SPARK.generate(tree, copy=False, pretty=True)

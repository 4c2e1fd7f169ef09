"""Render the Jinja statement skeletons and normalise the result with sqlglot.

Templates see only SQL snippets produced from sqlglot nodes and identifiers quoted by
:func:`ident`; the rendered text is parsed back (``read="spark"``) so a template can never pass
broken SQL downstream, and pretty-printed so the output is deterministic and reviewable.
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import secrets
from importlib import resources
from typing import Iterator, Optional

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


# A placeholder's name: random per process, so no name in a workspace can be taken for one.
_GRAFT = f"lf_graft_{secrets.token_hex(8)}_"
_PRINTING_ONLY: contextvars.ContextVar[bool] = contextvars.ContextVar("ledgerflow_printing_only", default=False)


@contextlib.contextmanager
def printing_only() -> Iterator[None]:
    """Lower steps whose trees will only be printed (a compile, not a fused rewrite, which walks them): their
    snippets may then be printed text (:class:`Grafts`)."""
    token = _PRINTING_ONLY.set(True)
    try:
        yield
    finally:
        _PRINTING_ONLY.reset(token)


@functools.lru_cache(maxsize=8192)
def _printed(text: str) -> Optional[str]:
    """How a statement prints the snippet ``text`` in a select list: its pretty text, parsed and printed once
    per distinct text; None when it must stay a tree (a table or query inside, which the stage cut walks) or
    when its text holds a line end (in a literal or comment, where indenting would change it), or the marker
    sqlglot's pretty printer turns into one after indenting (``__SQLGLOT__LB__``: it would become a line end
    before this snippet is indented in place)."""
    if "\n" in text or "\r" in text or _GENERATOR.SENTINEL_LINE_BREAK in text:
        return None
    tree = parse(f"SELECT {text}", "an expression")
    if len(tree.expressions) != 1 or any(isinstance(n, (exp.Table, exp.Query)) for n in tree.expressions[0].walk()):
        return None
    lines = pretty(tree).split("\n")
    if lines[0] != "SELECT" or not all(line.startswith("  ") for line in lines[1:]):
        return None
    return "\n".join(line[2:] for line in lines[1:])


class Grafts:
    """The snippets of one template: in a compile, each printed once per distinct text and set in place as text.

    A template's snippets (each generated from a plan's sqlglot node) are whole expressions in slots of their
    own: a select item, a WHERE, an ON, a parenthesised check, so a snippet prints alike wherever it stands.
    The period filter and the row-id expression, tens of lines each, are the same text in every input, join
    and append of every project, and parsing and printing them again each time was most of a wide
    workspace's compile. When the steps are lowered only to be printed (:func:`printing_only`), a template gets
    ``grafts(node)``, a placeholder column with a name no workspace can hold, and :func:`parse_ctes` parses the
    skeleton and sets the snippet's printed text (:func:`_printed`) in the placeholder's place, as a leaf
    (``exp.Var``) printed as it is; every placeholder must be found exactly once. Otherwise (a fused rewrite
    walks the trees), or when a snippet must stay a tree, the template gets the snippet's text, as before.
    ``LEDGERFLOW_CHECK_GRAFTS=1`` parses each fragment the old way too and fails when it prints differently
    (``.ci/run`` sets it for the tests)."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.printed: list[str] = []

    def __call__(self, node: exp.Expression) -> str:
        text = sql(node)
        printed = _printed(text) if _PRINTING_ONLY.get() else None
        if printed is None:
            return text
        self.texts.append(text)
        self.printed.append(printed)
        return f"`{_GRAFT}{len(self.texts) - 1}`"

    def graft(self, tree: exp.Expression, what: str) -> None:
        """Replace each placeholder column of ``tree`` by its snippet's printed text (in place)."""
        found = [c for c in tree.find_all(exp.Column) if not c.table and c.name.startswith(_GRAFT)]
        seen = sorted(int(c.name[len(_GRAFT):]) for c in found)
        if seen != list(range(len(self.texts))):
            raise TemplateRenderError(f"internal error: the SQL rendered for {what} holds placeholders {seen}, "
                                      f"not each of the {len(self.texts)} expressions it was given once")
        for column in found:
            column.replace(exp.Var(this=self.printed[int(column.name[len(_GRAFT):])]))

    def spelled(self, fragment: str) -> str:
        """``fragment`` with each placeholder replaced by its snippet's text (what was parsed before)."""
        for i in reversed(range(len(self.texts))):  # highest index first: `..._1` is a prefix of `..._10`
            fragment = fragment.replace(f"`{_GRAFT}{i}`", self.texts[i])
        return fragment


def parse_ctes(fragment: str, what: str, grafts: Optional[Grafts] = None) -> list[exp.CTE]:
    """The CTE nodes of a rendered fragment ``name AS (...), name AS (...)``: what a stage counts; ``grafts``:
    the snippets of the fragment's placeholders (:class:`Grafts`)."""
    tree = parse(f"WITH {fragment}\nSELECT 1", what)
    if grafts is not None and grafts.texts:
        grafts.graft(tree, what)
        if os.environ.get("LEDGERFLOW_CHECK_GRAFTS") == "1":
            parsed = parse(f"WITH {grafts.spelled(fragment)}\nSELECT 1", what)
            if pretty(parsed) != pretty(tree):
                raise TemplateRenderError(f"internal error: grafted and parsed SQL differ for {what}:\n"
                                          f"{pretty(tree)}\n---\n{pretty(parsed)}")
    return tree.ctes


def parse(text: str, what: str) -> exp.Expression:
    """Parse rendered SQL back with sqlglot; a parse failure is a ledgerflow bug."""
    try:
        return sqlglot.parse_one(text, read=SPARK)
    except ParseError as err:
        raise TemplateRenderError(f"internal error: the SQL rendered for {what} does not parse ({err}).\n{text}") from None


def pretty(tree: exp.Expression) -> str:
    """The deterministic, reviewable text of a statement tree (generated in place: the tree is ours)."""
    return SPARK.generate(tree, copy=False, pretty=True)

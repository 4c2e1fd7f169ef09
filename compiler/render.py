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
from sqlglot.errors import ParseError

from .errors import LedgerflowError


class TemplateRenderError(LedgerflowError):
    """A template produced SQL that sqlglot cannot parse: a bug in ledgerflow, never the user's fault."""


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The shared Jinja environment over the packaged templates (StrictUndefined)."""
    folder = resources.files("ledgerflow.templates")
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(folder)), undefined=jinja2.StrictUndefined,
                              autoescape=False, keep_trailing_newline=False)


def render(template: str, **context) -> str:
    """Render ``<template>.sql.j2`` with ``context``."""
    return environment().get_template(f"{template}.sql.j2").render(**context).strip()


def ident(name: str) -> str:
    """A quoted Spark identifier (backticks, escaped): names can never inject SQL."""
    return exp.to_identifier(name, quoted=True).sql("spark")


def sql(node: exp.Expression) -> str:
    """Spark SQL text of a sqlglot node."""
    return node.sql("spark")


def normalise(text: str, what: str) -> str:
    """Parse rendered SQL back with sqlglot and pretty-print it; a parse failure is a ledgerflow bug."""
    try:
        tree = sqlglot.parse_one(text, read="spark")
    except ParseError as err:
        raise TemplateRenderError(f"internal error: the SQL rendered for {what} does not parse ({err}).\n{text}") from None
    return tree.sql("spark", pretty=True)

"""What translating one DSL expression gives (:class:`Typed`) and the located error it raises
(:class:`ExprError`), shared by the translator and the modules it calls."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from sqlglot import exp

from ..codes import EXPRESSION_DEFAULTS
from ..errors import Diagnostic, LedgerflowError, Location
from ..types import SqlType
from .ast import Source

DEFAULT_CODES = EXPRESSION_DEFAULTS


class ExprError(LedgerflowError):
    """A located problem in one expression (the binder turns it into a coded :class:`Diagnostic`)."""

    def __init__(self, kind: str, message: str, source: Source, pos: int, text: str = "", hint: str = ""):
        super().__init__(message)
        self.kind, self.message, self.source, self.pos, self.text, self.hint = kind, message, source, pos, text, hint

    def diagnostic(self, codes: dict) -> Diagnostic:
        """The diagnostic for this error under the caller's code table."""
        return Diagnostic(codes.get(self.kind, DEFAULT_CODES[self.kind]), self.message,
                          source_location(self.source, self.pos), self.text, self.hint)


def source_location(source: Source, pos: int) -> Location:
    """File location of character ``pos`` of an expression's text."""
    before = source.text[:pos]
    newlines = before.count("\n")
    if newlines:
        return Location(source.file, source.line + newlines, pos - before.rfind("\n"))
    return Location(source.file, source.line, source.column + pos)


@dataclass
class Typed:
    """A translated expression: sqlglot node, DSL type, whether it aggregates and, for an integer literal
    (Spark types those by their own digits next to a decimal), its value."""

    sql: exp.Expression
    type: SqlType
    aggregate: bool = False
    literal: Optional[int] = None

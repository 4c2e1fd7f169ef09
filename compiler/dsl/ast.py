"""AST nodes of the expression DSL. ``pos`` is the 0-based offset of the node in its source text."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union


@dataclass(frozen=True)
class Literal:
    """A literal: kind is number, string, boolean, null or date; ``value`` is its text or Python value."""

    kind: str
    value: object
    pos: int


@dataclass(frozen=True)
class ColumnRef:
    """``table.column`` or a bare ``column``."""

    table: Optional[str]
    name: str
    pos: int

    @property
    def text(self) -> str:
        """The reference as written."""
        return f"{self.table}.{self.name}" if self.table else self.name


@dataclass(frozen=True)
class Unary:
    """``NOT x`` or ``-x``."""

    op: str
    operand: "Node"
    pos: int


@dataclass(frozen=True)
class Binary:
    """``left op right`` for OR, AND, comparisons and arithmetic."""

    op: str
    left: "Node"
    right: "Node"
    pos: int


@dataclass(frozen=True)
class Call:
    """``NAME(args)``; ``star`` is true for ``COUNT(*)``; ``CAST(x AS type)`` is the call CAST of ``x`` with
    the type as written in ``target`` and where it is written in ``target_pos``."""

    name: str
    args: tuple
    pos: int
    star: bool = False
    target: Optional[str] = None
    target_pos: int = 0


@dataclass(frozen=True)
class Paren:
    """A parenthesised expression (kept so expanded selectors stay grouped)."""

    expr: "Node"
    pos: int


@dataclass(frozen=True)
class SelectorRef:
    """``{{NAME}}``: a named selector, expanded before translation."""

    name: str
    pos: int


@dataclass(frozen=True)
class Expanded:
    """A named selector after expansion: its parsed body and where that body was written."""

    name: str
    body: "Node"
    source: "Source"
    pos: int


@dataclass(frozen=True)
class Source:
    """Expression text with the location of its first character, for error reporting."""

    text: str
    file: str
    line: int
    column: int


Node = Union[Literal, ColumnRef, Unary, Binary, Call, Paren, SelectorRef, Expanded]

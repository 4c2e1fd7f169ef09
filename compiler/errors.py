"""One error root for ledgerflow, and the located diagnostics the compiler collects.

Every user-facing failure is a :class:`LedgerflowError`. Compile-time problems are
:class:`Diagnostic` records (code, file, line, column, offending text, hint) gathered by a
:class:`DiagnosticCollector` so that one pass reports every mistake of a project.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Iterable, Optional

from .visible_text import visible


class LedgerflowError(Exception):
    """Root of every error ledgerflow raises on purpose. ``exit_code`` is the CLI's exit code."""

    exit_code = 1

    def render(self) -> str:
        """Return the message as one readable paragraph for the command line."""
        return str(self)


@dataclass(frozen=True)
class Location:
    """A place in a source file: 1-based line and column."""

    file: str
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        if self.line:
            return f"{self.file}:{self.line}:{self.column}" if self.column else f"{self.file}:{self.line}"
        return self.file


@dataclass(frozen=True)
class Diagnostic:
    """One compile-time error: a code of the specs, where it is, what is wrong, how to fix it."""

    code: str
    message: str
    location: Location
    text: str = ""
    hint: str = ""

    def render(self) -> str:
        """Format as ``file:line:col: CODE message (at 'text'). Hint: ...``, on one line: a line end or other
        hidden character of a name from the YAML is written as its escape (:func:`.visible_text.visible`), so
        it can neither break the diagnostic nor pass as a line of its own."""
        out = f"{visible(str(self.location))}: {self.code} {visible(self.message)}"
        if self.text:
            out += f" (at '{visible(self.text)}')"
        if self.hint:
            out += f". Hint: {visible(self.hint)}"
        return out


class CompileError(LedgerflowError):
    """The user's definitions are wrong; carries every diagnostic found."""

    exit_code = 1

    def __init__(self, diagnostics: Iterable[Diagnostic]):
        self.diagnostics = list(diagnostics)
        super().__init__("\n".join(d.render() for d in self.diagnostics))

    @property
    def codes(self) -> list[str]:
        """The codes of all diagnostics, in report order."""
        return [d.code for d in self.diagnostics]

    def render(self) -> str:
        n = len(self.diagnostics)
        head = f"{n} error{'s' if n != 1 else ''} found:"
        return head + "\n" + "\n".join("  " + d.render() for d in self.diagnostics)


class ResolutionError(LedgerflowError):
    """A dataset, version or location could not be resolved; nothing was executed."""

    exit_code = 1


class ExecutionError(LedgerflowError):
    """Spark failed while executing a run; the run is recorded as failed."""

    exit_code = 3


class ChecksFailed(LedgerflowError):
    """A check with the action ``fail`` found violations in a run's rows (docs/checks.md): the run was rolled
    back and recorded failed with the checks' results (``results``: the run record's ``checks``)."""

    exit_code = 4

    def __init__(self, message: str, results: Optional[list] = None):
        super().__init__(message)
        self.results = list(results or [])

    @property
    def failed(self) -> list[str]:
        """The names of the checks that failed."""
        return [r["name"] for r in self.results if r.get("status") == "failed"]


@dataclass
class DiagnosticCollector:
    """Collects diagnostics instead of raising at the first one."""

    diagnostics: list[Diagnostic] = field(default_factory=list)

    def add(self, code: str, message: str, location: Location, text: str = "", hint: str = "") -> None:
        """Record one diagnostic."""
        self.diagnostics.append(Diagnostic(code, message, location, text, hint))

    def extend(self, diagnostics: Iterable[Diagnostic]) -> None:
        """Record several diagnostics."""
        self.diagnostics.extend(diagnostics)

    def __bool__(self) -> bool:
        return bool(self.diagnostics)

    def raise_if_any(self) -> None:
        """Raise :class:`CompileError` with everything collected so far, if anything."""
        if self.diagnostics:
            raise CompileError(self.diagnostics)


def closest(word: str, candidates: Iterable[str]) -> Optional[str]:
    """The candidate most similar to ``word``, or None when nothing is close."""
    matches = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.5)
    return matches[0] if matches else None


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """A hint naming the closest candidate, or listing the valid ones."""
    cands = sorted(set(candidates))
    best = closest(word, cands)
    if best:
        return f"did you mean '{best}'?"
    if cands:
        shown = ", ".join(cands[:12]) + (", ..." if len(cands) > 12 else "")
        return f"valid names: {shown}"
    return ""

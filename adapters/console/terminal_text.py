"""Text from the run store as the terminal shows it: close notes, ``--by``, restatement reasons, errors,
names and paths are free text someone typed (or a file held), and may carry terminal escape sequences
(an OSC title or clipboard write), bidi overrides or line breaks. ``periods list``, ``periods close |
reopen``, ``status`` and ``runs list | show`` print them through the one rule for hidden characters
(:mod:`....compiler.visible_text`): each such character is written as ``\\uXXXX``, never sent."""
from __future__ import annotations

from typing import Any

import click

from ...compiler.visible_text import visible


def echo_line(text: str) -> None:
    """Print ``text`` as one line: a line break inside it is shown as ``\\u000a``, so free text cannot start
    a line that looks like ledgerflow's own."""
    click.echo(visible(text))


def echo_lines(lines) -> None:
    """Print each of ``lines`` with :func:`echo_line`."""
    for line in lines:
        echo_line(line)


def echo_block(text: str) -> None:
    """Print the lines of ``text`` (a summary ledgerflow built, joined by line breaks), each shown by
    :func:`echo_line`; the free text it holds should have gone through :func:`shown_record` first."""
    echo_lines(text.split("\n"))


def shown_record(value: Any, multi_line: tuple = ("error",)) -> Any:
    """A copy of a run record (or any JSON value) whose strings show their hidden characters; those under a
    key in ``multi_line`` keep their line breaks (a run's error, printed as lines)."""
    return _shown(value, False, multi_line)


def _shown(value: Any, keep_lines: bool, multi_line: tuple) -> Any:
    if isinstance(value, str):
        return visible(value, keep="\n" if keep_lines else "")
    if isinstance(value, dict):
        return {k: _shown(v, k in multi_line, multi_line) for k, v in value.items()}
    if isinstance(value, list):
        return [_shown(v, False, multi_line) for v in value]
    return value


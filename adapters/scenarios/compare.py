"""Compare an output's expected rows with the rows the run produced.

Only the columns an expected row names are compared, exactly at the output column's type (a
decimal ``"108.00"`` equals ``108.000`` but not ``108.001``; NULL equals only NULL). The expected
rows are the whole output: rows are matched without regard to order (unless ``ordered: true``),
first on every named value; what is left is paired by the columns that identify a row, so a wrong
value shows as a cell difference rather than as a missing plus an unexpected row. The identifying
columns are the fewest named non-measure columns (not decimal, double or timestamp) whose values
tell the expected rows apart, e.g. ``journal_id, line_number``.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Optional

from ...compiler.errors import Diagnostic, Location
from .execute import OutputRows
from .spec import Expectation
from .values import ConversionError, convert, show

_MEASURES = ("decimal", "double", "float", "timestamp")


@dataclass
class CellDiff:
    """One value that differs."""

    column: str
    expected: Any
    actual: Any


@dataclass
class RowDiff:
    """A difference in one row: ``kind`` is cell | missing | unexpected | order."""

    kind: str
    key: dict[str, Any]  # the identifying columns' values
    location: Optional[Location] = None  # the expected row in the test file
    cells: list[CellDiff] = field(default_factory=list)
    expected_position: Optional[int] = None  # 1-based (order)
    actual_position: Optional[int] = None
    values: dict[str, Any] = field(default_factory=dict)  # a missing or unexpected row's compared values

    def describe(self) -> str:
        """One line, e.g. ``row journal_id=JE-2, line_number=1: amount expected 10.00, actual 10.01``."""
        key = ", ".join(f"{k}={show(v)}" for k, v in self.key.items()) or "(no identifying columns)"
        at = f" ({self.location})" if self.location else ""
        if self.kind == "cell":
            cells = "; ".join(f"{c.column} expected {show(c.expected)}, actual {show(c.actual)}" for c in self.cells)
            return f"row {key}{at}: {cells}"
        if self.kind == "order":
            return (f"row {key}{at} is expected at position {self.expected_position}, the output has it at "
                    f"position {self.actual_position}")
        values = ", ".join(f"{k}={show(v)}" for k, v in self.values.items() if k not in self.key)
        return f"{self.kind} row {key}{at}" + (f": {values}" if values else "")


def _expected_rows(exp: Expectation, out: OutputRows) -> tuple[list[dict], list[Diagnostic]]:
    rows, problems = [], []
    for row in exp.rows:
        typed = {}
        for column, value in row.items():
            try:
                typed[column] = convert(value, out.types[column], strict=False)
            except ConversionError as err:
                problems.append(Diagnostic("TEST-011", f"output {out.seq}, column '{column}' ({out.types[column]}): "
                                           f"{err}", row.value_location(column), str(value), err.hint))
        rows.append(typed)
    return rows, problems


def _equal(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):  # True is not the number 1
        return type(a) is type(b) and a == b
    return a == b


def _matches(expected: dict, actual: dict) -> bool:
    return all(_equal(v, actual[k]) for k, v in expected.items())


def identifying_columns(rows: list[dict], columns: list[str], types: dict[str, str]) -> list[str]:
    """The fewest (up to 3) named non-measure columns whose values are distinct across ``rows``."""
    candidates = [c for c in columns if not types.get(c, "").startswith(_MEASURES)]
    for size in range(1, min(3, len(candidates)) + 1):
        for combo in itertools.combinations(candidates, size):
            values = [tuple(show(r.get(c)) for c in combo) for r in rows]
            if len(set(values)) == len(values):
                return list(combo)
    return []


def compare(exp: Expectation, out: OutputRows) -> tuple[list[RowDiff], list[Diagnostic]]:
    """Every difference between ``exp`` and ``out`` (empty when they agree), and the expected values
    that do not parse as their column's type (TEST-011)."""
    expected, problems = _expected_rows(exp, out)
    if problems:
        return [], problems
    actual = [dict(zip(out.columns, r)) for r in out.rows]
    columns = list(dict.fromkeys(c for r in exp.rows for c in r))
    key = identifying_columns(expected, columns, out.types)
    shown = key or columns or [c for c in out.columns if not c.startswith("_")][:4]
    pair: dict[int, int] = {}  # expected index -> actual index
    used: set[int] = set()
    for i, row in enumerate(expected):  # rows equal on every named value
        j = next((j for j, a in enumerate(actual) if j not in used and _matches(row, a)), None)
        if j is not None:
            pair[i] = j
            used.add(j)
    diffs: list[RowDiff] = []
    for i, row in enumerate(expected):  # what is left, paired by the identifying columns
        if i in pair or not key:
            continue
        j = next((j for j, a in enumerate(actual) if j not in used and
                  all(_equal(row.get(c), a[c]) for c in key)), None)
        if j is None:
            continue
        used.add(j)
        pair[i] = j
        cells = [CellDiff(c, v, actual[j][c]) for c, v in row.items() if not _equal(v, actual[j][c])]
        diffs.append(RowDiff("cell", {c: row.get(c) for c in key}, exp.row_locations[i], cells))
    for i, row in enumerate(expected):
        if i not in pair:
            diffs.append(RowDiff("missing", {c: row.get(c) for c in shown if c in row} or row,
                                 exp.row_locations[i], values=row))
    for j, a in enumerate(actual):
        if j not in used:
            diffs.append(RowDiff("unexpected", {c: a[c] for c in shown}, values={c: a[c] for c in columns}))
    if not diffs and exp.ordered:
        for i in range(len(expected)):
            if pair[i] != i:
                diffs.append(RowDiff("order", {c: expected[i].get(c) for c in shown if c in expected[i]},
                                     exp.row_locations[i], expected_position=i + 1, actual_position=pair[i] + 1))
    return diffs, problems


def summary(diffs: list[RowDiff]) -> str:
    """E.g. ``1 row with different values, 2 rows missing, 1 unexpected row``."""
    counts = {k: sum(1 for d in diffs if d.kind == k) for k in ("cell", "missing", "unexpected", "order")}
    words = {"cell": ("row with different values", "rows with different values"),
             "missing": ("row missing", "rows missing"), "unexpected": ("unexpected row", "unexpected rows"),
             "order": ("row out of order", "rows out of order")}
    return ", ".join(f"{n} {words[k][n != 1]}" for k, n in counts.items() if n)

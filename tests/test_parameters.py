"""Which named parameters a statement uses (compiler/parameters.py): the one helper the runner and
the loaders bind with, checked against sqlglot's parse of the placeholders."""
from __future__ import annotations

import datetime

import pytest
import sqlglot
from sqlglot import exp

from ledgerflow.compiler import parameters, system_columns as sysc
from ledgerflow.compiler.compile import compile_project
from ledgerflow.compiler.loading import RowRules, normalised_select, union_all
from ledgerflow.compiler.periods import parse_period
from ledgerflow.compiler.workspace import load_workspace

from conftest import PROJECTS


def _placeholders(sql: str) -> set[str]:
    return {p.name for p in sqlglot.parse_one(sql, read="spark").find_all(exp.Placeholder)}


def _statements():
    for name in ("finance", "orders"):
        ws = load_workspace(str(PROJECTS / name))
        for project in ws.projects:
            for st in compile_project(ws, project).statements:
                yield f"{name}/{project.name}/{st.name}", st.sql
        for ds in ws.datasets:  # the loaders' normalising SELECT of every dataset, period rows only
            declared = {c.name: "string" for c in ds.columns}
            system = dict(sysc.system_columns(ds.temporal_mode))
            one = normalised_select(ds, 1, "raw_0", {**declared, **{k: v for k, v in system.items() if k != "_period"}},
                                    "data/x", "2026-01", 0, RowRules(period_rows=True))  # a period-specific location
            two = normalised_select(ds, 1, "raw_1", {**declared, **system}, "data/y", None, 1,
                                    RowRules(period_rows=True))
            yield f"{name}/load {ds.name}", union_all([one, two])


@pytest.mark.parametrize("where,sql", list(_statements()), ids=lambda v: v if "/" in str(v) else "")
def test_used_is_what_sqlglot_parses(where, sql):
    assert parameters.used(sql) == _placeholders(sql)
    assert parameters.used(sql) <= set(parameters.NAMES)


@pytest.mark.parametrize("sql,expected", [
    ("SELECT :period_start, :run_started_at", {"period_start", "run_started_at"}),
    ("SELECT x FROM t WHERE d < :period_end AND p = :period_identifier", {"period_end", "period_identifier"}),
    ("SELECT ':period_start' AS s, \"x:period_end\" AS t", set()),               # string literals
    ("SELECT 'it\\'s :period_end', 'a''b :period_start'", set()),                 # escaped quotes
    ("SELECT `col:period_start` FROM `a``:period_end`", set()),                  # quoted identifiers
    ("SELECT 1 -- :period_start\n, 2 /* :period_end \n :run_started_at */", set()),  # comments
    ("SELECT x::date, :period_start::date", {"period_start"}),                   # casts
    ("SELECT :period_start_extra, :period_startx", {"period_start_extra", "period_startx"}),  # whole names
    ("SELECT '-- not a comment', :period_end", {"period_end"}),
])
def test_used_skips_literals_identifiers_and_comments(sql, expected):
    assert parameters.used(sql) == expected
    assert _placeholders(sql) == expected


def test_arguments_keep_only_what_the_statement_uses():
    values = parameters.values(parse_period("2026-Q1"), datetime.datetime(2026, 4, 2, 8, 0))
    assert list(values) == list(parameters.NAMES)
    assert values["period_start"] == datetime.date(2026, 1, 1) and values["period_end"] == datetime.date(2026, 3, 31)
    sql = "SELECT * FROM t WHERE _period = :period_identifier AND note <> ':run_started_at'"
    assert parameters.arguments(sql, values) == {"period_identifier": "2026-Q1"}
    assert parameters.arguments("SELECT 1", values) == {}

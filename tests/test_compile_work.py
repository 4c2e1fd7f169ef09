"""Compiling a chain of updates does work per operation that does not grow with the chain (issue 48 point 4):
the parses of SQL text (sqlglot's, every one through ``Dialect.parse`` or ``parse_into``) are counted, not timed, for chains of 40,
80 and 160 dependent updates of two columns (bench/projectgen.py's ``chain_<n>``, the 500-operation benchmark's
shape)."""
from __future__ import annotations

from sqlglot.dialects.dialect import Dialect

from bench.projectgen import write_chain_workspace
from ledgerflow.compiler.compile import compile_project
from ledgerflow.compiler.workspace import load_workspace

SIZES = (40, 80, 160)


def test_parses_per_operation_stay_flat_as_the_chain_grows(tmp_path, monkeypatch):
    monkeypatch.delenv("LEDGERFLOW_CHECK_GRAFTS")  # the tests' check parses each fragment a second time
    names = write_chain_workspace(str(tmp_path), list(SIZES))
    ws = load_workspace(str(tmp_path))
    counted = {"parses": 0}
    original, original_into = Dialect.parse, Dialect.parse_into

    def parse(self, sql, **opts):
        counted["parses"] += 1
        return original(self, sql, **opts)

    def parse_into(self, into, sql, **opts):  # a type's text made a tree (exp.DataType.build)
        counted["parses"] += 1
        return original_into(self, into, sql, **opts)

    monkeypatch.setattr(Dialect, "parse", parse)
    monkeypatch.setattr(Dialect, "parse_into", parse_into)
    compile_project(ws, ws.find_project(names[0]))  # what the first compile of a process parses once: not counted
    parses = {}
    for n, name in zip(SIZES, names):
        counted["parses"] = 0
        compile_project(ws, ws.find_project(name)).script()
        parses[n] = counted["parses"]
    first, second = parses[80] - parses[40], parses[160] - parses[80]
    assert second <= 2 * first + 4, parses  # each 40 operations more cost what the 40 before did: linear
    assert second / 80 <= 1.5, parses  # about one parse per operation: its CTE's text parsed back


def test_a_snippet_every_project_shares_is_parsed_and_printed_once(tmp_path, monkeypatch):
    """The period filter (and each other snippet) of every input and append of a wide workspace is the same
    text: a compile parses and prints it once per process, not once per input, and the template's own text
    (the skeleton) is what is parsed back per step. The SQL is the same: the tests' check
    (LEDGERFLOW_CHECK_GRAFTS, tests/conftest.py) parses every fragment the old way too."""
    from bench.workspace_scale import wide
    from ledgerflow.compiler import render
    monkeypatch.delenv("LEDGERFLOW_CHECK_GRAFTS")
    wide(tmp_path / "w", 100)  # 4 entities x 20 steps, 20 consolidations of 3 appends each
    ws = load_workspace(str(tmp_path / "w"))
    render._printed.cache_clear()
    texts: list[str] = []
    original = Dialect.parse

    def parse(self, sql, **opts):
        texts.append(sql)
        return original(self, sql, **opts)

    monkeypatch.setattr(Dialect, "parse", parse)
    scripts = [compile_project(ws, p).script() for p in ws.projects]
    filters = [t for t in texts if "RLIKE" in t]  # the period filter's text, alone or in a fragment
    reads = sum(1 + sum(op.kind.value == "append" for op in p.operations) for p in ws.projects)
    assert reads == 100 + 20 * 3 and len(filters) <= 2, (reads, len(filters))
    assert sum(s.count("RLIKE") for s in scripts) == reads  # every read still filters its periods
    assert sum(map(len, texts)) < 0.5 * sum(map(len, scripts))  # parsing the whole text back: about 0.7


def test_a_literal_holding_sqlglots_line_break_marker_compiles_as_before(finance):
    """sqlglot's pretty printer writes a line end inside a literal as a marker and turns every marker into a line
    end once the statement is indented; a snippet printed on its own and set in place would have its marker
    turned early and indented with the snippet. Such a snippet stays text in the template (the tests' check,
    LEDGERFLOW_CHECK_GRAFTS, fails otherwise)."""
    project = finance / "projects" / "zz_marker.yml"
    project.write_text(
        "id: 0b000000-0000-4000-8000-000000000901\nname: zz_marker\nversion: 1\nstatus: active\ninput_dataset_id: gl\n"
        "operations:\n  - seq: 1\n    name: Set\n    type: update\n    arguments:\n      assignments:\n"
        "        - column: description\n          expression: '\"x__SQLGLOT__LB__  y\"'\n"
        "  - seq: 2\n    name: Write\n    type: output\n    arguments: {destination: {table: zz_marker}}\n")
    ws = load_workspace(str(finance))
    assert "y' ELSE" in compile_project(ws, ws.find_project("zz_marker")).script()

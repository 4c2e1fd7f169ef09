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

"""Per-operation fixtures: a small project fragment -> the SQL of its last operation.

Beside the whole-project golden files (``tests/golden/``), one file per operation kind under
``tests/fixtures/operations/<kind>.sql``, in the style of sqlglot's ``tests/fixtures/optimizer``:
a change to one template shows in one small file. Each case is::

    -- title: what the case shows
    -- operations:
    --   - seq: 1
    --     type: update
    --     ...
    <the SQL of the last operation of the list>;

The YAML under ``-- operations:`` (the ``-- `` prefix removed) is the ``operations`` list of a
project reading the ``gl`` dataset of ``projects/finance`` (``-- selectors:`` may precede it). The SQL
is the step the compiler lowers that operation to: ``WITH <its CTEs> SELECT * FROM <its last CTE>``
reading the previous step's CTE by name, or an output's query. Regenerate with
``pytest tests/test_operation_fixtures.py --update-golden`` and review ``git diff tests/fixtures``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from ledgerflow.compiler.compile import plan_project
from ledgerflow.compiler.errors import DiagnosticCollector
from ledgerflow.compiler.lower import OutputStep, lower
from ledgerflow.compiler.render import pretty
from ledgerflow.compiler.stage import stage_query
from ledgerflow.compiler.workspace import load_workspace, project_from_data
from ledgerflow.compiler.yaml_source import load_yaml_text

from conftest import PROJECTS, REPO

FIXTURES = REPO / "tests" / "fixtures" / "operations"
HEADER = ("id: 0f000000-0000-4000-8000-000000000001\nname: fixture\nversion: 1\nstatus: active\n"
          "input_dataset_id: gl\n")


@dataclass
class Case:
    title: str
    yaml: str  # the commented YAML lines, as written
    sql: str


def read_cases(path: Path) -> list[Case]:
    """The cases of one fixture file, in order."""
    cases: list[Case] = []
    for block in re.split(r"^(?=-- title: )", path.read_text(), flags=re.M):
        if not block.strip():
            continue
        lines = block.splitlines()
        title = lines[0][len("-- title: "):].strip()
        comments = [line for line in lines[1:] if line.startswith("--")]
        sql = "\n".join(line for line in lines[1 + len(comments):]).strip()
        cases.append(Case(title, "\n".join(comments), sql))
    return cases


def write_cases(path: Path, cases: list[Case]) -> None:
    """Write ``cases`` back (the regeneration of ``--update-golden``)."""
    path.write_text("\n\n".join(f"-- title: {c.title}\n{c.yaml}\n{c.sql}" for c in cases) + "\n")


def compile_case(case: Case) -> str:
    """The SQL of the last operation of ``case``'s fragment."""
    text = HEADER + "\n".join(line[3:] if line.startswith("-- ") else line[2:] for line in case.yaml.splitlines())
    errors = DiagnosticCollector()
    project = project_from_data(load_yaml_text(text, "<fixture>"), "<fixture>", errors)
    assert not errors.diagnostics, errors.diagnostics
    plan = plan_project(WORKSPACE, project)
    assert plan.diagnostics == [], [d.message for d in plan.diagnostics]
    last = list(lower(plan))[-1]
    tree = last.query if isinstance(last, OutputStep) else stage_query([last])
    return pretty(tree) + ";"


WORKSPACE = load_workspace(str(PROJECTS / "finance"))
CASES = [(path.stem, case.title) for path in sorted(FIXTURES.glob("*.sql")) for case in read_cases(path)]


@pytest.mark.parametrize("kind,title", CASES)
def test_operation_fixture(kind, title, request):
    """The operation compiles to the fixture's SQL, byte for byte."""
    path = FIXTURES / f"{kind}.sql"
    cases = read_cases(path)
    case = next(c for c in cases if c.title == title)
    got = compile_case(case)
    if request.config.getoption("--update-golden"):
        case.sql = got
        write_cases(path, cases)
    assert got == case.sql, f"SQL of fixture '{title}' ({path.name}) changed: rerun with --update-golden and review"


def test_every_operation_kind_has_a_fixture_file():
    from ledgerflow.compiler.model import OperationKind
    assert {p.stem for p in FIXTURES.glob("*.sql")} == {k.value for k in OperationKind}

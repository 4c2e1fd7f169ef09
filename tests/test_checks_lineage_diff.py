"""Checks seen by lineage (a column read by a check names it) and by diff (a changed check per project,
non_breaking except a quarantine check): docs/checks.md, docs/lineage.md, docs/diff.md."""
from __future__ import annotations

import shutil

from ledgerflow.compiler.diff.projects import compare_project
from ledgerflow.compiler.diff.result import Category, Status, WorkspaceDiff, to_json
from ledgerflow.compiler.diff.summary import summarise_project
from ledgerflow.compiler.lineage import plan_lineage
from ledgerflow.compiler.lineage_formats import to_json as lineage_json, to_text
from ledgerflow.compiler.compile import plan_project
from ledgerflow.compiler.workspace import load_workspace

from conftest import REPO

FIXTURE = REPO / "tests" / "fixtures" / "checks"
NAME = "checked_close"


def _workspace(tmp_path, name: str, edit=None):
    root = tmp_path / name
    shutil.copytree(FIXTURE, root)
    if edit is not None:
        path = root / "projects" / f"{NAME}.yml"
        path.write_text(edit(path.read_text()))
    return load_workspace(str(root))


def _diff(tmp_path, base_edit=None, head_edit=None):
    base, head = _workspace(tmp_path, "base", base_edit), _workspace(tmp_path, "head", head_edit)
    return compare_project(NAME, summarise_project(base, base.find_project(NAME)),
                           summarise_project(head, head.find_project(NAME)))


def test_lineage_names_the_checks_reading_a_column(tmp_path):
    ws = _workspace(tmp_path, "ws")
    plan = plan_project(ws, ws.find_project(NAME))
    columns = {c.column: c for c in plan_lineage(plan)}
    assert columns["amount_local"].checks == ["journals_balance", "no_null_amounts", "control_totals"]
    assert columns["account_code"].checks == ["known_accounts"]
    assert columns["_row_id"].checks == []
    doc = {c["column"]: c for c in lineage_json(list(columns.values()))["columns"]}
    assert doc["currency"]["checks"] == ["currencies", "control_totals"] and "checks" not in doc["_row_id"]
    assert "    checked by      known_accounts" in to_text(plan_lineage(plan), plan).splitlines()


def test_diff_of_an_unchanged_project_has_no_checks(tmp_path):
    d = _diff(tmp_path)
    assert d.status == Status.UNCHANGED and d.checks == []


def test_a_changed_check_is_non_breaking(tmp_path):
    d = _diff(tmp_path, head_edit=lambda t: t.replace('max: 5000000', 'max: 4000000')
              .replace("  - {name: input_lines_dated, on: input, not_null: [posting_date]}\n", "")
              + "  - {name: lines_numbered, on: 2, not_null: [line_number]}\n")
    assert d.category == Category.NON_BREAKING
    assert [(c.name, c.status.value) for c in d.checks] == [
        ("some_rows", "modified"), ("lines_numbered", "added"), ("input_lines_dated", "removed")]
    doc = to_json(WorkspaceDiff("base", "head", [d]))
    assert doc["projects"][0]["checks"] == [{"name": "some_rows", "status": "modified"},
                                            {"name": "lines_numbered", "status": "added"},
                                            {"name": "input_lines_dated", "status": "removed"}]


def test_a_changed_quarantine_check_is_breaking(tmp_path):
    d = _diff(tmp_path, head_edit=lambda t: t.replace("NOT(ISNULL(transactions.account_code))",
                                                      "NOT(ISNULL(transactions.currency))"))
    assert d.category == Category.BREAKING
    assert [(c.name, c.status.value) for c in d.checks] == [("known_accounts", "modified")]
    assert any("quarantines" in r for r in d.reasons)


def test_a_check_renamed_only_in_a_comment_is_not_a_change(tmp_path):
    d = _diff(tmp_path, head_edit=lambda t: t.replace("  - name: one_row_per_line\n",
                                                      "  # one line per journal line\n  - name: one_row_per_line\n"))
    assert d.checks == [] and d.category in (Category.NO_OP, None)

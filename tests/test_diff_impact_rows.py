"""``impact`` when what changes upstream is a row set, not a column (found by a review, each missed before):
a changed grouping key two projects up, a quarantine check on a registering output, a registration moved to
another output, and a change upstream of a ``--project`` selection."""
from __future__ import annotations

from test_diff import commit, diff, diff_json, edit, project, repo, ws  # noqa: F401  (repo: the fixture)

COUNT = """id: 0b000000-0000-4000-8000-000000000904
name: close_count
version: 1
status: active
input_dataset_id: close_consolidated
operations:
  - {seq: 1, name: Count groups, type: aggregate, arguments: {group_by: [], aggregations: [{column: n_groups, expression: COUNT(1)}]}}
  - {seq: 2, name: Write, type: output, arguments: {destination: {table: close_count}, columns: [n_groups]}}
"""


def _reached(doc: dict) -> set[tuple[str, str]]:
    return {(i["project"], i["column"]) for i in doc["impact"]}


def _conversion(repo):
    return ws(repo) / "projects" / "close_1_conversion.yml"


def test_a_changed_grouping_key_reaches_a_count_two_projects_down(repo):
    """close_consolidation groups by account type: a changed type changes how many groups it writes, so a
    COUNT(1) over close_consolidated (which reads no changed column) is reached."""
    (ws(repo) / "projects" / "close_4_count.yml").write_text(COUNT)
    commit(repo, "count")
    edit(_conversion(repo), "expression: acct.type", "expression: LOWER(acct.type)")
    doc = diff_json(repo)
    assert ("close_count", "n_groups") in _reached(doc)
    because = next(i["because"] for i in doc["impact"] if i["project"] == "close_count")
    assert "close_consolidation output" in because and "its rows can change" in because


def test_a_quarantine_check_on_a_registering_output_reaches_its_readers(repo):
    text = _conversion(repo).read_text()
    _conversion(repo).write_text(text + "checks:\n  - {name: positive_only, on: 3, expect: 'transactions.amount_local"
                                 " > 0', on_violation: quarantine, quarantine: {path: out/q, format: parquet}}\n")
    doc = diff_json(repo)
    out = next(o for o in project(doc, "close_conversion")["outputs"] if o["seq"] == 3)
    assert out["rows_changed"] is True
    assert {("close_consolidation", "total_reporting"), ("close_reporting", "total_reporting")} <= _reached(doc)


def test_a_registration_moved_to_another_output_reaches_its_readers(repo):
    text = _conversion(repo).read_text()
    _conversion(repo).write_text(text + "  - {seq: 4, name: Write USD lines, type: output, selector: "
                                 "'transactions.currency = \"USD\"', arguments: {destination: {table: usd_lines}}}\n")
    commit(repo, "a second output")
    edit(_conversion(repo), "      register_as_dataset: close_converted\n", "")
    edit(_conversion(repo), "{destination: {table: usd_lines}}", "{destination: {table: usd_lines}, "
                                                                 "register_as_dataset: close_converted}")
    doc = diff_json(repo)
    assert {("close_consolidation", "total_reporting"), ("close_reporting", "total_reporting")} <= _reached(doc)


def test_a_change_upstream_of_a_selected_project_is_its_impact_and_fails_it(repo):
    edit(_conversion(repo), "expression: acct.type", "expression: LOWER(acct.type)")
    doc = diff_json(repo, "--project", "close_reporting")
    assert [p["name"] for p in doc["projects"]] == ["close_reporting"]
    assert {p for p, _c in _reached(doc)} == {"close_reporting"}
    assert diff(repo, "--project", "close_reporting", "--fail-on", "breaking").exit_code == 4
    assert diff(repo, "--project", "ts01_output_only", "--fail-on", "breaking").exit_code == 0

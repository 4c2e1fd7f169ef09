"""One writer per destination (issue 43 points 3 and 6, docs/workspace.md "One writer per destination"): two
outputs, or an output and a check's quarantine, that may write one place are refused by `validate`, places
compared as real paths; ledgerflow's own folders are no destination. The command line, no Spark."""
from __future__ import annotations

import os

from cli_support import add_project, cli, describe, edit

OUTPUT = """
- seq: 1
  name: Out
  type: output
  arguments: {{destination: {destination}}}"""
QUARANTINE = """
checks:
  - {{name: q, on: 1, expect: 'transactions.currency <> "XXX"', on_violation: quarantine, quarantine: {{path: {path}}}}}
"""


def _copy(ws, source: str, name: str) -> None:
    """A copy of ``projects/<source>.yml`` under another name and id (what a user does to start a variant)."""
    text = (ws / "projects" / f"{source}.yml").read_text()
    head, rest = text.split("\n", 1)
    assert head.startswith("id: ")
    rest = rest.replace(f"name: {source}\n", f"name: {name}\n", 1)
    (ws / "projects" / f"{name}.yml").write_text("id: 0d000000-0000-4000-8000-0000000000ff\n" + rest)


def _quarantining(ws, name: str, out: str, quarantine: str) -> None:
    """A project writing the GL to ``out`` with a check quarantining into ``quarantine``."""
    text = add_project(ws, name, OUTPUT.format(destination=f'{{path: "{out}"}}'))
    (ws / "projects" / f"{name}.yml").write_text(text + QUARANTINE.format(path=quarantine).lstrip("\n"))


def test_a_copied_project_writing_the_same_destination_is_refused_naming_both(finance):
    """The red team's copy: its own id, the same {table: ...}. Both sides are told, each at its own output, and a
    run of the copy is refused before anything runs or is recorded."""
    _copy(finance, "ts01_output_only", "ts01_copy")
    r = cli(finance, "validate")
    assert r.exit_code == 1, describe(r)
    err = r.stderr
    assert ("projects/ts01_copy.yml:12:28: OUT-VR-003 output 1 of project 'ts01_copy' writes to 'ts01_transactions' "
            "(through its resolver, the path 'data/ts01_transactions/v{{version}}/ts01_transactions.csv'), where "
            "output 1 of project 'ts01_output_only' may also write") in err
    assert "projects/ts01_output_only.yml:12:28: OUT-VR-003 output 1 of project 'ts01_output_only'" in err
    assert "2 errors found" in err
    ran = cli(finance, "run", "ts01_copy", "--period", "2026-01")
    assert ran.exit_code == 1, describe(ran)
    assert "OUT-VR-003" in ran.stderr
    assert not (finance / "target" / "runs").exists()
    assert not (finance / "data" / "ts01_transactions").exists()


def test_an_output_through_a_link_into_another_projects_folder_is_refused(finance):
    """`out/alias/lines` is not `out/journal_lines` as text, but it is inside it once the link is followed."""
    (finance / "out").mkdir(exist_ok=True)
    os.symlink("journal_lines", finance / "out" / "alias")
    add_project(finance, "aliased", OUTPUT.format(destination='{path: "out/alias/lines"}'))
    r = cli(finance, "validate", "aliased")
    assert r.exit_code == 1, describe(r)
    assert ("OUT-VR-003 output 1 of project 'aliased' writes to 'out/alias/lines', where output 3 of project "
            "'journal_controls' may also write ('out/journal_lines')") in r.stderr
    mine = cli(finance, "validate", "journal_controls")  # the other side is told too
    assert mine.exit_code == 1 and "where output 1 of project 'aliased' may also write" in mine.stderr


def test_folders_apart_and_period_folders_that_never_meet_are_accepted(finance):
    add_project(finance, "by_year_a", OUTPUT.format(destination='{path: "out/years/{{YYYY}}/a"}'))
    add_project(finance, "by_year_b", OUTPUT.format(destination='{path: "out/years/{{YYYY}}/b"}'))
    add_project(finance, "beside", OUTPUT.format(destination='{path: "out/journal_lines_2"}'))
    add_project(finance, "by_year_gl", OUTPUT.format(destination='{path: "out/{{YYYY}}/gl"}'))  # YYYY: 4 digits
    r = cli(finance, "validate")
    assert r.exit_code == 0, describe(r)
    add_project(finance, "a_year", OUTPUT.format(destination='{path: "out/years/2026"}'))
    clash = cli(finance, "validate", "a_year")
    assert clash.exit_code == 1 and "where output 1 of project 'by_year_a' may also write" in clash.stderr


def test_catalog_tables_are_compared_by_name_whatever_their_case_and_qualifier(finance):
    add_project(finance, "cat_a", OUTPUT.format(destination="{catalog_table: fin.GL_Out}"))
    add_project(finance, "cat_b", OUTPUT.format(destination="{catalog_table: fin.gl_out}"))
    add_project(finance, "cat_c", OUTPUT.format(destination="{catalog_table: other.gl_out}"))
    r = cli(finance, "validate", "cat_a", "cat_c")
    assert r.exit_code == 1, describe(r)
    assert ("OUT-VR-003 output 1 of project 'cat_a' writes to 'fin.GL_Out', where output 1 of project 'cat_b'"
            in r.stderr)
    assert "'cat_c'" not in r.stderr.split("Error:")[1].split("where")[0]  # other.gl_out is another table
    assert r.stderr.count("OUT-VR-003") == 1
    add_project(finance, "cat_d", OUTPUT.format(destination="{catalog_table: spark_catalog.fin.gl_out}"))
    (finance / "projects" / "cat_b.yml").unlink()
    full = cli(finance, "validate", "cat_d")  # the session's catalog written out: still fin.gl_out
    assert full.exit_code == 1 and "where output 1 of project 'cat_a' may also write ('fin.GL_Out')" in full.stderr


def test_a_quarantine_through_a_link_into_another_projects_output_is_chk_007(finance):
    """The red team's quarantine: `out/qlink/q` leads into journal_controls' output folder through a link
    inside the workspace; CHK-007 compared the text only."""
    (finance / "out").mkdir(exist_ok=True)
    os.symlink("journal_lines", finance / "out" / "qlink")
    _quarantining(finance, "quarantining", "out/mine", "out/qlink/q")
    r = cli(finance, "validate", "quarantining")
    assert r.exit_code == 1, describe(r)
    assert ("CHK-007 the quarantine path 'out/qlink/q' of check 'q' overlaps the destination of output 3 of project "
            "'journal_controls' ('out/journal_lines')") in r.stderr
    other = cli(finance, "validate", "journal_controls")
    assert other.exit_code == 1 and ("OUT-VR-003 output 3 of project 'journal_controls' writes to 'out/journal_lines', "
                                     "where the quarantine destination of check 'q' of project 'quarantining' may "
                                     "also write ('out/qlink/q')") in other.stderr


def test_ledgerflow_own_folders_are_no_destination(finance):
    """`target/runs` (the run records), `.ledgerflow/...` (the run store), a folder holding one, and a link leading
    into one; `target/out` is a user's folder like any other."""
    (finance / "out").mkdir(exist_ok=True)
    os.symlink("../target", finance / "out" / "sneaky")
    add_project(finance, "into_runs", OUTPUT.format(destination='{path: "target/runs"}'))
    add_project(finance, "into_state", OUTPUT.format(destination='{path: ".ledgerflow/rows"}'))
    add_project(finance, "into_link", OUTPUT.format(destination='{path: "out/sneaky/docs"}'))
    add_project(finance, "holds_target", OUTPUT.format(destination='{path: "target"}'))
    r = cli(finance, "validate", "into_runs", "into_state", "into_link", "holds_target")
    assert r.exit_code == 1, describe(r)
    assert "4 errors found" in r.stderr and r.stderr.count("OUT-VR-004") == 4
    assert ("OUT-VR-004 output 1 writes to 'target/runs', which is or holds 'target/runs/', ledgerflow's own folder "
            "(the run records)") in r.stderr
    assert "OUT-VR-004 output 1 writes to 'target', which is or holds 'target/runs/'" in r.stderr
    assert "OUT-VR-004 output 1 writes to 'out/sneaky/docs', which is or holds 'target/docs/'" in r.stderr
    assert "OUT-VR-004 output 1 writes to '.ledgerflow/rows', which is or holds '.ledgerflow/'" in r.stderr
    (finance / "projects" / "holds_target.yml").unlink()
    add_project(finance, "users_target", OUTPUT.format(destination='{path: "target/out/lines"}'))
    assert cli(finance, "validate", "users_target").exit_code == 0
    rule = 'strategy: {type: path, path: "data/{{dataset}}/v{{version}}/{{table_name}}.csv", format: csv}'
    edit(finance, "ledgerflow.yml", rule, rule + '\n      - name: state\n        data_level: any\n'
         '        strategy: {type: path, path: ".ledgerflow/{{table_name}}", format: csv}')
    through = cli(finance, "validate", "ts01_output_only")
    assert through.exit_code == 1, describe(through)
    assert ("OUT-VR-004 output 1 writes to 'ts01_transactions' (through its resolver, the path "
            "'.ledgerflow/ts01_transactions')") in through.stderr


def test_a_quarantine_in_ledgerflow_own_folders_is_chk_007(finance):
    _quarantining(finance, "q_state", "out/q_state", ".ledgerflow/q")
    r = cli(finance, "validate", "q_state")
    assert r.exit_code == 1, describe(r)
    assert "CHK-007 the quarantine path '.ledgerflow/q' of check 'q' is or holds '.ledgerflow/'" in r.stderr

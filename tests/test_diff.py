"""`ledgerflow diff` and `compile --all` on real git repositories made in a temporary folder (no Spark).

The repository holds the finance sample workspace in a subfolder (`repo/ws`), as a real repository
would; each test commits a base, changes the working tree (and sometimes commits again) and diffs.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ledgerflow.adapters.diff import formats as diff_format
from ledgerflow.adapters.cli import main

from conftest import copy_workspace

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True,
                          text=True).stdout


def commit(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    copy_workspace("finance", root / "ws")
    commit(root, "base")
    return root


def ws(repo: Path) -> Path:
    return repo / "ws"


def diff(repo: Path, *args: str):
    return CliRunner().invoke(main, ["--workspace", str(ws(repo)), "diff", *args])


def diff_json(repo: Path, *args: str) -> dict:
    result = diff(repo, "--format", "json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def project(doc: dict, name: str) -> dict:
    return next(p for p in doc["projects"] if p["name"] == name)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (old, path)
    path.write_text(text.replace(old, new))


def ts(repo: Path, name: str) -> Path:
    return ws(repo) / "projects" / f"{name}.yml"


# ------------------------------------------------------------------------------------------ categories
def test_nothing_changed_is_all_unchanged(repo):
    doc = diff_json(repo)
    assert doc["base"].startswith("HEAD (") and doc["head"] == "working tree"
    assert {p["status"] for p in doc["projects"]} == {"unchanged"}
    assert {p["category"] for p in doc["projects"]} == {None}
    assert {d["status"] for d in doc["datasets"]} == {"unchanged"}
    assert doc["impact"] == []


def test_expression_change_is_breaking(repo):
    edit(ts(repo, "ts03_fx_conversion"), "transactions.amount_local * fx.rate", "transactions.amount_local * fx.rate * 2")
    p = project(diff_json(repo), "ts03_fx_conversion")
    assert (p["status"], p["category"]) == ("modified", "breaking")
    assert [o["status"] for o in p["operations"]] == ["modified", "unchanged"]
    assert p["outputs"] == [{"seq": 2, "name": "Write converted lines", "rows_changed": False,
                             "columns": [{"column": "amount_reporting", "change": "expression"}]}]
    assert "-      THEN CAST(`transactions`.`amount_local` * `fx`.`fx__rate`" in p["sql_diff"]


def test_join_condition_change_is_breaking_for_the_joined_columns(repo):
    edit(ts(repo, "ts03_fx_conversion"), 'fx.rate_type = "closing"', 'fx.rate_type = "average"')
    p = project(diff_json(repo), "ts03_fx_conversion")
    assert p["category"] == "breaking"
    assert p["outputs"][0]["columns"] == [{"column": "amount_reporting", "change": "expression"}]
    assert p["outputs"][0]["rows_changed"] is False


def test_selector_and_delete_change_rows(repo):
    edit(ts(repo, "ts04_delete_inactive"), "selector: transactions.account_active = FALSE",
         "selector: transactions.account_active = FALSE OR transactions.amount_local < 0")
    p = project(diff_json(repo), "ts04_delete_inactive")
    assert p["category"] == "breaking"
    by_seq = {o["seq"]: o for o in p["outputs"]}
    assert by_seq[3]["rows_changed"] is True  # active lines: other rows
    assert by_seq[4]["rows_changed"] is False  # include_deleted: the same rows, but _deleted differs
    assert {"column": "_deleted", "change": "expression"} in by_seq[4]["columns"]


def test_new_output_column_is_non_breaking(repo):
    edit(ts(repo, "ts03_fx_conversion"), "          expression: transactions.amount_local * fx.rate\n",
         "          expression: transactions.amount_local * fx.rate\n"
         "        - column: applied_rate\n          expression: fx.rate\n")
    p = project(diff_json(repo), "ts03_fx_conversion")
    assert (p["status"], p["category"]) == ("modified", "non_breaking")
    assert p["outputs"] == [{"seq": 2, "name": "Write converted lines", "rows_changed": False,
                             "columns": [{"column": "applied_rate", "change": "added"}]}]


def test_new_output_is_non_breaking_and_removed_output_breaking(repo):
    path = ts(repo, "ts07_output_columns")
    path.write_text(path.read_text() + "  - seq: 2\n    name: Write all\n    type: output\n"
                    "    arguments:\n      destination: {table: ts07_all}\n")
    doc = diff_json(repo)
    p = project(doc, "ts07_output_columns")
    assert p["category"] == "non_breaking"
    assert [o["status"] for o in p["operations"]] == ["unchanged", "added"]
    assert p["outputs"][0]["seq"] == 2 and p["outputs"][0]["rows_changed"] is True
    assert {c["change"] for c in p["outputs"][0]["columns"]} == {"added"}
    commit(repo, "two outputs")
    edit(path, "  - seq: 2\n    name: Write all\n    type: output\n    arguments:\n      destination: {table: ts07_all}\n", "")
    p = project(diff_json(repo), "ts07_output_columns")
    assert p["category"] == "breaking"
    assert p["operations"][-1] == {"seq": 2, "name": "Write all", "status": "removed"}
    assert {c["change"] for c in p["outputs"][0]["columns"]} == {"removed"}


def test_removed_output_column_and_destination_are_breaking(repo):
    edit(ts(repo, "ts07_output_columns"), "columns: [journal_id, account_code, amount_local, amount_reporting]",
         "columns: [journal_id, account_code, amount_local]")
    p = project(diff_json(repo), "ts07_output_columns")
    assert p["category"] == "breaking"
    assert p["outputs"][0]["columns"] == [{"column": "amount_reporting", "change": "removed"}]
    git(repo, "checkout", "--", ".")
    edit(ts(repo, "ts07_output_columns"), "{table: ts07_slim_lines}", "{table: ts07_other}")
    p = project(diff_json(repo), "ts07_output_columns")
    assert p["category"] == "breaking" and p["outputs"][0]["columns"] == []
    assert any("destination" in r for r in diff(repo).output.splitlines())


def test_reformatted_yaml_is_no_op(repo):
    path = ts(repo, "ts04_delete_inactive")
    text = path.read_text()
    description = next(line for line in text.splitlines() if line.startswith("description:"))
    text = text.replace(description + "\n", "")  # moved to the end: another key order
    text = text.replace("destination: {table: ts04_active_lines}", "destination:\n        table: 'ts04_active_lines'")
    text = text.replace("  - seq: 2\n    name: Delete lines on inactive accounts\n    type: delete\n",
                        "  - type: delete   # flag them\n    name: \"Delete lines on inactive accounts\"\n    seq: 2\n")
    path.write_text("# reformatted\n" + text + description + "\n")
    p = project(diff_json(repo), "ts04_delete_inactive")
    assert (p["status"], p["category"]) == ("modified", "no_op")
    assert {o["status"] for o in p["operations"]} == {"unchanged"}
    assert p["outputs"] == [] and p["sql_diff"] == ""


def test_renamed_operation_label_is_no_op(repo):
    edit(ts(repo, "ts03_fx_conversion"), "name: Convert to USD", "name: Convert every line to USD")
    edit(ts(repo, "ts03_fx_conversion"), "name: Write converted lines", "name: Write the lines")
    p = project(diff_json(repo), "ts03_fx_conversion")
    assert (p["status"], p["category"]) == ("modified", "no_op")
    assert p["operations"] == [{"seq": 1, "name": "Convert every line to USD", "status": "unchanged"},
                               {"seq": 2, "name": "Write the lines", "status": "unchanged"}]
    assert p["outputs"] == []
    changed = [line for line in p["sql_diff"].splitlines()[2:] if line[:1] in "+-"]
    assert changed == ["--- output_002: operation 2 'Write converted lines' writes table ts03_fx_converted",
                       "+-- output_002: operation 2 'Write the lines' writes table ts03_fx_converted"]  # a comment only


def test_inserted_operation_is_one_added_operation(repo):
    path = ts(repo, "ts04_delete_inactive")
    for k in (4, 3, 2):  # renumbered, as a user would, with the check that names operations by seq
        edit(path, f"  - seq: {k}\n", f"  - seq: {k + 1}\n")
    edit(path, "to: 3, measures: [count], explained_by: [2]", "to: 4, measures: [count], explained_by: [3]")
    edit(path, "  - seq: 3\n", "  - seq: 2\n    name: Tag\n    type: update\n    selector: transactions.amount_local > 0\n"
         "    arguments:\n      assignments: [{column: tag, expression: '\"positive\"'}]\n  - seq: 3\n")
    p = project(diff_json(repo), "ts04_delete_inactive")
    assert [(o["seq"], o["status"]) for o in p["operations"]] == [
        (1, "unchanged"), (2, "added"), (3, "unchanged"), (4, "unchanged"), (5, "unchanged")]
    # _updated_at of the rows the new update matches changes: an existing column's values
    assert p["category"] == "breaking"
    for o in p["outputs"]:
        assert {c["column"]: c["change"] for c in o["columns"]} == {"tag": "added", "_updated_at": "expression"}
        assert o["rows_changed"] is False


def test_inserted_operation_before_an_unaffected_output_is_non_breaking(repo):
    edit(ts(repo, "ts07_output_columns"), "operations:\n  - seq: 1\n",
         "operations:\n  - seq: 1\n    name: Tag\n    type: update\n    arguments:\n"
         "      assignments: [{column: tag, expression: '\"x\"'}]\n  - seq: 2\n")
    p = project(diff_json(repo), "ts07_output_columns")
    assert [o["status"] for o in p["operations"]] == ["added", "unchanged"]
    assert (p["category"], p["outputs"]) == ("non_breaking", [])


# ------------------------------------------------------------------------------------ what reaches a project
def test_dataset_type_change_reaches_every_reader(repo):
    edit(ws(repo) / "datasets" / "gl.yml", '{name: amount_local, type: "decimal(18,2)"}',
         '{name: amount_local, type: "decimal(18,4)"}')
    doc = diff_json(repo)
    gl = next(d for d in doc["datasets"] if d["name"] == "gl")
    assert gl == {"name": "gl", "status": "modified", "changes": ["column amount_local type decimal(18,2) -> decimal(18,4)"]}
    p = project(doc, "ts01_output_only")
    assert p["category"] == "breaking"
    assert p["outputs"][0]["columns"] == [{"column": "amount_local", "change": "type"}]
    assert project(doc, "ts02_asof_rates")["status"] == "unchanged"  # reads exchange_rates only


def test_pinned_version_change_is_breaking(repo):
    edit(ws(repo) / "datasets" / "gl.yml", "  - {version: 1}\n", "  - {version: 1}\n  - {version: 2}\n")
    edit(ts(repo, "ts01_output_only"), "input_dataset_id: gl\n", "input_dataset_id: gl\ninput_dataset_version: 1\n")
    commit(repo, "gl v2, ts01 pinned to 1")
    edit(ts(repo, "ts01_output_only"), "input_dataset_version: 1", "input_dataset_version: 2")
    p = project(diff_json(repo), "ts01_output_only")
    assert p["category"] == "breaking"
    assert p["outputs"][0]["rows_changed"] is True
    assert "ds_gl_v2" in p["sql_diff"]


def test_new_latest_version_reaches_unpinned_readers_only(repo):
    edit(ts(repo, "ts07_output_columns"), "input_dataset_id: gl\n", "input_dataset_id: gl\ninput_dataset_version: 1\n")
    commit(repo, "ts07 pinned")
    edit(ws(repo) / "datasets" / "gl.yml", "  - {version: 1}\n", "  - {version: 1}\n  - {version: 2}\n")
    doc = diff_json(repo)
    assert "latest active version 1 -> 2" in " ".join(next(d for d in doc["datasets"] if d["name"] == "gl")["changes"])
    assert project(doc, "ts01_output_only")["category"] == "breaking"
    assert project(doc, "ts07_output_columns")["status"] == "unchanged"


def test_resolver_change_reaches_projects(repo):
    edit(ws(repo) / "ledgerflow.yml", 'path: "data/{{dataset}}/v{{version}}/{{table_name}}.csv"',
         'path: "data2/{{dataset}}/v{{version}}/{{table_name}}.csv"')
    doc = diff_json(repo)
    assert "resolver local: rules changed in ledgerflow.yml" in next(d for d in doc["datasets"] if d["name"] == "gl")["changes"]
    p = project(doc, "ts01_output_only")
    assert p["category"] == "breaking" and p["outputs"][0]["rows_changed"] is True
    assert p["sql_diff"] == ""  # the SQL reads logical views: only the plan knows


def test_new_and_removed_project(repo):
    (ws(repo) / "projects" / "ts07_output_columns.yml").unlink()
    text = ts(repo, "ts01_output_only").read_text().replace("ts01_output_only", "ts09_new").replace(
        "0b000000-0000-4000-8000-000000000001", "0b000000-0000-4000-8000-000000000009").replace(
        "ts01_transactions", "ts09_transactions")  # a destination of its own (OUT-VR-003)
    (ws(repo) / "projects" / "ts09_new.yml").write_text(text)
    doc = diff_json(repo)
    added, removed = project(doc, "ts09_new"), project(doc, "ts07_output_columns")
    assert (added["status"], added["category"]) == ("added", "non_breaking")
    assert (removed["status"], removed["category"]) == ("removed", "breaking")
    assert added["operations"] == [{"seq": 1, "name": "Write transactions", "status": "added"}]
    assert removed["outputs"][0]["columns"][0]["change"] == "removed"
    assert added["sql_diff"].startswith("--- base/ts09_new.sql\n+++ head/ts09_new.sql")


# ------------------------------------------------------------------------------------------ sides
def test_head_that_does_not_compile_exits_1_naming_head(repo):
    edit(ts(repo, "ts03_fx_conversion"), "transactions.amount_local * fx.rate", "transactions.amount_lokal * fx.rate")
    result = diff(repo)
    assert result.exit_code == 1
    assert "head (working tree) does not compile" in result.output
    assert "projects/ts03_fx_conversion.yml" in result.output and "Traceback" not in result.output


def test_base_that_does_not_compile_exits_1_naming_base(repo):
    edit(ts(repo, "ts03_fx_conversion"), "transactions.amount_local * fx.rate", "transactions.amount_lokal * fx.rate")
    commit(repo, "broken")
    edit(ts(repo, "ts03_fx_conversion"), "transactions.amount_lokal * fx.rate", "transactions.amount_local * fx.rate")
    result = diff(repo)
    assert result.exit_code == 1
    assert "base (HEAD (" in result.output and "does not compile" in result.output
    commit(repo, "fixed")
    (ws(repo) / "ledgerflow.yml").write_text("name: [broken\n")
    result = diff(repo, "HEAD~2", "HEAD")
    assert result.exit_code == 0, result.output  # two revisions: the broken working tree is not read


def test_two_revisions_and_the_working_tree_untouched(repo):
    edit(ts(repo, "ts03_fx_conversion"), "transactions.amount_local * fx.rate", "transactions.amount_local * fx.rate * 2")
    head = commit(repo, "double")
    (ws(repo) / "scratch.txt").write_text("uncommitted\n")
    edit(ts(repo, "ts01_output_only"), "Write transactions", "Write them")
    status_before = git(repo, "status", "--porcelain")
    doc = diff_json(repo, "HEAD~1", head)
    assert doc["head"] == head
    assert project(doc, "ts03_fx_conversion")["category"] == "breaking"
    assert project(doc, "ts01_output_only")["status"] == "unchanged"  # the working tree is not a side here
    assert git(repo, "status", "--porcelain") == status_before
    assert git(repo, "rev-parse", "HEAD").strip() == head


def test_two_folders_without_git(tmp_path, monkeypatch):
    a = copy_workspace("finance", tmp_path / "a")
    b = copy_workspace("finance", tmp_path / "b")
    edit(b / "projects" / "ts03_fx_conversion.yml", "transactions.amount_local * fx.rate", "transactions.amount_local")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["diff", str(a), str(b), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert (doc["base"], doc["head"]) == (str(a), str(b))
    assert project(doc, "ts03_fx_conversion")["category"] == "breaking"


def test_bad_revision_is_usage_error(repo):
    result = diff(repo, "no-such-rev")
    assert result.exit_code == 2
    assert "neither a git revision" in result.output


def test_project_filter(repo):
    edit(ts(repo, "ts03_fx_conversion"), "transactions.amount_local * fx.rate", "transactions.amount_local")
    doc = diff_json(repo, "--project", "ts03_fx_conversion")
    assert [p["name"] for p in doc["projects"]] == ["ts03_fx_conversion"]
    assert diff(repo, "--project", "nope").exit_code == 2


# ------------------------------------------------------------------------------------------ exit codes, formats
def test_fail_on_exit_codes(repo):
    assert diff(repo, "--fail-on", "any").exit_code == 0
    edit(ts(repo, "ts03_fx_conversion"), "name: Convert to USD", "name: Convert")  # no_op
    assert diff(repo, "--fail-on", "any").exit_code == 0
    edit(ts(repo, "ts07_output_columns"), "amount_local, amount_reporting]", "amount_local, amount_reporting, currency]")
    assert diff(repo, "--fail-on", "breaking").exit_code == 0  # non_breaking
    assert diff(repo, "--fail-on", "any").exit_code == 4
    edit(ts(repo, "ts03_fx_conversion"), "transactions.amount_local * fx.rate", "transactions.amount_local")
    assert diff(repo, "--fail-on", "breaking").exit_code == 4
    assert diff(repo).exit_code == 0


def test_json_shape(repo):
    edit(ts(repo, "ts03_fx_conversion"), "transactions.amount_local * fx.rate", "transactions.amount_local")
    doc = diff_json(repo)
    assert list(doc) == ["base", "head", "projects", "datasets", "impact"]
    for p in doc["projects"]:
        assert list(p) == ["name", "status", "category", "operations", "outputs", "checks", "sql_diff"]
        for o in p["operations"]:
            assert list(o) == ["seq", "name", "status"]
        for o in p["outputs"]:
            assert list(o) == ["seq", "name", "rows_changed", "columns"]
            assert all(list(c) == ["column", "change"] for c in o["columns"])
    assert all(list(d) == ["name", "status", "changes"] for d in doc["datasets"])


def test_markdown_and_text(repo, monkeypatch):
    edit(ts(repo, "ts03_fx_conversion"), "transactions.amount_local * fx.rate", "transactions.amount_local")
    md = diff(repo, "--format", "markdown").output
    assert "| project | status | category | operations changed | outputs changed |" in md
    assert "| `ts03_fx_conversion` | modified | 🔴 breaking | 1 | 1 |" in md
    assert "<details><summary><b><code>ts03_fx_conversion</code></b>" in md and "</details>" in md
    assert "| output 2 `Write converted lines` | `amount_reporting`: expression |" in md  # names in code spans
    assert "```diff\n--- base/ts03_fx_conversion.sql" in md and "SQL diff cut" not in md
    others = len(list((ws(repo) / "projects").glob("*.yml"))) - 1
    assert f"{others} projects unchanged." in md
    monkeypatch.setattr(diff_format, "MARKDOWN_SQL_DIFF_CHARS", 200)
    cut = diff(repo, "--format", "markdown").output
    assert "_SQL diff cut at " in cut
    text = diff(repo).output
    assert "breaking" in text and "ts03_fx_conversion (modified)" in text and "\x1b[" not in text  # no tty: no colour
    assert "amount_reporting: expression" in text
    assert f"1 project changed (worst: breaking), {others} unchanged" in text


# ------------------------------------------------------------------------------------------ compile --all
def test_compile_all_out_and_check(repo, tmp_path):
    out = tmp_path / "compiled"
    w = str(ws(repo))
    result = CliRunner().invoke(main, ["--workspace", w, "compile", "--all", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert len(result.output.split()) == len(list((ws(repo) / "projects").glob("*.yml")))
    single = CliRunner().invoke(main, ["--workspace", w, "compile", "ts03_fx_conversion"]).output
    assert (out / "ts03_fx_conversion" / "ts03_fx_conversion.sql").read_text() == single
    ok = CliRunner().invoke(main, ["--workspace", w, "compile", "--all", "--check", str(out)])
    assert ok.exit_code == 0 and ok.output.startswith("ok:")
    edit(ts(repo, "ts03_fx_conversion"), "transactions.amount_local * fx.rate", "transactions.amount_local")
    (out / "ts01_output_only" / "ts01_output_only.sql").unlink()
    (out / "old").mkdir()
    (out / "old" / "old.sql").write_text("SELECT 1;\n")
    stale = CliRunner().invoke(main, ["--workspace", w, "compile", "--all", "--check", str(out)])
    assert stale.exit_code == 4
    assert f"stale: {out}/ts03_fx_conversion/ts03_fx_conversion.sql" in stale.output
    assert f"missing: {out}/ts01_output_only/ts01_output_only.sql" in stale.output
    assert f"extra: {out}/old/old.sql" in stale.output
    assert CliRunner().invoke(main, ["--workspace", w, "compile", "--all"]).exit_code == 2
    assert CliRunner().invoke(main, ["--workspace", w, "compile"]).exit_code == 2


def test_diff_as_a_process(repo, tmp_path):
    """The real entry point (git, exit code, stdout) in a subprocess; the revision's export is removed."""
    edit(ts(repo, "ts03_fx_conversion"), "transactions.amount_local * fx.rate", "transactions.amount_local")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    proc = subprocess.run([sys.executable, "-m", "ledgerflow.adapters.cli", "diff", "--format", "json",
                           "--fail-on", "breaking"], cwd=ws(repo) / "projects", capture_output=True, text=True,
                          env={**os.environ, "TMPDIR": str(scratch)})
    assert proc.returncode == 4, proc.stderr
    assert project(json.loads(proc.stdout), "ts03_fx_conversion")["category"] == "breaking"
    assert list(scratch.iterdir()) == []


def test_aggregation_and_append_changes(repo):
    edit(ts(repo, "ts05_aggregate_by_type"), "SUM(transactions.amount_local)", "SUM(transactions.amount_reporting)")
    edit(ts(repo, "ts06_append_budgets"), "group_by: [account_code, cost_center_code, currency]",
         "group_by: [account_code, currency]")
    doc = diff_json(repo)
    agg = project(doc, "ts05_aggregate_by_type")
    assert agg["category"] == "breaking"
    assert [o["status"] for o in agg["operations"]] == ["unchanged", "modified", "unchanged"]
    assert agg["outputs"][0]["columns"] == [{"column": "total_amount", "change": "expression"}]
    assert agg["outputs"][0]["rows_changed"] is False  # same groups, other sums
    app = project(doc, "ts06_append_budgets")
    assert app["category"] == "breaking"
    assert app["outputs"][0]["rows_changed"] is True  # other groups: other appended rows
    git(repo, "checkout", "--", ".")
    edit(ts(repo, "ts05_aggregate_by_type"), "group_by: [transactions.account_type]",
         "group_by: [transactions.account_type, transactions.currency]")
    agg = project(diff_json(repo), "ts05_aggregate_by_type")
    assert agg["category"] == "breaking" and agg["outputs"][0]["rows_changed"] is True


def test_dataset_column_added_is_non_breaking_for_readers(repo):
    edit(ws(repo) / "datasets" / "gl.yml", "    - {name: source_system, type: string}\n",
         "    - {name: source_system, type: string}\n    - {name: memo, type: string}\n")
    doc = diff_json(repo)
    assert next(d for d in doc["datasets"] if d["name"] == "gl")["changes"] == ["column memo added (string)"]
    p = project(doc, "ts01_output_only")
    assert (p["category"], p["outputs"][0]["columns"]) == ("non_breaking", [{"column": "memo", "change": "added"}])
    assert project(doc, "ts07_output_columns")["category"] == "non_breaking"  # its SQL reads the new column
    assert project(doc, "ts07_output_columns")["outputs"] == []


def test_readme_diff_commands(repo, tmp_path, monkeypatch):
    """Every command of docs/diff.md's first block, in a repository with a remote and two folders."""
    import re
    from conftest import REPO
    text = (REPO / "docs" / "diff.md").read_text()
    block = re.search(r"```shell\n(.*?)```", text, re.S).group(1)
    commands = [line.split("  #")[0].strip() for line in block.splitlines() if line.startswith("ledgerflow ")]
    assert len(commands) >= 5
    git(repo, "remote", "add", "origin", str(repo))
    git(repo, "fetch", "-q", "origin")
    copy_workspace("finance", ws(repo) / "old_ws")  # folders the folder example names, relative to cwd
    copy_workspace("finance", ws(repo) / "new_ws")
    monkeypatch.chdir(ws(repo))
    for command in commands:
        result = CliRunner().invoke(main, command.split()[1:])
        assert result.exit_code == 0, f"{command}: {result.output}"


def test_outside_git_and_revision_without_workspace(repo, tmp_path):
    plain = copy_workspace("finance", tmp_path / "plain")
    result = CliRunner().invoke(main, ["--workspace", str(plain), "diff"])
    assert result.exit_code == 2 and "not inside a git repository" in result.output
    (repo / "README").write_text("x\n")
    git(repo, "checkout", "-q", "--orphan", "empty")
    git(repo, "rm", "-rq", "--cached", ".")
    git(repo, "add", "README")
    git(repo, "commit", "-qm", "no workspace")
    git(repo, "checkout", "-q", "-f", "main")
    result = diff(repo, "empty")
    assert result.exit_code == 1 and "base (empty (" in result.output and "has no workspace at 'ws/'" in result.output


# ------------------------------------------------------------------------------------------ pure parts
def test_align_anchors_on_definitions_then_names_then_seqs():
    from ledgerflow.compiler.diff.align import align
    from ledgerflow.compiler.diff.prints import OperationPrint

    def ops(*specs):
        return [OperationPrint(seq, name, kind, local) for seq, name, kind, local in specs]
    base = ops((1, "a", "update", "A"), (2, "b", "update", "B"), (3, "c", "update", "C"), (4, "out", "output", "O"))
    # inserted X (renumbered after it), b edited (B2), c renamed (same definition)
    head = ops((1, "a", "update", "A"), (2, "x", "update", "X"), (3, "b", "update", "B2"),
               (4, "c2", "update", "C"), (5, "out", "output", "O"))
    pairs = [(b.seq if b else None, h.seq if h else None) for b, h in align(base, head)]
    assert pairs == [(1, 1), (None, 2), (2, 3), (3, 4), (4, 5)]
    # two edited into one, nothing in common but the seq: paired by seq, the other removed
    head = ops((1, "a", "update", "A"), (2, "c-new", "update", "C2"), (3, "out", "output", "O"))
    pairs = [(b.seq if b else None, h.seq if h else None) for b, h in align(base, head)]
    assert pairs == [(1, 1), (3, None), (2, 2), (4, 3)]
    # a lone edited one is paired although renamed and renumbered
    head = ops((1, "a", "update", "A"), (2, "b", "update", "B"), (7, "c-new", "update", "C2"), (8, "out", "output", "O"))
    pairs = [(b.seq if b else None, h.seq if h else None) for b, h in align(base, head)]
    assert pairs == [(1, 1), (2, 2), (3, 7), (4, 8)]


def test_long_chain_is_compared_without_expanding_trees(tmp_path):
    """Each step reads acc_b twice: the expanded expression of step 120 has 2^120 nodes; prints do not."""
    from bench.projectgen import write_chain_workspace
    from ledgerflow.compiler.diff import diff_workspaces
    from ledgerflow.compiler.workspace import load_workspace
    write_chain_workspace(str(tmp_path / "a"), [120])
    write_chain_workspace(str(tmp_path / "b"), [120])
    edit(tmp_path / "b" / "projects" / "chain_120.yml", "name: step 60\n", "name: step sixty\n")
    same = diff_workspaces(load_workspace(str(tmp_path / "a")), load_workspace(str(tmp_path / "b")))
    assert (same.projects[0].status.value, same.projects[0].category.value) == ("modified", "no_op")
    path = tmp_path / "b" / "projects" / "chain_120.yml"
    text = path.read_text()
    at = text.index("name: step sixty")
    end = text.index("transactions.acc_a + transactions.acc_b", at)
    path.write_text(text[:end] + "transactions.acc_a - transactions.acc_b" + text[end + 39:])
    p = diff_workspaces(load_workspace(str(tmp_path / "a")), load_workspace(str(tmp_path / "b"))).projects[0]
    assert p.category.value == "breaking"
    assert [o.seq for o in p.operations if o.status.value != "unchanged"] == [60]
    assert [(c.column, c.change.value) for c in p.outputs[0].columns] == [("acc_a", "expression")]


# ------------------------------------------------------------------------------------------ impact
def test_impact_follows_registered_datasets_downstream(repo):
    """close_conversion registers close_converted, read by close_consolidation (which registers
    close_consolidated, read by close_reporting): a changed amount reaches the consolidated total and,
    through it, the report's total; the report line (region and account type) is not reached."""
    edit(ws(repo) / "projects" / "close_1_conversion.yml", "transactions.amount_local * fx.rate",
         "transactions.amount_local * fx.rate * 2")
    doc = diff_json(repo)
    assert project(doc, "close_conversion")["outputs"][0]["columns"] == [
        {"column": "amount_reporting", "change": "expression"}]
    reached = {(i["project"], i["output"], i["column"]) for i in doc["impact"]}
    assert ("close_consolidation", 3, "total_reporting") in reached
    assert ("close_reporting", 2, "total_reporting") in reached
    assert not any(p == "close_reporting" and c == "report_line" for p, _, c in reached)
    first = next(i for i in doc["impact"] if i["project"] == "close_consolidation" and i["column"] == "total_reporting")
    assert "close_converted.amount_reporting (aggregation)" in first["because"]
    assert "close_conversion output 3" in first["because"]
    assert set(first) == {"project", "output", "column", "because"}


def test_impact_of_a_changed_row_set_reaches_every_reading_column(repo):
    """A selector added to the registering output changes its rows: every column of the consolidation
    computed from close_converted is reached (aggregates and group keys alike)."""
    edit(ws(repo) / "projects" / "close_1_conversion.yml", "    name: Register converted lines\n",
         "    name: Register converted lines\n    selector: 'transactions.currency = \"EUR\"'\n")
    doc = diff_json(repo)
    out = project(doc, "close_conversion")["outputs"][0]
    assert out["rows_changed"] is True
    reached = {(i["project"], i["column"]) for i in doc["impact"]}
    assert {("close_consolidation", "total_reporting"), ("close_consolidation", "region"),
            ("close_consolidation", "line_count")} <= reached

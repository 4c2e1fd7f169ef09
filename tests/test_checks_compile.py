"""Checks in the compiler (docs/checks.md): the YAML read into the model, a located CHK code per rule
collected in one pass with the project's other errors, the typed CheckPlan and the SQL the runner
evaluates, and the checks' SQL in `compile` (golden: tests/golden/checks/)."""
from __future__ import annotations

import shutil
from decimal import Decimal

import pytest
import sqlglot

from ledgerflow.compiler.checks.plan import Action, CheckKind
from ledgerflow.compiler.checks.sql import (measure_sql, reconcile_query, row_metrics_sql, set_check_query,
                                            violation_sql)
from ledgerflow.compiler.compile import compile_project, plan_project
from ledgerflow.compiler.errors import CompileError
from ledgerflow.compiler.workspace import load_workspace

from conftest import REPO

FIXTURE = REPO / "tests" / "fixtures" / "checks"
GOLDEN = REPO / "tests" / "golden" / "checks" / "checked_close.sql"
PROJECT = FIXTURE / "projects" / "checked_close.yml"


def _plan(tmp_path, checks: str, extra_ops: str = ""):
    """The plan of the fixture project with its checks replaced by ``checks`` (YAML lines)."""
    ws_dir = tmp_path / "ws"
    shutil.copytree(FIXTURE, ws_dir)
    text = PROJECT.read_text().split("checks:\n")[0]
    if extra_ops:
        text = text.replace("  - seq: 2\n", extra_ops + "  - seq: 2\n", 1)
    (ws_dir / "projects" / "checked_close.yml").write_text(text + "checks:\n" + checks)
    ws = load_workspace(str(ws_dir))
    return plan_project(ws, ws.find_project("checked_close"))


def _diagnostics(tmp_path, checks: str, extra_ops: str = ""):
    """Every diagnostic: those of reading the YAML (a CompileError of the load) or of binding."""
    try:
        return _plan(tmp_path, checks, extra_ops).diagnostics
    except CompileError as err:
        return err.diagnostics


def _fixture_plan():
    ws = load_workspace(str(FIXTURE))
    return plan_project(ws, ws.find_project("checked_close"))


# --------------------------------------------------------------------------------------- model
def test_every_kind_is_read_into_the_model():
    ws = load_workspace(str(FIXTURE))
    checks = {c.name: c for c in ws.find_project("checked_close").checks}
    assert [c.kind for c in checks.values()] == ["balanced", "unique", "expect", "row_count", "not_null",
                                                 "accepted_values", "not_null", "reconcile"]
    q = checks["known_accounts"]
    assert (q.on, q.on_violation, q.quarantine.path, q.quarantine.format) == ("2", "quarantine",
                                                                              "out/quarantine/known_accounts", "parquet")
    assert checks["currencies"].severity == "warn" and checks["control_totals"].on is None
    assert checks["journals_balance"].location.line == 20  # where the entry is written


# --------------------------------------------------------------------------------------- plan
def test_typed_check_plans():
    plan = _fixture_plan()
    assert plan.diagnostics == []
    by = {c.name: c for c in plan.checks}
    bal = by["journals_balance"]
    assert (bal.kind, bal.on, bal.action, bal.group_by, bal.amount, bal.tolerance) == (
        CheckKind.BALANCED, 2, Action.FAIL, ("journal_id",), "amount_local", Decimal("0.00"))
    assert by["one_row_per_line"].on == 2  # named by the output operation's name
    q = by["known_accounts"]
    assert q.action == Action.QUARANTINE and q.quarantine.path == "out/quarantine/known_accounts"
    assert q.columns == ("account_code",) and q.key == ("journal_id", "line_number")  # the unique check's columns
    assert by["currencies"].action == Action.WARN and by["currencies"].severity == "warn"
    assert by["input_lines_dated"].on is None and by["input_lines_dated"].key == ("_row_id",)
    rec = by["control_totals"]
    assert (rec.on, rec.from_output, rec.group_by, rec.explained_by, [m.name for m in rec.measures]) == (
        2, None, ("currency",), (1,), ["count", "SUM(amount_local)"])
    assert by["some_rows"].min_rows == 1 and by["some_rows"].max_rows == 5000000
    assert by["no_null_amounts"].amount_columns == ("amount_local", "amount_reporting")


def test_row_check_sql_counts_null_as_a_violation(spark):
    by = {c.name: c for c in _fixture_plan().checks}
    rows = spark.createDataFrame([("A", None, "EUR"), ("B", 1, None), ("C", 2, "XXX"), ("D", 3, "USD")],
                                 "account_code string, amount_local int, currency string")
    expect = rows.where(violation_sql(by["known_accounts"])).collect()
    accepted = rows.where(violation_sql(by["currencies"])).collect()
    assert [r.account_code for r in expect] == []
    assert sorted(r.account_code for r in accepted) == ["B", "C"]  # NULL is not an accepted value
    nulls = spark.createDataFrame([(None,), ("x",)], "account_code string")
    assert nulls.where(violation_sql(by["known_accounts"])).count() == 1


def test_runner_sql_is_spark_sql():
    by = {c.name: c for c in _fixture_plan().checks}
    assert violation_sql(by["no_null_amounts"]) == "`amount_local` IS NULL OR `amount_reporting` IS NULL"
    assert row_metrics_sql(by["no_null_amounts"])[0] == (
        "_lf_violations", "COUNT_IF(`amount_local` IS NULL OR `amount_reporting` IS NULL)")
    for name in ("journals_balance", "one_row_per_line", "some_rows"):
        text = set_check_query(by[name], "staged_2")
        assert "`staged_2`" in text and sqlglot.parse_one(text, read="spark") is not None
    assert measure_sql(by["control_totals"]) == [("count", "COUNT(*)"), ("SUM(amount_local)", "SUM(`amount_local`)")]
    assert "GROUP BY" in reconcile_query(by["control_totals"], "v")
    with pytest.raises(ValueError):
        violation_sql(by["journals_balance"])


def test_set_check_queries_find_what_violates(spark):
    by = {c.name: c for c in _fixture_plan().checks}
    spark.createDataFrame([("J1", 1, "10.00", "1.00"), ("J1", 1, "-10.00", "1.00"), ("J2", 1, "5.00", None)],
                          "journal_id string, line_number int, amount_local string, amount_reporting string") \
        .selectExpr("journal_id", "line_number", "CAST(amount_local AS DECIMAL(18,2)) AS amount_local",
                    "CAST(amount_reporting AS DECIMAL(18,2)) AS amount_reporting").createOrReplaceTempView("lf_chk")
    unbalanced = spark.sql(set_check_query(by["journals_balance"], "lf_chk")).collect()
    assert [(r.journal_id, str(r.amount_local), r._lf_rows) for r in unbalanced] == [("J2", "5.00", 1)]
    dupes = spark.sql(set_check_query(by["one_row_per_line"], "lf_chk")).collect()
    assert [(r.journal_id, r.line_number, r._lf_rows, str(r.amount_reporting)) for r in dupes] == [("J1", 1, 2, "2.00")]


# --------------------------------------------------------------------------------------- codes
CASES = {
    "CHK-001": ("  - {name: c, on: 2, not_null: [posting_date]}\n", "posting_date"),  # output 2 does not write it
    "CHK-002": ("  - {name: c, on: 2, expect: 'transactions.amount_local + 1'}\n", None),
    "CHK-003": ("  - {name: c, on: 1, not_null: [currency]}\n", "1"),  # a delete, not an output
    "CHK-004": ("  - {name: c, on: 2, unique: [journal_id], on_violation: quarantine, "
                "quarantine: {path: out/q/c}}\n", "quarantine"),
    "CHK-005": ("  - {name: c, on: 2, balanced: {group_by: [journal_id], amount: amount_local, tolerance: 0.01}}\n",
                "0.01"),
    "CHK-006": ("  - {name: c, on: 2, not_null: [currency]}\n  - {name: c, on: 2, unique: [journal_id]}\n", "c"),
    "CHK-007": ("  - {name: c, on: 2, expect: 'currency <> \"\"', on_violation: quarantine, "
                "quarantine: {path: data/gl/quarantine}}\n", "data/gl/quarantine"),  # inside gl's location
    "CHK-008": ("  - {name: c, on: 2, row_count: {min: 10, max: 1}}\n", "min 10, max 1"),
    "CHK-009": ("  - {name: c, on: 2, accepted_values: {column: currency, values: [EUR, 4100]}}\n", "4100"),
    "CHK-010": ("  - {name: c, reconcile: {from: input, to: 2, measures: [\"SUM(currency)\"]}}\n", "SUM(currency)"),
    "CHK-011": ("  - {name: c, reconcile: {from: input, to: 2, explained_by: [2]}}\n", "2"),
    "CHK-012": ("  - {name: c, on: 2, unique: [journal_id], not_null: [currency]}\n", "not_null"),
}


@pytest.mark.parametrize("code", sorted(CASES))
def test_each_code_is_located(tmp_path, code):
    checks, text = CASES[code]
    found = _diagnostics(tmp_path, checks)
    assert [d.code for d in found] == [code], [d.render() for d in found]
    d = found[0]
    assert d.location.file == "projects/checked_close.yml" and d.location.line >= 20 and d.location.column > 0
    assert d.hint
    if text is not None:
        assert d.text == text


def test_more_located_rules(tmp_path):
    checks = ("  - {name: a, on: 2, expect: 'SUM(transactions.amount_local) > 0'}\n"  # aggregates: CHK-002
              "  - {name: b, not_null: [currency]}\n"  # no on: CHK-003
              "  - {name: c, on: lines_nowhere, not_null: [currency]}\n"  # no such output: CHK-003
              "  - {name: d, on: input, expect: 'currency <> \"\"', on_violation: quarantine,"
              " quarantine: {path: out/q/d}}\n"  # quarantine on input: CHK-004
              "  - {name: e, on: 2, expect: 'currency <> \"\"', on_violation: quarantine,"
              " quarantine: {path: ../elsewhere}}\n"  # leaves the workspace: CHK-007
              "  - {name: f, on: 2, expect: 'currency <> \"\"', on_violation: quarantine}\n"  # no destination: CHK-007
              "  - {name: g, on: 2, row_count: {}}\n"  # no bounds: CHK-008
              "  - {name: h, on: 2, accepted_values: {column: amount_local, values: [\"1\"]}}\n"  # CHK-009
              "  - {name: i, reconcile: {from: input, to: 2, measures: [avg]}}\n"  # CHK-010
              "  - {name: j, reconcile: {from: 2, to: 2}}\n"  # from not before to: CHK-003
              "  - {name: k, on: 2, balanced: {group_by: [journal_id], amount: currency}}\n"  # CHK-010
              "  - {name: 'bad name', on: 2, unique: [journal_id]}\n"  # CHK-006
              "  - {name: m, on: 2, unique: [journal_id], key: [nope]}\n"  # CHK-001
              "  - {name: n, reconcile: {from: input, to: 2, by: [posting_date]}}\n")  # CHK-001 (not at `to`)
    got = [d.code for d in _plan(tmp_path, checks).diagnostics]
    assert got == ["CHK-006", "CHK-002", "CHK-003", "CHK-003", "CHK-004", "CHK-007", "CHK-007", "CHK-008",
                   "CHK-009", "CHK-010", "CHK-003", "CHK-010", "CHK-001", "CHK-001"], got


QUARANTINE = ("  - {{name: {name}, on: 2, expect: 'currency <> \"\"', on_violation: quarantine, "
              "quarantine: {{path: {path}}}}}\n")


def test_two_checks_of_a_project_may_not_quarantine_into_one_folder(tmp_path):
    """Each run's partition of one would replace the other's: the rows one check quarantined would be lost."""
    checks = (QUARANTINE.format(name="a", path="out/q/shared") + QUARANTINE.format(name="b", path="out/q/shared/b")
              + QUARANTINE.format(name="c", path="out/q/c"))
    found = _diagnostics(tmp_path, checks)
    assert [(d.code, d.text) for d in found] == [("CHK-007", "out/q/shared"), ("CHK-007", "out/q/shared/b")]
    assert "overlaps the quarantine destination of check 'b' ('out/q/shared/b')" in found[0].message
    assert "overlaps the quarantine destination of check 'a' ('out/q/shared')" in found[1].message


def test_a_quarantine_may_not_share_another_projects_quarantine_folder(tmp_path):
    ws_dir = tmp_path / "ws"
    _plan(tmp_path, QUARANTINE.format(name="a", path="\"out/q/{{YYYY}}\""))  # writes the workspace
    other = PROJECT.read_text().split("checks:\n")[0].replace("name: checked_close", "name: other_close").replace(
        "0c000000-0000-4000-8000-000000000001", "0c000000-0000-4000-8000-000000000002").replace(
        "out/lines/", "out/other_lines/")
    (ws_dir / "projects" / "other_close.yml").write_text(other + "checks:\n" + QUARANTINE.format(name="z", path="out/q"))
    ws = load_workspace(str(ws_dir))
    found = plan_project(ws, ws.find_project("checked_close")).diagnostics
    assert [(d.code, d.text) for d in found] == [("CHK-007", "out/q/{{YYYY}}")]
    assert "check 'z' of project 'other_close' ('out/q')" in found[0].message
    assert [d.code for d in plan_project(ws, ws.find_project("other_close")).diagnostics] == ["CHK-007"]


def test_quarantine_paths_that_differ_for_every_check_or_period_are_not_taken_for_one_folder(tmp_path):
    """A run fills {{dataset}} and {{table_name}} with the check's name, and two paths that differ in a folder
    after a period token are two folders for every period."""
    checks = (QUARANTINE.format(name="a", path='"out/quarantine/{{dataset}}"')
              + QUARANTINE.format(name="b", path='"out/quarantine/{{table_name}}"')
              + QUARANTINE.format(name="c", path='"out/q/{{YYYY}}/c"') + QUARANTINE.format(name="d", path='"out/q/{{YYYY}}/d"'))
    assert _diagnostics(tmp_path / "apart", checks) == []
    clash = QUARANTINE.format(name="e", path='"out/q/{{YYYY}}"') + QUARANTINE.format(name="f", path="out/q/2026/f")
    assert [d.text for d in _diagnostics(tmp_path / "clash", clash)] == ["out/q/{{YYYY}}", "out/q/2026/f"]


def test_check_errors_come_with_the_projects_other_errors(tmp_path):
    """One pass: an operation's error and a check's error are reported together."""
    bad_op = ("  - seq: 3\n    name: Bad\n    type: update\n    arguments:\n      assignments:\n"
              "        - {column: currency, expression: 'nope + 1'}\n")
    diags = _plan(tmp_path, "  - {name: c, on: 2, not_null: [nope]}\n", bad_op).diagnostics
    codes = [d.code for d in diags]
    assert "BR-015" in codes and "CHK-001" in codes


def test_a_check_without_kind_is_reported_with_the_yaml(tmp_path):
    diags = _diagnostics(tmp_path, "  - {name: l, on: 2}\n  - {name: m, on: 2, unique: [journal_id], balanced: {}}\n")
    assert [(d.code, d.location.line) for d in diags] == [("CHK-012", 20), ("CHK-012", 21)]


def test_unknown_key_in_a_check_names_the_closest(tmp_path):
    diags = _diagnostics(tmp_path, "  - {name: c, on: 2, balance: {group_by: [journal_id], amount: amount_local}}\n")
    assert [d.code for d in diags] == ["YAML-003"] and "balanced" in diags[0].hint


# --------------------------------------------------------------------------------------- compile
def test_compile_golden_with_checks(request):
    ws = load_workspace(str(FIXTURE))
    script = compile_project(ws, ws.find_project("checked_close")).script() + "\n"
    if request.config.getoption("--update-golden"):
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(script)
    assert script == GOLDEN.read_text()
    section = script[script.index("-- Checks ("):]
    body = "\n".join(line for line in section.splitlines() if not line.startswith("--"))
    statements = [t.strip() for t in body.split(";\n") if t.strip()]
    assert len(statements) == 9  # one per check, two for the reconcile
    for text in statements:
        assert sqlglot.parse_one(text, read="spark") is not None


def test_compile_without_checks_is_unchanged():
    ws = load_workspace(str(REPO / "projects" / "finance"))
    script = compile_project(ws, ws.find_project("ts03_fx_conversion")).script() + "\n"
    assert "-- Checks" not in script
    assert script == (REPO / "tests" / "golden" / "finance" / "ts03_fx_conversion.sql").read_text()


def test_a_set_check_is_one_aggregation_and_many_violations_are_totalled(spark, monkeypatch):
    """The aggregation and its first violating groups by key in one pass (no range sort, no checkpoint); past
    COLLECTED violating groups, a second aggregation totals them and the sample is still the first by key."""
    from ledgerflow.adapters.run import check_eval
    check = {c.name: c for c in _fixture_plan().checks}["one_row_per_line"]
    rows = [(f"J{k}", 1, "1.00", "2.00") for k in (3, 1, 2, 4) for _ in range(2)] + [("J9", 1, "5.00", "5.00")]
    frame = spark.createDataFrame(rows, ["journal_id", "line_number", "a", "r"]).selectExpr(
        "journal_id", "line_number", "CAST(a AS DECIMAL(18,2)) AS amount_local",
        "CAST(r AS DECIMAL(18,2)) AS amount_reporting")
    tracker = spark.sparkContext.statusTracker()
    group = f"lf_set_check_{id(frame)}"
    spark.sparkContext.setJobGroup(group, "set check")
    try:
        result = check_eval.set_result(spark, check, frame)
    finally:  # the session is shared: leave the thread's properties as they were (unset)
        for key in ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel"):
            spark.sparkContext.setLocalProperty(key, None)
    # adaptive execution runs the aggregation's shuffle as a job of its own: two jobs, the aggregation's two
    # stages (the code before: a range-partitioned sort of every violating group, a checkpoint, a collect: 4+)
    assert len(tracker.getJobIdsForGroup(group)) <= 2
    assert result["violations"] == 8 and result["amount_impact"]["amount_local"] == "8.00"
    monkeypatch.setattr(check_eval, "COLLECTED", 2)
    many = check_eval.set_result(spark, check, frame)
    assert many["violations"] == 8 and many["amount_impact"] == result["amount_impact"]
    assert [s["journal_id"] for s in many["sample"]] == ["J1", "J2", "J3"]  # the first by key, beyond COLLECTED too


def test_a_reconcile_from_the_input_reads_the_input_rows_its_output_counts(tmp_path):
    """The run's bridge counts an output that leaves deleted rows out from the input rows not deleted, and one
    that writes them (include_deleted) from every input row: compile's SQL of the input end names the view of
    those rows, ``input_live`` or ``input``, and says what it is."""
    root = tmp_path / "finance"
    shutil.copytree(REPO / "projects" / "finance", root)
    spec = root / "projects" / "ts04_delete_inactive.yml"
    spec.write_text(spec.read_text() + '  - name: all_lines_written\n'
                    '    reconcile: {from: input, to: 4, measures: [count], tolerance: "0"}\n')
    ws = load_workspace(str(root))
    compiled = compile_project(ws, ws.find_project("ts04_delete_inactive"))
    live = {c.name: c.live_input for c in compiled.plan.checks}
    assert live == {"lines_accounted_for": True, "all_lines_written": False}
    section = compiled.script()[compiled.script().index("-- Checks ("):]
    first, second = section.split("-- check all_lines_written")
    assert "FROM `input_live`;" in first and "FROM `input`;" not in first
    assert "FROM `input`;" in second and "input_live" not in second
    assert "input_live those of them not deleted" in section.splitlines()[1]

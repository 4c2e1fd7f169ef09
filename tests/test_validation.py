"""Every compile-time diagnostic code: a small broken workspace per code, asserting the code and where it points.

Workspaces are the ``finance`` fixture (a temp copy of projects/finance) with a YAML file added or rewritten,
or tiny workspaces written into ``tmp_path``. Expected positions are computed from the YAML text the test
wrote (``at``), so every assertion names an exact file, line and column.
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml

from cli_support import edit
from ledgerflow.compiler.compile import compile_project, plan_diagnostics
from ledgerflow.compiler.errors import CompileError, Diagnostic
from ledgerflow.compiler.workspace import load_workspace

PROJECT_ID = "0c000000-0000-4000-8000-0000000000c1"
GL_ID = "0a000000-0000-4000-8000-000000000001"
RATES_ID = "0a000000-0000-4000-8000-000000000004"

HEAD = f"""\
id: {PROJECT_ID}
name: broken
input_dataset_id: gl
"""

OUTPUT = """\
  - seq: 99
    name: Write
    type: output
    arguments:
      destination: {table: broken_out}
"""


# ----------------------------------------------------------------------------------------------- helpers
def write(root: Path, rel: str, text: str) -> str:
    """Write ``text`` (dedented) to ``root/rel`` and return exactly what was written."""
    text = textwrap.dedent(text).lstrip("\n")
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return text


def at(text: str, needle: str, offset: int = 0, nth: int = 1) -> tuple[int, int]:
    """1-based (line, column) of character ``offset`` of the ``nth`` occurrence of ``needle`` in ``text``."""
    idx = -1
    for _ in range(nth):
        idx = text.index(needle, idx + 1)
    idx += offset
    line = text.count("\n", 0, idx) + 1
    column = idx - (text.rfind("\n", 0, idx) + 1) + 1
    return line, column


def project(ops: str, head: str = HEAD, output: bool = True) -> str:
    """A project YAML: ``head`` + ``operations:`` + the (dedented, re-indented) operations."""
    body = textwrap.indent(textwrap.dedent(ops).strip("\n"), "  ") + "\n"
    return head + "operations:\n" + body + (OUTPUT if output else "")


def load_errors(root: Path) -> list[Diagnostic]:
    """The diagnostics of loading the workspace at ``root`` (which must fail)."""
    with pytest.raises(CompileError) as info:
        load_workspace(str(root))
    assert info.value.diagnostics, "CompileError without diagnostics"
    return info.value.diagnostics


def plan_errors(root: Path, name: str = "broken") -> list[Diagnostic]:
    """The planner's diagnostics for project ``name`` of the workspace at ``root`` (which must load)."""
    ws = load_workspace(str(root))
    proj = ws.find_project(name)
    assert proj is not None, f"project {name} not loaded"
    return plan_diagnostics(ws, proj)


def only(diags: list[Diagnostic], code: str) -> Diagnostic:
    """The single diagnostic with ``code``."""
    found = [d for d in diags if d.code == code]
    assert len(found) == 1, f"expected one {code}, got:\n" + "\n".join(d.render() for d in diags)
    return found[0]


def check(d: Diagnostic, file: str, pos: tuple[int, int] | int, text: str | None = None) -> None:
    """``d`` is in ``file`` at ``pos`` ((line, column) or just a line), and shows ``text`` if given."""
    assert d.location.file == file, d.render()
    if isinstance(pos, tuple):
        assert (d.location.line, d.location.column) == pos, d.render()
    else:
        assert d.location.line == pos, d.render()
    if text is not None:
        assert d.text == text, d.render()


def codes(diags: list[Diagnostic]) -> list[str]:
    return [d.code for d in diags]


def add_project(root: Path, ops: str, **kw) -> str:
    return write(root, "projects/broken.yml", project(ops, **kw))


# --------------------------------------------------------------------------------- YAML structure errors
def test_yaml_001_syntax_error(finance):
    text = write(finance, "datasets/bad.yml", """\
        id: 0a000000-0000-4000-8000-0000000000aa
        name: bad: name
        """)
    d = only(load_errors(finance), "YAML-001")
    check(d, os_path("datasets/bad.yml"), at(text, ": name"))
    assert "mapping values are not allowed" in d.message


def test_yaml_001_unterminated_quote_in_project(finance):
    text = add_project(finance, """\
        - seq: 1
          name: Broken quote
          type: delete
          selector: 'amount_local > 0
        """)
    d = only(load_errors(finance), "YAML-001")
    # the unterminated single-quoted scalar swallows the rest of the file: PyYAML reports the end of the stream
    check(d, os_path("projects/broken.yml"), (text.count("\n") + 1, 1))
    assert "unexpected end of stream" in d.message


def test_yaml_002_duplicate_key(finance):
    text = add_project(finance, """\
        - seq: 1
          name: Delete
          type: delete
          name: Delete again
        """)
    d = only(load_errors(finance), "YAML-002")
    check(d, os_path("projects/broken.yml"), at(text, "name: Delete again"), "name")


def test_yaml_003_unknown_key_names_closest(finance):
    text = add_project(finance, """\
        - seq: 1
          name: Fix
          type: update
          arguments:
            assignmnets:
              - {column: description, expression: '"x"'}
        """)
    diags = load_errors(finance)
    d = only(diags, "YAML-003")
    check(d, os_path("projects/broken.yml"), at(text, "assignmnets"), "assignmnets")
    assert "'assignments'" in d.hint
    # the real key is then missing
    missing = only(diags, "YAML-004")
    assert "'assignments'" in missing.message


def test_yaml_003_unknown_top_level_key_in_dataset(finance):
    path = finance / "datasets/gl.yml"
    original = path.read_text()
    path.write_text(original.replace("status: active", "stauts: active"))
    d = only(load_errors(finance), "YAML-003")
    check(d, os_path("datasets/gl.yml"), at(path.read_text(), "stauts"), "stauts")
    assert "'status'" in d.hint


def test_yaml_003_unknown_key_in_ledgerflow_yml(finance):
    text = edit(finance, "ledgerflow.yml", "default_resolver:", "default_resolvr:")
    d = only(load_errors(finance), "YAML-003")
    check(d, "ledgerflow.yml", at(text, "default_resolvr"), "default_resolvr")
    assert "'default_resolver'" in d.hint


def test_yaml_004_missing_required_key(finance):
    text = add_project(finance, """\
        - seq: 1
          type: delete
          selector: amount_local = 0
        """)
    d = only(load_errors(finance), "YAML-004")
    check(d, os_path("projects/broken.yml"), at(text, "seq: 1"))
    assert "'name'" in d.message


def test_yaml_004_missing_section_is_reported_not_crashing(finance):
    # main_table absent: one YAML-004 for the section (nothing about the keys inside it)
    write(finance, "datasets/bare.yml", """\
        id: 0a000000-0000-4000-8000-0000000000bb
        name: bare
        versions:
          - {version: 1}
        """)
    # an append without source and an output without destination
    text = add_project(finance, """\
        - seq: 1
          name: Append nothing
          type: append
          arguments: {source_selector: 'amount = 1'}
        - seq: 2
          name: Write nowhere
          type: output
          arguments: {}
        """, output=False)
    diags = load_errors(finance)
    assert codes(diags) == ["YAML-004", "YAML-004", "YAML-004"], [d.render() for d in diags]
    ds, src, dest = diags
    check(ds, os_path("datasets/bare.yml"), (1, 1))
    assert "'main_table'" in ds.message
    check(src, os_path("projects/broken.yml"), at(text, "{source_selector"))
    assert "'source'" in src.message
    check(dest, os_path("projects/broken.yml"), at(text, "{}"))
    assert "'destination'" in dest.message


def test_yaml_005_wrong_value_kind(finance):
    text = add_project(finance, """\
        - seq: first
          name: Delete
          type: delete
        """)
    diags = load_errors(finance)
    d = [x for x in diags if x.code == "YAML-005"]
    assert len(d) == 1, [x.render() for x in diags]
    check(d[0], os_path("projects/broken.yml"), at(text, "first"), "first")
    assert "'seq'" in d[0].message and "integer" in d[0].message


def test_yaml_005_not_one_of_choices(finance):
    text = add_project(finance, """\
        - seq: 1
          name: Remove
          type: remove
        """)
    d = only(load_errors(finance), "YAML-005")
    check(d, os_path("projects/broken.yml"), at(text, "remove"), "remove")
    assert "'type'" in d.message


def test_yaml_005_file_is_not_a_mapping(finance):
    write(finance, "projects/list.yml", """\
        - seq: 1
        """)
    d = only(load_errors(finance), "YAML-005")
    check(d, os_path("projects/list.yml"), (1, 1))
    assert "must be a mapping" in d.message


def test_yaml_005_dataset_id_not_a_uuid(finance):
    text = edit(finance, "datasets/budgets.yml", "0a000000-0000-4000-8000-000000000005", "ds-budgets")
    d = only(load_errors(finance), "YAML-005")
    check(d, os_path("datasets/budgets.yml"), at(text, "ds-budgets"), "ds-budgets")
    assert "not a UUID" in d.message


def test_yaml_006_arguments_and_parameters(finance):
    text = add_project(finance, """\
        - seq: 1
          name: Fix
          type: update
          arguments:
            assignments: [{column: description, expression: '"a"'}]
          parameters:
            assignments: [{column: description, expression: '"b"'}]
        """)
    d = only(load_errors(finance), "YAML-006")
    check(d, os_path("projects/broken.yml"), at(text, "parameters:"), "parameters")


def test_yaml_006_resolver_and_datasource_id(finance):
    text = add_project(finance, """\
        - seq: 1
          name: Write
          type: output
          arguments:
            destination: {table: t, resolver: local, datasource_id: local}
        """, output=False)
    d = only(load_errors(finance), "YAML-006")
    check(d, os_path("projects/broken.yml"), at(text, "local}"), "datasource_id")


def test_parameters_is_a_synonym_of_arguments(finance):
    text = add_project(finance, """\
        - seq: 1
          name: Tag
          type: update
          parameters:
            assignments: [{column: description, expression: '"tagged"'}]
        """)
    ws = load_workspace(str(finance))
    proj = ws.find_project("broken")
    op = proj.operations[0]
    assert [(a.column, a.expression) for a in op.assignments] == [("description", '"tagged"')]
    assert plan_diagnostics(ws, proj) == []
    script = compile_project(ws, proj).script()
    assert "'tagged'" in script
    # and the same project written with `arguments` compiles to the same SQL
    write(finance, "projects/broken.yml", text.replace("parameters:", "arguments:"))
    ws2 = load_workspace(str(finance))
    assert compile_project(ws2, ws2.find_project("broken")).script() == script


# ------------------------------------------------------------------------------- workspace / datasets
def test_ws_002_duplicate_dataset_name(finance):
    text = write(finance, "datasets/gl_copy.yml", (finance / "datasets/gl.yml").read_text()
                 .replace("0a000000-0000-4000-8000-000000000001", "0a000000-0000-4000-8000-0000000000cc"))
    d = only(load_errors(finance), "WS-002")
    check(d, os_path("datasets/gl_copy.yml"), at(text, "gl\n"), "gl")
    assert "datasets/gl.yml" in d.message.replace("\\", "/")


def test_ws_002_duplicate_project_id(finance):
    text = write(finance, "projects/zz_copy.yml", (finance / "projects/ts01_output_only.yml").read_text()
                 .replace("name: ts01_output_only", "name: zz_copy"))
    ts01 = yaml.safe_load((finance / "projects/ts01_output_only.yml").read_text())
    d = only(load_errors(finance), "WS-002")
    check(d, os_path("projects/zz_copy.yml"), at(text, ts01["id"]), ts01["id"])


def test_ws_004_default_resolver_undefined(finance):
    text = edit(finance, "ledgerflow.yml", "default_resolver: local", "default_resolver: locale")
    d = only(load_errors(finance), "WS-004")
    check(d, "ledgerflow.yml", at(text, "locale"), "locale")
    assert "'local'" in d.hint


def test_ws_004_dataset_resolver_undefined(finance):
    text = edit(finance, "datasets/budgets.yml", "status: active\n", "status: active\nresolver_id: warehouse\n")
    d = only(load_errors(finance), "WS-004")
    check(d, os_path("datasets/budgets.yml"), at(text, "warehouse"), "warehouse")


def test_ds_001_unknown_column_type(finance):
    text = edit(finance, "datasets/budgets.yml", '{name: amount, type: "decimal(18,2)"}', '{name: amount, type: money}')
    d = only(load_errors(finance), "DS-001")
    check(d, os_path("datasets/budgets.yml"), at(text, "money"), "money")


def test_ds_001_decimal_precision_out_of_range(finance):
    text = edit(finance, "datasets/budgets.yml", '"decimal(18,2)"', '"decimal(40,2)"')
    d = only(load_errors(finance), "DS-001")
    check(d, os_path("datasets/budgets.yml"), at(text, '"decimal(40,2)"'), "decimal(40,2)")


def test_ds_002_invalid_column_name(finance):
    text = edit(finance, "datasets/budgets.yml", "{name: budget_type,", "{name: _budget_type,")
    d = only(load_errors(finance), "DS-002")
    check(d, os_path("datasets/budgets.yml"), at(text, "_budget_type"), "_budget_type")


def test_ds_003_duplicate_column(finance):
    text = edit(finance, "datasets/budgets.yml", "{name: budget_type,", "{name: currency,")
    d = only(load_errors(finance), "DS-003")
    check(d, os_path("datasets/budgets.yml"), at(text, "currency", nth=2), "currency")


def test_ds_004_duplicate_version(finance):
    text = edit(finance, "datasets/accounts.yml", "{version: 2}", "{version: 1}")
    d = only(load_errors(finance), "DS-004")
    check(d, os_path("datasets/accounts.yml"), at(text, "1}", nth=2), "1")


def test_ds_004_no_versions(finance):
    text = edit(finance, "datasets/budgets.yml", "versions:\n  - {version: 1}\n", "versions: []\n")
    d = only(load_errors(finance), "DS-004")
    check(d, os_path("datasets/budgets.yml"), at(text, "[]"))


def test_br_001_duplicate_seq(finance):
    text = add_project(finance, """\
        - seq: 1
          name: One
          type: delete
          selector: amount_local = 0
        - seq: 1
          name: Also one
          type: delete
          selector: amount_local = 1
        """)
    d = only(load_errors(finance), "BR-001")
    check(d, os_path("projects/broken.yml"), at(text, "seq: 1", nth=2), "1")


def test_br_001_seq_not_positive(finance):
    text = add_project(finance, """\
        - seq: 0
          name: Zero
          type: delete
        """)
    d = only(load_errors(finance), "BR-001")
    check(d, os_path("projects/broken.yml"), at(text, "seq: 0"), "0")


def test_join_on_key_is_a_string_key(finance):
    """YAML 1.1 reads a plain `on:` key as the boolean True; ledgerflow keeps it as the key 'on'."""
    text = add_project(finance, """\
        - seq: 1
          name: Convert
          type: update
          arguments:
            joins:
              - alias: fx
                dataset_id: exchange_rates
                on: transactions.currency = fx.from_currency
            assignments: [{column: amount_reporting, expression: transactions.amount_local * fx.rate}]
        """)
    assert True in yaml.safe_load(text)["operations"][0]["arguments"]["joins"][0]  # the trap being avoided
    ws = load_workspace(str(finance))
    join = ws.find_project("broken").operations[0].joins[0]
    assert join.on == "transactions.currency = fx.from_currency"
    assert (join.on.line, join.on.column) == at(text, "transactions.currency")
    assert plan_diagnostics(ws, ws.find_project("broken")) == []


def test_dataset_referenced_by_uuid_or_by_name(finance):
    ops = """\
        - seq: 1
          name: Convert
          type: update
          arguments:
            joins:
              - alias: fx
                dataset_id: {rates}
                on: 'transactions.currency = fx.from_currency AND fx.to_currency = "USD"'
            assignments: [{{column: amount_reporting, expression: transactions.amount_local * fx.rate}}]
        """
    head_uuid = HEAD.replace("input_dataset_id: gl", f"input_dataset_id: {GL_ID}")
    add_project(finance, ops.format(rates=RATES_ID), head=head_uuid)
    ws = load_workspace(str(finance))
    by_uuid = compile_project(ws, ws.find_project("broken"))
    add_project(finance, ops.format(rates="exchange_rates"))
    ws = load_workspace(str(finance))
    by_name = compile_project(ws, ws.find_project("broken"))
    assert [v.dataset.id for v in by_uuid.inputs] == [GL_ID, RATES_ID]
    assert [v.dataset.id for v in by_name.inputs] == [GL_ID, RATES_ID]
    assert by_uuid.script() == by_name.script()


# ------------------------------------------------------------------------------------- project / input
def test_prj_001_input_dataset_not_found(finance):
    text = add_project(finance, "- {seq: 1, name: Del, type: delete}",
                       head=HEAD.replace("input_dataset_id: gl", "input_dataset_id: gll"))
    d = only(plan_errors(finance), "PRJ-001")
    check(d, os_path("projects/broken.yml"), at(text, "gll"), "gll")
    assert "'gl'" in d.hint


def test_prj_002_input_dataset_disabled(finance):
    edit(finance, "datasets/gl.yml", "status: active", "status: disabled")
    text = add_project(finance, "- {seq: 1, name: Del, type: delete}")
    d = only(plan_errors(finance), "PRJ-002")
    check(d, os_path("projects/broken.yml"), at(text, "gl\n"), "gl")


def test_prj_003_input_version_not_found(finance):
    text = add_project(finance, "- {seq: 1, name: Del, type: delete}",
                       head=HEAD + "input_dataset_version: 4\n")
    d = only(plan_errors(finance), "PRJ-003")
    check(d, os_path("projects/broken.yml"), at(text, "4\n"), "4")


def test_prj_003_input_version_disabled(finance):
    edit(finance, "datasets/accounts.yml", "{version: 2}", "{version: 2, status: disabled}")
    head = HEAD.replace("input_dataset_id: gl", "input_dataset_id: accounts") + "input_dataset_version: 2\n"
    text = add_project(finance, "- {seq: 1, name: Del, type: delete}", head=head)
    d = only(plan_errors(finance), "PRJ-003")
    check(d, os_path("projects/broken.yml"), at(text, "2\n"), "2")
    assert "disabled" in d.message


def _no_default_resolver(root: Path) -> None:
    edit(root, "ledgerflow.yml", "default_resolver: local\n", "")


def test_res_001_no_resolver_for_input(finance):
    _no_default_resolver(finance)
    text = add_project(finance, "- {seq: 1, name: Del, type: delete}")
    d = only(plan_errors(finance), "RES-001")
    check(d, os_path("projects/broken.yml"), at(text, "gl\n"), "gl")


def test_res_001_no_resolver_for_join(finance):
    _no_default_resolver(finance)
    text = add_project(finance, """\
        - seq: 1
          name: Convert
          type: update
          arguments:
            joins:
              - {alias: fx, dataset_id: exchange_rates, on: transactions.currency = fx.from_currency}
            assignments: [{column: amount_reporting, expression: fx.rate}]
        """, head=HEAD + "resolver_overrides: {gl: local}\n")
    d = only(plan_errors(finance), "RES-001")
    check(d, os_path("projects/broken.yml"), at(text, "exchange_rates"), "exchange_rates")


# ------------------------------------------------------------------------------------------- update
def test_upd_vr_001_no_assignments(finance):
    text = add_project(finance, """\
        - seq: 1
          name: Nothing to do
          type: update
          arguments: {assignments: []}
        """)
    d = only(plan_errors(finance), "UPD-VR-001")
    check(d, os_path("projects/broken.yml"), at(text, "seq: 1"))


def test_upd_vr_002_invalid_column_name(finance):
    text = add_project(finance, """\
        - seq: 1
          name: Bad column
          type: update
          arguments:
            assignments:
              - {column: 'amount-usd', expression: transactions.amount_local}
        """)
    d = only(plan_errors(finance), "UPD-VR-002")
    check(d, os_path("projects/broken.yml"), at(text, "amount-usd"), "amount-usd")


def test_upd_vr_002_system_column(finance):
    text = add_project(finance, """\
        - seq: 1
          name: Undelete
          type: update
          arguments:
            assignments:
              - column: _deleted
                expression: FALSE
        """)
    d = only(plan_errors(finance), "UPD-VR-002")
    check(d, os_path("projects/broken.yml"), at(text, "_deleted"), "_deleted")


def test_upd_vr_002_assigned_twice(finance):
    text = add_project(finance, """\
        - seq: 1
          name: Twice
          type: update
          arguments:
            assignments:
              - {column: description, expression: '"a"'}
              - {column: description, expression: '"b"'}
        """)
    d = only(plan_errors(finance), "UPD-VR-002")
    check(d, os_path("projects/broken.yml"), at(text, "description", nth=2), "description")


def test_upd_vr_003_undefined_named_selector(finance):
    text = add_project(finance, """\
        - seq: 1
          name: Uplift
          type: update
          selector: 'amount_local > 0 AND {{EMAE}}'
          arguments:
            assignments: [{column: description, expression: '"x"'}]
        """, head=HEAD + "selectors: {EMEA: 'cost_center_code = \"CC-100\"'}\n")
    d = only(plan_errors(finance), "UPD-VR-003")
    check(d, os_path("projects/broken.yml"), at(text, "{{EMAE}}"), "{{EMAE}}")
    assert "'EMEA'" in d.hint


def test_upd_vr_004_selector_syntax(finance):
    text = add_project(finance, """\
        - seq: 1
          name: Uplift
          type: update
          selector: 'amount_local > > 0'
          arguments:
            assignments: [{column: description, expression: '"x"'}]
        """)
    d = only(plan_errors(finance), "UPD-VR-004")
    check(d, os_path("projects/broken.yml"), at(text, "> 0"), ">")


def test_upd_vr_005_assignment_syntax(finance):
    text = add_project(finance, """\
        - seq: 1
          name: Uplift
          type: update
          arguments:
            assignments:
              - column: amount_local
                expression: 'transactions.amount_local * (1.05'
        """)
    d = only(plan_errors(finance), "UPD-VR-005")
    check(d, os_path("projects/broken.yml"), at(text, "1.05'", offset=4))
    assert "')'" in d.message


# --------------------------------------------------------------------------------------- runtime joins
def _join_update(join: str, assignment: str = "{column: amount_reporting, expression: fx.rate}") -> str:
    return f"""\
        - seq: 1
          name: Convert
          type: update
          arguments:
            joins:
              {join}
            assignments: [{assignment}]
        """


def test_join_vr_001_dataset_not_found(finance):
    text = add_project(finance, _join_update(
        "- {alias: fx, dataset_id: exchange_rate, on: transactions.currency = fx.from_currency}"))
    diags = plan_errors(finance)
    d = only(diags, "JOIN-VR-001")
    check(d, os_path("projects/broken.yml"), at(text, "exchange_rate,"), "exchange_rate")
    assert "'exchange_rates'" in d.hint
    assert codes(diags) == ["JOIN-VR-001"]  # the assignment using fx.rate is not reported on top


def test_join_vr_002_dataset_disabled(finance):
    edit(finance, "datasets/exchange_rates.yml", "status: active", "status: disabled")
    text = add_project(finance, _join_update(
        "- {alias: fx, dataset_id: exchange_rates, on: transactions.currency = fx.from_currency}"))
    d = only(plan_errors(finance), "JOIN-VR-002")
    check(d, os_path("projects/broken.yml"), at(text, "exchange_rates"), "exchange_rates")


def test_join_vr_003_version_not_found(finance):
    text = add_project(finance, _join_update(
        "- {alias: fx, dataset_id: exchange_rates, dataset_version: 3, on: transactions.currency = fx.from_currency}"))
    d = only(plan_errors(finance), "JOIN-VR-003")
    check(d, os_path("projects/broken.yml"), at(text, "3,"), "3")


def test_join_vr_004_alias_used_twice(finance):
    text = add_project(finance, _join_update(
        "- {alias: fx, dataset_id: exchange_rates, on: transactions.currency = fx.from_currency}\n"
        "              - {alias: fx, dataset_id: accounts, on: transactions.account_code = fx.code}"))
    d = only(plan_errors(finance), "JOIN-VR-004")
    check(d, os_path("projects/broken.yml"), at(text, "fx,", nth=2), "fx")


def test_join_vr_004_alias_not_a_name(finance):
    text = add_project(finance, _join_update(
        "- {alias: f__x, dataset_id: exchange_rates, on: transactions.currency = f__x.from_currency}",
        "{column: description, expression: '\"x\"'}"))
    d = only(plan_errors(finance), "JOIN-VR-004")
    check(d, os_path("projects/broken.yml"), at(text, "f__x,"), "f__x")


def test_join_vr_005_alias_is_working_table(finance):
    text = add_project(finance, _join_update(
        "- {alias: transactions, dataset_id: accounts, on: transactions.account_code = transactions.code}",
        "{column: description, expression: '\"x\"'}"))
    d = only(plan_errors(finance), "JOIN-VR-005")
    check(d, os_path("projects/broken.yml"), at(text, "transactions,"), "transactions")


def test_join_vr_006_condition_does_not_compile(finance):
    text = add_project(finance, _join_update(
        "- {alias: fx, dataset_id: exchange_rates, on: 'transactions.currency = = fx.from_currency'}"))
    d = only(plan_errors(finance), "JOIN-VR-006")
    check(d, os_path("projects/broken.yml"), at(text, "= fx.from"), "=")


def test_join_vr_006_condition_not_boolean(finance):
    text = add_project(finance, _join_update(
        "- {alias: fx, dataset_id: exchange_rates, on: 'transactions.currency = fx.from_currency AND fx.rate'}"))
    d = only(plan_errors(finance), "JOIN-VR-006")
    # reported at the start of the condition
    check(d, os_path("projects/broken.yml"), at(text, "transactions.currency"))
    assert "expected a boolean expression, got number" in d.message


def test_join_vr_007_condition_unknown_column(finance):
    text = add_project(finance, _join_update(
        "- {alias: fx, dataset_id: exchange_rates, on: 'transactions.currency = fx.from_ccy'}"))
    d = only(plan_errors(finance), "JOIN-VR-007")
    check(d, os_path("projects/broken.yml"), at(text, "fx.from_ccy"), "fx.from_ccy")
    assert "'from_currency'" in d.hint


def test_join_vr_007_condition_unknown_working_column(finance):
    text = add_project(finance, _join_update(
        "- {alias: fx, dataset_id: exchange_rates, on: 'transactions.ccy = fx.from_currency'}"))
    d = only(plan_errors(finance), "JOIN-VR-007")
    check(d, os_path("projects/broken.yml"), at(text, "transactions.ccy"), "transactions.ccy")


def test_join_vr_008_assignment_unknown_join_column(finance):
    text = add_project(finance, _join_update(
        "- {alias: fx, dataset_id: exchange_rates, on: 'transactions.currency = fx.from_currency'}",
        "{column: amount_reporting, expression: transactions.amount_local * fx.rat}"))
    d = only(plan_errors(finance), "JOIN-VR-008")
    check(d, os_path("projects/broken.yml"), at(text, "fx.rat}"), "fx.rat")
    assert "'rate'" in d.hint


def test_join_vr_008_selector_unknown_join_column(finance):
    text = add_project(finance, """\
        - seq: 1
          name: Convert
          type: update
          selector: 'fx.rate_kind = "closing"'
          arguments:
            joins:
              - {alias: fx, dataset_id: exchange_rates, on: 'transactions.currency = fx.from_currency'}
            assignments: [{column: amount_reporting, expression: fx.rate}]
        """)
    d = only(plan_errors(finance), "JOIN-VR-008")
    check(d, os_path("projects/broken.yml"), at(text, "fx.rate_kind"), "fx.rate_kind")


# ------------------------------------------------------------------------------------------- append
def _append(args: str) -> str:
    body = textwrap.indent(textwrap.dedent(args).strip("\n"), "    ")
    return "- seq: 1\n  name: Append budgets\n  type: append\n  arguments:\n" + body + "\n"


def test_append_001_source_not_found(finance):
    text = add_project(finance, _append("source: {dataset_id: budget}"))
    d = only(plan_errors(finance), "APPEND_001")
    check(d, os_path("projects/broken.yml"), at(text, "budget}"), "budget")
    assert "'budgets'" in d.hint


def test_append_001_source_disabled(finance):
    edit(finance, "datasets/budgets.yml", "status: active", "status: disabled")
    text = add_project(finance, _append("source: {dataset_id: budgets}"))
    d = only(plan_errors(finance), "APPEND_001")
    check(d, os_path("projects/broken.yml"), at(text, "budgets}"), "budgets")
    assert "disabled" in d.message


def test_append_002_version_not_found(finance):
    text = add_project(finance, _append("source: {dataset_id: budgets, dataset_version: 5}"))
    d = only(plan_errors(finance), "APPEND_002")
    check(d, os_path("projects/broken.yml"), at(text, "5}"), "5")


def test_append_003_extra_columns(finance):
    text = add_project(finance, _append("source: {dataset_id: budgets}"))
    diags = plan_errors(finance)
    extra = sorted(d.text for d in diags if d.code == "APPEND_003")
    # budgets has budget_id, amount, budget_type that gl (transactions) does not
    assert extra == ["amount", "budget_id", "budget_type"]
    for d in diags:
        check(d, os_path("projects/broken.yml"), at(text, "budgets}"))
    assert set(codes(diags)) == {"APPEND_003"}


def test_append_003_type_mismatch(finance):
    edit(finance, "datasets/budgets.yml", "{name: currency, type: string}", "{name: currency, type: integer}")
    text = add_project(finance, _append("""\
        source: {dataset_id: budgets}
        aggregation:
          group_by: [currency]
          aggregations: [{column: amount_local, expression: SUM(amount)}]
        """))
    d = only(plan_errors(finance), "APPEND_003")
    check(d, os_path("projects/broken.yml"), at(text, "budgets}"), "currency")


def test_append_004_source_selector_syntax(finance):
    text = add_project(finance, _append("""\
        source: {dataset_id: budgets}
        source_selector: 'budget_type = "plan" AND'
        """))
    d = only(plan_errors(finance), "APPEND_004")
    check(d, os_path("projects/broken.yml"), at(text, "AND'", offset=3))


def test_append_005_unknown_aggregate_function(finance):
    text = add_project(finance, _append("""\
        source: {dataset_id: budgets}
        aggregation:
          group_by: [account_code]
          aggregations: [{column: amount_local, expression: MEDIAN(amount)}]
        """))
    d = only(plan_errors(finance), "APPEND_005")
    check(d, os_path("projects/broken.yml"), at(text, "MEDIAN"), "MEDIAN")


def test_append_005_aggregation_without_aggregate(finance):
    text = add_project(finance, _append("""\
        source: {dataset_id: budgets}
        aggregation:
          group_by: [account_code]
          aggregations: [{column: description, expression: account_code}]
        """))
    d = only(plan_errors(finance), "APPEND_005")
    check(d, os_path("projects/broken.yml"), at(text, "account_code}"), "account_code")


def test_append_006_group_by_unknown_column(finance):
    text = add_project(finance, _append("""\
        source: {dataset_id: budgets}
        aggregation:
          group_by: [account_code, nonexistent_column]
          aggregations: [{column: amount_local, expression: SUM(amount)}]
        """))
    d = only(plan_errors(finance), "APPEND_006")
    check(d, os_path("projects/broken.yml"), at(text, "nonexistent_column"), "nonexistent_column")


def test_append_006_source_selector_unknown_column(finance):
    text = add_project(finance, _append("""\
        source: {dataset_id: budgets}
        source_selector: 'budgets.kind = "plan"'
        aggregation:
          group_by: [account_code]
          aggregations: [{column: amount_local, expression: SUM(amount)}]
        """))
    d = only(plan_errors(finance), "APPEND_006")
    check(d, os_path("projects/broken.yml"), at(text, "budgets.kind"), "budgets.kind")


def test_append_007_no_resolver_for_source(finance):
    _no_default_resolver(finance)
    text = add_project(finance, _append("""\
        source: {dataset_id: budgets}
        aggregation:
          group_by: [account_code]
          aggregations: [{column: amount_local, expression: SUM(amount)}]
        """), head=HEAD + "resolver_overrides: {gl: local}\n")
    diags = plan_errors(finance)
    d = only(diags, "APPEND_007")
    check(d, os_path("projects/broken.yml"), at(text, "budgets}"), "budgets")
    assert codes(diags) == ["APPEND_007"]


# ------------------------------------------------------------------------ operation rules and the DSL
def test_br_006_undefined_named_selector(finance):
    text = add_project(finance, """\
        - seq: 1
          name: Drop EMEA
          type: delete
          selector: '{{EMAE}}'
        """, head=HEAD + "selectors: {EMEA: 'cost_center_code = \"CC-100\"'}\n")
    d = only(plan_errors(finance), "BR-006")
    check(d, os_path("projects/broken.yml"), at(text, "{{EMAE}}"), "{{EMAE}}")
    assert "'EMEA'" in d.hint


def test_br_014_aggregate_in_update(finance):
    text = add_project(finance, """\
        - seq: 1
          name: Total
          type: update
          arguments:
            assignments: [{column: amount_reporting, expression: SUM(transactions.amount_local)}]
        """)
    d = only(plan_errors(finance), "BR-014")
    check(d, os_path("projects/broken.yml"), at(text, "SUM("), "SUM")


def test_br_014_aggregate_in_selector(finance):
    text = add_project(finance, """\
        - seq: 1
          name: Drop
          type: delete
          selector: COUNT(*) > 1
        """)
    d = only(plan_errors(finance), "BR-014")
    check(d, os_path("projects/broken.yml"), at(text, "COUNT"), "COUNT")


def test_br_015_unknown_column_in_selector(finance):
    text = add_project(finance, """\
        - seq: 1
          name: Drop
          type: delete
          selector: 'transactions.amount = 0'
        """)
    d = only(plan_errors(finance), "BR-015")
    check(d, os_path("projects/broken.yml"), at(text, "transactions.amount"), "transactions.amount")
    assert "'amount_local'" in d.hint


def test_br_015_join_alias_not_visible_in_next_operation(finance):
    text = add_project(finance, """\
        - seq: 1
          name: Convert
          type: update
          arguments:
            joins:
              - {alias: fx, dataset_id: exchange_rates, on: 'transactions.currency = fx.from_currency'}
            assignments: [{column: amount_reporting, expression: fx.rate}]
        - seq: 2
          name: Rate again
          type: update
          arguments:
            assignments: [{column: description, expression: CONCAT(fx.rate)}]
        """)
    d = only(plan_errors(finance), "BR-015")
    check(d, os_path("projects/broken.yml"), at(text, "fx.rate)"), "fx.rate")


def test_br_015_unknown_group_by_and_output_column(finance):
    text = add_project(finance, """\
        - seq: 1
          name: Totals
          type: aggregate
          arguments:
            group_by: [transactions.account_cod]
            aggregations: [{column: total, expression: SUM(amount_local)}]
        - seq: 2
          name: Write
          type: output
          arguments:
            destination: {table: t}
            columns: [journal_id, amount_usd]
        """, output=False)
    diags = plan_errors(finance)
    assert codes(diags) == ["BR-015", "BR-015"], [d.render() for d in diags]
    check(diags[0], os_path("projects/broken.yml"), at(text, "transactions.account_cod"), "transactions.account_cod")
    check(diags[1], os_path("projects/broken.yml"), at(text, "amount_usd"), "amount_usd")


def test_dsl_001_syntax(finance):
    text = add_project(finance, """\
        - seq: 1
          name: Drop
          type: delete
          selector: 'amount_local = 0 AND $'
        """)
    d = only(plan_errors(finance), "DSL-001")
    check(d, os_path("projects/broken.yml"), at(text, "$"), "$")


def test_dsl_002_type_mismatch(finance):
    text = add_project(finance, """\
        - seq: 1
          name: Drop
          type: delete
          selector: 'amount_local = "zero"'
        """)
    d = only(plan_errors(finance), "DSL-002")
    check(d, os_path("projects/broken.yml"), at(text, '= "zero"'), "=")


def test_dsl_002_assignment_type(finance):
    text = add_project(finance, """\
        - seq: 1
          name: Bad type
          type: update
          arguments:
            assignments: [{column: amount_local, expression: '"lots"'}]
        """)
    d = only(plan_errors(finance), "DSL-002")
    # a quoted YAML scalar is located at its first character inside the quotes
    check(d, os_path("projects/broken.yml"), at(text, '"lots"'), '"lots"')


def test_dsl_003_unknown_function(finance):
    text = add_project(finance, """\
        - seq: 1
          name: Drop
          type: delete
          selector: 'UPPR(description) = "X"'
        """)
    d = only(plan_errors(finance), "DSL-003")
    check(d, os_path("projects/broken.yml"), at(text, "UPPR"), "UPPR")
    assert "'UPPER'" in d.hint


def test_dsl_004_arity(finance):
    text = add_project(finance, """\
        - seq: 1
          name: Round
          type: update
          arguments:
            assignments: [{column: amount_reporting, expression: ROUND(amount_local)}]
        """)
    d = only(plan_errors(finance), "DSL-004")
    check(d, os_path("projects/broken.yml"), at(text, "ROUND"), "ROUND")


def test_dsl_005_not_grouped(finance):
    text = add_project(finance, """\
        - seq: 1
          name: Totals
          type: aggregate
          arguments:
            group_by: [account_code]
            aggregations: [{column: total, expression: SUM(amount_local) + line_number}]
        """)
    d = only(plan_errors(finance), "DSL-005")
    check(d, os_path("projects/broken.yml"), at(text, "line_number}"), "line_number")


def test_dsl_006_aggregation_without_aggregate(finance):
    text = add_project(finance, """\
        - seq: 1
          name: Totals
          type: aggregate
          arguments:
            group_by: [account_code]
            aggregations: [{column: total, expression: '1'}]
        """)
    d = only(plan_errors(finance), "DSL-006")
    check(d, os_path("projects/broken.yml"), at(text, "'1'", offset=1), "1")


def test_sel_001_selector_cycle(finance):
    head = HEAD + "selectors:\n  A: 'amount_local > 0 AND {{B}}'\n  B: '{{A}}'\n"
    text = add_project(finance, """\
        - seq: 1
          name: Drop
          type: delete
          selector: '{{A}}'
        """, head=head)
    d = only(plan_errors(finance), "SEL-001")
    # reported where the cycle closes: B's body referring back to A
    check(d, os_path("projects/broken.yml"), at(text, "{{A}}"), "{{A}}")
    assert "A -> B -> A" in d.message


def test_sel_002_selector_depth(finance):
    names = [f"S{i}" for i in range(12)]
    lines = [f"  {a}: '{{{{{b}}}}}'" for a, b in zip(names, names[1:])] + [f"  {names[-1]}: 'amount_local > 0'"]
    head = HEAD + "selectors:\n" + "\n".join(lines) + "\n"
    text = add_project(finance, """\
        - seq: 1
          name: Drop
          type: delete
          selector: '{{S0}}'
        """, head=head)
    d = only(plan_errors(finance), "SEL-002")
    # the 11th nested reference (S9's body naming S10) exceeds the limit of 10
    check(d, os_path("projects/broken.yml"), at(text, "{{S10}}"), "{{S10}}")
    # ten levels are fine: S2 -> ... -> S11 (a reference plus nine nested ones)
    write(finance, "projects/broken.yml", text.replace("selector: '{{S0}}'", "selector: '{{S2}}'"))
    assert plan_errors(finance) == []


# ------------------------------------------------------------------------------------ several at once
def test_one_pass_reports_every_mistake_of_a_project(finance):
    text = add_project(finance, """\
        - seq: 1
          name: Convert
          type: update
          selector: '{{NOPE}}'
          arguments:
            joins:
              - {alias: fx, dataset_id: exchange_ratez, on: 'transactions.currency = fx.from_currency'}
            assignments:
              - {column: '1st', expression: '"x"'}
              - {column: description, expression: 'UPPR(description)'}
        - seq: 2
          name: Drop
          type: delete
          selector: 'transactions.amount = 0'
        - seq: 3
          name: Totals
          type: aggregate
          arguments:
            group_by: [account_code]
            aggregations: [{column: total, expression: amount_local}]
        """)
    diags = plan_errors(finance)
    got = {d.code: d for d in diags}
    f = os_path("projects/broken.yml")
    check(got["JOIN-VR-001"], f, at(text, "exchange_ratez"), "exchange_ratez")
    check(got["UPD-VR-003"], f, at(text, "{{NOPE}}"), "{{NOPE}}")
    check(got["UPD-VR-002"], f, at(text, "1st"), "1st")
    check(got["DSL-003"], f, at(text, "UPPR"), "UPPR")
    check(got["BR-015"], f, at(text, "transactions.amount"), "transactions.amount")
    check(got["DSL-005"], f, at(text, "amount_local}"), "amount_local")
    assert len(diags) == 6, [d.render() for d in diags]
    # compile_project raises the same list
    ws = load_workspace(str(finance))
    with pytest.raises(CompileError) as info:
        compile_project(ws, ws.find_project("broken"))
    assert info.value.codes == codes(diags)


def test_one_pass_reports_every_file_problem(finance):
    (finance / "ledgerflow.yml").write_text((finance / "ledgerflow.yml").read_text()
                                            .replace("default_resolver: local", "default_resolver: nowhere"))
    edit(finance, "datasets/budgets.yml", "type: integer", "type: int4")
    write(finance, "datasets/broken.yml", "id: x\nname: [\n")
    add_project(finance, """\
        - seq: 1
          name: Delete
          typ: delete
        """)
    diags = load_errors(finance)
    assert {"WS-004", "DS-001", "YAML-001", "YAML-003", "YAML-004"} <= set(codes(diags)), \
        [d.render() for d in diags]
    files = {d.code: d.location.file for d in diags}
    assert files["WS-004"] == "ledgerflow.yml"
    assert files["DS-001"] == os_path("datasets/budgets.yml")
    assert files["YAML-001"] == os_path("datasets/broken.yml")
    assert files["YAML-003"] == os_path("projects/broken.yml")


def test_tiny_workspace_in_tmp_path(tmp_path):
    """A minimal workspace written from scratch: one dataset, one project with two mistakes."""
    write(tmp_path, "ledgerflow.yml", """\
        name: tiny
        default_resolver: files
        resolvers:
          files:
            rules:
              - {name: all, strategy: {type: path, path: "data/{{dataset}}.csv", format: csv}}
        """)
    write(tmp_path, "datasets/items.yml", """\
        id: 1d000000-0000-4000-8000-000000000001
        name: items
        versions: [{version: 1}]
        main_table:
          name: items
          temporal_mode: snapshot
          columns:
            - {name: sku, type: string}
            - {name: qty, type: integer}
        """)
    text = write(tmp_path, "projects/p.yml", """\
        id: 1d000000-0000-4000-8000-000000000002
        name: p
        input_dataset_id: items
        operations:
          - seq: 1
            name: Double
            type: update
            arguments:
              assignments: [{column: qty, expression: items.qty * 2}, {column: qty, expression: items.qtty}]
          - seq: 2
            name: Write
            type: output
            arguments: {destination: {path: out/items, format: parquet}, columns: [sku, quantity]}
        """)
    diags = plan_errors(tmp_path, "p")
    assert codes(diags) == ["UPD-VR-002", "BR-015"], [d.render() for d in diags]
    check(diags[0], os_path("projects/p.yml"), at(text, "qty", nth=3), "qty")
    check(diags[1], os_path("projects/p.yml"), at(text, "quantity"), "quantity")


def os_path(rel: str) -> str:
    """Diagnostics name files relative to the workspace, with the platform's separator."""
    return str(Path(rel))


def test_a_name_holding_a_line_end_stays_on_its_diagnostics_line(finance):
    """A refused name from the YAML is shown with its line end written as an escape: it can neither break the
    diagnostic in two nor print a line of its own that looks like another message."""
    from cli_support import cli
    edit(finance, "datasets/gl.yml", "name: journal_id", 'name: "journal_id\\nError: 0 errors found, all fine"')
    result = cli(finance, "validate")
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[0] == "Error: 1 error found:", lines
    assert "DS-002 invalid column name 'journal_id\\u000aError: 0 errors found, all fine'" in lines[1]

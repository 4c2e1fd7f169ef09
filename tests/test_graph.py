"""The workspace graph, selection, `dag`, cycles, and registered datasets known at compile time (issue 12).

No Spark here: the graph, the selection and compile-time registered datasets are pure compiler work.
The finance sample holds the chain close_conversion -> close_conversion's registered close_converted
-> close_consolidation -> close_consolidated -> close_reporting, beside eight independent projects.
"""
from __future__ import annotations

import json

import pytest

from cli_support import add_project, cli, describe, edit
from ledgerflow.compiler.compile import compile_project, plan_diagnostics
from ledgerflow.compiler.errors import CompileError
from ledgerflow.compiler.graph import WorkspaceGraph
from ledgerflow.compiler.registered import registered_id
from ledgerflow.compiler.selection import SelectionError, select, selected_projects
from ledgerflow.compiler.workspace import load_workspace

CHAIN = ["close_conversion", "close_consolidation", "close_reporting"]
TS = ["ts01_output_only", "ts02_asof_rates", "ts03_fx_conversion", "ts04_delete_inactive", "ts05_aggregate_by_type",
      "ts06_append_budgets", "ts07_output_columns", "ts08_named_selector"]

REGISTER = """
- seq: 1
  name: Register
  type: output
  arguments:
    destination: {{table: {name}}}
    register_as_dataset: {name}
"""


@pytest.fixture
def graph(finance) -> WorkspaceGraph:
    return WorkspaceGraph(load_workspace(str(finance)))


# --------------------------------------------------------------------------------------- the graph
def test_edges_and_roles(graph):
    edges = {(e.source, e.target, e.role) for e in graph.edge_list()}
    assert {("dataset:gl", "project:close_conversion", "input"),
            ("dataset:exchange_rates", "project:close_conversion", "join"),
            ("dataset:accounts", "project:close_conversion", "join"),
            ("project:close_conversion", "dataset:close_converted", "output"),
            ("dataset:close_converted", "project:close_consolidation", "input"),
            ("dataset:cost_centers", "project:close_consolidation", "join"),
            ("project:close_consolidation", "dataset:close_consolidated", "output"),
            ("dataset:close_consolidated", "project:close_reporting", "input"),
            ("dataset:budgets", "project:ts06_append_budgets", "append")} <= edges
    assert graph.project_order() == CHAIN + ["journal_controls"] + TS


def test_selection_grammar(graph):
    def projects(text):
        return graph.project_order(select(graph, text))

    assert projects("close_consolidation") == ["close_consolidation"]
    assert projects("project:close_consolidation") == ["close_consolidation"]
    assert projects("+close_reporting") == CHAIN
    assert projects("close_conversion+") == CHAIN
    assert projects("+close_consolidation+") == CHAIN
    assert projects("close_consolidation+") == ["close_consolidation", "close_reporting"]
    assert projects("dataset:close_converted+") == ["close_consolidation", "close_reporting"]
    assert projects("+dataset:close_converted") == ["close_conversion"]
    assert set(projects("dataset:budgets+")) == {"ts06_append_budgets"}
    assert projects("dataset:cost_centers+") == ["close_consolidation", "close_reporting", "ts08_named_selector"]
    # a union, in dependency order whatever the order written
    assert projects("close_reporting ts01_output_only close_conversion") == ["close_conversion", "close_reporting",
                                                                             "ts01_output_only"]
    # a bare dataset name selects the dataset node
    assert select(graph, "close_converted") == {"dataset:close_converted"}
    assert select(graph, "+close_reporting") >= {"dataset:gl", "dataset:close_consolidated", "project:close_reporting"}


@pytest.mark.parametrize("text,message", [
    ("close_reportin", "no project or dataset 'close_reportin' in the workspace; did you mean 'close_reporting'?"),
    ("dataset:close_convertd+", "no dataset 'close_convertd' in the workspace; did you mean 'close_converted'?"),
    ("project:gl", "no project 'gl'"),
    ("++a", "cannot read the selector '++a'"),
])
def test_unknown_selection_is_a_usage_error(graph, text, message):
    with pytest.raises(SelectionError) as err:
        select(graph, text)
    assert message in str(err.value)
    assert err.value.exit_code == 2


def test_selection_of_datasets_only_selects_no_project(graph):
    with pytest.raises(SelectionError, match="selects no project"):
        selected_projects(graph, "dataset:gl")


# -------------------------------------------------------------------------------------------- cycles
def test_cycle_is_a_validation_error_spelling_it_out(finance):
    add_project(finance, "loop_a", REGISTER.format(name="loop_x"), input_dataset="loop_y")
    add_project(finance, "loop_b", REGISTER.format(name="loop_y"), input_dataset="loop_x")
    result = cli(finance, "validate")
    assert result.exit_code == 1, describe(result)
    assert "GRAPH-001 projects depend on each other in a cycle: project:loop_a -> dataset:loop_x -> " \
           "project:loop_b -> dataset:loop_y -> project:loop_a" in result.stderr
    assert "projects/loop_a.yml:5:" in result.stderr  # where loop_a reads loop_y, closing the cycle
    assert result.stderr.count("GRAPH-001") == 1


def test_reading_its_own_registered_dataset_is_a_cycle(finance):
    add_project(finance, "self_loop", REGISTER.format(name="self_snap"), input_dataset="self_snap")
    with pytest.raises(CompileError) as err:
        load_workspace(str(finance))
    assert err.value.codes == ["GRAPH-001"]
    assert "project:self_loop -> dataset:self_snap -> project:self_loop" in str(err.value)


def test_dataset_registered_twice(finance):
    add_project(finance, "twice", REGISTER.format(name="close_converted"))
    with pytest.raises(CompileError) as err:
        load_workspace(str(finance))
    assert err.value.codes == ["GRAPH-002"]
    assert "dataset 'close_converted' is registered by more than one output (project close_conversion output 3, " \
           "project twice output 1)" in str(err.value)


# ------------------------------------------------------------------- registered datasets at compile time
def test_fresh_clone_validates_and_compiles_without_a_run_store(finance):
    assert not (finance / ".ledgerflow").exists()
    result = cli(finance, "validate")
    assert result.exit_code == 0, describe(result)
    assert "ok: 12 projects valid" in result.stdout
    for name in CHAIN:
        result = cli(finance, "compile", name)
        assert result.exit_code == 0, describe(result)
    assert "FROM `ds_close_consolidated`" in result.stdout
    assert not (finance / ".ledgerflow").exists()  # nothing ran, nothing was stored

    ws = load_workspace(str(finance))
    converted = ws.find_dataset("close_converted")
    assert converted.registered and converted.versions == [] and converted.id == registered_id("close_converted")
    assert converted.temporal_mode == "period"
    assert [(c.name, c.type) for c in converted.columns] == [
        ("journal_id", "string"), ("line_number", "int"), ("posting_date", "date"), ("account_code", "string"),
        ("cost_center_code", "string"), ("currency", "string"), ("amount_local", "decimal(18,2)"),
        ("amount_reporting", "decimal(18,2)"), ("description", "string"), ("source_system", "string"),
        ("account_type", "string")]
    consolidated = ws.find_dataset("close_consolidated")
    # SUM of a decimal(18,2) is a decimal(28,2), as Spark types it: exact before any run registers a version
    assert [(c.name, c.type) for c in consolidated.columns] == [
        ("region", "string"), ("account_type", "string"), ("total_reporting", "decimal(28,2)"),
        ("line_count", "bigint")]
    compiled = compile_project(ws, ws.find_project("close_consolidation"))
    assert [v.dataset.name for v in compiled.inputs] == ["close_converted", "cost_centers"]


def test_registered_dataset_by_id_and_a_type_error_across_projects(finance):
    add_project(finance, "by_id", """
        - seq: 1
          name: Bad
          type: update
          arguments:
            assignments:
              - column: line_count
                expression: close_consolidated.region
        - seq: 2
          name: Out
          type: output
          arguments:
            destination: {path: out/by_id}
        """, input_dataset=registered_id("close_consolidated"))
    ws = load_workspace(str(finance))
    codes = [d.code for d in plan_diagnostics(ws, ws.find_project("by_id"))]
    assert codes == ["DSL-002"]  # a string into the registered bigint column


def test_errors_of_a_producer_are_reported_once(finance):
    edit(finance, "projects/close_1_conversion.yml", "expression: acct.type", "expression: acct.typo")
    result = cli(finance, "validate")
    assert result.exit_code == 1, describe(result)
    err = result.stderr
    assert err.count("JOIN-VR-008") == 1 and "projects/close_1_conversion.yml:29:" in err
    assert "projects/close_2_consolidation.yml:6:" in err and \
           "GRAPH-003 input dataset: dataset 'close_converted' is registered by project 'close_conversion', " \
           "which has errors" in err
    # and transitively: close_consolidation registers nothing either
    assert "projects/close_3_reporting.yml:6:" in err and "dataset 'close_consolidated' is registered by project " \
           "'close_consolidation', which has errors" in err
    assert err.startswith("Error: 3 errors found:")


def test_a_producer_is_bound_once(finance, monkeypatch):
    """load_workspace binds each producing project to type what it registers; compiling, planning or
    following lineage into it reuses that plan (it was bound twice), and the plan is a fresh bind's."""
    import ledgerflow.compiler.binding as bind_module
    from ledgerflow.compiler.compile import plan_project
    from ledgerflow.compiler.lineage import project_lineage

    bound = []

    class Counting(bind_module.BindContext):
        def __init__(self, workspace, project):
            bound.append(project.name)
            super().__init__(workspace, project)

    monkeypatch.setattr(bind_module, "BindContext", Counting)
    ws = load_workspace(str(finance))
    assert bound == ["close_conversion", "close_consolidation"]  # the producers, upstream first
    for name in CHAIN:
        compiled = compile_project(ws, ws.find_project(name))
    plan_project(ws, ws.find_project("close_consolidation"))
    lineage = project_lineage(ws, "close_reporting")[1]  # follows close_consolidated into its producer
    assert bound.count("close_conversion") == 1 and bound.count("close_consolidation") == 1
    assert bound.count("close_reporting") == 2  # not a producer: bound each time (compile, lineage)

    kept = compile_project(ws, ws.find_project("close_consolidation"))
    ws.producer_plans.clear()
    fresh = compile_project(ws, ws.find_project("close_consolidation"))
    assert bound.count("close_consolidation") == 2
    assert kept.script() == fresh.script() and kept.schema == fresh.schema and compiled.script()
    assert [v.dataset for v in kept.inputs] == [v.dataset for v in fresh.inputs]
    assert project_lineage(ws, "close_reporting")[1] == lineage


# ----------------------------------------------------------------------------------------------- dag
def test_dag_json_is_the_contract_shape(finance):
    result = cli(finance, "dag", "--format", "json", "--select", "+close_reporting")
    assert result.exit_code == 0, describe(result)
    data = json.loads(result.stdout)
    assert set(data) == {"nodes", "edges"}
    assert data["nodes"] == [{"id": i, "kind": i.split(":")[0]} for i in [
        "dataset:accounts", "dataset:cost_centers", "dataset:exchange_rates", "dataset:gl", "project:close_conversion",
        "dataset:close_converted", "project:close_consolidation", "dataset:close_consolidated",
        "project:close_reporting"]]
    assert data["edges"] == [
        {"from": "dataset:accounts", "to": "project:close_conversion", "role": "join"},
        {"from": "dataset:cost_centers", "to": "project:close_consolidation", "role": "join"},
        {"from": "dataset:exchange_rates", "to": "project:close_conversion", "role": "join"},
        {"from": "dataset:gl", "to": "project:close_conversion", "role": "input"},
        {"from": "project:close_conversion", "to": "dataset:close_converted", "role": "output"},
        {"from": "dataset:close_converted", "to": "project:close_consolidation", "role": "input"},
        {"from": "project:close_consolidation", "to": "dataset:close_consolidated", "role": "output"},
        {"from": "dataset:close_consolidated", "to": "project:close_reporting", "role": "input"}]
    again = cli(finance, "dag", "--format", "json", "--select", "+close_reporting")
    assert again.stdout == result.stdout


def test_dag_text_dot_mermaid(finance):
    text = cli(finance, "dag", "--select", "close_consolidation+")
    assert text.exit_code == 0, describe(text)
    assert text.stdout.splitlines() == [
        "project:close_consolidation",
        "dataset:close_consolidated   <- project:close_consolidation (output)",
        "project:close_reporting      <- dataset:close_consolidated (input)"]
    dot = cli(finance, "dag", "--format", "dot", "--select", "close_consolidation+").stdout
    assert dot.startswith("digraph ledgerflow {") and dot.rstrip().endswith("}")
    assert dot.splitlines()[2:-1] == ['  n0 [label="project:close_consolidation", shape=box];',
                                      '  n1 [label="dataset:close_consolidated", shape=ellipse];',
                                      '  n2 [label="project:close_reporting", shape=box];',
                                      '  n0 -> n1 [label="output"];', '  n1 -> n2 [label="input"];']
    mermaid = cli(finance, "dag", "--format", "mermaid", "--select", "close_consolidation+").stdout.splitlines()
    assert mermaid == ["flowchart LR", '  n0["project:close_consolidation"]', '  n1[("dataset:close_consolidated")]',
                       '  n2["project:close_reporting"]', "  n0 -->|output| n1", "  n1 -->|input| n2"]
    full = cli(finance, "dag").stdout
    assert "project:ts06_append_budgets" in full and "dataset:budgets (append)" in full


def test_dag_unknown_selection_exit_2(finance):
    result = cli(finance, "dag", "--select", "close_reportin")
    assert result.exit_code == 2
    assert "did you mean 'close_reporting'?" in result.stderr


def test_run_needs_exactly_one_of_project_select_all(finance):
    for args in ([], ["ts01_output_only", "--all"], ["--all", "--select", "ts01_output_only"]):
        result = cli(finance, "run", *args, "--period", "2026-01")
        assert result.exit_code == 2, describe(result)
    result = cli(finance, "run", "--select", "close_reportin", "--period", "2026-01")
    assert result.exit_code == 2 and "did you mean 'close_reporting'?" in result.stderr

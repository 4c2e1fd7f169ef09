"""Column lineage (``ledgerflow lineage``, docs/lineage.md): edge by edge on the finance sample, every format,
the CLI's filters and errors, lineage across projects through a registered dataset, the run record.

Only the last test starts Spark; the rest compile plans (no data read)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cli_support import add_project, cli, describe, output_entry, run_ok
from conftest import PROJECTS
from ledgerflow.compiler.compile import find_project, plan_project
from ledgerflow.compiler.lineage import plan_lineage, registering_output
from ledgerflow.compiler.lineage_formats import to_json
from ledgerflow.compiler.lineage_walk import KINDS
from ledgerflow.compiler.model import ColumnDef, Dataset, DatasetVersion
from ledgerflow.compiler.workspace import load_workspace

FINANCE = PROJECTS / "finance"

# What every GL line of the finance sample read for 2026-01 is filtered by: its period, and _deleted
# (outputs write the rows that are not deleted).
GL_ROWS = [("filter", "gl._deleted"), ("filter", "gl._period")]
FX_JOIN = [("join", "exchange_rates.from_currency"), ("join", "exchange_rates.rate_type"),
           ("join", "exchange_rates.to_currency"), ("join", "gl.currency")]
FX_ASOF = [("filter", "exchange_rates._period_from"), ("filter", "exchange_rates._period_to")]
ACCT_JOIN = [("join", "accounts.code"), ("join", "gl.account_code")]


def edges(ws, project: str, seq: int, column: str) -> list[tuple]:
    """The inputs of one output column as (kind, dataset.column[, via...]) in the order lineage gives them."""
    plan = plan_project(ws, find_project(ws, project))
    assert not plan.diagnostics, plan.diagnostics
    found = [c for c in plan_lineage(plan, ws, plan_project) if c.output == seq and c.column == column]
    assert len(found) == 1, found
    return [(i.kind, f"{i.dataset}.{i.column}", *i.via) for i in found[0].inputs]


@pytest.fixture(scope="module")
def sample():
    return load_workspace(str(FINANCE))


# ------------------------------------------------------------------------------------- edge by edge
def test_computed_column(sample):
    """TS-03: amount_reporting = amount_local * fx.rate; the join's whole `on` and the as-of filter of
    the join side decide the rows; the old amount_reporting (kept only on deleted rows) is not an input."""
    assert edges(sample, "ts03_fx_conversion", 2, "amount_reporting") == [
        ("transformation", "exchange_rates.rate"), ("transformation", "gl.amount_local"),
        *FX_JOIN, *FX_ASOF, *GL_ROWS]


def test_untouched_column_of_a_joined_operation_has_the_join_inputs(sample):
    """docs/lineage.md: a column read in a runtime join's condition is a join input of every column of the rows."""
    assert edges(sample, "ts03_fx_conversion", 2, "journal_id") == [
        ("identity", "gl.journal_id"), *FX_JOIN, *FX_ASOF, *GL_ROWS]
    assert edges(sample, "ts03_fx_conversion", 2, "currency") == [
        ("identity", "gl.currency"), *FX_JOIN, *FX_ASOF, *GL_ROWS]


def test_aggregated_column(sample):
    """TS-05: total_amount = SUM(amount_local) grouped by account_type, itself joined from accounts."""
    assert edges(sample, "ts05_aggregate_by_type", 3, "total_amount") == [
        ("aggregation", "gl.amount_local"), *ACCT_JOIN,
        ("filter", "accounts._period"), *GL_ROWS, ("group_by", "accounts.type")]
    # the group key's value is the joined column as is; the input lines' values too
    assert edges(sample, "ts05_aggregate_by_type", 3, "account_type")[0] == ("identity", "accounts.type")
    # every column of the output holds summary rows: the group key is a group_by input of journal_id
    assert ("group_by", "accounts.type") in edges(sample, "ts05_aggregate_by_type", 3, "journal_id")


def test_joined_column_and_delete_filter(sample):
    """TS-04: account_active comes from the join; the delete on it filters the rows of output 3."""
    assert edges(sample, "ts04_delete_inactive", 3, "account_active") == [
        ("identity", "accounts.is_active"), *ACCT_JOIN,
        ("filter", "accounts._period"), ("filter", "accounts.is_active"), *GL_ROWS]
    assert edges(sample, "ts04_delete_inactive", 3, "journal_id") == [
        ("identity", "gl.journal_id"), *ACCT_JOIN,
        ("filter", "accounts._period"), ("filter", "accounts.is_active"), *GL_ROWS]


def test_include_deleted_output_is_not_filtered_by_the_delete(sample):
    """TS-04 output 4 writes deleted rows too: the delete's column decides _deleted, not the rows."""
    assert edges(sample, "ts04_delete_inactive", 4, "journal_id") == [
        ("identity", "gl.journal_id"), *ACCT_JOIN, ("filter", "accounts._period"), ("filter", "gl._period")]
    assert edges(sample, "ts04_delete_inactive", 4, "_deleted")[:2] == [
        ("transformation", "accounts.is_active"), ("transformation", "gl._deleted")]


def test_update_selector_is_conditional(sample):
    """TS-08: the selector cc.region = "EMEA" decides whether amount_local is uplifted, not which rows exist."""
    assert edges(sample, "ts08_named_selector", 2, "amount_local") == [
        ("transformation", "gl.amount_local"), ("conditional", "cost_centers.region"),
        ("join", "cost_centers.code"), ("join", "gl.cost_center_code"),
        ("filter", "cost_centers._period"), *GL_ROWS]
    assert ("conditional", "cost_centers.region") not in edges(sample, "ts08_named_selector", 2, "journal_id")


def test_append_with_aggregation(sample):
    """TS-06: budget rows summed per account, cost center and currency, appended to the GL lines."""
    assert edges(sample, "ts06_append_budgets", 2, "amount_local") == [
        ("identity", "gl.amount_local"), ("aggregation", "budgets.amount"),
        ("filter", "budgets._deleted"), ("filter", "budgets._period"), *GL_ROWS,
        ("group_by", "budgets.account_code"), ("group_by", "budgets.cost_center_code"),
        ("group_by", "budgets.currency")]


def test_output_only_and_output_selector(tmp_path):
    """An output's selector is a filter input of every column it writes."""
    from conftest import copy_workspace
    root = copy_workspace("finance", tmp_path / "finance")
    add_project(root, "emea_only", """
        - seq: 1
          name: EMEA lines
          type: output
          selector: 'transactions.currency = "EUR" OR transactions.amount_local > 100'
          arguments: {destination: {table: emea}, columns: [journal_id]}
        """)
    ws = load_workspace(str(root))
    assert edges(ws, "emea_only", 1, "journal_id") == [
        ("identity", "gl.journal_id"), ("filter", "gl._deleted"), ("filter", "gl._period"),
        ("filter", "gl.amount_local"), ("filter", "gl.currency")]
    assert edges(ws, "ts01_output_only", 1, "journal_id") == [("identity", "gl.journal_id"), *GL_ROWS]


def test_every_sample_column_has_known_kinds_in_a_deterministic_order(sample):
    for project in sample.projects:
        plan = plan_project(sample, project)
        first = to_json(plan_lineage(plan, sample, plan_project))
        assert first == to_json(plan_lineage(plan_project(sample, project), sample, plan_project))
        for col in first["columns"]:
            keys = [(i["dataset"], i["column"], i["kind"]) for i in col["inputs"]]
            assert len(keys) == len(set(keys)), col
            assert all(i["kind"] in KINDS for i in col["inputs"])
            assert keys == sorted(keys, key=lambda k: (KINDS.index(k[2]), k[0], k[1])), col


# ------------------------------------------------------------------------------------------- the CLI
def test_json_exactly_as_contract(finance):
    result = cli(finance, "lineage", "ts03_fx_conversion.amount_reporting", "--format", "json")
    assert result.exit_code == 0, describe(result)
    data = json.loads(result.stdout)
    assert list(data) == ["columns"]
    [col] = data["columns"]
    assert list(col) == ["output", "column", "inputs"] and (col["output"], col["column"]) == (2, "amount_reporting")
    assert all(list(i) == ["dataset", "column", "kind"] for i in col["inputs"])
    assert col["inputs"][:2] == [{"dataset": "exchange_rates", "column": "rate", "kind": "transformation"},
                                 {"dataset": "gl", "column": "amount_local", "kind": "transformation"}]


def test_text_and_filters(finance):
    result = cli(finance, "lineage", "ts03_fx_conversion.amount_reporting")
    assert result.exit_code == 0, describe(result)
    lines = result.stdout.splitlines()
    assert lines[0] == "ts03_fx_conversion output 2 (ts03_fx_converted)"
    assert lines[1] == "  amount_reporting"
    assert lines[2].split() == ["transformation", "exchange_rates.rate"]
    assert ["join", "gl.currency"] in [line.split() for line in lines]
    whole = json.loads(cli(finance, "lineage", "ts04_delete_inactive", "--format", "json").stdout)["columns"]
    assert {c["output"] for c in whole} == {3, 4}
    only4 = json.loads(cli(finance, "lineage", "ts04_delete_inactive", "--output", "4", "--format", "json").stdout)
    assert {c["output"] for c in only4["columns"]} == {4}
    assert [c for c in whole if c["output"] == 4] == only4["columns"]
    one = json.loads(cli(finance, "lineage", "ts04_delete_inactive.journal_id", "--output", "3",
                         "--format", "json").stdout)["columns"]
    assert [(c["output"], c["column"]) for c in one] == [(3, "journal_id")]


def test_errors(finance):
    unknown = cli(finance, "lineage", "ts03_fx_conversion.amount_reportin")
    assert unknown.exit_code == 1, describe(unknown)
    assert "no column 'amount_reportin'" in unknown.stderr and "amount_reporting" in unknown.stderr
    assert "Traceback" not in unknown.stderr
    no_output = cli(finance, "lineage", "ts03_fx_conversion", "--output", "9")
    assert no_output.exit_code == 1 and "no output operation 9; outputs: 2" in no_output.stderr
    no_project = cli(finance, "lineage", "nope.amount")
    assert no_project.exit_code == 1 and "no project 'nope.amount'" in no_project.stderr
    bad_format = cli(finance, "lineage", "ts03_fx_conversion", "--format", "yaml")
    assert bad_format.exit_code == 2, describe(bad_format)


def test_openlineage_facet(finance):
    result = cli(finance, "lineage", "ts05_aggregate_by_type", "--format", "openlineage")
    assert result.exit_code == 0, describe(result)
    [out] = json.loads(result.stdout)["outputs"]
    assert (out["namespace"], out["name"]) == ("ledgerflow://finance", "ts05_by_account_type")
    facet = out["facets"]["columnLineage"]
    assert facet["_schemaURL"].endswith("ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet")
    assert facet["_producer"]
    fields = facet["fields"]
    [amount] = [f for f in fields["total_amount"]["inputFields"] if (f["name"], f["field"]) == ("gl", "amount_local")]
    assert set(amount) == {"namespace", "name", "field", "transformations"}
    [t] = amount["transformations"]
    assert set(t) == {"type", "subtype", "description", "masking"}
    assert (t["type"], t["subtype"], t["masking"]) == ("DIRECT", "AGGREGATION", False)
    subtypes = {(f["name"], f["field"]): [x["subtype"] for x in f["transformations"]]
                for f in fields["account_type"]["inputFields"]}
    assert subtypes[("accounts", "type")] == ["IDENTITY", "GROUP_BY"]
    assert subtypes[("gl", "account_code")] == ["JOIN"]
    for f in fields.values():
        for i in f["inputFields"]:
            for x in i["transformations"]:
                assert x["type"] == ("DIRECT" if x["subtype"] in ("IDENTITY", "TRANSFORMATION", "AGGREGATION")
                                     else "INDIRECT")
    assert ("accounts", "type") in {(d["name"], d["field"]) for d in facet["dataset"]}


DOT_NODE = re.compile(r'^  "(?:[^"\\]|\\.)+" \[label="(?:[^"\\]|\\.)*", shape=(box|ellipse)\];$')
DOT_EDGE = re.compile(r'^  "((?:[^"\\]|\\.)+)" -> "((?:[^"\\]|\\.)+)" \[label="([a-z_]+)[^"]*"(, style=dashed)?\];$')


def test_dot(finance):
    result = cli(finance, "lineage", "ts03_fx_conversion.amount_reporting", "--format", "dot")
    assert result.exit_code == 0, describe(result)
    lines = result.stdout.strip().splitlines()
    assert lines[0].startswith("digraph ") and lines[0].endswith("{") and lines[1] == "  rankdir=LR;"
    assert lines[-1] == "}"
    nodes = [line for line in lines[2:-1] if DOT_NODE.match(line)]
    found = [DOT_EDGE.match(line) for line in lines[2:-1] if not DOT_NODE.match(line)]
    assert all(found), [line for line in lines if not (DOT_NODE.match(line) or DOT_EDGE.match(line))]
    declared = {re.match(r'^  "([^"]+)"', n).group(1): re.search(r'label="([^"]*)"', n).group(1) for n in nodes}
    assert all(m.group(1) in declared and m.group(2) in declared for m in found)
    labelled = {(declared[m.group(1)], m.group(3), bool(m.group(4))) for m in found}  # node ids are n1, n2...
    assert ("gl.amount_local", "transformation", False) in labelled
    assert ("gl.currency", "join", True) in labelled
    assert len(found) == len(edges(load_workspace(str(finance)), "ts03_fx_conversion", 2, "amount_reporting"))


MERMAID_NODE = re.compile(r'^  (n\d+)(\["[^"]*"\]|\(\["[^"]*"\]\))$')
MERMAID_EDGE = re.compile(r'^  (n\d+) (-->|-\.->)\|"([a-z_]+)[^"]*"\| (n\d+)$')


def test_mermaid(finance):
    result = cli(finance, "lineage", "ts05_aggregate_by_type.total_amount", "--format", "mermaid")
    assert result.exit_code == 0, describe(result)
    lines = result.stdout.strip().splitlines()
    assert lines[0] == "flowchart LR"
    nodes = {MERMAID_NODE.match(line).group(1) for line in lines[1:] if MERMAID_NODE.match(line)}
    found = [MERMAID_EDGE.match(line) for line in lines[1:] if not MERMAID_NODE.match(line)]
    assert all(found), lines
    assert all(m.group(1) in nodes and m.group(4) in nodes for m in found)
    kinds = [(m.group(2), m.group(3)) for m in found]
    assert ("-->", "aggregation") in kinds and ("-.->", "group_by") in kinds and ("-.->", "join") in kinds


# ------------------------------------------------------------------------------------ across projects
CONVERT = """
    - seq: 1
      name: Convert to USD
      type: update
      arguments:
        joins:
          - alias: fx
            dataset_id: exchange_rates
            on: 'transactions.currency = fx.from_currency AND fx.to_currency = "USD" AND fx.rate_type = "closing"'
        assignments:
          - {column: amount_reporting, expression: transactions.amount_local * fx.rate}
    - seq: 2
      name: Register converted lines
      type: output
      arguments:
        destination: {path: "out/gl_usd/v{{version}}", format: csv}
        columns: [journal_id, account_code, currency, amount_reporting]
        register_as_dataset: gl_usd
    """
REPORT = """
    - seq: 1
      name: Totals per account
      type: aggregate
      arguments:
        group_by: [account_code]
        aggregations:
          - {column: total_usd, expression: SUM(amount_reporting)}
    - seq: 2
      name: Write totals
      type: output
      selector: 'gl_usd.currency <> "JPY"'
      arguments:
        destination: {table: usd_totals}
        columns: [account_code, total_usd]
    """
REGISTERED_COLUMNS = [("journal_id", "string"), ("account_code", "string"), ("currency", "string"),
                      ("amount_reporting", "decimal(18,2)")]
VIA = "chain_convert.2 -> gl_usd"
CHAIN_TOTAL = [
    ("aggregation", "exchange_rates.rate", VIA), ("aggregation", "gl.amount_local", VIA),
    *[(k, c, VIA) for k, c in FX_JOIN],
    *[(k, c, VIA) for k, c in FX_ASOF], *[(k, c, VIA) for k, c in GL_ROWS],
    ("filter", "gl.currency", VIA),  # the output's selector on gl_usd.currency, which is gl.currency as is
    ("filter", "gl_usd._deleted"), ("filter", "gl_usd._period"),  # not written by chain_convert as columns
    ("group_by", "gl.account_code", VIA)]


def _chain(root: Path) -> None:
    add_project(root, "chain_convert", CONVERT)
    add_project(root, "chain_report", REPORT, input_dataset="gl_usd")


def test_registered_dataset_lineage_through_the_module(finance):
    """The registered dataset's columns known however (here: a catalog entry handed to the loader)."""
    _chain(finance)
    registered = Dataset("0e000000-0000-4000-8000-000000000001", "gl_usd", "active", "gl_usd", "period",
                         [ColumnDef(n, t) for n, t in REGISTERED_COLUMNS], [DatasetVersion(1)], registered=True)
    ws = load_workspace(str(finance), extra_datasets=lambda: [registered])
    project, op = registering_output(ws, "gl_usd")
    assert (project.name, op.seq) == ("chain_convert", 2)
    assert registering_output(ws, "gl") is None
    assert edges(ws, "chain_report", 2, "total_usd") == CHAIN_TOTAL
    assert edges(ws, "chain_report", 2, "account_code")[:1] == [("identity", "gl.account_code", VIA)]


def test_registered_dataset_lineage_through_the_cli(finance):
    """The run store knows the registered dataset (as after a run of chain_convert)."""
    from ledgerflow.adapters.store.runstore import RunStore
    _chain(finance)
    RunStore(str(finance)).register("gl_usd", 1, str(finance / "out" / "gl_usd" / "v1"), "csv", ["2026-01"],
                                    REGISTERED_COLUMNS, "run-0", "2026-01-31T00:00:00")
    result = cli(finance, "lineage", "chain_report.total_usd", "--format", "json")
    assert result.exit_code == 0, describe(result)
    [col] = json.loads(result.stdout)["columns"]
    assert [(i["kind"], f"{i['dataset']}.{i['column']}") for i in col["inputs"]] == [e[:2] for e in CHAIN_TOTAL]
    text = cli(finance, "lineage", "chain_report.total_usd").stdout
    assert f"aggregation     gl.amount_local  via {VIA}" in text
    dot = cli(finance, "lineage", "chain_report.total_usd", "--format", "dot").stdout
    assert f'label="aggregation via {VIA}"' in dot


# ------------------------------------------------------------------------------------- the run record
def test_run_record_stores_each_outputs_lineage(spark, finance):
    rec = run_ok(finance, "ts04_delete_inactive")
    expected = json.loads(cli(finance, "lineage", "ts04_delete_inactive", "--format", "json").stdout)
    for seq in (3, 4):
        lineage = output_entry(rec, seq)["lineage"]
        assert lineage == {"columns": [c for c in expected["columns"] if c["output"] == seq]}

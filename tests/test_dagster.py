"""``ledgerflow.dagster.definitions`` (issue 47 point 4, docs/dagster.md): the sample workspace as Dagster assets,
materialised with Dagster's own ``materialize``: one month of a project with checks, a failing check (nothing
published, the check failed, the step failed), and a backfill of three months as one ledgerflow range."""
from __future__ import annotations

import json

import dagster as dg
import pytest
from dagster._core.storage.tags import ASSET_PARTITION_RANGE_END_TAG, ASSET_PARTITION_RANGE_START_TAG

from cli_support import add_checked_copy
from conftest import cli_env

pytestmark = pytest.mark.spark  # each materialisation runs ledgerflow, and so Spark, in a process of its own


@pytest.fixture
def spark_processes(monkeypatch):
    """The ledgerflow processes Dagster starts map the tests' class archive, as every test's processes do."""
    for key, value in cli_env().items():
        monkeypatch.setenv(key, value)


def _assets(finance):
    from ledgerflow.dagster import definitions
    defs = definitions(str(finance), start="2026-01")
    graph = defs.resolve_asset_graph()
    return defs, graph


def test_the_workspace_is_assets_with_dependencies_partitions_and_checks(finance):
    _defs, graph = _assets(finance)
    keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
    assert {"journal_controls/write_controlled_lines", "close_conversion/register_converted_lines",
            "close_consolidation/register_the_totals"} <= keys
    assert [p.to_user_string() for p in graph.get(dg.AssetKey(["close_consolidation", "register_the_totals"])).parent_keys] \
        == ["close_conversion/register_converted_lines"]
    node = graph.get(dg.AssetKey(["journal_controls", "write_controlled_lines"]))
    assert node.partitions_def.get_partition_keys()[:3] == ["2026-01", "2026-02", "2026-03"]
    assert {c.name for c in graph.asset_check_keys if c.asset_key == node.key} >= {"journals_balance", "some_lines"}
    assert (finance / "target" / "compiled.cache.json").is_file()  # a code location's next load compiles nothing


def test_a_check_hangs_on_the_output_its_on_names(finance):
    """A check whose ``on`` is what an output registers, or its name, judges that output: its asset check is that
    output's asset, not the project's first."""
    add_checked_copy(finance)
    _defs, graph = _assets(finance)
    on = {c.name: c.asset_key.to_user_string() for c in graph.asset_check_keys}
    assert on["copy_has_lines"] == on["copy_by_name"] == "journal_controls/write_the_copy"
    assert on["journals_balance"] == on["lines_numbered"] == "journal_controls/write_controlled_lines"


def test_materialise_a_backfill_of_three_months(finance, spark_processes):
    """One ledgerflow process: a backfill of three months of a chain's first project (one run of the range: one
    batch, each partition materialised with its run, rows and bridge). A range whose checks fail in some months:
    tests/test_dagster_fixes.py."""
    defs, _graph = _assets(finance)
    conversion = dg.AssetKey(["close_conversion", "register_converted_lines"])
    backfill = dg.materialize([defs.get_assets_def(conversion)], tags={ASSET_PARTITION_RANGE_START_TAG: "2026-01",
                                                                      ASSET_PARTITION_RANGE_END_TAG: "2026-03"})
    assert backfill.success
    events = backfill.get_asset_materialization_events()  # one per partition of the range, from the one run
    meta = {e.materialization.partition: e.materialization.metadata for e in events}
    assert sorted(meta) == ["2026-01", "2026-02", "2026-03"] and len(events) == 3
    from ledgerflow.adapters.store.runstore import RunStore
    runs = {p: RunStore(str(finance)).get_run(m["ledgerflow/run_id"].value) for p, m in meta.items()}
    assert {p: r["period"]["identifier"] for p, r in runs.items()} == {p: p for p in meta}  # each its own run
    assert len({r["batch_id"] for r in runs.values()}) == 1  # one invocation
    # each partition's own rows (the GL's v1 holds January's 10 lines only), not the range's
    assert {p: m["rows"].value for p, m in meta.items()} == {"2026-01": 10, "2026-02": 0, "2026-03": 0}
    assert json.loads(meta["2026-02"]["ledgerflow/run_ids"].value) == {"2026-02": runs["2026-02"]["run_id"]}
    bridge = json.loads(meta["2026-01"]["ledgerflow/bridge"].value)["2026-01"]
    assert bridge and {b["output"] for b in bridge} == {3} and bridge[0]["measure"] == "count"
    assert json.loads(meta["2026-01"]["ledgerflow/bridge_totals"].value)["count"] == \
        {"input_value": 10, "output_value": 10}

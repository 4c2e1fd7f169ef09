"""``ledgerflow.dagster`` (docs/dagster.md), what a review found: a range whose last months fail records the months
that completed, each check's result is its outcome with its severity (a ``warn`` check a WARN result), a run refused
before any check reports no check, names Dagster refuses (``-``, spaces) are made valid, and draft projects get no
asset. Two ledgerflow processes in all (one runs Spark); the naming test starts a stand-in for ledgerflow."""
from __future__ import annotations

import json
import sys
import textwrap

import dagster as dg
import pytest
from click.testing import CliRunner
from dagster._core.storage.tags import ASSET_PARTITION_RANGE_END_TAG, ASSET_PARTITION_RANGE_START_TAG

from conftest import cli_env

JOURNAL = dg.AssetKey(["journal_controls", "write_controlled_lines"])


@pytest.fixture
def spark_processes(monkeypatch):
    """The ledgerflow processes Dagster starts map the tests' class archive, as every test's processes do."""
    for key, value in cli_env().items():
        monkeypatch.setenv(key, value)


def _definitions(ws, **options):
    from ledgerflow.dagster import definitions
    return definitions(str(ws), start="2026-01", **options)


@pytest.mark.spark
def test_a_range_whose_later_months_fail_records_the_month_that_completed(finance, spark_processes):
    """journal_controls over 2026-01..2026-03: the GL's v1 holds January only, so January passes every fail check
    and is published while February and March fail ``some_lines`` (row_count min 1). An added warn check that
    January's non-USD lines violate warns. January is materialised with its own run, the step fails, and the
    checks are ERROR (failed), WARN (warned) or passed."""
    project = finance / "projects" / "journal_controls.yml"
    project.write_text(project.read_text().replace(
        "  - {name: some_lines, on: 3, row_count: {min: 1}}\n",
        "  - {name: some_lines, on: 3, row_count: {min: 1}}\n"
        "  - {name: only_usd, on: 3, accepted_values: {column: currency, values: [USD]}, severity: warn}\n"))
    defs = _definitions(finance)
    res = dg.materialize([defs.get_assets_def(JOURNAL)], raise_on_error=False,
                         tags={ASSET_PARTITION_RANGE_START_TAG: "2026-01", ASSET_PARTITION_RANGE_END_TAG: "2026-03"})
    assert not res.success
    assert (finance / "out" / "journal_lines" / "_period=2026-01").is_dir()
    assert not (finance / "out" / "journal_lines" / "_period=2026-02").exists()
    events = res.get_asset_materialization_events()
    assert [e.materialization.partition for e in events] == ["2026-01"]
    meta = events[0].materialization.metadata
    from ledgerflow.adapters.store.runstore import RunStore
    run = RunStore(str(finance)).get_run(meta["ledgerflow/run_id"].value)
    assert run["period"]["identifier"] == "2026-01" and run["status"] == "completed" and meta["rows"].value == 10

    checks = {e.check_name: e for e in res.get_asset_check_evaluations()}
    assert (checks["some_lines"].passed, checks["some_lines"].severity) == (False, dg.AssetCheckSeverity.ERROR)
    assert json.loads(checks["some_lines"].metadata["status"].value) == \
        {"2026-01": "passed", "2026-02": "failed", "2026-03": "failed"}
    assert (checks["only_usd"].passed, checks["only_usd"].severity) == (False, dg.AssetCheckSeverity.WARN)
    assert json.loads(checks["only_usd"].metadata["status"].value)["2026-01"] == "warned"
    assert checks["journals_balance"].passed is True and len(checks) >= 7  # every check of the project reported


@pytest.mark.spark
def test_a_refused_run_reports_no_check(finance, spark_processes):
    """A closed month: ledgerflow refuses the run before anything runs (PERIOD-001, exit 1), so no check was
    evaluated and none is reported (they were reported failed); the step fails and nothing is materialised."""
    from ledgerflow.adapters.cli import main
    closed = CliRunner().invoke(main, ["--workspace", str(finance), "periods", "close", "2026-01",
                                       "--project", "journal_controls", "--by", "rev"])
    assert closed.exit_code == 0, closed.output
    res = dg.materialize([_definitions(finance).get_assets_def(JOURNAL)], partition_key="2026-01",
                         raise_on_error=False)
    assert not res.success and not res.get_asset_materialization_events()
    assert res.get_asset_check_evaluations() == []
    failure = next(e for e in res.all_events if e.is_step_failure)
    assert "PERIOD-001" in failure.step_failure_data.error.message


def test_check_results_carry_status_and_severity():
    """The mapping itself: passed, warned (WARN), failed (ERROR) in any period, a warn check that passed keeps its
    WARN severity, and a check judged nowhere: nothing when the step fails, a WARN "not evaluated" when it succeeds
    (Dagster asks a result of every check of a step that succeeds)."""
    from ledgerflow.dagster import check_result
    spec = dg.AssetCheckSpec("c", asset=JOURNAL)

    def entries(*statuses):
        return {f"2026-0{i}": {"checks": [{"name": "c", "status": s, "violations": int(s != "passed")}]}
                for i, s in enumerate(statuses, 1)}

    def outcome(found, warns=False, required=True, periods=("2026-01", "2026-02")):
        result = check_result("c", spec, warns, found, list(periods), required)
        return None if result is None else (result.passed, result.severity)

    assert outcome(entries("passed", "passed")) == (True, dg.AssetCheckSeverity.ERROR)
    assert outcome(entries("passed", "passed"), warns=True) == (True, dg.AssetCheckSeverity.WARN)
    assert outcome(entries("warned", "passed"), warns=True) == (False, dg.AssetCheckSeverity.WARN)
    assert outcome(entries("warned", "failed"), warns=True) == (False, dg.AssetCheckSeverity.ERROR)
    assert outcome({"2026-01": {"checks": []}}, required=False) is None
    assert outcome({}, required=False) is None
    assert outcome({"2026-01": {"checks": []}}) == (False, dg.AssetCheckSeverity.WARN)
    half = check_result("c", spec, False, entries("passed"), ["2026-01", "2026-02"], False)
    assert half.passed and json.loads(half.metadata["status"].value) == {"2026-01": "passed",
                                                                         "2026-02": "not evaluated"}


def test_a_partitions_metadata_is_its_own_and_its_outputs_bridge():
    """One period's entry, two outputs: each output's metadata has its rows and the bridge figures of that output
    only, the whole output's (``group`` None) as its totals."""
    from ledgerflow.dagster import partition_metadata
    entry = {"period": "2026-02", "run_id": "r2", "batch_id": "b", "outputs": [
        {"seq": 3, "location": "out/a/_period=2026-02", "rows": 2}, {"seq": 4, "location": "out/b", "rows": 5}],
        "bridge": [{"output": 3, "group": None, "measure": "count", "input_value": 2, "output_value": 2},
                   {"output": 3, "group": {"currency": "USD"}, "measure": "count", "input_value": 1,
                    "output_value": 1},
                   {"output": 4, "group": None, "measure": "count", "input_value": 2, "output_value": 5}]}
    three, four = partition_metadata(entry, 3), partition_metadata(entry, 4)
    assert (three["rows"], three["ledgerflow/run_id"], four["rows"]) == (2, "r2", 5)
    assert json.loads(three["ledgerflow/rows"]) == {"2026-02": 2}
    assert [b["output"] for b in json.loads(three["ledgerflow/bridge"])["2026-02"]] == [3, 3]
    assert json.loads(three["ledgerflow/bridge_totals"]) == {"count": {"input_value": 2, "output_value": 2}}
    assert json.loads(four["ledgerflow/bridge_totals"]) == {"count": {"input_value": 2, "output_value": 5}}


# A stand-in for ledgerflow: it notes the project it was asked to run and writes a results file of one completed
# period with the project's checks passed.
FAKE = textwrap.dedent("""
    import json, sys
    args = sys.argv[1:]
    project, period, path = args[args.index("run") + 1], args[args.index("--period") + 1], args[-1]
    with open(sys.argv[1], "a") as fh:
        fh.write(project + "\\n")
    checks = [{"name": n, "status": "passed", "severity": "fail", "violations": 0} for n in CHECKS]
    doc = {"results_version": 1, "exit_code": 0, "error": None, "results": [
        {"project": project, "period": period, "status": "completed", "run_id": "r1", "batch_id": "b1",
         "outputs": [{"seq": 3, "location": "x", "rows": 7}], "checks": checks, "bridge": []}]}
    json.dump(doc, open(path, "w"))
""")


def test_project_and_check_names_dagster_refuses_are_made_valid(finance, tmp_path):
    """Two projects whose names ledgerflow accepts and Dagster does not (a space, a ``-``), alike once their other
    characters are ``_``: the code location loads, each name is valid, stable and distinct, and materialising runs
    ledgerflow with the project's own name and reports its checks."""
    journal = finance / "projects" / "journal_controls.yml"
    journal.write_text(journal.read_text().replace("name: journal_controls", "name: journal controls-2026", 1))
    other = finance / "projects" / "ts01_output_only.yml"
    other.write_text(other.read_text().replace("name: ts01_output_only", "name: journal-controls 2026", 1))
    log = tmp_path / "asked.txt"
    fake = tmp_path / "fake_ledgerflow.py"
    checks = ["journals_balance", "one_row_per_line", "known_accounts", "amounts_present", "currencies",
              "some_lines", "lines_numbered"]
    fake.write_text(f"CHECKS = {checks!r}\n" + FAKE)
    defs = _definitions(finance, command=[sys.executable, str(fake), str(log)])
    graph = defs.resolve_asset_graph()  # it used to refuse the group name "journal controls-2026"
    from ledgerflow.dagster import dagster_name
    names = {dagster_name("journal controls-2026"), dagster_name("journal-controls 2026")}
    assert len(names) == 2 and all(n.startswith("journal_controls_2026_") for n in names)
    assert names == {dagster_name("journal controls-2026"), dagster_name("journal-controls 2026")}  # stable
    groups = {graph.get(k).group_name for k in graph.get_all_asset_keys() if k.path[0] in names}
    assert groups == names
    key = dg.AssetKey([dagster_name("journal controls-2026"), "write_controlled_lines"])
    assert "some_lines" in {c.name for c in graph.asset_check_keys if c.asset_key == key}

    res = dg.materialize([defs.get_assets_def(key)], partition_key="2026-01")
    assert res.success and log.read_text() == "journal controls-2026\n"
    assert [e.materialization.metadata["rows"].value for e in res.get_asset_materialization_events()] == [7]
    assert all(e.passed for e in res.get_asset_check_evaluations())


def test_draft_projects_get_no_asset(finance):
    """``ledgerflow run`` refuses a draft project, so it has no asset; a project reading what the draft registers
    reads it as it stands, with no upstream asset (as the Airflow DAG of docs/airflow.md skips drafts)."""
    conversion = finance / "projects" / "close_1_conversion.yml"
    conversion.write_text(conversion.read_text().replace("status: active", "status: draft", 1))
    graph = _definitions(finance).resolve_asset_graph()
    keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
    assert not any(k.startswith("close_conversion/") for k in keys)
    assert graph.get(dg.AssetKey(["close_consolidation", "register_the_totals"])).parent_keys == set()

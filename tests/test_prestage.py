"""A fused range's one write, adopted period by period (adapters/commit/prestage.py): only what ledgerflow
staged itself is renamed or removed, real paths compared."""
from __future__ import annotations

import os
import re

import pytest

from ledgerflow.adapters.commit import prestage
from ledgerflow.adapters.commit.partitions import UnsafeDestination

KEY = "__lf_period_identifier"


def _prestaged(dest, run_id="r1", periods=("2026-01", "2026-02")):
    root = prestage.prestage_root(str(dest), run_id)
    for p in periods:
        os.makedirs(os.path.join(root, f"{KEY}={p}"))
        with open(os.path.join(root, f"{KEY}={p}", "part-0.csv"), "w") as fh:
            fh.write(f"a\n{p}\n")
    return root


def test_a_period_folder_is_renamed_into_the_partitions_versions_and_the_rest_discarded(tmp_path):
    dest = tmp_path / "out"
    root = _prestaged(dest)
    folder = prestage.period_folder(root, KEY, "2026-01")
    assert prestage.period_folder(root, KEY, "2026-03") is None  # a period without rows has no folder
    staged = prestage.adopt_partition(folder, str(dest), "2026-01", "run-a")
    assert staged.staged == str(dest / ".lf_versions" / "_period=2026-01" / "run-a")
    assert (dest / ".lf_versions/_period=2026-01/run-a/part-0.csv").read_text() == "a\n2026-01\n"
    assert not os.path.exists(folder) and not os.path.lexists(staged.link)  # staged, not yet visible
    prestage.discard_prestaged(root, str(dest))
    assert not os.path.exists(root) and (dest / ".lf_versions/_period=2026-01/run-a").is_dir()


def test_what_ledgerflow_did_not_stage_is_neither_adopted_nor_removed(tmp_path):
    dest = tmp_path / "out"
    elsewhere = tmp_path / "precious"
    (elsewhere / f"{KEY}=2026-01").mkdir(parents=True)
    (dest / ".lf_versions").mkdir(parents=True)
    link = dest / ".lf_versions" / ".fused-r9"
    link.symlink_to(elsewhere)  # a link where a prestaged root would be
    with pytest.raises(UnsafeDestination):
        prestage.adopt_partition(str(link / f"{KEY}=2026-01"), str(dest), "2026-01", "run-a")
    prestage.discard_prestaged(str(link), str(dest))
    assert (elsewhere / f"{KEY}=2026-01").is_dir() and link.is_symlink()
    stranger = dest / ".lf_versions" / "mine"  # not named .fused-*
    (stranger / f"{KEY}=2026-01").mkdir(parents=True)
    prestage.discard_prestaged(str(stranger), str(dest))
    with pytest.raises(UnsafeDestination):
        prestage.adopt_partition(str(stranger / f"{KEY}=2026-01"), str(dest), "2026-01", "run-a")
    assert (stranger / f"{KEY}=2026-01").is_dir()


def test_a_registered_version_never_replaces_an_existing_partition(tmp_path):
    dest = tmp_path / "out"
    root = _prestaged(dest)
    (dest / "_period=2026-01").mkdir(parents=True)  # something already there
    with pytest.raises(UnsafeDestination):
        prestage.adopt_partition(prestage.period_folder(root, KEY, "2026-01"), str(dest), "2026-01", "run-a",
                                 create_only=True)
    assert os.path.isdir(prestage.period_folder(root, KEY, "2026-01"))


def test_a_period_whose_prestaged_rows_are_gone_fails_instead_of_publishing_an_empty_partition(spark, finance):
    """The one write gave February a folder; removed before February's run adopts it, that run fails (nothing
    published for February), instead of taking the missing folder for a period without rows."""
    import shutil

    from fused_support import STARTED, extend_finance
    from ledgerflow.adapters.run.fused import run_range
    from ledgerflow.adapters.run.runner import Runner
    from ledgerflow.compiler.errors import ExecutionError
    from ledgerflow.compiler.periods import parse_period
    root = extend_finance(finance)
    spec = root / "projects/ts01_output_only.yml"
    spec.write_text(spec.read_text().replace("{table: ts01_transactions}", '{path: "out/ts01", format: parquet}'))
    versions = root / "out/ts01/.lf_versions"

    def on_start(period):
        if period.identifier == "2026-02":
            [gone] = versions.glob(f".fused-*/{KEY}=2026-02")
            shutil.rmtree(gone)
    runner = Runner(str(root), echo=lambda _: None, session_factory=lambda: spark)
    results = run_range(runner, "ts01_output_only", [parse_period(p) for p in ("2026-01", "2026-02", "2026-03")],
                        started_at=STARTED, on_start=on_start)
    got = {p.identifier: r for p, r in results}
    assert got["2026-01"]["outputs"][0]["rows"] == 10 and got["2026-03"]["outputs"][0]["rows"] == 3, got
    assert isinstance(got["2026-02"], ExecutionError) and "are no longer there" in str(got["2026-02"]), got
    assert not os.path.lexists(root / "out/ts01/_period=2026-02")  # no empty partition published for February
    assert sorted(p.name for p in (root / "out/ts01").iterdir()) == [".lf_versions", "_period=2026-01",
                                                                     "_period=2026-03"]
    assert not list(versions.glob(".fused-*"))


SPLIT_RESOLVER = """resolvers:
  split:
    rules:
      - name: months
        when: 'period.level = "month"'
        strategy: {type: path, path: "out/split", format: parquet}
      - name: quarters
        strategy: {type: table, table: "lf_prestage_split.split_q"}
"""


def test_a_fused_period_whose_output_goes_to_a_table_is_counted_and_an_empty_one_empties_its_partition(
        spark, finance, tmp_path):
    """A resolver sends months to a folder and quarters to a catalog table: the range's one write is for the
    month's folder; the quarter's table write still knows its row count, and with none it empties the
    partition (a dynamic overwrite of no rows would keep the rows of the run before)."""
    from cli_support import add_project
    from ledgerflow.adapters.run.fused import run_range
    from ledgerflow.adapters.run.runner import Runner
    from ledgerflow.compiler.periods import parse_period
    spark.sql("DROP DATABASE IF EXISTS lf_prestage_split CASCADE")
    spark.sql(f"CREATE DATABASE lf_prestage_split LOCATION '{tmp_path / 'warehouse'}'")
    try:
        config = finance / "ledgerflow.yml"
        config.write_text(config.read_text().replace("resolvers:\n", SPLIT_RESOLVER, 1))
        out = "- {seq: 2, name: Out, type: output, arguments: {destination: {table: split, resolver: split}}}"
        add_project(finance, "split", out)
        runner = Runner(str(finance), echo=lambda _: None, session_factory=lambda: spark)
        assert runner.run("split", "2026-Q1")["outputs"][0]["rows"] == 10
        drop_all = "- {seq: 1, name: Drop all, type: delete, selector: 'amount_local = amount_local'}\n"
        add_project(finance, "split", drop_all + out)  # every row deleted: nothing to output
        periods = [parse_period("2026-01"), parse_period("2026-Q1")]
        got = {p.identifier: r for p, r in run_range(runner, "split", periods)}
        assert all(isinstance(r, dict) for r in got.values()), got
        assert [got[p]["outputs"][0]["rows"] for p in ("2026-01", "2026-Q1")] == [0, 0]
        assert spark.table("lf_prestage_split.split_q").where("_period = '2026-Q1'").count() == 0
    finally:
        spark.sql("DROP DATABASE IF EXISTS lf_prestage_split CASCADE")


def _write_plans(spark) -> list[str]:
    """The physical plans of the writes Spark's SQL status store still holds for this session (a classic one)."""
    executions = spark._jsparkSession.sharedState().statusStore().executionsList()
    plans = (executions.apply(i).physicalPlanDescription() for i in range(executions.size()))
    return [p for p in plans if "InsertIntoHadoopFsRelationCommand" in p]


def test_a_fused_write_does_not_sort_its_rows_by_period_and_leaves_the_session_as_it_was(spark, finance):
    """The range's one write keeps a file per period open in each task instead of sorting every row by period
    first (Spark's planned write): its plan has no Sort, the rows are those of the periods, and the session's
    settings are back as they were after it."""
    from fused_support import STARTED, extend_finance
    from ledgerflow.adapters.run.fused import run_range
    from ledgerflow.adapters.run.runner import Runner
    from ledgerflow.compiler.periods import parse_period
    root = extend_finance(finance)
    spec = root / "projects/ts01_output_only.yml"
    spec.write_text(spec.read_text().replace("{table: ts01_transactions}", '{path: "out/ts01", format: parquet}'))
    before = {key: spark.conf.get(key, None) for key in prestage.UNSORTED_WRITE_SETTINGS}
    runner = Runner(str(root), echo=lambda _: None, session_factory=lambda: spark)
    results = run_range(runner, "ts01_output_only", [parse_period(p) for p in ("2026-01", "2026-02", "2026-03")],
                        started_at=STARTED)
    assert [r["outputs"][0]["rows"] for _, r in results] == [10, 4, 3]
    # the range's one write (the store keeps the last 1,000 queries: found by its folder, not its place)
    [plan] = [p for p in _write_plans(spark) if str(root / "out/ts01/.lf_versions" / prestage.PREFIX) in p]
    assert KEY in plan and not re.search(rf"\[{KEY}#\d+ ASC", plan), plan  # no sort by the period
    assert {key: spark.conf.get(key, None) for key in prestage.UNSORTED_WRITE_SETTINGS} == before
    assert spark.read.parquet(str(root / "out/ts01/_period=2026-02")).count() == 4

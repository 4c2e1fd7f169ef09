"""Destinations checked on real paths, table names that are table names, and a pinned registered version
read only for a period it holds.

1. An inline ``destination.path`` that leaves the workspace through a symbolic link (``data/escape ->
   /elsewhere``) is OUT-VR-002 at ``validate``, like an absolute path or a ``..`` climb; so is a relative
   path rule of the resolver an output writes through. A folder after a ``{{token}}``, which only the
   run knows, is checked when the run resolves its destinations, before anything is written, and the
   swap checks again that each partition still resolves to the folder its rows were staged in.
2. Table names (``catalog_table``, a destination's ``table``, a resolver's table rule) are
   ``[catalog.][database.]table`` at ``validate`` (TABLE-001), and a table a rule gives is checked again
   once the run substituted its tokens.
3. A registered version pinned by ``dataset_version`` that does not hold the run's period stops the
   run (exit 1) naming dataset, version and period, instead of reading no rows and registering them.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from cli_support import add_project, cli, describe, edit
from ledgerflow.adapters import writers
from ledgerflow.adapters.registered_reads import registered_resolution
from ledgerflow.adapters.runstore import RunStore
from ledgerflow.compiler.compile import compile_project, require_project
from ledgerflow.compiler.errors import ResolutionError
from ledgerflow.compiler.model import Dataset
from ledgerflow.compiler.periods import parse_period
from ledgerflow.compiler.table_names import table_name_problem
from ledgerflow.compiler.workspace import load_workspace


def _output(finance: Path, name: str, destination: str, extra: str = "") -> None:
    add_project(finance, name, f"""
        - {{seq: 1, name: Out, type: output, arguments: {{destination: {destination}{extra}}}}}
        """)


def _tree(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """A folder outside the workspace that must stay exactly as it is."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    (folder / "keep.txt").write_text("not ledgerflow's\n")
    return folder


# ------------------------------------------------------------------------ 1. destinations on real paths
def test_validate_refuses_an_inline_path_through_a_symlink_out_of_the_workspace(finance, elsewhere):
    os.symlink(elsewhere, finance / "data" / "escape")
    _output(finance, "escape", '{path: "data/escape/out", format: csv}')
    result = cli(finance, "validate", "escape")
    assert result.exit_code == 1, describe(result)
    assert "projects/escape.yml:7:" in result.stderr and "OUT-VR-002" in result.stderr, result.stderr
    assert f"'data/escape/out', which leads to {elsewhere}/out through a symbolic link" in result.stderr


def test_run_refuses_an_inline_path_through_a_symlink_before_writing(finance, elsewhere):
    os.symlink(elsewhere, finance / "data" / "escape")
    _output(finance, "escape", '{path: "data/escape/out", format: csv}')
    result = cli(finance, "run", "escape", "--period", "2026-01")
    assert result.exit_code == 1, describe(result)
    assert "projects/escape.yml:7:" in result.stderr and "OUT-VR-002" in result.stderr, result.stderr
    assert _tree(elsewhere) == ["keep.txt"]


def test_validate_refuses_a_symlink_back_to_the_workspace_folder_itself(finance):
    os.symlink(finance, finance / "here")
    _output(finance, "itself", '{path: "here", format: csv}')
    result = cli(finance, "validate", "itself")
    assert result.exit_code == 1 and "OUT-VR-002" in result.stderr, describe(result)


def test_validate_accepts_a_symlink_that_stays_inside_the_workspace(finance):
    (finance / "shelf").mkdir()
    os.symlink(finance / "shelf", finance / "out")
    _output(finance, "inside", '{path: "out/report/{{YYYY}}", format: csv}')
    result = cli(finance, "validate", "inside")
    assert result.exit_code == 0, describe(result)


def test_validate_refuses_a_resolver_rule_path_an_output_writes_through_out_of_the_workspace(finance, elsewhere):
    os.symlink(elsewhere, finance / "links")
    edit(finance, "ledgerflow.yml", "resolvers:\n", "resolvers:\n  linked:\n    rules:\n      - name: via-link\n"
         "        strategy: {type: path, path: \"links/{{table_name}}\", format: csv}\n"
         "  climbing:\n    rules:\n      - name: up\n"
         "        strategy: {type: path, path: \"../{{table_name}}\", format: csv}\n")
    _output(finance, "linked", "{table: report, resolver: linked}")
    _output(finance, "climbing", "{table: report, resolver: climbing}")
    for name, shown in (("linked", f"leads to {elsewhere}"), ("climbing", f"leads to {finance.parent}/")):
        result = cli(finance, "validate", name)
        assert result.exit_code == 1, describe(result)
        assert f"projects/{name}.yml:7:" in result.stderr and "OUT-VR-002" in result.stderr, result.stderr
        assert shown in result.stderr and "not inside the workspace" in result.stderr


def test_run_refuses_a_folder_after_a_token_that_links_out_before_writing(spark, finance, elsewhere):
    """``out/{{YYYY}}``: validate cannot know the folder; the run resolves it and refuses it before anything
    is written (before this change the run wrote its partition into ``elsewhere``)."""
    (finance / "out").mkdir()
    os.symlink(elsewhere, finance / "out" / "2026")
    _output(finance, "by_year", '{path: "out/{{YYYY}}/gl", format: csv}')
    assert cli(finance, "validate", "by_year").exit_code == 0
    before = _tree(elsewhere)
    result = cli(finance, "run", "by_year", "--period", "2026-01")
    assert result.exit_code == 1, describe(result)
    assert "OUT-VR-002" in result.stderr and f"leads to {elsewhere}/gl through a symbolic link" in result.stderr
    assert _tree(elsewhere) == before


class _NoRows:
    """Stands in for a DataFrame: the checks under test run before anything is written."""

    columns: list = []

    def __getattr__(self, name):
        raise AssertionError(f"nothing may be written (DataFrame.{name} was used)")


def test_staging_refuses_a_destination_that_left_the_workspace_after_it_was_resolved(tmp_path, elsewhere):
    ws = tmp_path / "ws"
    ws.mkdir()
    os.symlink(elsewhere, ws / "out")  # appeared after the run resolved ws/out/gl
    with pytest.raises(writers.UnsafeDestination, match="through a symbolic link, not inside the workspace"):
        writers.stage_partition(_NoRows(), str(ws / "out" / "gl"), "csv", "2026-01", "run-1", within=str(ws))
    assert _tree(elsewhere) == ["keep.txt"]


def _staged(root: Path, name: str, within: str | None) -> writers.Staged:
    folder = root / ".lf_versions" / "_period=2026-01" / name
    folder.mkdir(parents=True)
    (folder / "part-0.csv").write_text("a\n1\n")
    return writers.Staged(str(root / "_period=2026-01"), str(folder), within=within, real=os.path.realpath(folder))


@pytest.mark.parametrize("relative", [True, False])
def test_the_swap_refuses_a_destination_redirected_after_staging(tmp_path, elsewhere, relative):
    """A folder on the way replaced by a link while the run computed: the swap would have written the
    partition link into ``elsewhere``. Refused, for a relative destination (which must stay in the
    workspace) and for an absolute one of a resolver rule (which must stay where its rows were staged)."""
    ws = tmp_path / "ws"
    staged = _staged(ws / "out" / "gl", "run-1", str(ws) if relative else None)
    (elsewhere / "gl").mkdir()
    os.rename(ws / "out", ws / "out_moved")
    os.symlink(elsewhere, ws / "out")
    before = _tree(elsewhere)
    with pytest.raises(writers.UnsafeDestination, match="not inside the workspace" if relative else "was replaced"):
        writers.commit([staged])
    assert _tree(elsewhere) == before
    assert os.path.isdir(ws / "out_moved" / "gl" / ".lf_versions" / "_period=2026-01")


def test_the_swap_still_commits_through_a_link_that_was_there_when_staged(tmp_path):
    """A destination reached through a symbolic link inside the workspace is committed as before."""
    ws = tmp_path / "ws"
    (ws / "shelf").mkdir(parents=True)
    os.symlink(ws / "shelf", ws / "out")
    staged = _staged(ws / "out" / "gl", "run-1", str(ws))
    writers.commit([staged])
    assert os.path.realpath(ws / "out" / "gl" / "_period=2026-01") == os.path.realpath(staged.staged)


# ---------------------------------------------------------------------------------- 2. table names
BAD_NAMES = [".", "", "a {b}", "../../x", "a.b.c.d", "db..t", "db.t;drop", "2026_gl"]


@pytest.mark.parametrize("key", ["catalog_table", "table"])
@pytest.mark.parametrize("name", BAD_NAMES)
def test_validate_refuses_a_destination_table_name_that_is_not_a_table_name(finance, key, name):
    _output(finance, "bad_table", f'{{{key}: "{name}"}}')
    result = cli(finance, "validate", "bad_table")
    assert result.exit_code == 1, describe(result)
    assert "projects/bad_table.yml:7:" in result.stderr and "TABLE-001" in result.stderr, result.stderr
    assert f"the destination's {key} '{name}'" in result.stderr
    assert "Hint: a table name is table, database.table or catalog.database.table" in result.stderr


@pytest.mark.parametrize("name", ["t", "db.t", "spark_catalog.db.t", "finance.`2026_gl`", "_scratch.t_1"])
def test_validate_accepts_table_names_spark_takes(finance, name):
    _output(finance, "good_table", f'{{catalog_table: "{name}"}}')
    result = cli(finance, "validate", "good_table")
    assert result.exit_code == 0, describe(result)


@pytest.mark.parametrize("template", ["a {b}", "../../x", ".", "db.{{dataset_id}}", "lake.{{YYYY}}_gl"])
def test_validate_refuses_a_resolver_table_rule_that_gives_no_table_name(finance, template):
    edit(finance, "ledgerflow.yml", "resolvers:\n", "resolvers:\n  lake:\n    rules:\n      - name: tables\n"
         f"        strategy: {{type: table, table: \"{template}\"}}\n")
    result = cli(finance, "validate")
    assert result.exit_code == 1, describe(result)
    assert "ledgerflow.yml:7:40: TABLE-001" in result.stderr and "TABLE-001" in result.stderr, result.stderr
    assert f"gives the table name '{template}'" in result.stderr


def test_a_table_a_rule_gives_an_output_is_checked_once_its_tokens_are_filled(spark, finance):
    """``db.t_{{identifier}}`` is a table name for a year (``db.t_2026``), not for a month: the run refuses
    ``db.t_2026-01`` before anything runs (before this change Spark failed on it after computing)."""
    edit(finance, "ledgerflow.yml", "resolvers:\n", "resolvers:\n  lake:\n    rules:\n      - name: tables\n"
         "        strategy: {type: table, table: \"default.t_{{identifier}}\"}\n")
    _output(finance, "to_lake", "{table: gl_copy, resolver: lake}")
    assert cli(finance, "validate", "to_lake").exit_code == 0
    result = cli(finance, "run", "to_lake", "--period", "2026-01")
    assert result.exit_code == 1, describe(result)
    assert "rule 'tables' gives the table name 'default.t_2026-01', which holds '-'" in result.stderr
    assert "TABLE-001" in result.stderr


def test_the_table_name_rule():
    assert [n for n in BAD_NAMES if table_name_problem(n) is None] == []
    assert table_name_problem("`a b`.t") is not None  # Spark's session catalog refuses it too
    assert table_name_problem("db.`2026`") is None


# ------------------------------------------------------------------- 3. pinning a registered version
def _registered(periods: list[str], location: str, version: int = 1) -> dict:
    return {"name": "close_converted", "version": version, "location": location, "format": "csv",
            "periods": periods, "columns": [], "run_id": "r", "created_at": None}


def _close_converted() -> Dataset:
    return Dataset(id="x", name="close_converted", status="active", table_name="close_converted",
                   temporal_mode="period", columns=[], versions=[], registered=True)


def test_a_registered_version_is_read_only_for_a_period_it_holds(tmp_path):
    loc = tmp_path / "v1"
    (loc / "_period=2026-01").mkdir(parents=True)
    regs = [_registered(["2026-01"], str(loc)), _registered(["2026-02"], str(tmp_path / "v2"), 2)]
    ds = _close_converted()
    res = registered_resolution(ds, 1, regs, parse_period("2026-01"), pinned=True)
    assert [l.target for l in res.locations] == [str(loc)]
    with pytest.raises(ResolutionError) as err:
        registered_resolution(ds, 1, regs, parse_period("2026-02"), pinned=True)
    assert str(err.value).startswith("registered dataset 'close_converted' version 1 (pinned by dataset_version) "
                                     "does not hold period 2026-02 (it holds 2026-01): reading it for 2026-02 would "
                                     "read no rows. Nothing was run; pin a version that holds it (2)")
    with pytest.raises(ResolutionError, match="run the producing project for 2026-03 first"):
        registered_resolution(ds, 1, regs, parse_period("2026-03"), pinned=True)
    with pytest.raises(ResolutionError, match="has no version 7 \\(pinned by dataset_version\\) \\(registered "
                                              "versions: 1, 2\\)"):
        registered_resolution(ds, 7, regs, parse_period("2026-01"), pinned=True)
    os.rmdir(loc / "_period=2026-01")
    with pytest.raises(ResolutionError, match="holds period 2026-01, but its partition .* is gone"):
        registered_resolution(ds, 1, regs, parse_period("2026-01"), pinned=True)


def test_a_run_pinned_to_a_version_lacking_its_period_stops_and_registers_nothing(finance):
    """close_consolidation pinned to close_converted v1 (registered for 2026-01) and run for 2026-02: before
    this change it read no rows and registered a 0-row close_consolidated with exit 0. (v1 is registered
    as close_conversion's run for 2026-01 registers it; the refusal comes before Spark starts.)"""
    ws = load_workspace(str(finance))
    (output,) = compile_project(ws, require_project(ws, "close_conversion")).outputs
    location = finance / "data" / "close_converted" / "v1" / "close_converted"
    (location / ".lf_versions" / "_period=2026-01" / "r").mkdir(parents=True)
    (location / ".lf_versions" / "_period=2026-01" / "r" / "part-0.csv").write_text(
        ",".join(name for name, _ in output.columns if name != "_period") + "\n")  # the header a run writes
    os.symlink(".lf_versions/_period=2026-01/r", location / "_period=2026-01")
    RunStore(str(finance)).register("close_converted", 1, str(location), "csv", ["2026-01"], [], "r",
                                    "2026-01-31T00:00:00")
    edit(finance, "projects/close_2_consolidation.yml", "input_dataset_id: close_converted\n",
         "input_dataset_id: close_converted\ninput_dataset_version: 1\n")
    result = cli(finance, "run", "close_consolidation", "--period", "2026-02")
    assert result.exit_code == 1, describe(result)
    assert ("registered dataset 'close_converted' version 1 (pinned by dataset_version) does not hold period "
            "2026-02 (it holds 2026-01)") in result.stderr
    assert RunStore(str(finance)).registrations("close_consolidated") == []

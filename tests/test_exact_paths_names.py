"""Destinations checked on real paths, table names that are table names, and a pinned registered version
read only for a period it holds.

1. An inline ``destination.path`` that leaves the workspace through a symbolic link (``data/escape ->
   /elsewhere``) is OUT-VR-002 at ``validate``, like an absolute path or a ``..`` climb; so is a relative
   path rule of the resolver an output writes through. A folder after a ``{{token}}``, which only the
   run knows, is checked when the run resolves its destinations, before anything is written, and the
   swap checks again that each partition still resolves to the folder its rows were staged in.
2. Table names are ``[catalog.][database.]table`` as Spark 4.3 takes them (TABLE-001): a ``catalog_table``
   at ``validate``; a destination's ``table`` only where a table rule of its resolver makes it a table
   name (through a path rule it names a folder); a resolver's table rule where a project uses it (an
   output writing through it, a dataset read through it), tried with a period of each level, and again
   once the run substituted its tokens. A rule no project uses fails no project's ``validate``.
3. A registered version pinned by ``input_dataset_version`` (or a join's ``dataset_version``) that does
   not hold the run's period stops the run (exit 1) naming dataset, version, the pin's place and period,
   instead of reading no rows and registering them.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from cli_support import add_project, cli, describe, edit
from partition_support import shown
from ledgerflow.adapters.commit import partitions, staging, swaps
from ledgerflow.adapters.inputs.registered_reads import registered_resolution
from ledgerflow.adapters.store.runstore import RunStore
from ledgerflow.compiler.compile import compile_project, require_project
from ledgerflow.compiler import resolver
from ledgerflow.compiler.errors import Location, ResolutionError
from ledgerflow.compiler.model import Dataset, ResolverRule, Strategy
from ledgerflow.compiler.periods import parse_period
from ledgerflow.compiler.table_names import split_parts, table_name_problem
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
    for name, shown in (("linked", f"leads to {elsewhere}"), ("climbing", "which leaves the workspace")):
        result = cli(finance, "validate", name)
        assert result.exit_code == 1, describe(result)
        assert f"projects/{name}.yml:7:" in result.stderr and "OUT-VR-002" in result.stderr, result.stderr
        assert shown in result.stderr, result.stderr


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
    assert "output 1 (projects/by_year.yml:7:" in result.stderr, result.stderr  # the place, at run time too
    assert _tree(elsewhere) == before


def _path_rule(finance: Path, path: str) -> None:
    edit(finance, "ledgerflow.yml", "resolvers:\n", "resolvers:\n  here:\n    rules:\n      - name: root\n"
         f"        strategy: {{type: path, path: \"{path}\", format: csv}}\n")


@pytest.mark.parametrize("path", ["out/..", ".", "./"])
def test_validate_refuses_a_resolver_path_rule_that_is_the_workspace_folder(finance, path):
    """The fixed part of a rule equal to the workspace folder was taken for a path starting with a token:
    validate passed, and the run refused it blaming a symbolic link."""
    _path_rule(finance, path)
    _output(finance, "at_root", "{table: report, resolver: here}")
    result = cli(finance, "validate", "at_root")
    assert result.exit_code == 1, describe(result)
    assert "OUT-VR-002" in result.stderr and f"gives the path '{path}', which is the workspace folder itself" \
        in result.stderr, result.stderr


def test_the_run_says_a_destination_is_the_workspace_folder_or_a_link_back_to_it(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    with pytest.raises(ResolutionError) as err:
        resolver.destination_path(str(ws), ".", ".", "rule 'root'")
    assert ("rule 'root' (OUT-VR-002): the path '.' is the workspace folder itself; nothing was written"
            in str(err.value)), str(err.value)
    assert "symbolic link" not in str(err.value)
    os.symlink(ws, ws / "here")
    with pytest.raises(ResolutionError, match="the path 'here' leads back to the workspace folder itself through a "
                                              "symbolic link; nothing was written"):
        resolver.destination_path(str(ws), "here", "here", "rule 'root'")


def test_a_symbolic_link_loop_on_the_way_is_named_at_validate_and_run(finance):
    """``data/loop -> loop``: validate passed and Spark failed with exit 3 (Mkdirs failed)."""
    os.symlink("loop", finance / "data" / "loop")
    _output(finance, "looping", '{path: "data/loop/x", format: csv}')
    result = cli(finance, "validate", "looping")
    assert result.exit_code == 1, describe(result)
    assert (f"OUT-VR-002 output 1 writes to 'data/loop/x', which goes through {finance}/data/loop, a symbolic link "
            "that loops back on itself (ELOOP)") in result.stderr, result.stderr
    _output(finance, "looping_later", '{path: "data/loop/{{YYYY}}", format: csv}')
    assert cli(finance, "validate", "looping_later").exit_code == 1  # the folders before the token are checked
    with pytest.raises(ResolutionError, match=r"\(ELOOP\), so it leads nowhere; nothing was written. Remove the loop"):
        resolver.destination_path(str(finance), "data/loop/{{YYYY}}", "data/loop/2026", "output 1")


@pytest.mark.skipif(os.sep != "/" or os.altsep is not None, reason="a backslash is a separator on Windows")
def test_a_backslash_is_part_of_a_folder_name_on_posix(finance, elsewhere):
    """``data\\escape\\out`` is one folder in ``data``'s parent, the workspace (on Linux, Spark and the run write
    a folder of that name); it was checked as ``data/escape/out`` and refused when ``data/escape`` linked out."""
    os.symlink(elsewhere, finance / "data" / "escape")
    _output(finance, "backslash", '{path: "data\\\\escape\\\\out", format: csv}')
    result = cli(finance, "validate", "backslash")
    assert result.exit_code == 0, describe(result)
    assert resolver.destination_path(str(finance), "data\\escape\\out", "data\\escape\\out", "output 1") == \
        str(finance / "data\\escape\\out")
    _output(finance, "climbs", '{path: "out\\\\..\\\\..\\\\x", format: csv}')  # a climb on Windows stays refused
    result = cli(finance, "validate", "climbs")
    assert result.exit_code == 1 and "which leaves the workspace" in result.stderr, describe(result)


class _RedirectingWrite:
    """Stands in for a DataFrame whose write finds a folder on the way replaced by a link to ``elsewhere``
    (by another process) before it creates the staged folder, which therefore lands in ``elsewhere``."""

    columns: list = []

    def __init__(self, folder: Path, elsewhere: Path):
        self.folder, self.elsewhere = folder, elsewhere

    @property
    def write(self):
        return self

    def mode(self, _):
        return self

    def format(self, _):
        return self

    def option(self, *_):
        return self

    def options(self, **_):
        return self

    def save(self, path: str) -> None:
        os.rename(self.folder, str(self.folder) + "_moved")
        os.symlink(self.elsewhere, self.folder)
        os.makedirs(path)
        Path(path, "part-0.csv").write_text("a\n1\n")


@pytest.mark.parametrize("relative", [True, False])
def test_staging_refuses_a_folder_redirected_during_the_write(tmp_path, elsewhere, relative):
    """The staged folder's real path was recorded after the write: a redirect during it (an absolute resolver
    destination has no workspace to stay in) was recorded as where the rows belong, and the swap then wrote
    the partition link into ``elsewhere``. Its real path is now taken before the write and compared after."""
    root = tmp_path / "abs" / "out" / "gl"
    (root / ".lf_versions" / "_period=2026-01").mkdir(parents=True)
    frame = _RedirectingWrite(tmp_path / "abs" / "out", elsewhere)
    (elsewhere / "gl" / ".lf_versions" / "_period=2026-01").mkdir(parents=True)
    with pytest.raises(partitions.UnsafeDestination, match="was redirected while the run wrote it"):
        staged = staging.stage_partition(frame, str(root), "csv", "2026-01", "run-1",
                                         within=str(tmp_path / "abs") if relative else None)
        swaps.commit([staged])
    assert not os.path.lexists(elsewhere / "gl" / "_period=2026-01")


class _NoRows:
    """Stands in for a DataFrame: the checks under test run before anything is written."""

    columns: list = []

    def __getattr__(self, name):
        raise AssertionError(f"nothing may be written (DataFrame.{name} was used)")


def test_staging_refuses_a_destination_that_left_the_workspace_after_it_was_resolved(tmp_path, elsewhere):
    ws = tmp_path / "ws"
    ws.mkdir()
    os.symlink(elsewhere, ws / "out")  # appeared after the run resolved ws/out/gl
    with pytest.raises(partitions.UnsafeDestination, match="through a symbolic link, not inside the workspace"):
        staging.stage_partition(_NoRows(), str(ws / "out" / "gl"), "csv", "2026-01", "run-1", within=str(ws))
    assert _tree(elsewhere) == ["keep.txt"]


def _staged(root: Path, name: str, within: str | None) -> staging.Staged:
    folder = root / ".lf_versions" / "_period=2026-01" / name
    folder.mkdir(parents=True)
    (folder / "part-0.csv").write_text("a\n1\n")
    return staging.Staged(str(root / "_period=2026-01"), str(folder), within=within, real=shown(folder))


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
    with pytest.raises(partitions.UnsafeDestination, match="not inside the workspace" if relative else "was replaced") \
            as err:
        swaps.commit([staged])
    assert "Nothing was written there" not in str(err.value)  # rows may have been staged there before a redirect
    assert "Nothing was swapped in" in str(err.value)
    assert _tree(elsewhere) == before
    assert os.path.isdir(ws / "out_moved" / "gl" / ".lf_versions" / "_period=2026-01")


def test_the_swap_still_commits_through_a_link_that_was_there_when_staged(tmp_path):
    """A destination reached through a symbolic link inside the workspace is committed as before."""
    ws = tmp_path / "ws"
    (ws / "shelf").mkdir(parents=True)
    os.symlink(ws / "shelf", ws / "out")
    staged = _staged(ws / "out" / "gl", "run-1", str(ws))
    swaps.commit([staged])
    assert shown(ws / "out" / "gl" / "_period=2026-01") == shown(staged.staged)


# ---------------------------------------------------------------------------------- 2. table names
# Checked on Spark 4.3 (saveAsTable, spark.table, spark.sql and IDENTIFIER(:t) on a local session): a part may
# start with a digit unless the SQL lexer reads it as a number; only ASCII letters, digits and underscores,
# quoted or not (the session catalog refuses `gl-summary` and `Café`: INVALID_SCHEMA_OR_RELATION_NAME).
SPARK_TAKES = ["t", "db.t", "spark_catalog.db.t", "finance.`2026_gl`", "_scratch.t_1", "2026_gl", "default.2026_gl",
               "lake.1e5x", "lake.1e", "lake.12a", "lake.0x1f", "lake.1_2", "lake.1e5l", "lake.1f5", "lake.1bdx",
               "lake.`123`", "lake.`1e5`", "lake.select", "lake.union", "finance.`2026`"]
NUMBERS = ["lake.2026", "lake.1e5", "lake.1E5", "lake.1L", "lake.1s", "lake.1y", "lake.1f", "lake.1d", "lake.1bd",
           "lake.1e5f", "lake.1e5d", "lake.1e5bd", "lake.1e05", "lake.00", "2026"]
BAD_NAMES = [".", "", "a {b}", "../../x", "a.b.c.d", "db..t", "db.t;drop", "lake.gl-summary", "lake.Café",
             "lake.`Café`", "`a", "a.", "lake.2026"]


def test_the_table_name_rule_is_sparks():
    assert [n for n in SPARK_TAKES if table_name_problem(n) is not None] == []
    assert [n for n in NUMBERS + BAD_NAMES if table_name_problem(n) is None] == []
    assert table_name_problem("lake.2026") == ("has the part '2026', which Spark reads as a number: write it in "
                                               "backquotes (`2026`)")


def test_the_table_name_rule_agrees_with_sparks_parser(spark):
    """Parsing only (no table is created): what the rule takes unquoted Spark's parser reads as the same
    parts, and a part the rule sends to backquotes Spark's parser refuses unquoted."""
    parser = spark._jsparkSession.sessionState().sqlParser()
    for name in SPARK_TAKES:
        seq = parser.parseMultipartIdentifier(name)
        assert [seq.apply(i) for i in range(seq.size())] == [p for p, _ in split_parts(name)], name
    for name in NUMBERS:
        with pytest.raises(Exception):
            parser.parseMultipartIdentifier(name)


def test_a_hyphenated_catalog_name_is_refused_saying_why():
    problem = table_name_problem("`prod-cat`.db.t")
    assert problem.startswith("holds '-' (in 'prod-cat'): Spark's session catalog takes only ASCII letters, digits "
                              "and underscores in a database or table name, quoted or not"), problem
    assert problem.endswith("ledgerflow applies that to every part, a catalog's name too (another catalog might "
                            "accept more)"), problem


@pytest.mark.parametrize("name", BAD_NAMES + NUMBERS)
def test_validate_refuses_a_catalog_table_that_is_not_a_table_name(finance, name):
    _output(finance, "bad_table", f'{{catalog_table: "{name}"}}')
    result = cli(finance, "validate", "bad_table")
    assert result.exit_code == 1, describe(result)
    assert "projects/bad_table.yml:7:" in result.stderr and "TABLE-001" in result.stderr, result.stderr
    assert f"the destination's catalog_table '{name}'" in result.stderr
    assert "Hint: a table name is table, database.table or catalog.database.table" in result.stderr


@pytest.mark.parametrize("name", ["t", "db.t", "finance.`2026_gl`", "2026_gl", "default.2026_gl", "lake.1e5x"])
def test_validate_accepts_table_names_spark_takes(finance, name):
    _output(finance, "good_table", f'{{catalog_table: "{name}"}}')
    result = cli(finance, "validate", "good_table")
    assert result.exit_code == 0, describe(result)


@pytest.mark.parametrize("name", ["gl-summary", "2026_gl", "Café", "2026", "a {b}"])
def test_a_destination_table_written_through_a_path_rule_only_names_a_folder(finance, name):
    """The sample workspace's default resolver (``local``) is a path rule: ``{table: T}`` becomes a folder
    name, so T need not be a table name (these were refused, and the hint's backquotes ended up in a
    folder's name)."""
    _output(finance, "to_folder", f'{{table: "{name}"}}')
    result = cli(finance, "validate", "to_folder")
    assert result.exit_code == 0, describe(result)


@pytest.mark.parametrize("name", [".", "", "../../x", "db..t", "a/b", "a\\\\b", "`2026_gl`"])
def test_a_destination_table_that_cannot_name_a_folder_is_refused(finance, name):
    """``{table: "`2026_gl`"}`` (what the previous hint said to write) passed validate and the run wrote to a
    folder named `2026_gl` with its backquotes."""
    _output(finance, "no_folder", f'{{table: "{name}"}}')
    result = cli(finance, "validate", "no_folder")
    assert result.exit_code == 1, describe(result)
    assert "projects/no_folder.yml:7:" in result.stderr and "TABLE-001" in result.stderr, result.stderr


def _lake(finance: Path, table: str, extra: str = "") -> None:
    edit(finance, "ledgerflow.yml", "resolvers:\n", "resolvers:\n  lake:\n    rules:\n      - name: tables\n"
         f"{extra}        strategy: {{type: table, table: \"{table}\"}}\n")


@pytest.mark.parametrize("table, name, shown", [
    ("lake.{{table_name}}", "gl-summary", "'lake.gl-summary', which holds '-'"),
    ("lake.{{table_name}}", "2026", "'lake.2026', which has the part '2026', which Spark reads as a number"),
    ("a {b}", "report", "'a {b}', which holds ' '"),
    ("db.{{dataset_id}}", "report", "which holds '-'"),
    ("lake.{{YYYY}}", "report", "'lake.2026' for a year period (2026), which has the part '2026'"),
])
def test_validate_refuses_an_output_table_a_table_rule_cannot_name(finance, table, name, shown):
    _lake(finance, table)
    _output(finance, "to_lake", f'{{table: "{name}", resolver: lake}}')
    result = cli(finance, "validate", "to_lake")
    assert result.exit_code == 1, describe(result)
    assert "projects/to_lake.yml:7:" in result.stderr and "TABLE-001" in result.stderr, result.stderr
    assert (f"output 1 writes the table '{name}' through resolver 'lake', whose rule 'tables' (ledgerflow.yml:6:9) "
            "gives the table name ") in result.stderr and shown in result.stderr, result.stderr


@pytest.mark.parametrize("table", ["lake.{{table_name}}", "lake.{{YYYY}}_gl", "lake.t_{{YYYY}}{{MM}}",
                                   "lake.`{{YYYY}}`"])
def test_validate_accepts_an_output_table_a_table_rule_names(finance, table):
    _lake(finance, table)
    _output(finance, "to_lake", '{table: "2026_gl", resolver: lake}')
    result = cli(finance, "validate", "to_lake")
    assert result.exit_code == 0, describe(result)


@pytest.mark.parametrize("table", ["a {b}", "../../x", ".", "lake.{{YYYY}}_gl", "lake.{{YYYY}}"])
def test_a_table_rule_no_project_uses_fails_no_project(finance, table):
    """A resolver rule is checked where it is used, with that use's values: a broken (or, for
    ``lake.{{YYYY}}_gl``, wrongly refused) rule in ledgerflow.yml made every project's validate fail."""
    _lake(finance, table)
    result = cli(finance, "validate")
    assert result.exit_code == 0, describe(result)


def test_a_dataset_read_through_a_table_rule_is_checked_where_it_is_read(finance):
    _lake(finance, "lake.{{table_name}}_{{identifier}}")
    _output(finance, "reads_lake", '{path: "out/reads_lake", format: csv}', )
    edit(finance, "projects/reads_lake.yml", "input_dataset_id: gl\n",
         "input_dataset_id: gl\nresolver_overrides: {gl: lake}\n")
    result = cli(finance, "validate", "reads_lake")
    assert result.exit_code == 1, describe(result)
    assert "projects/reads_lake.yml:5:" in result.stderr and "TABLE-001" in result.stderr, result.stderr
    assert ("dataset 'gl' is read through resolver 'lake', whose rule 'tables' (ledgerflow.yml:6:9) gives the table "
            "name ") in result.stderr and "for a quarter period (2026-Q1), which holds '-'" in result.stderr


def test_a_table_rule_with_the_identifier_is_tried_for_every_period_level(finance):
    """``default.t_{{identifier}}`` names a table for a year (``default.t_2026``), not for a quarter, month or
    day (``2026-01`` holds '-'); validate tried the year only, so every month's run was refused. A rule
    serving years only (its data_level, or its when) passes."""
    _lake(finance, "default.t_{{identifier}}")
    _output(finance, "to_lake", "{table: gl_copy, resolver: lake}")
    result = cli(finance, "validate", "to_lake")
    assert result.exit_code == 1, describe(result)
    assert ("gives the table name 'default.t_2026-Q1' for a quarter period (2026-Q1), which holds '-'"
            in result.stderr), result.stderr
    edit(finance, "ledgerflow.yml", "      - name: tables\n", "      - name: tables\n        data_level: year\n")
    assert cli(finance, "validate", "to_lake").exit_code == 0
    edit(finance, "ledgerflow.yml", "        data_level: year\n", "        when: \"period.level = 'year'\"\n")
    assert cli(finance, "validate", "to_lake").exit_code == 0


def _rule(table: str) -> ResolverRule:
    return ResolverRule("tables", "any", Strategy(type="table", table=table), location=Location("ledgerflow.yml", 7, 9))


def _gl(table_name: str) -> Dataset:
    return Dataset(id="x", name="gl", status="active", table_name=table_name, temporal_mode="period", columns=[],
                   versions=[])


def test_a_run_reads_a_digit_leading_table_a_rule_gives():
    """A dataset whose table is ``2026_gl`` read through ``lake.{{table_name}}``: refused at run time (Spark
    reads it), so runs recorded before could not be replayed."""
    [loc] = resolver.rule_locations("/ws", _rule("lake.{{table_name}}"), _gl("2026_gl"), 1, parse_period("2026-01"))
    assert loc.target == "lake.2026_gl"


def test_the_run_names_the_rule_and_its_place_when_a_table_it_gives_is_refused():
    with pytest.raises(ResolutionError) as err:
        resolver.rule_locations("/ws", _rule("lake.t_{{identifier}}"), _gl("gl"), 1, parse_period("2026-01"))
    assert str(err.value).startswith("rule 'tables' (ledgerflow.yml:7:9) gives the table name 'lake.t_2026-01', "
                                     "which holds '-'"), str(err.value)
    assert "(TABLE-001)" in str(err.value)


# ------------------------------------------------------------------- 3. pinning a registered version
def _registered(periods: list[str], location: str, version: int = 1) -> dict:
    return {"name": "close_converted", "version": version, "location": location, "format": "csv",
            "periods": periods, "columns": [], "run_id": "r", "created_at": None}


def _close_converted() -> Dataset:
    return Dataset(id="x", name="close_converted", status="active", table_name="close_converted",
                   temporal_mode="period", columns=[], versions=[], registered=True)


PIN = "input_dataset_version at projects/p.yml:4:24"


def test_a_registered_version_is_read_only_for_a_period_it_holds(tmp_path):
    loc = tmp_path / "v1"
    (loc / "_period=2026-01").mkdir(parents=True)
    regs = [_registered(["2026-01"], str(loc)), _registered(["2026-02"], str(tmp_path / "v2"), 2)]
    ds = _close_converted()
    res = registered_resolution(ds, 1, regs, parse_period("2026-01"), pin=PIN)
    assert [l.target for l in res.locations] == [str(loc)]
    with pytest.raises(ResolutionError) as err:
        registered_resolution(ds, 1, regs, parse_period("2026-02"), pin=PIN)
    assert str(err.value).startswith("registered dataset 'close_converted' version 1 (pinned by "
                                     "input_dataset_version at projects/p.yml:4:24) does not hold period 2026-02 (it "
                                     "holds 2026-01): reading it for 2026-02 would read no rows. Nothing was run; pin "
                                     "a version that holds it (2)")
    with pytest.raises(ResolutionError, match="run the producing project for 2026-03 first"):
        registered_resolution(ds, 1, regs, parse_period("2026-03"), pin=PIN)
    with pytest.raises(ResolutionError, match="has no version 7 \\(pinned by input_dataset_version at "
                                              "projects/p.yml:4:24\\) \\(registered versions: 1, 2\\)"):
        registered_resolution(ds, 7, regs, parse_period("2026-01"), pin=PIN)
    os.rmdir(loc / "_period=2026-01")
    with pytest.raises(ResolutionError, match="holds period 2026-01, but its partition .* is gone"):
        registered_resolution(ds, 1, regs, parse_period("2026-01"), pin=PIN)


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
    assert ("registered dataset 'close_converted' version 1 (pinned by input_dataset_version at "
            "projects/close_2_consolidation.yml:7:24) does not hold period 2026-02 (it holds 2026-01)") in result.stderr
    assert RunStore(str(finance)).registrations("close_consolidated") == []


def test_a_pin_is_named_by_its_key_and_place(finance):
    """The refusal said "pinned by dataset_version" for every pin, the project's input_dataset_version too,
    and gave no place."""
    from ledgerflow.adapters.inputs.registered_reads import pin_source
    edit(finance, "projects/ts03_fx_conversion.yml", "          dataset_id: exchange_rates\n",
         "          dataset_id: exchange_rates\n          dataset_version: 1\n")
    edit(finance, "projects/ts06_append_budgets.yml", "source: {dataset_id: budgets}",
         "source: {dataset_id: budgets, dataset_version: 1}")
    edit(finance, "projects/ts06_append_budgets.yml", "input_dataset_id: gl\n", "input_dataset_id: gl\n"
         "input_dataset_version: 1\n")
    ws = load_workspace(str(finance))
    found = {}
    for name in ("ts03_fx_conversion", "ts06_append_budgets"):
        compiled = compile_project(ws, require_project(ws, name))
        found.update({v.dataset.name: pin_source(compiled.project, v) for v in compiled.inputs})
    assert found == {"gl": "input_dataset_version at projects/ts06_append_budgets.yml:7:24",
                     "exchange_rates": "dataset_version at projects/ts03_fx_conversion.yml:15:28",
                     "budgets": "dataset_version at projects/ts06_append_budgets.yml:13:54"}


def test_a_fixture_column_the_dataset_lacks_named_twice_is_reported_once(finance):
    from cli_support import write
    write(finance, "tests/fixtures/foo.csv", "journal_id,foo,foo\nJE-1,1,2\n")
    write(finance, "tests/foo.yml", "project: ts07_output_columns\nperiod: 2026-01\ngiven:\n"
          "  gl: {csv: fixtures/foo.csv}\nexpect: [{output: 1, rows: []}]\n")
    result = cli(finance, "test", "foo")
    assert result.exit_code == 1, describe(result)
    assert result.stdout.count("TEST-006 dataset 'gl' has no column 'foo'") == 1, result.stdout

"""The resolver engine, pure (no Spark): rule order and ``when``, ``data_level`` expansion, path tokens, the
``table`` strategy, precedence, ResolverNotFound, no-match errors, and paths that may not leave the workspace.
"""
from __future__ import annotations

import os
from textwrap import dedent

import pytest

from ledgerflow.compiler.errors import Location, ResolutionError
from ledgerflow.compiler.model import (ColumnDef, Dataset, DatasetRef, DatasetVersion, Project, Resolver,
                                       ResolverRule, Strategy, Workspace, WorkspaceConfig)
from ledgerflow.compiler.periods import parse_period
from ledgerflow.compiler.resolver import ResolvedLocation, choose_resolver, match_rule, resolve, rule_locations
from ledgerflow.compiler.workspace import load_workspace

GL_ID = "0a000000-0000-4000-8000-000000000001"
RATES_ID = "0a000000-0000-4000-8000-000000000004"
ROOT = "/srv/ws"


def rule(name: str, path: str | None = None, *, when: str | None = None, level: str = "any",
         table: str | None = None, fmt: str = "parquet") -> ResolverRule:
    strategy = Strategy("table", table=table) if table else Strategy("path", path=path, format=fmt)
    return ResolverRule(name, level, strategy, when)


def dataset(name: str = "gl", table: str = "transactions", ds_id: str = GL_ID,
            resolver_id: str | None = None) -> Dataset:
    return Dataset(id=ds_id, name=name, status="active", table_name=table, temporal_mode="period",
                   columns=[ColumnDef("amount", "decimal(18,2)")], versions=[DatasetVersion(1)],
                   resolver_id=resolver_id)


def workspace(resolvers: dict[str, list[ResolverRule]], default: str | None = "local", root: str = ROOT,
              datasets: list[Dataset] | None = None) -> Workspace:
    config = WorkspaceConfig("t", default, {n: Resolver(n, rules) for n, rules in resolvers.items()})
    return Workspace(root, config, datasets or [], [])


def project(overrides: dict[str, str] | None = None) -> Project:
    return Project(id="0d000000-0000-4000-8000-000000000001", name="p", version=1, status="active",
                   input=DatasetRef("gl", None, Location("projects/p.yml")), operations=[],
                   resolver_overrides=overrides or {})


def targets(locations: list[ResolvedLocation]) -> list[tuple[str, str | None]]:
    return [(loc.target, loc.period) for loc in locations]


def error_of(fn, *args) -> str:
    with pytest.raises(ResolutionError) as info:
        fn(*args)
    return str(info.value)


# ------------------------------------------------------------------------------------------ order, when
ORDERED = [
    rule("daily", "d/{{identifier}}", when='period.level = "day"'),
    rule("rates-by-table", "r/{{identifier}}", when='table.name = "fx_rates"'),
    rule("q1-special", "q/{{identifier}}", when='period.identifier = "2026-Q1"'),
    rule("history", "h/{{identifier}}", when='period.start_date < DATE("2025-01-01")'),
    rule("late-months", "l/{{identifier}}", when='period.level = "month" AND MONTH(period.end_date) >= 10'),
    rule("first-of-2026", "f/{{identifier}}", when='LEFT(period.identifier, 4) = "2026" AND DAY(period.start_date) = 1'),
    rule("fallback", "any/{{identifier}}"),
    rule("never-reached", "never/{{identifier}}"),
]


@pytest.mark.parametrize("period, table, expected", [
    ("2026-01-15", "transactions", "daily"),        # level day, before the table rule
    ("2026-01-15", "fx_rates", "daily"),            # two rules hold: the first one wins
    ("2026-01", "fx_rates", "rates-by-table"),
    ("2026-Q1", "transactions", "q1-special"),
    ("2026-Q2", "transactions", "first-of-2026"),   # identifier differs from q1-special
    ("2024-12", "transactions", "history"),         # start_date 2024-12-01 < 2025-01-01, before late-months
    ("2025-11", "transactions", "late-months"),
    ("2025-03", "transactions", "fallback"),
    ("2026-02", "transactions", "first-of-2026"),
    ("2025", "transactions", "fallback"),
])
def test_first_rule_whose_when_holds_wins(period, table, expected):
    resolver = Resolver("local", ORDERED)
    assert match_rule(resolver, dataset(table=table), parse_period(period)).name == expected


def test_when_reads_period_end_date_and_functions():
    resolver = Resolver("r", [
        rule("year-end", "ye", when='period.end_date = DATE("2025-12-31") AND period.level <> "day"'),
        rule("upper", "up", when='UPPER(table.name) = "GL_LINES" OR LEN(period.identifier) = 7'),
        rule("rest", "rest"),
    ])
    assert match_rule(resolver, dataset(), parse_period("2025-12")).name == "year-end"
    assert match_rule(resolver, dataset(), parse_period("2025-Q4")).name == "year-end"
    assert match_rule(resolver, dataset(), parse_period("2025")).name == "year-end"
    assert match_rule(resolver, dataset(), parse_period("2025-12-31")).name == "rest"     # level day, len 10
    assert match_rule(resolver, dataset(table="gl_lines"), parse_period("2026")).name == "upper"
    assert match_rule(resolver, dataset(), parse_period("2026-01")).name == "upper"         # len("2026-01") = 7
    assert match_rule(resolver, dataset(), parse_period("2026-Q1")).name == "upper"         # len("2026-Q1") = 7
    assert match_rule(resolver, dataset(), parse_period("2026")).name == "rest"


def test_no_matching_rule_lists_every_rule_with_its_reason():
    resolver = Resolver("local", [
        rule("daily", "d", when='period.level = "day"'),
        rule("rates", "r", when='table.name = "fx_rates"'),
        rule("old", "o", when='period.start_date < DATE("2020-01-01")'),
    ])
    text = error_of(match_rule, resolver, dataset(), parse_period("2026-Q1"))
    assert text == (
        "resolver 'local' has no rule matching dataset 'gl' for period 2026-Q1: "
        "rule 'daily': when 'period.level = \"day\"' is false for period 2026-Q1 (level quarter), table transactions; "
        "rule 'rates': when 'table.name = \"fx_rates\"' is false for period 2026-Q1 (level quarter), "
        "table transactions; "
        "rule 'old': when 'period.start_date < DATE(\"2020-01-01\")' is false for period 2026-Q1 (level quarter), "
        "table transactions.")


def test_resolver_without_rules_is_a_no_match_error():
    text = error_of(match_rule, Resolver("empty", []), dataset(), parse_period("2026-01"))
    assert text == "resolver 'empty' has no rule matching dataset 'gl' for period 2026-01: the resolver has no rules."


@pytest.mark.parametrize("when, problem", [
    ('period.levl = "month"', "unknown name 'period.levl'"),
    ('period.level = ', "expected a value, found 'end of expression'"),
    ('TODAY() > DATE("2026-01-01")', "function TODAY is not available in a resolver's when"),
    ('period.start_date > "2026-01-01"', "cannot apply '>'"),
])
def test_invalid_when_is_an_error_not_a_silent_fall_through(when, problem):
    resolver = Resolver("local", [rule("broken", "b", when=when), rule("fallback", "f")])
    text = error_of(match_rule, resolver, dataset(), parse_period("2026-01"))
    assert text.startswith(f"resolver 'local', rule 'broken': invalid when '{when}': "), text
    assert problem in text


# ----------------------------------------------------------------------------------- data_level expansion
def test_quarter_run_over_month_rule_reads_three_monthly_locations():
    r = rule("monthly", "data/{{dataset}}/{{YYYY}}-{{MM}}.csv", level="month", fmt="csv")
    locs = rule_locations(ROOT, r, dataset(), 1, parse_period("2026-Q1"))
    assert locs == [ResolvedLocation("path", f"{ROOT}/data/gl/2026-{m}.csv", "csv", f"2026-{m}")
                    for m in ("01", "02", "03")]


def test_year_run_over_quarter_rule_reads_four_locations():
    r = rule("quarterly", "data/{{dataset}}/{{YYYY}}/{{QQ}}", level="quarter")
    locs = rule_locations(ROOT, r, dataset(), 1, parse_period("2025"))
    assert targets(locs) == [(f"{ROOT}/data/gl/2025/Q{q}", f"2025-Q{q}") for q in (1, 2, 3, 4)]


def test_year_run_over_month_rule_reads_twelve_locations():
    r = rule("monthly", "m/{{identifier}}", level="month")
    locs = rule_locations(ROOT, r, dataset(), 1, parse_period("2026"))
    assert [loc.period for loc in locs] == [f"2026-{m:02d}" for m in range(1, 13)]


@pytest.mark.parametrize("period, days", [("2026-02", 28), ("2024-02", 29), ("2026-04", 30), ("2026-01", 31)])
def test_day_rule_over_a_month_reads_one_location_per_day(period, days):
    r = rule("daily", "d/{{YYYY}}/{{MM}}/{{DD}}", level="day")
    locs = rule_locations(ROOT, r, dataset(), 1, parse_period(period))
    y, m = period.split("-")
    assert targets(locs) == [(f"{ROOT}/d/{y}/{m}/{d:02d}", f"{y}-{m}-{d:02d}") for d in range(1, days + 1)]


def test_day_rule_over_a_quarter_reads_every_day():
    r = rule("daily", "d/{{identifier}}", level="day")
    locs = rule_locations(ROOT, r, dataset(), 1, parse_period("2026-Q1"))
    assert len(locs) == 31 + 28 + 31
    assert (locs[0].period, locs[58].period, locs[-1].period) == ("2026-01-01", "2026-02-28", "2026-03-31")


def test_same_level_and_any_read_one_location():
    same = rule("monthly", "m/{{identifier}}", level="month")
    assert targets(rule_locations(ROOT, same, dataset(), 1, parse_period("2026-01"))) == [(f"{ROOT}/m/2026-01",
                                                                                          "2026-01")]
    anyp = rule("files", "data/{{dataset}}/v{{version}}/{{table_name}}.csv", fmt="csv")
    # no period token and data_level any: the location is not period-specific
    assert rule_locations(ROOT, anyp, dataset(), 3, parse_period("2026-Q1")) == [
        ResolvedLocation("path", f"{ROOT}/data/gl/v3/transactions.csv", "csv", None)]
    tokened = rule("by-period", "p/{{identifier}}")
    assert targets(rule_locations(ROOT, tokened, dataset(), 1, parse_period("2026-Q1"))) == [(f"{ROOT}/p/2026-Q1",
                                                                                             "2026-Q1")]


def test_data_level_coarser_than_the_run_is_an_error():
    r = rule("quarterly", "q/{{identifier}}", level="quarter")
    text = error_of(rule_locations, ROOT, r, dataset(), 1, parse_period("2026-01"))
    assert text == ("rule 'quarterly' holds quarter data, coarser than the run's period 2026-01 (month); "
                    "a coarser location cannot be split.")


# ------------------------------------------------------------------------------------------------ tokens
def test_every_path_token_of_a_month():
    r = rule("all", "data/{{dataset}}/{{dataset_id}}/v{{version}}/{{table_name}}/{{identifier}}/"
                    "{{YYYY}}/{{MM}}/{{QQ}}/{{DD}}.json", fmt="json")
    [loc] = rule_locations(ROOT, r, dataset(), 7, parse_period("2026-08"))
    assert loc == ResolvedLocation("path", f"{ROOT}/data/gl/{GL_ID}/v7/transactions/2026-08/2026/08/Q3/01.json",
                                   "json", "2026-08")


@pytest.mark.parametrize("period, expected", [
    ("2026-11-09", "2026-11-09|2026|11|Q4|09"),
    ("2026-Q2", "2026-Q2|2026|04|Q2|01"),     # a quarter's tokens are those of its first day
    ("2025", "2025|2025|01|Q1|01"),
    ("2026-03", "2026-03|2026|03|Q1|01"),
])
def test_period_tokens_per_level(period, expected):
    r = rule("t", "{{identifier}}|{{YYYY}}|{{MM}}|{{QQ}}|{{DD}}")
    [loc] = rule_locations(ROOT, r, dataset(), 1, parse_period(period))
    assert loc.target == f"{ROOT}/{expected}"


def test_unknown_token_is_an_error_listing_the_tokens():
    text = error_of(rule_locations, ROOT, rule("bad", "data/{{datset}}"), dataset(), 1, parse_period("2026-01"))
    assert text == ("rule 'bad': unknown path token {{datset}}; tokens are {{dataset}}, {{dataset_id}}, {{version}}, "
                    "{{table_name}}, {{identifier}}, {{YYYY}}, {{MM}}, {{QQ}}, {{DD}}.")


# ------------------------------------------------------------------------------------------- table strategy
def test_table_strategy_gives_catalog_tables():
    r = rule("catalog", table="finance.{{table_name}}_v{{version}}")
    assert rule_locations(ROOT, r, dataset(), 2, parse_period("2026-01")) == [
        ResolvedLocation("table", "finance.transactions_v2", "table", None)]
    monthly = rule("monthly-tables", table="lake.{{dataset}}_{{YYYY}}{{MM}}", level="month")
    assert targets(rule_locations(ROOT, monthly, dataset(), 1, parse_period("2026-Q3"))) == [
        ("lake.gl_202607", "2026-07"), ("lake.gl_202608", "2026-08"), ("lake.gl_202609", "2026-09")]


def test_table_strategy_refuses_a_name_that_is_not_db_table():
    r = rule("catalog", table="finance.{{identifier}}")
    text = error_of(rule_locations, ROOT, r, dataset(), 1, parse_period("2026-Q1"))
    assert text.startswith("rule 'catalog' gives the table name 'finance.2026-Q1', which holds '-' (in '2026-Q1'): "
                           "Spark's session catalog takes only ASCII letters, digits and underscores"), text
    assert text.endswith("(TABLE-001); a table name is table, database.table or catalog.database.table: each part "
                         "ASCII letters, digits and underscores (a part Spark reads as a number, such as 2026 or 1e5, "
                         "in backquotes: finance.`2026`)."), text


# -------------------------------------------------------------------------------------------- precedence
RESOLVERS = {"local": [rule("files", "data/{{dataset}}")], "warehouse": [rule("wh", table="wh.{{dataset}}")],
             "archive": [rule("arch", "/mnt/archive/{{dataset}}")]}


def test_precedence_project_override_then_dataset_resolver_then_default():
    ws = workspace(RESOLVERS)
    plain, pinned = dataset(), dataset(resolver_id="warehouse")
    assert choose_resolver(ws, project(), plain) == ("local", "system_default")
    assert choose_resolver(ws, None, plain) == ("local", "system_default")
    assert choose_resolver(ws, project(), pinned) == ("warehouse", "dataset_resolver")
    assert choose_resolver(ws, project({"gl": "archive"}), pinned) == ("archive", "project_override")
    assert choose_resolver(ws, project({GL_ID: "archive"}), plain) == ("archive", "project_override")  # by UUID
    assert choose_resolver(ws, project({"other": "archive"}), pinned) == ("warehouse", "dataset_resolver")


def test_resolve_records_resolver_source_rule_and_locations():
    ws = workspace(RESOLVERS)
    res = resolve(ws, project({"gl": "archive"}), dataset(), 4, parse_period("2026-01"))
    assert (res.dataset_id, res.dataset_name, res.version, res.resolver_id, res.resolver_source, res.rule) == (
        GL_ID, "gl", 4, "archive", "project_override", "arch")
    assert res.to_json()["locations"] == [{"kind": "path", "target": "/mnt/archive/gl", "format": "parquet",
                                           "period": None}]
    res = resolve(ws, project(), dataset(resolver_id="warehouse"), 1, parse_period("2026-01"))
    assert (res.resolver_id, res.resolver_source, targets(res.locations)) == ("warehouse", "dataset_resolver",
                                                                               [("wh.gl", None)])
    res = resolve(ws, project(), dataset(), 1, parse_period("2026-01"))
    assert (res.resolver_id, res.resolver_source, targets(res.locations)) == ("local", "system_default",
                                                                               [(f"{ROOT}/data/gl", None)])


def test_resolver_not_found_without_any_resolver():
    ws = workspace(RESOLVERS, default=None)
    text = error_of(choose_resolver, ws, project(), dataset())
    assert text == ("ResolverNotFound: dataset 'gl' has no resolver: no project override, no resolver_id on the "
                    "dataset and no default_resolver in ledgerflow.yml.")
    # the dataset's own resolver still works without a default
    assert choose_resolver(ws, project(), dataset(resolver_id="archive")) == ("archive", "dataset_resolver")


@pytest.mark.parametrize("overrides, ds_resolver", [({"gl": "lakehouse"}, None), ({}, "lakehouse")])
def test_resolver_not_found_for_an_unknown_resolver_name(overrides, ds_resolver):
    ws = workspace(RESOLVERS)
    text = error_of(resolve, ws, project(overrides), dataset(resolver_id=ds_resolver), 1, parse_period("2026-01"))
    assert text == ("ResolverNotFound: resolver 'lakehouse' (for dataset 'gl') is not defined in ledgerflow.yml; "
                    "defined: archive, local, warehouse.")


def test_precedence_through_a_workspace_on_disk(tmp_path):
    """The same precedence when everything comes from YAML files (when expressions quoted as users write them)."""
    ws_root = tmp_path / "ws"
    files = {
        "ledgerflow.yml": """
            name: t
            default_resolver: local
            resolvers:
              local:
                rules:
                  - name: monthly
                    when: 'period.level = "month"'
                    data_level: month
                    strategy: {type: path, path: "data/{{dataset}}/{{YYYY}}-{{MM}}.csv", format: csv}
                  - name: quarter-as-months
                    when: "period.level = 'quarter'"
                    data_level: month
                    strategy: {type: path, path: "data/{{dataset}}/{{YYYY}}-{{MM}}.csv", format: csv}
              warehouse:
                rules:
                  - name: catalog
                    strategy: {type: table, table: "finance.{{table_name}}_v{{version}}"}
            """,
        "datasets/gl.yml": f"""
            id: {GL_ID}
            name: gl
            status: active
            versions: [{{version: 1}}]
            main_table:
              name: transactions
              temporal_mode: period
              columns: [{{name: amount, type: "decimal(18,2)"}}]
            """,
        "datasets/fx.yml": f"""
            id: {RATES_ID}
            name: fx
            status: active
            resolver_id: warehouse
            versions: [{{version: 1}}, {{version: 2}}]
            main_table:
              name: rates
              temporal_mode: snapshot
              columns: [{{name: rate, type: "decimal(18,6)"}}]
            """,
        "projects/p.yml": """
            id: 0d000000-0000-4000-8000-000000000009
            name: p
            version: 1
            status: active
            input_dataset_id: gl
            resolver_overrides: {fx: local}
            operations:
              - {seq: 1, name: Out, type: output, arguments: {destination: {table: out}}}
            """,
    }
    for rel, text in files.items():
        path = ws_root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(text).lstrip("\n"))
    ws = load_workspace(str(ws_root))
    gl, fx, p = ws.find_dataset("gl"), ws.find_dataset("fx"), ws.find_project("p")
    res = resolve(ws, p, gl, 1, parse_period("2026-Q1"))
    assert (res.resolver_id, res.resolver_source, res.rule) == ("local", "system_default", "quarter-as-months")
    assert targets(res.locations) == [(os.path.join(str(ws_root), f"data/gl/2026-0{m}.csv"), f"2026-0{m}")
                                      for m in (1, 2, 3)]
    assert resolve(ws, None, fx, 2, parse_period("2026-01")).locations == [
        ResolvedLocation("table", "finance.rates_v2", "table", None)]
    overridden = resolve(ws, p, fx, 2, parse_period("2026-02"))
    assert (overridden.resolver_id, overridden.resolver_source, overridden.rule) == ("local", "project_override",
                                                                                     "monthly")
    assert targets(overridden.locations) == [(os.path.join(str(ws_root), "data/fx/2026-02.csv"), "2026-02")]
    text = error_of(resolve, ws, p, gl, 1, parse_period("2026"))
    assert text == ("resolver 'local' has no rule matching dataset 'gl' for period 2026: "
                    "rule 'monthly': when 'period.level = \"month\"' is false for period 2026 (level year), "
                    "table transactions; "
                    "rule 'quarter-as-months': when 'period.level = 'quarter'' is false for period 2026 (level year), "
                    "table transactions.")


# ------------------------------------------------------------------------------- staying inside the workspace
@pytest.mark.parametrize("name, table, token", [
    ("..", "transactions", "dataset"),
    ("gl/../../etc", "transactions", "dataset"),
    ("a/b", "transactions", "dataset"),
    ("gl", "..", "table_name"),
    ("gl", "x/../../y", "table_name"),
    ("gl", "win\\dows", "table_name"),
])
def test_a_token_value_with_dots_or_a_separator_is_refused(name, table, token):
    r = rule("files", "data/{{dataset}}/{{table_name}}")
    text = error_of(rule_locations, ROOT, r, dataset(name=name, table=table), 1, parse_period("2026-01"))
    value = name if token == "dataset" else table
    assert text == (f"rule 'files': the value '{value}' of token {{{{{token}}}}} could leave the workspace "
                    "('..' or a path separator); rename the dataset or table.")


def test_a_dataset_id_with_dots_is_refused_even_for_an_absolute_template():
    r = rule("abs", "/mnt/lake/{{dataset_id}}")
    text = error_of(rule_locations, ROOT, r, dataset(ds_id="../../root"), 1, parse_period("2026-01"))
    assert "the value '../../root' of token {{dataset_id}} could leave the workspace" in text


@pytest.mark.parametrize("template", ["../outside/{{dataset}}", "data/../../{{dataset}}", "./../{{dataset}}",
                                      "../ws-sibling/{{dataset}}", "data/{{dataset}}/../../../etc"])
def test_a_relative_template_leaving_the_workspace_is_refused(template):
    text = error_of(rule_locations, ROOT, rule("escape", template), dataset(), 1, parse_period("2026-01"))
    assert text.startswith("rule 'escape': the path '"), text
    assert text.endswith("' leaves the workspace."), text


def test_a_relative_template_with_dots_that_stays_inside_is_normalised():
    r = rule("inner", "data/../other/./{{dataset}}")
    assert targets(rule_locations(ROOT, r, dataset(), 1, parse_period("2026-01"))) == [(f"{ROOT}/other/gl", None)]


@pytest.mark.parametrize("template, expected", [
    ("/mnt/lake/{{dataset}}/{{YYYY}}/{{MM}}", "/mnt/lake/gl/2026/01"),
    ("/mnt/lake/../shared/{{dataset}}", "/mnt/lake/../shared/gl"),
    ("s3a://bucket/ledger/{{dataset}}/v{{version}}", "s3a://bucket/ledger/gl/v1"),
    ("hdfs://namenode:8020/warehouse/{{table_name}}", "hdfs://namenode:8020/warehouse/transactions"),
    ("file:///data/{{dataset}}/{{identifier}}", "file:///data/gl/2026-01"),
    ("abfss://c@acct.dfs.core.windows.net/{{dataset}}", "abfss://c@acct.dfs.core.windows.net/gl"),
])
def test_absolute_paths_and_uris_pass_through(template, expected):
    [loc] = rule_locations(ROOT, rule("out", template), dataset(), 1, parse_period("2026-01"))
    assert loc.target == expected

"""Runtime joins (docs/workspace.md, runtime joins): user stories US1-US4, every Edge Case, and join multiplicity,
end to end through the ``ledgerflow`` CLI on the shared local SparkSession.
"""
from __future__ import annotations

import os

import pytest
from textwrap import dedent

from cli_support import (ACCOUNTS_ID, D, GL_FEB_MAR_ROWS, GL_ID, GL_ROWS, RATES_ID, add_project, by_key, cli,
                         describe, edit, gl_expected, in_gl_order, read_output, record, run, run_id_of, run_ok,
                         started, versions_dir, write)

CLOSING = 'transactions.currency = fx.from_currency AND fx.to_currency = "USD" AND fx.rate_type = "closing"'
OUTPUT = """
- seq: 9
  name: Write
  type: output
  arguments:
    destination: {{table: {table}}}
"""


def fx_update(pin: str = "") -> str:
    """TS-03's update (join ``fx`` on exchange_rates) plus ``applied_rate = fx.rate``."""
    return f"""
- seq: 1
  name: Convert to USD
  type: update
  arguments:
    joins:
      - alias: fx
        dataset_id: exchange_rates{pin}
        on: '{CLOSING}'
    assignments:
      - column: amount_reporting
        expression: transactions.amount_local * fx.rate
      - column: applied_rate
        expression: fx.rate
"""


def amounts(rows, column="amount_reporting"):
    """``column`` of the rows in GL order, as strings (exact decimal text)."""
    return [None if r[column] is None else str(r[column]) for r in by_key(rows, "journal_id", "line_number")]


def fx_expected(rec: dict, rates: dict) -> list[dict]:
    """TS-03's rows converted with ``rates`` (currency -> rate text), with ``applied_rate``; all rows matched."""
    def change(row):
        rate = D(rates[row["currency"]])
        return {"amount_reporting": (row["amount_local"] * rate).quantize(D("0.01")), "applied_rate": rate}
    return gl_expected(rec, updated_at=started(rec), change=change)


def rates_by_currency(rows):
    return {r["currency"]: r["applied_rate"] for r in rows}


V2_RATES = """\
from_currency,to_currency,rate,rate_type,_period_from,_period_to
EUR,USD,1.0500,closing,2025-01-01,2026-01-01
EUR,USD,1.1000,closing,2026-01-01,
GBP,USD,1.3000,closing,2026-01-01,
JPY,USD,0.00700,closing,2026-01-01,
USD,USD,1.0000,closing,2020-01-01,
"""


# ---------------------------------------------------------------------------------------------------- US1
def test_us1_fx_pinned_version_vs_latest(spark, finance):
    """US1: omitted dataset_version reads the latest active version, a pin reads exactly that version."""
    edit(finance, "datasets/exchange_rates.yml", "  - {version: 1}\n", "  - {version: 1}\n  - {version: 2}\n")
    write(finance, "data/exchange_rates/v2/exchange_rates.csv", V2_RATES)
    add_project(finance, "fx_latest", fx_update() + OUTPUT.format(table="fx_latest"))
    add_project(finance, "fx_pinned", fx_update("\n        dataset_version: 1") + OUTPUT.format(table="fx_pinned"))

    latest = run_ok(finance, "fx_latest")
    _, rows = read_output(spark, latest, 9)
    assert amounts(rows) == ["15000.00", "15000.00", "9350.00", "-9350.00", "28600.00", "28600.00", "3200.00",
                             "-3200.00", "17500.00", "17500.00"]
    assert rates_by_currency(rows) == {"USD": D("1.000000"), "EUR": D("1.100000"), "GBP": D("1.300000"),
                                       "JPY": D("0.007000")}
    assert in_gl_order(rows, "_row_id") == fx_expected(latest, {"USD": "1", "EUR": "1.1", "GBP": "1.3",
                                                                "JPY": "0.007"})
    [join] = latest["resolver_snapshot"]["join_datasets"]
    assert (join["alias"], join["dataset_id"], join["dataset_version"]) == ("fx", RATES_ID, 2)
    assert join["locations"] == [str(finance / "data" / "exchange_rates" / "v2" / "exchange_rates.csv")]

    pinned = run_ok(finance, "fx_pinned")
    _, rows = read_output(spark, pinned, 9)
    # the as-of rates of version 1 for 2026-01 (US1 scenario 1): EUR 1.0920, GBP 1.2710, JPY 0.00672, USD 1
    assert amounts(rows) == ["15000.00", "15000.00", "9282.00", "-9282.00", "27962.00", "27962.00", "3200.00",
                             "-3200.00", "16800.00", "16800.00"]
    assert rates_by_currency(rows) == {"USD": D("1.000000"), "EUR": D("1.092000"), "GBP": D("1.271000"),
                                       "JPY": D("0.006720")}
    assert in_gl_order(rows, "_row_id") == fx_expected(pinned, {"USD": "1", "EUR": "1.092", "GBP": "1.271",
                                                                "JPY": "0.00672"})
    [join] = pinned["resolver_snapshot"]["join_datasets"]
    assert (join["alias"], join["dataset_id"], join["dataset_version"]) == ("fx", RATES_ID, 1)
    assert join["locations"] == [str(finance / "data" / "exchange_rates" / "v1" / "exchange_rates.csv")]

    # a disabled newest version is not "latest active": the unpinned join falls back to version 1
    edit(finance, "datasets/exchange_rates.yml", "{version: 2}", "{version: 2, status: disabled}")
    fallback = run_ok(finance, "fx_latest")
    [join] = fallback["resolver_snapshot"]["join_datasets"]
    assert join["dataset_version"] == 1
    _, rows = read_output(spark, fallback, 9)
    assert amounts(rows)[2] == "9282.00"
    # pinning the disabled version is a validation error
    edit(finance, "projects/fx_pinned.yml", "dataset_version: 1", "dataset_version: 2")
    result = run(finance, "fx_pinned", expect=1)
    assert "JOIN-VR-003" in result.stderr and "version 2 is disabled" in result.stderr, result.stderr


# ---------------------------------------------------------------------------------------------------- US2
def test_us2_two_joins_period_and_bitemporal(spark, finance):
    """US2: one update joins a `period` dataset and a `bitemporal` one; each is filtered by its own mode."""
    # rows of other periods in accounts: an unfiltered period join would see two rows per code
    with open(finance / "data" / "accounts" / "v2" / "accounts.csv", "a", encoding="utf-8") as fh:
        fh.write("4100,Old Product Revenue,stale,operating,true,2025-12\n"
                 "1200,Old AR,stale,operating,true,2026-02\n")
    add_project(finance, "two_joins", dedent(f"""
        - seq: 1
          name: Enrich from accounts and rates
          type: update
          arguments:
            joins:
              - alias: acct
                dataset_id: accounts
                on: transactions.account_code = acct.code
              - alias: fx
                dataset_id: {RATES_ID}
                on: '{CLOSING}'
            assignments:
              - column: account_type
                expression: acct.type
              - column: amount_reporting
                expression: transactions.amount_local * fx.rate
              - column: description
                expression: CONCAT(acct.name, " @ ", fx.from_currency)
        """) + OUTPUT.format(table="two_joins"))
    rec = run_ok(finance, "two_joins")
    _, rows = read_output(spark, rec, 9)
    rows = by_key(rows, "journal_id", "line_number")
    names = {"4100": "Product Revenue", "1200": "Accounts Receivable", "5100": "Office Supplies",
             "2100": "Accounts Payable", "4200": "Consulting Revenue", "5200": "Travel & Entertainment"}
    types = {"4100": "revenue", "1200": "asset", "5100": "expense", "2100": "liability", "4200": "revenue",
             "5200": "expense"}
    assert [r["account_type"] for r in rows] == [types[g[3]] for g in GL_ROWS]
    assert [r["description"] for r in rows] == [f"{names[g[3]]} @ {g[5]}" for g in GL_ROWS]
    assert amounts(rows) == ["15000.00", "15000.00", "9282.00", "-9282.00", "27962.00", "27962.00", "3200.00",
                             "-3200.00", "16800.00", "16800.00"]
    closing = {"USD": "1", "EUR": "1.092", "GBP": "1.271", "JPY": "0.00672"}
    assert in_gl_order(rows, "_row_id") == gl_expected(rec, updated_at=started(rec), change=lambda r: {
        "account_type": types[r["account_code"]], "description": f"{names[r['account_code']]} @ {r['currency']}",
        "amount_reporting": (r["amount_local"] * D(closing[r["currency"]])).quantize(D("0.01"))})
    joins = rec["resolver_snapshot"]["join_datasets"]
    assert [(j["operation_seq"], j["alias"], j["dataset_id"], j["dataset_version"], j["resolver_source"])
            for j in joins] == [(1, "acct", ACCOUNTS_ID, 2, "system_default"),
                                (1, "fx", RATES_ID, 1, "system_default")]
    # joined columns exist only inside the operation: the output has no acct__*/fx__* columns
    assert not [c for c in rows[0] if "__" in c]

    # US2 scenario 3: one of the joins cannot be resolved -> the whole run fails naming that dataset
    os.remove(finance / "data" / "exchange_rates" / "v1" / "exchange_rates.csv")
    before = sorted(os.listdir(versions_dir(rec["outputs"][0]["location"])))
    result = run(finance, "two_joins", expect=1)
    assert "dataset 'exchange_rates'" in result.stderr and "no data at" in result.stderr, result.stderr
    failed = record(finance, run_id_of(result))
    assert failed["status"] == "failed" and failed["outputs"] == []
    assert sorted(os.listdir(versions_dir(rec["outputs"][0]["location"]))) == before


# ---------------------------------------------------------------------------------------------------- US3
def test_us3_period_filter_exact_match_and_no_data_gives_nulls(spark, finance):
    """US3: a `period` join keeps exactly the run's period; no rows for the period -> NULL assignments."""
    with open(finance / "data" / "cost_centers" / "v1" / "cost_centers.csv", "a", encoding="utf-8") as fh:
        fh.write("CC-100,Sales NA,Sales,EMEA,true,2025-12\n"
                 "CC-200,Operations EU,Operations,AMER,true,2025-12\n"
                 "CC-100,Sales LATAM,Sales,LATAM,true,2026-02\n"
                 "CC-200,Operations EU,Operations,APAC,true,2026-Q1\n"
                 "CC-300,Consulting UK,Consulting,APAC,true,2026\n")
    add_project(finance, "us3_period_join", dedent("""
        - seq: 1
          name: Region and account type
          type: update
          arguments:
            joins:
              - alias: cc
                dataset_id: cost_centers
                on: transactions.cost_center_code = cc.code
              - alias: acct
                dataset_id: accounts
                dataset_version: 1
                on: transactions.account_code = acct.code
            assignments:
              - column: region
                expression: cc.region
              - column: account_type
                expression: acct.type
        """) + OUTPUT.format(table="us3_period_join"), extra="resolver_overrides: {gl: monthly}\n")

    jan = run_ok(finance, "us3_period_join", "2026-01")
    _, rows = read_output(spark, jan, 9)
    rows = by_key(rows, "journal_id", "line_number")
    regions = {"CC-100": "AMER", "CC-200": "EMEA", "CC-300": "EMEA"}
    types = {"4100": "revenue", "1200": "asset", "5100": "expense", "2100": "liability", "4200": "revenue",
             "5200": "expense"}
    assert [r["region"] for r in rows] == [regions[g[4]] for g in GL_ROWS]
    assert [r["account_type"] for r in rows] == ["revenue", "asset", "expense", "liability", "revenue", "asset",
                                                 "expense", "liability", "revenue", "asset"]
    assert in_gl_order(rows, "_row_id") == gl_expected(jan, updated_at=started(jan), change=lambda r: {
        "region": regions[r["cost_center_code"]], "account_type": types[r["account_code"]]})

    # February: cost_centers has one CC-100 row for 2026-02; accounts has no 2026-02 rows at all
    feb = run_ok(finance, "us3_period_join", "2026-02")
    _, rows = read_output(spark, feb, 9)
    rows = by_key(rows, "journal_id", "line_number")
    assert [(r["journal_id"], r["line_number"], r["region"], r["account_type"], r["amount_local"], r["_period"])
            for r in rows] == [("JE-101", 1, "LATAM", None, D("1000.00"), "2026-02"),
                               ("JE-101", 2, "LATAM", None, D("1000.00"), "2026-02")]
    # the rows matched the update (_updated_at set); the accounts join found nothing: NULL
    assert in_gl_order(rows, "_row_id") == gl_expected(feb, updated_at=started(feb), raw_rows=GL_FEB_MAR_ROWS[:2],
                                                       region="LATAM", account_type=None)
    # the January partition of the same destination is untouched by the February run
    _, again = read_output(spark, jan, 9)
    assert len(again) == 10


# ---------------------------------------------------------------------------------------------------- US4
def test_us4_resolver_precedence(spark, finance):
    """US4: project override > dataset resolver_id > system default, each reading its own data files."""
    edit(finance, "ledgerflow.yml", "spark:\n", """\
  alt:
    rules:
      - name: alt-files
        data_level: any
        strategy: {type: path, path: "data/{{dataset}}/alt/{{table_name}}.csv", format: csv}
  test:
    rules:
      - name: test-files
        data_level: any
        strategy: {type: path, path: "data/{{dataset}}/test/{{table_name}}.csv", format: csv}
spark:
""")
    write(finance, "data/exchange_rates/alt/exchange_rates.csv", """\
        from_currency,to_currency,rate,rate_type,_period_from,_period_to
        EUR,USD,2.000000,closing,2026-01-01,
        GBP,USD,2.500000,closing,2026-01-01,
        JPY,USD,0.010000,closing,2026-01-01,
        USD,USD,1.000000,closing,2020-01-01,
        """)
    write(finance, "data/exchange_rates/test/exchange_rates.csv", """\
        from_currency,to_currency,rate,rate_type,_period_from,_period_to
        EUR,USD,3.000000,closing,2026-01-01,
        GBP,USD,3.500000,closing,2026-01-01,
        JPY,USD,0.020000,closing,2026-01-01,
        USD,USD,1.000000,closing,2020-01-01,
        """)
    edit(finance, "datasets/exchange_rates.yml", "status: active\n", "status: active\nresolver_id: alt\n")
    add_project(finance, "us4_fx", fx_update() + OUTPUT.format(table="us4_fx"))
    add_project(finance, "us4_fx_override", fx_update() + OUTPUT.format(table="us4_fx_override"),
                extra=f"resolver_overrides: {{{RATES_ID}: test}}\n")

    def check(rec, resolver, source, folder, rates, reporting):
        _, rows = read_output(spark, rec, 9)
        assert rates_by_currency(rows) == {k: D(v) for k, v in rates.items()}
        assert amounts(rows) == reporting
        assert in_gl_order(rows, "_row_id") == fx_expected(rec, rates)
        [join] = rec["resolver_snapshot"]["join_datasets"]
        assert (join["alias"], join["dataset_id"], join["dataset_version"], join["resolver_id"],
                join["resolver_source"]) == ("fx", RATES_ID, 1, resolver, source)
        assert join["locations"] == [str(finance / "data" / "exchange_rates" / folder / "exchange_rates.csv")]
        # the input dataset is unaffected by the join's resolver: system default
        snap = rec["resolver_snapshot"]
        assert (snap["input_dataset_id"], snap["input_resolver"]) == (GL_ID, "local")

    # 1. the project override wins over the dataset's resolver_id
    check(run_ok(finance, "us4_fx_override"), "test", "project_override", "test",
          {"USD": "1.000000", "EUR": "3.000000", "GBP": "3.500000", "JPY": "0.020000"},
          ["15000.00", "15000.00", "25500.00", "-25500.00", "77000.00", "77000.00", "3200.00", "-3200.00",
           "50000.00", "50000.00"])
    # 2. no override: the dataset's resolver_id
    check(run_ok(finance, "us4_fx"), "alt", "dataset_resolver", "alt",
          {"USD": "1.000000", "EUR": "2.000000", "GBP": "2.500000", "JPY": "0.010000"},
          ["15000.00", "15000.00", "17000.00", "-17000.00", "55000.00", "55000.00", "3200.00", "-3200.00",
           "25000.00", "25000.00"])
    # 3. neither: the workspace's default_resolver (local -> data/exchange_rates/v1)
    edit(finance, "datasets/exchange_rates.yml", "resolver_id: alt\n", "")
    check(run_ok(finance, "us4_fx"), "local", "system_default", "v1",
          {"USD": "1.000000", "EUR": "1.092000", "GBP": "1.271000", "JPY": "0.006720"},
          ["15000.00", "15000.00", "9282.00", "-9282.00", "27962.00", "27962.00", "3200.00", "-3200.00",
           "16800.00", "16800.00"])
    # an override naming an undefined resolver is an error before anything runs
    edit(finance, "projects/us4_fx_override.yml", ": test}", ": staging}")
    result = run(finance, "us4_fx_override", expect=1)
    assert "ResolverNotFound" in result.stderr and "staging" in result.stderr, result.stderr


# ---------------------------------------------------------------------------------------------- edge cases
def test_edge_cases_rejected_before_loading(spark, finance):
    """Unknown dataset, unknown column in `on`, unknown alias: compile-time errors, exit 1, nothing run."""
    add_project(finance, "edge_not_found", fx_update().replace("dataset_id: exchange_rates",
                                                               "dataset_id: exchange_ratez")
                + OUTPUT.format(table="edge"))
    add_project(finance, "edge_on_column", fx_update().replace("fx.from_currency", "fx.from_curency")
                + OUTPUT.format(table="edge"))
    add_project(finance, "edge_alias", fx_update().replace("expression: fx.rate", "expression: rates.rate")
                + OUTPUT.format(table="edge"))
    add_project(finance, "edge_alias_column", fx_update().replace("expression: fx.rate", "expression: fx.ratio")
                + OUTPUT.format(table="edge"))
    add_project(finance, "edge_alias_scope", fx_update() + """
- seq: 2
  name: Use fx outside its operation
  type: update
  arguments:
    assignments:
      - column: amount_local
        expression: transactions.amount_local * fx.rate
""" + OUTPUT.format(table="edge"))
    cases = {
        "edge_not_found": ("JOIN-VR-001", "dataset 'exchange_ratez' not found", "exchange_ratez"),
        "edge_on_column": ("JOIN-VR-007", "unknown column 'fx.from_curency'", "fx.from_curency"),
        "edge_alias": ("BR-015", "unknown table or join alias 'rates'", "rates.rate"),
        "edge_alias_column": ("JOIN-VR-008", "unknown column 'fx.ratio'", "fx.ratio"),
        "edge_alias_scope": ("BR-015", "unknown table or join alias 'fx'", "fx.rate"),
    }
    for name, (code, message, text) in cases.items():
        source = (finance / "projects" / f"{name}.yml").read_text()
        for command in (["validate", name], ["run", name, "--period", "2026-01"]):
            result = cli(finance, *command)
            assert result.exit_code == 1, (name, describe(result))
            assert code in result.stderr and message in result.stderr, (name, result.stderr)
            # located at the offending text
            line = max(i for i, ln in enumerate(source.splitlines(), 1) if text in ln)
            assert f"projects/{name}.yml:{line}:" in result.stderr, (name, line, result.stderr)
            assert "Traceback" not in result.stderr
    # nothing was recorded, loaded or written
    assert not (finance / "target" / "runs").exists()
    assert not (finance / "data" / "edge").exists()


def test_edge_case_disabled_dataset(spark, finance):
    edit(finance, "datasets/cost_centers.yml", "status: active", "status: disabled")
    for command in (["validate", "ts08_named_selector"], ["run", "ts08_named_selector", "--period", "2026-01"]):
        result = cli(finance, *command)
        assert result.exit_code == 1, describe(result)
        assert "JOIN-VR-002" in result.stderr, result.stderr
        assert "dataset 'cost_centers' is disabled" in result.stderr
        assert "projects/ts08_named_selector.yml:17:" in result.stderr
    assert not (finance / "target" / "runs").exists()
    assert not (finance / "data" / "ts08_emea_uplift").exists()


def test_edge_case_zero_joins(spark, finance):
    """An update without joins (explicit empty list) runs normally on working columns only."""
    add_project(finance, "zero_joins", dedent("""
        - seq: 1
          name: Double EUR reporting amounts
          type: update
          selector: transactions.currency = "EUR"
          arguments:
            joins: []
            assignments:
              - column: amount_reporting
                expression: transactions.amount_local * 2
              - column: flagged
                expression: "TRUE"
        """) + OUTPUT.format(table="zero_joins"))
    rec = run_ok(finance, "zero_joins")
    assert rec["resolver_snapshot"]["join_datasets"] == []
    _, rows = read_output(spark, rec, 9, {"flagged": "boolean"})
    rows = by_key(rows, "journal_id", "line_number")
    assert amounts(rows) == ["15000.00", "15000.00", "17000.00", "-17000.00", None, None, "3200.00", "-3200.00",
                             None, None]
    # a new column is NULL on rows the selector did not match; only matched rows get _updated_at
    t0 = started(rec)
    assert [(r["flagged"], r["_updated_at"]) for r in rows] == [
        (True, t0) if g[5] == "EUR" else (None, None) for g in GL_ROWS]
    assert in_gl_order(rows, "_row_id") == gl_expected(rec, flagged=None, change=lambda r: {
        "amount_reporting": r["amount_local"] * 2, "flagged": True, "_updated_at": t0} if r["currency"] == "EUR"
        else {})


# ------------------------------------------------------------------------------------------- multiplicity
def test_join_multiplicity_fails_the_run_without_output(spark, finance):
    """A join matching two rows for one working row: exit 3, error names alias and key, failed record, no output."""
    good = run_ok(finance, "ts03_fx_conversion")
    location = good["outputs"][0]["location"]
    _, before = read_output(spark, good, 2)
    versions_before = sorted(os.listdir(versions_dir(location)))
    assert versions_before == [good["run_id"]]

    # an overlapping EUR validity range: the data producer's fault, caught by the multiplicity check
    with open(finance / "data" / "exchange_rates" / "v1" / "exchange_rates.csv", "a", encoding="utf-8") as fh:
        fh.write("EUR,USD,1.1111,closing,2025-06-01,\n")
    result = run(finance, "ts03_fx_conversion", expect=3)
    err = result.stderr
    assert "runtime join 'fx'" in err and "operation 1" in err, err
    assert "matched 2 rows of dataset 'exchange_rates'" in err, err
    assert "join key: EUR" in err, err
    assert "Traceback" not in err and "SQLSTATE" not in err
    assert len(err.strip().splitlines()) == 1, err  # one clear paragraph
    failed_id = run_id_of(result)
    failed = record(finance, failed_id)
    assert failed["status"] == "failed"
    assert "runtime join 'fx'" in failed["error"] and "join key: EUR" in failed["error"]
    assert failed["outputs"] == [] and failed["finished_at"] is not None
    shown = cli(finance, "runs", "list")
    assert shown.stdout.splitlines()[0].split()[:3] == [failed_id, failed["started_at"], "failed"]
    # no output was written: the partition still holds the first run's rows, no new version staged
    assert sorted(os.listdir(versions_dir(location))) == versions_before
    _, after = read_output(spark, good, 2)
    assert by_key(after, "_row_id") == by_key(before, "_row_id")

    # a non-matching duplicate key (no working row in CHF) is harmless
    edit(finance, "data/exchange_rates/v1/exchange_rates.csv", "EUR,USD,1.1111,closing,2025-06-01,\n",
         "CHF,USD,1.1000,closing,2025-06-01,\nCHF,USD,1.1200,closing,2025-06-01,\n")
    ok = run_ok(finance, "ts03_fx_conversion")
    _, rows = read_output(spark, ok, 2)
    assert amounts(rows)[2:6] == ["9282.00", "-9282.00", "27962.00", "27962.00"]


KEYED_JOINS = {
    # two plain-column keys: join rows counted per key by a window over the join side
    "plain": ('transactions.currency = fx.from_currency AND fx.rate_type = transactions.rate_kind '
              'AND fx.to_currency = "USD"', "COUNT(*) OVER (PARTITION BY `from_currency`, `rate_type`)"),
    # a computed key: the same window, partitioned by the computed key
    "computed": ('transactions.currency = UPPER(fx.from_currency) AND fx.rate_type = transactions.rate_kind '
                 'AND fx.to_currency = "USD"', "COUNT(*) OVER (PARTITION BY UPPER("),
}


@pytest.mark.parametrize("shape", sorted(KEYED_JOINS))
def test_join_multiplicity_with_several_keys(spark, finance, shape):
    """Both shapes of the multiplicity check give the same rows, ignore a duplicated key no working row
    matches, and fail the run naming every key value when a working row matches two join rows."""
    on, marker = KEYED_JOINS[shape]
    add_project(finance, "keyed", dedent(f"""
        - seq: 1
          name: Pick the rate kind
          type: update
          arguments:
            assignments:
              - column: rate_kind
                expression: '"closing"'
        - seq: 2
          name: Convert
          type: update
          arguments:
            joins:
              - alias: fx
                dataset_id: exchange_rates
                on: '{on}'
            assignments:
              - column: amount_reporting
                expression: transactions.amount_local * fx.rate
        """) + OUTPUT.format(table="keyed"))
    assert marker in cli(finance, "compile", "keyed").stdout
    # CHF is duplicated but no working row is in CHF
    with open(finance / "data" / "exchange_rates" / "v1" / "exchange_rates.csv", "a", encoding="utf-8") as fh:
        fh.write("CHF,USD,1.1000,closing,2025-06-01,\nCHF,USD,1.1200,closing,2025-06-01,\n")
    ok = run_ok(finance, "keyed")
    _, rows = read_output(spark, ok, 9, {"rate_kind": "string"})
    assert amounts(rows) == ["15000.00", "15000.00", "9282.00", "-9282.00", "27962.00", "27962.00", "3200.00",
                             "-3200.00", "16800.00", "16800.00"]
    # a second closing GBP rate valid on the period start: the two GBP working rows match two rows each
    with open(finance / "data" / "exchange_rates" / "v1" / "exchange_rates.csv", "a", encoding="utf-8") as fh:
        fh.write("GBP,USD,1.3000,closing,2025-12-01,\n")
    err = run(finance, "keyed", expect=3).stderr
    assert "runtime join 'fx' of operation 2 matched 2 rows of dataset 'exchange_rates'" in err, err
    assert "join key: GBP, closing" in err, err

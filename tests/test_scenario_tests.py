"""``ledgerflow test`` (docs/tests.md): passing, failing, invalid and error tests, fixtures, JUnit XML, --record.

Every Spark test drives the CLI in-process on the one SparkSession of the test run; the tests of the
tester are themselves scenario test files written into a copy of the finance workspace.
"""
from __future__ import annotations

import csv
import datetime
import json
import xml.etree.ElementTree as ET
from decimal import Decimal

import pytest
import yaml

from cli_support import UUID7, add_project, cli, describe, edit, run_id_of, write
from ledgerflow.adapters.scenarios.compare import compare, identifying_columns
from ledgerflow.adapters.scenarios.execute import OutputRows
from ledgerflow.adapters.scenarios.spec import Expectation
from ledgerflow.adapters.scenarios.values import ConversionError, convert
from ledgerflow.compiler.yaml_source import load_yaml_text

GL2 = """\
  gl:
    rows:
      - {journal_id: JE-1, line_number: 1, account_code: "4100", amount_local: "100.00", amount_reporting: "1.00"}
      - {journal_id: JE-2, line_number: 1, account_code: "1200", amount_local: "-100.00"}
"""


def junit(path) -> ET.Element:
    """The one testsuite of a JUnit XML file."""
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    return suite


# ------------------------------------------------------------------------------------------- no Spark
def test_values_convert_exactly():
    assert convert("108.00", "decimal(18,2)") == Decimal("108.00")
    assert convert(100.5, "decimal(18,2)") == Decimal("100.50")
    with pytest.raises(ConversionError, match="more than 2 digits after the point"):
        convert("15000.005", "decimal(18,2)")
    with pytest.raises(ConversionError, match="more digits than YAML keeps exactly"):
        convert(12345678901234567.89, "decimal(38,2)")
    assert convert("108.001", "decimal(18,2)", strict=False) == Decimal("108.001")  # expected: just not equal
    assert convert("2026-01-31T12:00:00Z", "timestamp") == datetime.datetime(2026, 1, 31, 12)
    assert convert(datetime.date(2026, 1, 5), "date") == datetime.date(2026, 1, 5)
    assert convert("true", "boolean") is True
    with pytest.raises(ConversionError):
        convert(1.5, "int")
    with pytest.raises(ConversionError, match="read by YAML as a bool"):
        convert(True, "string")  # an unquoted yes/no/on/true in a string column


def test_compare_names_rows_by_identifying_columns():
    exp = Expectation(2, None, [load_yaml_text(t, "t.yml") for t in (
        "{id: A, line: 1, amount: '1.00'}", "{id: A, line: 2, amount: '2.00'}", "{id: B, line: 1, amount: '3.00'}")],
        [None, None, None])
    out = OutputRows(2, "out", ["id", "line", "amount"], {"id": "string", "line": "int", "amount": "decimal(18,2)"},
                     [("A", 1, Decimal("1.00")), ("A", 2, Decimal("2.50")), ("C", 1, Decimal("3.00"))])
    assert identifying_columns([{"id": "A", "line": 1}, {"id": "A", "line": 2}, {"id": "B", "line": 1}],
                               ["id", "line", "amount"], out.types) == ["id", "line"]
    diffs, problems = compare(exp, out)
    assert not problems
    assert [d.describe() for d in diffs] == [
        "row id=A, line=2: amount expected 2.00, actual 2.50",
        "missing row id=B, line=1: amount=3.00",
        "unexpected row id=C, line=1: amount=3.00"]


def test_invalid_test_files_are_located(finance):
    write(finance, "tests/typo.yml", """\
        name: typo
        project: ts03_fx_conversion
        period: 2026-01
        given:
          gl: {rows: []}
          exchange_rates: {rows: []}
        expct:
          - {output: 2, rows: []}
        """)
    write(finance, "tests/values.yml", """\
        name: values
        project: ts03_fx_conversion
        period: 2026-01
        given:
          gl:
            rows:
              - {journal_id: JE-1, amount_local: "12.345", amount_localx: "1.00"}
          exchange_rates: {rows: []}
          exchange_rate: {rows: []}
        expect:
          - output: 2
            rows: [{journal_id: JE-1, amount_reportin: "1.00"}]
          - output: 7
            rows: []
        """)
    result = cli(finance, "test", "typo", "values", "--junit-xml", finance / "out" / "junit.xml")
    assert result.exit_code == 1, describe(result)
    out = result.stdout
    assert "tests/typo.yml:7:1: YAML-003 unknown key 'expct' in test (at 'expct'). Hint: did you mean 'expect'?" in out
    assert "tests/typo.yml:1:1: TEST-001 a test needs exactly one of 'expect'" in out
    assert ("tests/values.yml:7:42: TEST-007 dataset 'gl', column 'amount_local' (decimal(18,2)): '12.345' has more "
            "than 2 digits after the point") in out
    assert "tests/values.yml:7:52: TEST-006 dataset 'gl' has no column 'amount_localx'" in out
    assert "tests/values.yml:9:3: TEST-005 given dataset 'exchange_rate' is not a dataset of the workspace" in out
    assert "did you mean 'exchange_rates'?" in out
    assert "tests/values.yml:12:31: TEST-010 output 2 ('Write converted lines') has no column 'amount_reportin'" in out
    assert "tests/values.yml:13:13: TEST-009 project 'ts03_fx_conversion' has no output '7'" in out
    assert "0 passed, 0 failed, 2 invalid" in out
    suite = junit(finance / "out" / "junit.xml")
    assert (suite.get("tests"), suite.get("errors"), suite.get("failures")) == ("2", "2", "0")
    assert all(case.find("error").get("type") == "InvalidTest" for case in suite.findall("testcase"))


def test_a_dataset_the_project_reads_must_be_given(finance):
    write(finance, "tests/no_rates.yml",
          "project: ts03_fx_conversion\nperiod: 2026-01\ngiven:\n" + GL2 + "expect:\n  - {output: 2, rows: []}\n")
    result = cli(finance, "test", "no_rates")
    assert result.exit_code == 1, describe(result)
    assert ("tests/no_rates.yml:4:3: TEST-004 project 'ts03_fx_conversion' reads dataset 'exchange_rates', which the "
            "test does not give") in result.stdout


def test_unknown_test_name(finance):
    result = cli(finance, "test", "nope")
    assert result.exit_code == 1
    assert "TEST-012 no test named nope" in result.stderr


# ------------------------------------------------------------------------------------------- on Spark
def test_finance_scenarios_pass_with_junit(spark, finance):
    result = cli(finance, "test", "--junit-xml", finance / "junit.xml")
    assert result.exit_code == 0, describe(result)
    assert "9 passed, 0 failed, 0 invalid" in result.stdout
    suite = junit(finance / "junit.xml")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("9", "0", "0")
    names = sorted(case.get("name") for case in suite.findall("testcase"))
    assert [n.split()[0] for n in names] == [f"TS-0{i}" for i in range(1, 9)] + ["journal"]  # journal_controls
    assert not (finance / "data" / "ts03_fx_converted").exists()  # nothing written to real destinations
    assert not (finance / "target" / "runs").exists()  # and no run recorded


def test_every_kind_of_difference(spark, finance):
    write(finance, "tests/wrong.yml", """\
        name: wrong numbers
        project: ts03_fx_conversion
        period: 2026-01
        given:
          gl: {csv: fixtures/gl.csv}
          exchange_rates: {csv: fixtures/exchange_rates.csv}
        expect:
          - output: 2
            rows:
              - {journal_id: JE-001, line_number: 1, amount_reporting: "15000.00"}
              - {journal_id: JE-001, line_number: 2, amount_reporting: "15000.00"}
              - {journal_id: JE-002, line_number: 1, amount_reporting: "9282.01"}
              - {journal_id: JE-002, line_number: 2, amount_reporting: "-9282.00", currency: USD}
              - {journal_id: JE-003, line_number: 1, amount_reporting: "27962.00"}
              - {journal_id: JE-003, line_number: 2, amount_reporting: "27962.00"}
              - {journal_id: JE-004, line_number: 1, amount_reporting: "3200.00"}
              - {journal_id: JE-004, line_number: 2, amount_reporting: "-3200.00"}
              - {journal_id: JE-005, line_number: 1, amount_reporting: "16800.00"}
              - {journal_id: JE-009, line_number: 1, amount_reporting: "1.00"}
        """)
    for name, first, second in (("order_a", "JE-1", "JE-2"), ("order_b", "JE-2", "JE-1")):
        write(finance, f"tests/{name}.yml", "project: ts07_output_columns\nperiod: 2026-01\ngiven:\n" + GL2 +
              f"expect:\n  - output: 1\n    ordered: true\n    rows: [{{journal_id: {first}}}, {{journal_id: {second}}}]\n")
    result = cli(finance, "test", "wrong", "order_a", "order_b", "--junit-xml", finance / "j.xml")
    assert result.exit_code == 4, describe(result)
    out = result.stdout
    assert "FAILED  wrong numbers (tests/wrong.yml)" in out
    assert ("output 2 'Write converted lines': 2 rows with different values, 1 row missing, 1 unexpected row "
            "(10 rows written, 10 expected)") in out
    assert ("row journal_id=JE-002, line_number=1 (tests/wrong.yml:12:9): amount_reporting expected 9282.01, "
            "actual 9282.00") in out
    assert ("row journal_id=JE-002, line_number=2 (tests/wrong.yml:13:9): currency expected USD, actual EUR") in out
    assert "missing row journal_id=JE-009, line_number=1 (tests/wrong.yml:19:9): amount_reporting=1.00" in out
    assert "unexpected row journal_id=JE-005, line_number=2: amount_reporting=16800.00, currency=EUR" not in out
    assert "unexpected row journal_id=JE-005, line_number=2: amount_reporting=16800.00, currency=JPY" in out
    order = [n for n in ("order_a", "order_b") if f"FAILED  {n} (tests/{n}.yml)" in out]
    assert len(order) == 1, out  # the output has one order: exactly one of the two is wrong
    assert "1 row out of order" in out or "2 rows out of order" in out
    assert "is expected at position 1, the output has it at position 2" in out
    suite = junit(finance / "j.xml")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "2", "0")
    failure = next(c for c in suite.findall("testcase") if c.get("name") == "wrong numbers").find("failure")
    assert failure.get("message").startswith("output 2 'Write converted lines': 2 rows with different values")
    assert "amount_reporting expected 9282.01, actual 9282.00" in failure.text


def test_error_tests(spark, finance):
    add_project(finance, "plain_append", """\
        - seq: 1
          name: Append budgets as they are
          type: append
          arguments: {source: {dataset_id: budgets}}
        - {seq: 2, name: Out, type: output, arguments: {destination: {table: plain}}}
        """)
    add_project(finance, "fan_out", """\
        - seq: 1
          name: Rate by currency only
          type: update
          arguments:
            joins: [{alias: fx, dataset_id: exchange_rates, on: 'transactions.currency = fx.from_currency'}]
            assignments: [{column: amount_reporting, expression: transactions.amount_local * fx.rate}]
        - {seq: 2, name: Out, type: output, arguments: {destination: {table: fan}}}
        """)
    given = "given:\n  gl: {csv: fixtures/gl.csv}\n"
    write(finance, "tests/e1.yml", f"project: plain_append\nperiod: 2026-01\n{given}  budgets: {{rows: []}}\n"
                                   "error: APPEND_003\n")
    write(finance, "tests/e2.yml", f"project: fan_out\nperiod: 2026-01\n{given}"
                                   "  exchange_rates: {csv: fixtures/exchange_rates.csv}\n"
                                   "error: \"runtime join 'fx' of operation 1 matched 2 rows\"\n")
    result = cli(finance, "test", "e1", "e2")
    assert result.exit_code == 0, describe(result)
    assert "2 passed, 0 failed, 0 invalid" in result.stdout
    # the wrong code, and an error expected from a run that succeeds, are failures
    write(finance, "tests/e3.yml", f"project: plain_append\nperiod: 2026-01\n{given}  budgets: {{rows: []}}\n"
                                   "error: JOIN-VR-001\n")
    write(finance, "tests/e4.yml", f"project: ts01_output_only\nperiod: 2026-01\n{given}error: matched 2 rows\n")
    result = cli(finance, "test", "e3", "e4")
    assert result.exit_code == 4, describe(result)
    assert "expected the error 'JOIN-VR-001', got validation errors APPEND_003" in result.stdout
    assert "expected the error 'matched 2 rows', but the project compiled and ran (output 1: 10 rows)" in result.stdout
    # without `error:`, the fan-out fails the test with the run's error
    write(finance, "tests/e5.yml", f"project: fan_out\nperiod: 2026-01\n{given}"
                                   "  exchange_rates: {csv: fixtures/exchange_rates.csv}\nexpect: [{output: 2, rows: []}]\n")
    result = cli(finance, "test", "e5")
    assert result.exit_code == 4, describe(result)
    assert "the run failed: ledgerflow: runtime join 'fx' of operation 1 matched 2 rows of dataset " \
           "'exchange_rates' for one working row; join key: EUR" in result.stdout


def test_csv_and_parquet_fixtures(spark, finance):
    import pyarrow as pa
    import pyarrow.parquet as pq
    table = pa.table({"journal_id": ["JE-P"], "line_number": pa.array([1], pa.int32()),
                      "amount_local": pa.array([Decimal("12.34")], pa.decimal128(18, 2))})
    pq.write_table(table, finance / "tests" / "fixtures" / "gl.parquet")
    write(finance, "tests/fixtures/bad_gl.csv", "journal_id,line_number,amount_local\nJE-X,1,15000.005\n")
    write(finance, "tests/pq.yml", """\
        project: ts07_output_columns
        period: 2026-01
        given:
          gl: {parquet: fixtures/gl.parquet}
        expect:
          - output: 1
            rows: [{journal_id: JE-P, amount_local: "12.34", amount_reporting: null}]
        """)
    write(finance, "tests/bad_csv.yml", """\
        project: ts07_output_columns
        period: 2026-01
        given:
          gl: {csv: fixtures/bad_gl.csv}
        expect: [{output: 1, rows: []}]
        """)
    write(finance, "tests/no_file.yml", """\
        project: ts07_output_columns
        period: 2026-01
        given:
          gl: {csv: fixtures/absent.csv}
        expect: [{output: 1, rows: []}]
        """)
    result = cli(finance, "test", "pq", "bad_csv")
    assert result.exit_code == 4, describe(result)
    assert "PASSED  pq (tests/pq.yml)" in result.stdout
    assert ("the run failed: ledgerflow: dataset 'gl', column 'amount_local' at tests/fixtures/bad_gl.csv: value '15000.005' "
            "cannot be read as decimal(18,2) without losing digits") in result.stdout
    result = cli(finance, "test", "no_file")
    assert result.exit_code == 1, describe(result)
    assert "tests/no_file.yml:4:13: TEST-008 no csv file fixtures/absent.csv beside the test" in result.stdout


def test_record_round_trip(spark, finance):
    ran = cli(finance, "run", "ts03_fx_conversion", "--period", "2026-01")
    assert ran.exit_code == 0, describe(ran)
    run_id = run_id_of(ran)
    result = cli(finance, "test", "--record", run_id, "fx_regression", "--rows", "4")
    assert result.exit_code == 0, describe(result)
    assert result.stdout.startswith("wrote tests/fx_regression.yml: 4 rows of gl")
    written = yaml.safe_load((finance / "tests" / "fx_regression.yml").read_text())
    assert written["project"] == "ts03_fx_conversion" and written["period"] == "2026-01"
    sample = written["given"]["gl"]["rows"]
    rates = written["given"]["exchange_rates"]["rows"]
    assert len(sample) == 4
    assert {r["from_currency"] for r in rates} == {r["currency"] for r in sample}  # narrowed to what joins
    assert all(r["_period_to"] is None for r in rates)  # as read: the as-of filter applied
    (out,) = written["expect"]
    assert out["output"] == 2 and len(out["rows"]) == 4
    result = cli(finance, "test", "fx_regression")
    assert result.exit_code == 0, describe(result)
    # last month's close as a regression test: a changed formula fails it
    edit(finance, "projects/ts03_fx_conversion.yml", "transactions.amount_local * fx.rate",
         "transactions.amount_local * fx.rate * 2")
    result = cli(finance, "test", "fx_regression")
    assert result.exit_code == 4, describe(result)
    assert "rows with different values" in result.stdout or "row with different values" in result.stdout
    again = cli(finance, "test", "--record", run_id, "fx_regression")
    assert again.exit_code == 1 and "exists already" in again.stderr


def _fixture_from_data(finance, dataset: str, file: str) -> None:
    """A CSV fixture ``tests/fixtures/run_<dataset>.csv`` holding what the run reads: ``data/<dataset>/<file>``."""
    (finance / "tests" / "fixtures" / f"run_{dataset}.csv").write_text((finance / "data" / dataset / file).read_text())


def test_a_test_computes_what_a_run_writes(spark, compiled_code, finance):
    """The test session interprets expressions instead of compiling them (suite.TEST_CONF): its
    outputs must still be the rows `ledgerflow run` writes, to the last digit. (Not the ids of input
    rows: a run identifies CSV rows by their content, a test its given rows by their position; that
    those ids are the same interpreted and compiled is test_given_rows_are_identified_by_their_position.)"""
    ran = cli(finance, "run", "ts03_fx_conversion", "--period", "2026-01")
    assert ran.exit_code == 0, describe(ran)
    (part,) = (finance / "data" / "ts03_fx_converted").rglob("_period=2026-01/part-*.csv")  # the published folder
    with open(part, newline="") as fh:  # every value as the run wrote it (empty: not compared)
        rows = [{c: v for c, v in r.items() if v != "" and c not in ("_period", "_row_id")} for r in csv.DictReader(fh)]
    started = rows[0]["_updated_at"]  # the run's start: the time part of its UUIDv7 row ids
    assert len(rows) == 10 and any(r["amount_reporting"] == "9282.00" for r in rows)
    _fixture_from_data(finance, "gl", "v1/transactions.csv")
    _fixture_from_data(finance, "exchange_rates", "v1/exchange_rates.csv")
    write(finance, "tests/as_run.yml", f"project: ts03_fx_conversion\nperiod: 2026-01\nrun_started_at: {started}\n"
          "given:\n"
          "  gl: {csv: fixtures/run_gl.csv}\n  exchange_rates: {csv: fixtures/run_exchange_rates.csv}\n"
          "expect:\n  - output: 2\n    rows:\n" + "".join(f"      - {json.dumps(r)}\n" for r in rows))
    result = cli(finance, "test", "as_run")
    assert result.exit_code == 0, describe(result)
    assert spark.conf.get("spark.sql.codegen.wholeStage") == "true"  # the caller's session keeps its settings


def test_rows_an_aggregate_creates_get_the_ids_a_run_gives_them(spark, finance):
    """The ids of rows an operation creates (here TS-05's totals, identified by their group) do not depend on
    given rows' positions: the test session, which interprets expressions, gives them the ids the run's
    compiled code wrote, as every other value."""
    from cli_support import read_output, record
    ran = cli(finance, "run", "ts05_aggregate_by_type", "--period", "2026-01")
    assert ran.exit_code == 0, describe(ran)
    rec = record(finance, run_id_of(ran))
    started = rec["started_at"]
    _, written = read_output(spark, rec, 3)
    assert len(written) == 14

    def expected(row) -> dict:
        named = {c: row[c] for c in ("journal_id", "line_number", "account_type", "_operation_seq")}
        if row["_operation_seq"] == 2:  # a total: its id, sum and count too
            named.update(_row_id=row["_row_id"], total_amount=str(row["total_amount"]), line_count=row["line_count"])
        return named
    totals = [expected(r) for r in written if r["_operation_seq"] == 2]
    assert len(totals) == 4 and all(UUID7.match(t["_row_id"]) for t in totals)
    _fixture_from_data(finance, "gl", "v1/transactions.csv")
    _fixture_from_data(finance, "accounts", "v2/accounts.csv")  # the version the run read (latest active)
    write(finance, "tests/as_run.yml", f"project: ts05_aggregate_by_type\nperiod: 2026-01\nrun_started_at: {started}\n"
          "given:\n  gl: {csv: fixtures/run_gl.csv}\n  accounts: {csv: fixtures/run_accounts.csv}\n"
          "expect:\n  - output: 3\n    rows:\n" + "".join(f"      - {json.dumps(expected(r))}\n" for r in written))
    result = cli(finance, "test", "as_run")
    assert result.exit_code == 0, describe(result)


def test_record_narrows_join_rows_with_escaped_sample_values(spark):
    """The filter that keeps the join rows a recorded sample needs is SQL nodes: a value with a quote or
    a backslash is one literal and a name with a backtick one identifier, never SQL text; every type a
    collected row holds selects exactly its own rows on Spark."""
    import sqlglot
    from sqlglot import expressions as exp
    from ledgerflow.adapters.scenarios.record import _in_sample
    values = {"O'Brien", "a\\b", "x') OR (1=1"}
    parsed = sqlglot.parse_one(_in_sample("cust`omer", values).sql(dialect="spark"), read="spark")
    assert isinstance(parsed, exp.In)
    assert parsed.this.name == "cust`omer"
    assert {lit.this for lit in parsed.expressions} == values
    assert _in_sample("c", set()).sql(dialect="spark") == "FALSE"
    rows = spark.createDataFrame(
        [("O'Brien", Decimal("0.00000001"), float("inf"), datetime.date(2026, 1, 31), True, 7),
         ("x') OR (1=1", Decimal("2.50"), 1.5, datetime.date(2026, 2, 1), False, 8)],
        "s string, d decimal(18,10), f double, dt date, b boolean, i int")
    for column, wanted in (("s", {"O'Brien"}), ("d", {Decimal("0.00000001")}), ("f", {float("inf")}),
                           ("dt", {datetime.date(2026, 1, 31)}), ("b", {True}), ("i", {7})):
        kept = rows.where(_in_sample(column, wanted).sql(dialect="spark")).collect()
        assert [r[column] for r in kept] == list(wanted), (column, kept)


def test_the_test_command_starts_its_driver_jvm_with_c1_only(finance, monkeypatch):
    """`ledgerflow test` launches a driver JVM tuned for a few rows (C1 only, bench/results/history.md 0c), `run` the
    default one; a workspace that sets its own Java options keeps them. Each maps its own kind of class
    archive (adapters/spark/class_archive.py)."""
    from ledgerflow.adapters.spark import session as spark_settings
    seen: list[dict] = []
    kinds: list[str] = []

    def launch(master, conf, quiet=True, log_file=None, archive=None):
        seen.append(dict(conf))
        kinds.append(archive)
        raise RuntimeError("no JVM in this test")
    monkeypatch.setattr(spark_settings, "local_session", launch)
    for args in (("test", "ts01_output_only"), ("run", "ts01_output_only", "--period", "2026-01")):
        cli(finance, *args)
    assert [spark_settings.session_settings(c, quiet=False)["spark.driver.extraJavaOptions"] for c in seen] == [
        "-Xss16m -XX:TieredStopAtLevel=1", "-Xss16m"]
    assert kinds == ["test", "run"]
    assert spark_settings.scenario_test_conf({"spark.driver.extraJavaOptions": "-Xss64m"}) == {
        "spark.driver.extraJavaOptions": "-Xss64m"}


def test_inline_rows_arrive_exactly_without_python_workers(spark):
    """Given rows reach Spark as one JSON parameter cast per column: every value exact at its declared
    type (quotes, backslashes, control characters, the extremes of each type; TIMESTAMP as the UTC
    wall clock, FLOAT as a Python float rounds), and the plan holds no Python-made RDD (whose first
    Python worker costs a process ~1.5 s). VARCHAR columns arrive as strings (createDataFrame refused them)."""
    from ledgerflow.adapters.scenarios.execute import collect
    from ledgerflow.adapters.scenarios.given import frame
    from ledgerflow.adapters.scenarios.prepare import GivenTable
    from ledgerflow.compiler.loading import POSITION_COLUMN
    from ledgerflow.compiler.periods import parse_period
    columns = [("s", "string"), ("d", "decimal(38,6)"), ("i", "int"), ("b", "bigint"), ("f", "double"),
               ("fl", "float"), ("ok", "boolean"), ("dt", "date"), ("ts", "timestamp"), ("ntz", "timestamp_ntz"),
               ("v", "varchar(10)"), ("t", "tinyint"), ("odd `name", "smallint")]
    texts = ["it's", "back\\slash", "a\\'b", "new\nline\r\n", "\x00nul", "''", "--", "/*", "uni ✓ \U0001F600", "", "null"]
    rows = [(text, Decimal("-12345678901234567890123456789012.123456") if k % 2 else Decimal("0.000001"),
             -2**31 + k, 2**63 - 1 - k, 0.1 + k, 1 / 3 if k else 3.4e38, k % 2 == 0,
             datetime.date(1, 1, 1) if k == 1 else datetime.date(2026, 1, k + 1),
             datetime.datetime(2026, 11, 1, 5, 30, 0, 123456) if k == 2 else datetime.datetime(1969, 12, 31, 23, 59, 59, 999999),
             datetime.datetime(9999, 12, 31, 23, 59, 59, 999999), text[:10], -128 if k == 0 else 127, k)
            for k, text in enumerate(texts)] + [tuple([None] * len(columns))]
    df = frame(spark, GivenTable(dataset=None, columns=columns, rows=rows, source="tests/x.yml given t"), parse_period("2026-01"))
    assert "LogicalRDD" not in df._jdf.queryExecution().analyzed().toString()
    names, types, got = collect(df)
    assert names == [n for n, _ in columns] + [POSITION_COLUMN]  # and each row's index in the list
    assert [types[n] for n in names] == [t if t != "varchar(10)" else "string" for _, t in columns] + ["bigint"]
    assert [r[-1] for r in got] == list(range(len(rows)))
    got = [r[:-1] for r in got]
    import struct
    as_float = [None if r[5] is None else struct.unpack("f", struct.pack("f", r[5]))[0] for r in rows]
    expected = [r[:5] + (f,) + r[6:] for r, f in zip(rows, as_float)]
    key = lambda r: (r[-1] is None, r[-1])
    assert sorted(got, key=key) == sorted(expected, key=key)
    empty = frame(spark, GivenTable(dataset=None, columns=columns, rows=[], source="t"), parse_period("2026-01"))
    assert collect(empty)[2] == [] and empty.schema.simpleString() == df.schema.simpleString()


def _load_given(session, ds, data, view: str):
    """(journal_id, line_number, _row_id) of ``data`` loaded as a test loads it; and the view's analysed plan."""
    from ledgerflow.adapters.inputs import loaders
    from ledgerflow.adapters.scenarios.given import frame
    from ledgerflow.compiler import parameters
    from ledgerflow.compiler.periods import parse_period
    period = parse_period("2026-01")
    location = loaders.register_memory(view, frame(session, data, period), period.identifier)
    try:
        loaders.load_input(session, loaders.InputLoad(view, ds, 1, [location], positioned=True),
                           parameters.values(period, datetime.datetime(2026, 1, 31)))
    finally:
        loaders.MEMORY.pop(view, None)
    df = session.table(view)
    plan = df._jdf.queryExecution().analyzed().toString()
    return [tuple(r) for r in df.select("journal_id", "line_number", "_row_id").collect()], plan


def test_given_rows_are_identified_by_their_position(spark, compiled_code, finance):
    """Rows given without _row_id get ids from their place in the given data (the index under rows:, the record's
    place in a CSV fixture, the row index of a Parquet fixture), written into the id as they are, with no window
    over a content hash and no hash of the position: the same rows get the same ids inline, as CSV and as
    Parquet, identical rows distinct ids, and the ids are the same when expressions are interpreted (the test
    session) as when they are compiled (a run's session)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from ledgerflow.adapters.scenarios.prepare import GivenFile, GivenTable
    from ledgerflow.adapters.scenarios.suite import Session
    from ledgerflow.compiler.workspace import load_workspace
    ds = load_workspace(str(finance)).find_dataset("gl")
    lines = (finance / "tests" / "fixtures" / "gl.csv").read_text().splitlines()
    lines.append(lines[1])  # an identical row
    text_rows = list(csv.reader(lines[1:]))
    header = lines[0].split(",")
    (finance / "tests" / "fixtures" / "twice.csv").write_text("\n".join(lines) + "\n")
    pq.write_table(pa.table({c: [r[i] for r in text_rows] for i, c in enumerate(header)}),
                   finance / "tests" / "fixtures" / "twice.parquet")
    types = [(c.name, c.type) for c in ds.columns]
    typed = [tuple(convert(v, t) if v != "" else None for v, (_, t) in zip(r, types)) for r in text_rows]
    forms = {"inline": GivenTable(ds, types, typed, "tests/x.yml given gl"),
             "csv": GivenFile(ds, str(finance / "tests" / "fixtures" / "twice.csv"), "csv", "twice.csv"),
             "parquet": GivenFile(ds, str(finance / "tests" / "fixtures" / "twice.parquet"), "parquet", "twice.parquet")}
    session = Session(lambda: spark).get()
    loaded = {name: _load_given(session, ds, data, f"lf_given_{name}") for name, data in forms.items()}
    ids, plan = loaded["inline"]
    assert [(j, n) for j, n, _ in ids] == [(r[0], int(r[1])) for r in text_rows]  # in the given order
    assert all(UUID7.match(i) for _, _, i in ids) and len({i for _, _, i in ids}) == len(ids)  # identical rows too
    assert [i[-12:] for _, _, i in ids] == [f"{n:012x}" for n in range(len(ids))]  # the position, written out
    assert len({i[:-12] for _, _, i in ids}) == 1
    assert "row_number" not in plan and "Window" not in plan and "sha2" not in plan, plan
    assert "xxhash64" not in plan and "element_at" not in plan, plan  # no hash, no digit table
    assert "rlike" not in plan.lower(), plan  # no period filter in the view: the compiled SQL's is the one
    for name in ("csv", "parquet"):
        assert sorted(loaded[name][0]) == sorted(ids), name
    assert _load_given(session, ds, forms["csv"], "lf_given_again")[0] == loaded["csv"][0]
    compiled = _load_given(spark, ds, forms["csv"], "lf_given_compiled")[0]  # the caller's session: codegen on
    assert spark.conf.get("spark.sql.codegen.wholeStage") == "true" and sorted(compiled) == sorted(ids)


def test_the_test_session_reads_a_fixture_as_one_partition(spark, tmp_path):
    """A CSV fixture's rows are numbered in file order only if the file is one read partition: the test
    session never splits a file, where another session splits a large one (here 5.6 MB, by its
    maxPartitionBytes or, by default, over its cores)."""
    from ledgerflow.adapters.scenarios.given import _file_position
    from ledgerflow.adapters.scenarios.suite import Session
    from ledgerflow.compiler.loading import POSITION_COLUMN
    path = tmp_path / "big.csv"
    count = 120_000
    path.write_text("n,pad\n" + "".join(f"{i},{'x' * 40}\n" for i in range(count)))
    other = spark.newSession()
    other.conf.set("spark.sql.files.maxPartitionBytes", "1m")
    assert other.read.option("header", "true").csv(str(path)).rdd.getNumPartitions() >= 2
    session = Session(lambda: spark).get()
    raw = session.read.option("header", "true").csv(str(path))
    df = raw.withColumn(POSITION_COLUMN, _file_position(raw, "csv"))
    assert df.rdd.getNumPartitions() == 1
    from pyspark.sql import functions as F
    numbered = df.agg(F.count("*"), F.sum((F.col("n").cast("bigint") != F.col(POSITION_COLUMN)).cast("int"))).first()
    assert tuple(numbered) == (count, 0)  # every record numbered by its place in the file


def test_given_rows_of_other_periods_are_not_read(spark, finance):
    """Given data is filtered by the compiled SQL's period rule alone (docs/workspace.md, datasets: the run's period or a
    finer period inside it): a month run reads its month and its days, not the month before or after,
    nor the quarter that holds it; so does a runtime join (a row of another period would fan the join
    out) and an append source. (The as-of filter of bitemporal inputs and join sides: TS-02, TS-03.)"""
    periods = ["2026-01", "2026-01-15", "2026-02", "2025-12", "2026-Q1", "2026", "2026-01-31"]
    rows = "".join(f"      - {{journal_id: J{i}, line_number: 1, amount_local: \"1.00\", _period: \"{p}\"}}\n"
                   for i, p in enumerate(periods))
    write(finance, "tests/periods.yml", "project: ts01_output_only\nperiod: 2026-01\ngiven:\n  gl:\n    rows:\n" + rows +
          "expect:\n  - output: Write transactions\n    rows:\n"
          "      - {journal_id: J0, _period: \"2026-01\"}\n      - {journal_id: J1, _period: \"2026-01-15\"}\n"
          "      - {journal_id: J6, _period: \"2026-01-31\"}\n")
    result = cli(finance, "test", "periods")
    assert result.exit_code == 0, describe(result)
    line = "  gl:\n    rows:\n      - {journal_id: J0, line_number: 1, account_code: \"4100\", amount_local: \"1.00\"}\n"
    others = ["2026-02", "2025-12", "2026-Q1", "2026"]
    accounts = "".join(f"      - {{code: \"4100\", type: {t}, _period: \"{p}\"}}\n"
                       for t, p in [("revenue", "2026-01")] + [("expense", p) for p in others])
    write(finance, "tests/join_periods.yml", "project: ts05_aggregate_by_type\nperiod: 2026-01\ngiven:\n" + line +
          "  accounts:\n    rows:\n" + accounts + "expect:\n  - output: 3\n    rows:\n"
          "      - {journal_id: J0, account_type: revenue}\n"
          "      - {journal_id: null, account_type: revenue, total_amount: \"1.00\", line_count: 1}\n")
    budgets = "".join(f"      - {{budget_id: B{i}, account_code: \"4100\", amount: \"10.00\", _period: \"{p}\"}}\n"
                      for i, p in enumerate(["2026-01", "2026-01-20"] + others))
    write(finance, "tests/append_periods.yml", "project: ts06_append_budgets\nperiod: 2026-01\ngiven:\n" + line +
          "  budgets:\n    rows:\n" + budgets + "expect:\n  - output: 2\n    rows:\n"
          "      - {journal_id: J0, amount_local: \"1.00\"}\n"
          "      - {journal_id: null, account_code: \"4100\", amount_local: \"20.00\"}\n")
    result = cli(finance, "test", "join_periods", "append_periods")
    assert result.exit_code == 0, describe(result)


# ------------------------------------------------------------- fixture columns and paths (no Spark)
def _fixture_test(finance, name: str, given: str) -> None:
    write(finance, f"tests/{name}.yml", f"project: ts07_output_columns\nperiod: 2026-01\ngiven:\n  gl: {given}\n"
          "expect: [{output: 1, rows: []}]\n")


def test_a_fixture_column_the_dataset_does_not_have_is_located_like_an_inline_one(finance):
    """A misspelt CSV header (amount_lcoal) or Parquet column was dropped and the declared column read as
    NULL; it is TEST-006 at the fixture's place in the test, before Spark, as an inline row's key is."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    write(finance, "tests/fixtures/typo.csv", "journal_id,line_number,amount_lcoal\nJE-1,1,100.00\n")
    write(finance, "tests/fixtures/twice.csv", "journal_id,amount_local,amount_local\nJE-1,1.00,2.00\n")
    pq.write_table(pa.table({"journal_id": ["JE-1"], "Amount_Local": ["1.00"]}),
                   finance / "tests" / "fixtures" / "typo.parquet")
    _fixture_test(finance, "typo_csv", "{csv: fixtures/typo.csv}")
    _fixture_test(finance, "typo_pq", "{parquet: fixtures/typo.parquet}")
    _fixture_test(finance, "twice_csv", "{csv: fixtures/twice.csv}")
    result = cli(finance, "test", "typo_csv", "typo_pq", "twice_csv")
    assert result.exit_code == 1, describe(result)
    assert ("tests/typo_csv.yml:4:13: TEST-006 dataset 'gl' has no column 'amount_lcoal' (a column of "
            "fixtures/typo.csv) (at 'amount_lcoal'). Hint: did you mean 'amount_local'?") in result.stdout
    assert ("tests/typo_pq.yml:4:17: TEST-006 dataset 'gl' has no column 'Amount_Local' (a column of "
            "fixtures/typo.parquet)") in result.stdout
    assert ("tests/twice_csv.yml:4:13: TEST-006 fixtures/twice.csv names the column 'amount_local' of dataset 'gl' "
            "more than once") in result.stdout
    assert "0 passed, 0 failed, 3 invalid" in result.stdout


def test_a_fixture_path_must_stay_inside_the_workspace(finance, tmp_path):
    """``../../x.csv``, an absolute path and a link beside the test that points out are TEST-013, before
    anything is read (the file outside exists and is a valid fixture: it would have been read)."""
    import os
    outside = tmp_path / "outside.csv"
    outside.write_text((finance / "tests" / "fixtures" / "gl.csv").read_text())
    os.symlink(outside, finance / "tests" / "fixtures" / "linked.csv")
    _fixture_test(finance, "climb", "{csv: ../../outside.csv}")
    _fixture_test(finance, "absolute", f"{{csv: {outside}}}")
    _fixture_test(finance, "linked", "{csv: fixtures/linked.csv}")
    _fixture_test(finance, "passwd", "{csv: ../../../../../../../../etc/passwd}")
    result = cli(finance, "test", "climb", "absolute", "linked", "passwd")
    assert result.exit_code == 1, describe(result)
    for name, shown in [("climb", "../../outside.csv"), ("absolute", str(outside)), ("linked", "fixtures/linked.csv"),
                        ("passwd", "../../../../../../../../etc/passwd")]:
        assert (f"tests/{name}.yml:4:13: TEST-013 the csv file {shown} of given dataset 'gl' is not inside the "
                "workspace") in result.stdout, result.stdout
    assert "0 passed, 0 failed, 4 invalid" in result.stdout


def test_a_declared_column_a_fixture_lacks_is_null_as_in_an_inline_row(spark, finance):
    write(finance, "tests/fixtures/no_reporting.csv", "journal_id,line_number,account_code,amount_local\n"
          "JE-1,1,4100,100.00\n")
    expect = ("expect:\n  - output: 1\n    rows: [{journal_id: JE-1, account_code: \"4100\", amount_local: \"100.00\", "
              "amount_reporting: null}]\n")
    write(finance, "tests/lacks_csv.yml", "project: ts07_output_columns\nperiod: 2026-01\ngiven:\n"
          "  gl: {csv: fixtures/no_reporting.csv}\n" + expect)
    write(finance, "tests/lacks_rows.yml", "project: ts07_output_columns\nperiod: 2026-01\ngiven:\n"
          "  gl: {rows: [{journal_id: JE-1, line_number: 1, account_code: \"4100\", amount_local: \"100.00\"}]}\n"
          + expect)
    result = cli(finance, "test", "lacks_csv", "lacks_rows")
    assert result.exit_code == 0, describe(result)
    assert "2 passed" in result.stdout

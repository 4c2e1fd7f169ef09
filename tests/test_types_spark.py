"""The compiler's type of a DSL expression is the type Spark gives it (issue 43, point 1).

Random well-typed expressions over columns of every type (int, bigint, double, decimals from
decimal(5,2) to decimal(38,10), string, date, timestamp, boolean) and literals of every shape: the
translator's type, before any run, against Spark's own ``typeof(...)`` of the translated SQL over a
real row. Decimal arithmetic (the 38-digit cap and the precision-loss rule), integer literals next
to decimals, ROUND/FLOOR/CEIL/MOD/MIN/MAX, IF/COALESCE widening, NULLs, CAST and the aggregates.
Many expressions go into one SELECT so that the test stays well under a minute.
"""
from __future__ import annotations

import datetime

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from ledgerflow.compiler import types as T
from ledgerflow.compiler.dsl.ast import Source
from ledgerflow.compiler.dsl.translate import Scope, Translator

pytestmark = pytest.mark.spark

# name -> (Spark SQL of its value in the one row, declared type)
COLUMNS = {
    "i": ("CAST(7 AS INT)", "int"), "b": ("CAST(5000000000 AS BIGINT)", "bigint"),
    "f": ("CAST(0.5 AS DOUBLE)", "double"), "d52": ("CAST(123.45 AS DECIMAL(5,2))", "decimal(5,2)"),
    "d100": ("CAST(42 AS DECIMAL(10,0))", "decimal(10,0)"), "amount": ("CAST(1500.25 AS DECIMAL(18,2))", "decimal(18,2)"),
    "rate": ("CAST(1.123456 AS DECIMAL(18,6))", "decimal(18,6)"),
    "total": ("CAST(99.99 AS DECIMAL(38,2))", "decimal(38,2)"),
    "fine": ("CAST(0.1 AS DECIMAL(38,10))", "decimal(38,10)"), "n_null": ("CAST(NULL AS DECIMAL(18,2))", "decimal(18,2)"),
    "s": ("'12.5'", "string"), "dt": ("DATE'2026-01-31'", "date"), "ts": ("TIMESTAMP'2026-02-10 18:30:00'", "timestamp"),
    "t": ("TRUE", "boolean"),
}
SCOPE = Scope("row", {name: T.from_sql(sql) for name, (_, sql) in COLUMNS.items()})
NUMBERS = [n for n, (_, sql) in COLUMNS.items() if T.from_sql(sql).kind == "number"]
CAST_NUMBERS = ["integer", "int", "bigint", "double", "decimal(10,2)", "decimal(38,6)", "decimal(5,0)", "decimal(20,18)"]
RUN_AT = datetime.datetime(2026, 1, 15, 10, 0)


def _number_literal(draw) -> str:
    form = draw(st.integers(0, 4))
    if form == 0:
        return str(draw(st.integers(0, 20)))
    if form == 1:
        return str(draw(st.sampled_from([2 ** 31 - 1, 2 ** 31, 2 ** 63 - 1, 2 ** 63, 10 ** 25, 10 ** 37])))
    if form == 2:
        return f"{draw(st.integers(0, 99999))}.{draw(st.integers(0, 10 ** 6)):0{draw(st.integers(1, 7))}d}"
    if form == 3:
        return "0." + "0" * draw(st.integers(0, 6)) + str(draw(st.integers(1, 99)))
    return "-" + draw(st.sampled_from(["1", "2147483648", "0.5", "12.340"]))


class Gen:
    """Random DSL texts of a kind (number, boolean, string, date), at most ``depth`` levels deep."""

    def __init__(self, draw):
        self.draw = draw

    def number(self, depth: int) -> str:
        draw = self.draw
        if depth <= 0 or draw(st.integers(0, 4)) == 0:
            leaf = draw(st.integers(0, 9))
            if leaf == 0:
                return "NULL"
            return _number_literal(draw) if leaf < 4 else draw(st.sampled_from(NUMBERS))
        d = depth - 1
        form = draw(st.integers(0, 11))
        if form <= 2:
            return f"({self.number(d)} {draw(st.sampled_from('+-*/'))} {self.number(d)})"
        if form == 3:
            return f"-{self.number(d)}"
        if form == 4:
            return f"{draw(st.sampled_from(['ABS', 'FLOOR', 'CEIL']))}({self.number(d)})"
        if form == 5:
            return f"ROUND({self.number(d)}, {draw(st.integers(-3, 8))})"
        if form == 6:
            return f"{draw(st.sampled_from(['MOD', 'MIN', 'MAX']))}({self.number(min(d, 1))}, {self.number(min(d, 1))})"
        if form == 7:
            return f"IF({self.boolean(d)}, {self.number(d)}, {self.number(d)})"
        if form == 8:
            return "COALESCE(" + ", ".join(self.number(d) for _ in range(draw(st.integers(1, 3)))) + ")"
        if form == 9:
            source = self.number(d) if draw(st.booleans()) else draw(st.sampled_from(["s", "t", "ts"]))
            return f"CAST({source} AS {draw(st.sampled_from(CAST_NUMBERS))})"
        if form == 10:
            return draw(st.sampled_from(["LEN(s)", "YEAR(dt)", "DATEDIFF(dt, ts)"]))
        return f"({self.number(d)})"

    def boolean(self, depth: int) -> str:
        if depth <= 0 or self.draw(st.booleans()):
            return self.draw(st.sampled_from(["t", "NULL", "FALSE"]))
        return f"{self.number(depth - 1)} > {self.number(depth - 1)}"

    def other(self, depth: int) -> str:
        """An expression of another kind, or a CAST between kinds."""
        d = max(depth - 1, 0)
        return self.draw(st.sampled_from([
            f"CAST({self.number(d)} AS string)", f"CAST({self.number(d)} AS boolean)",
            f"CAST({self.number(d)} AS timestamp)", "CAST(s AS date)", "CAST(ts AS date)", "CAST(dt AS timestamp)",
            "IF(t, dt, ts)", "COALESCE(NULL, dt)", f"IF({self.boolean(d)}, s, NULL)", "CAST(NULL AS decimal(7,3))",
            "IF(t, NULL, NULL)"]))


AGGREGATES = ["SUM", "AVG", "MIN_AGG", "MAX_AGG", "COUNT"]


@st.composite
def scalar_batch(draw):
    gen = Gen(draw)
    return [gen.number(3) if draw(st.integers(0, 4)) else gen.other(2) for _ in range(25)]


@st.composite
def aggregate_batch(draw):
    gen = Gen(draw)
    return [f"{draw(st.sampled_from(AGGREGATES))}({gen.number(2)})" for _ in range(10)]


@pytest.fixture(scope="module")
def row(spark):
    spark.sql("SELECT " + ", ".join(f"{sql} AS `{name}`" for name, (sql, _) in COLUMNS.items())) \
        .createOrReplaceTempView("types_row")
    return spark


def expected(text: str, aggregates: bool = False) -> tuple[str, str]:
    """(Spark SQL of ``text``, the type the compiler gives it as ``typeof`` spells it)."""
    typed = Translator(SCOPE, aggregates=aggregates).translate(Source(text, "types.yml", 1, 1))
    assert typed.type.kind != "unknown" and (typed.type.sql or typed.type.kind == "null"), (text, typed.type)
    return typed.sql.sql("spark"), typed.type.sql or "void"


def spark_types(spark, sqls: list[str]) -> list[str]:
    select = ", ".join(f"typeof({sql}) AS c{i}" for i, sql in enumerate(sqls))
    return list(spark.sql(f"SELECT {select} FROM types_row", args={"run_started_at": RUN_AT}).collect()[0])


def assert_same_types(spark, texts: list[str], aggregates: bool = False) -> None:
    pairs = [expected(t, aggregates) for t in texts]
    got = spark_types(spark, [sql for sql, _ in pairs])
    wrong = [(text, want, spark_type) for text, (_, want), spark_type in zip(texts, pairs, got) if want != spark_type]
    assert not wrong, wrong


# no shrinking: each try is a Spark query, and the failure lists every expression typed wrongly anyway
SETTINGS = settings(max_examples=10, deadline=None, phases=[Phase.explicit, Phase.generate],
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@SETTINGS
@given(scalar_batch())
@example(["amount * rate", "ROUND(amount * rate, 2)", "amount * 2", "amount * -2", "amount * (1 + 1)",
          "total * total", "total / total", "fine / amount", "amount / 3", "n_null + NULL", "NULL / amount",
          "ROUND(d52, -4)", "FLOOR(d100)", "MOD(amount, 7)", "MIN(d52, 2)", "IF(t, d52, 2147483648)",
          "COALESCE(amount, 1.234)", "1.50 * d52", "-2147483648", "99999999999999999999", "0.000 * d52",
          "CAST(amount * rate AS decimal(10,2))", "CAST(s AS integer)", "-NULL", "ROUND(NULL, 2)"])
def test_the_compilers_type_is_sparks_type(row, texts):
    assert_same_types(row, texts)


@SETTINGS
@given(aggregate_batch())
@example(["SUM(amount)", "AVG(total)", "AVG(i)", "SUM(f)", "MIN_AGG(NULL)", "SUM(amount * rate)", "COUNT(d52)",
          "AVG(fine * 2)", "SUM(NULL)", "AVG(NULL)"])
def test_the_compilers_type_of_an_aggregate_is_sparks_type(row, texts):
    assert_same_types(row, texts, aggregates=True)


# ------------------------------------------------------------------------------------------ CAST on a run
CAST_OPS = """
- seq: 1
  name: Amounts in hundreds
  type: update
  arguments:
    assignments:
      - column: amount_small
        expression: 'CAST(transactions.amount_local / 100 AS decimal({precision},2))'
- seq: 2
  name: Lines
  type: output
  arguments:
    destination: {{path: "out/cast_{precision}", format: parquet}}
    columns: [journal_id, line_number, amount_small]
"""


def test_a_cast_that_fits_is_exact_and_one_that_does_not_fails_the_run_naming_it(spark, finance):
    from cli_support import add_project, describe, output_entry, record, run, run_id_of
    add_project(finance, "cast_fits", CAST_OPS.format(precision=10))
    rec = record(finance, run_id_of(run(finance, "cast_fits")))
    frame = spark.read.parquet(output_entry(rec, 2)["location"])
    assert frame.schema["amount_small"].dataType.simpleString() == "decimal(10,2)"
    rows = {(r["journal_id"], r["line_number"]): str(r["amount_small"]) for r in frame.collect()}
    assert rows[("JE-001", 1)] == "150.00"
    add_project(finance, "cast_overflows", CAST_OPS.format(precision=3))  # 150.00 needs 5 digits: no silent NULL
    result = run(finance, "cast_overflows", expect=3)
    assert ("ledgerflow: CAST(transactions.amount_local / 100 AS decimal(3,2)) in operation 1 'Amounts in hundreds', "
            "column 'amount_small' (projects/cast_overflows.yml line ") in result.output, describe(result)
    assert ("the value '150.000000' (in a row where transactions.amount_local = 15000.00) does not convert to "
            "decimal(3,2)") in result.output, describe(result)
    assert record(finance, run_id_of(result))["status"] == "failed"


# ------------------------------------------------------------ one type: compile, registered dataset, the run
CONVERTED = """
- seq: 1
  name: Convert to USD
  type: update
  arguments:
    joins:
      - alias: fx
        dataset_id: exchange_rates
        on: 'transactions.currency = fx.from_currency AND fx.to_currency = "USD" AND fx.rate_type = "closing"'
    assignments:
      - {column: amount_usd, expression: 'ROUND(transactions.amount_local * fx.rate, 2)'}
      - {column: amount_raw, expression: 'transactions.amount_local * fx.rate'}
- seq: 2
  name: Register converted lines
  type: output
  arguments:
    destination: {path: "out/usd/v{{version}}", format: parquet}
    columns: [journal_id, line_number, amount_usd, amount_raw]
    register_as_dataset: usd_lines
"""


def test_a_computed_column_has_one_type_before_and_after_the_run(spark, finance):
    """The issue's ROUND(amount * rate, 2): ``number`` on the project page, ``decimal(38,2)`` once registered."""
    from cli_support import add_project, output_entry, record, run, run_id_of

    from ledgerflow.compiler.compile import plan_project
    from ledgerflow.compiler.workspace import load_workspace
    add_project(finance, "usd", CONVERTED)
    ws = load_workspace(str(finance))
    output = plan_project(ws, ws.find_project("usd")).operations[1]
    compiled = {name: str(col.type) for name, col in output.columns.items() if not name.startswith("_")}
    assert compiled == {"journal_id": "string", "line_number": "int", "amount_usd": "decimal(32,2)",
                        "amount_raw": "decimal(37,8)"}  # decimal(18,2) * decimal(18,6), rounded to 2 places
    registered = {c.name: c.type for c in ws.find_dataset("usd_lines").columns}
    assert registered == compiled
    written = spark.read.parquet(output_entry(record(finance, run_id_of(run(finance, "usd"))), 2)["location"])
    assert {f.name: f.dataType.simpleString() for f in written.schema.fields if f.name in compiled} == compiled


def test_the_docs_sites_project_and_dataset_pages_show_a_computed_column_by_one_type(tmp_path):
    """The issue's site: ``number`` on the project page, ``decimal(38,2)`` on the registered dataset's page."""
    from cli_support import add_project
    from docs_site_support import docs, page_data, page_of, sample_copy
    root = sample_copy(tmp_path)
    add_project(root, "usd", CONVERTED)
    assert docs(root).exit_code == 0
    site = root / "target" / "docs"
    shown = {"journal_id": "string", "line_number": "int", "amount_usd": "decimal(32,2)", "amount_raw": "decimal(37,8)"}
    project = page_data(site, page_of(site, "project", "usd"))
    assert {c["name"]: c["type"] for c in project["outputs"][0]["columns"]} == shown
    dataset = page_data(site, page_of(site, "dataset", "usd_lines"))
    assert {c["name"]: c["type"] for c in dataset["columns"] if c["name"] in shown} == shown

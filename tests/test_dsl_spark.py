"""Semantics of translated DSL expressions on a real local Spark (ANSI mode on, as configured)."""
from __future__ import annotations

import datetime
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pyspark.sql.types import DecimalType
from test_dsl_properties import GEN_COLUMNS, GEN_SCOPE, GEN_SELECTORS, expressions, kinds_match

from ledgerflow.compiler import types as T
from ledgerflow.compiler.dsl.ast import Source
from ledgerflow.compiler.dsl.translate import JoinScope, Scope, Translator

pytestmark = pytest.mark.spark

RUN_AT = datetime.datetime(2026, 1, 15, 10, 0)
DEC = T.SqlType("number", "decimal(18,2)")

# name -> (Spark SQL value, DSL type)
ROW = {
    "n": ("CAST(7 AS INT)", T.INTEGER),
    "m": ("CAST(-7 AS INT)", T.INTEGER),
    "zero": ("CAST(0 AS INT)", T.INTEGER),
    "n_null": ("CAST(NULL AS INT)", T.INTEGER),
    "big": ("CAST(40 AS BIGINT)", T.BIGINT),
    "amount": ("CAST(15000.00 AS DECIMAL(18,2))", DEC),
    "amount_zero": ("CAST(0 AS DECIMAL(18,2))", DEC),
    "amount_null": ("CAST(NULL AS DECIMAL(18,2))", DEC),
    "rate": ("CAST(0.5 AS DOUBLE)", T.SqlType("number", "double")),
    "s": ("'Product revenue'", T.STRING),
    "s_null": ("CAST(NULL AS STRING)", T.STRING),
    "s_ws": ("' \\t\\r\\n ab c \\n\\t\\r '", T.STRING),
    "s_accent": ("'h\u00e9llo'", T.STRING),
    "s_dots": ("'a.b.c'", T.STRING),
    "s_pct": ("'100% done_ok'", T.STRING),
    "d": ("DATE'2026-01-31'", T.DATE),
    "d2": ("DATE'2026-03-01'", T.DATE),
    "d_null": ("CAST(NULL AS DATE)", T.DATE),
    "ts": ("TIMESTAMP'2026-02-10 18:30:00'", T.TIMESTAMP),
    "t": ("TRUE", T.BOOLEAN),
    "f": ("FALSE", T.BOOLEAN),
    "u": ("CAST(NULL AS BOOLEAN)", T.BOOLEAN),
}
SCOPE = Scope("row", {name: typ for name, (_, typ) in ROW.items()})
SELECTORS = {"EITHER": Source("n = 1 OR n = 7", "selectors.yml", 1, 1)}


@pytest.fixture(scope="module")
def row(spark):
    assert spark.conf.get("spark.sql.ansi.enabled") == "true"
    select = ", ".join(f"{sql} AS `{name}`" for name, (sql, _) in ROW.items())
    spark.sql(f"SELECT {select}").createOrReplaceTempView("dsl_row")
    return spark


def to_sql(text: str, scope: Scope = SCOPE, expect=None, **kw) -> str:
    return Translator(scope, SELECTORS, **kw).translate(Source(text, "t.yml", 1, 1), expect).sql.sql("spark")


def query(spark, text: str, view: str = "dsl_row", scope: Scope = SCOPE, run_at=RUN_AT, **kw):
    return spark.sql(f"SELECT {to_sql(text, scope, **kw)} AS v FROM {view}", args={"run_started_at": run_at})


def ev(spark, text: str, **kw):
    rows = query(spark, text, **kw).collect()
    assert len(rows) == 1
    return rows[0]["v"]


def ev_each(spark, texts: list[str]) -> dict:
    """:func:`ev` of every text, in one query (a column each, every text translated alone as :func:`ev` does):
    a query per text took the most of this file's time. Should that query fail, every text is evaluated alone
    and its error kept, for :func:`result_of` to raise in that text's test."""
    try:
        select = ", ".join(f"{to_sql(text)} AS v{i}" for i, text in enumerate(texts))
        rows = spark.sql(f"SELECT {select} FROM dsl_row", args={"run_started_at": RUN_AT}).collect()
    except Exception:  # noqa: BLE001 - which text failed is found below, one query each
        rows = None
    if rows is not None:
        assert len(rows) == 1
        return {text: rows[0][f"v{i}"] for i, text in enumerate(texts)}
    values: dict = {}
    for text in texts:
        try:
            values[text] = ev(spark, text)
        except Exception as exc:  # noqa: BLE001 - raised again by that text's test
            values[text] = exc
    return values


def result_of(values: dict, text: str):
    """The value :func:`ev_each` gave ``text`` (its error raised)."""
    got = values[text]
    if isinstance(got, Exception):
        raise got
    return got


# The texts of the tests of one expression each below, evaluated together (:func:`ev_each`).
PRECEDENCE = [
    ("1 + 2 * 3", 7), ("(1 + 2) * 3", 9), ("10 - 4 - 3", 3), ("10 - (4 - 3)", 9), ("-n * 2", -14),
    ("- - n", 7), ("n--1", 8), ("2 * -n + 1", -13),
    ("NOT f AND f", False), ("NOT (f AND f)", True), ("t OR t AND f", True), ("(t OR t) AND f", False),
    ("NOT n = 1", True), ("{{EITHER}} AND n = 2", False), ("n = 2 AND {{EITHER}} OR t", True),
]
NULL_ARITHMETIC = ["n_null + 1", "n_null * amount", "amount - amount_null", "-n_null", "NULL + 1", "n_null / 2",
                   "2 / n_null", "ABS(n_null)", "ROUND(amount_null, 2)", "MOD(n_null, 2)", "FLOOR(amount_null)",
                   "CEIL(amount_null)"]
NULL_COMPARISON = ["n_null = n_null", "n_null <> 1", "n_null != 1", "s_null < 'a'", "d_null >= d", "n_null > n",
                   "u = t", "NULL = 1"]
FUNCTION_FORMS = [
    ("OR(t, f) AND f", False), ("f AND OR(f, t)", False), ("NOT OR(f, t)", False), ("AND(t, f) OR t", True),
    ("f = AND(f, t)", True), ("t = ISNULL(n_null)", True), ("ISNULL(n) = f", True), ("f = NOT(t)", True),
    ("NOT ISNULL(n)", True),
]
BY_ZERO = ["n / zero", "amount / amount_zero", "amount / 0", "1 / 0", "1.5 / 0.0", "rate / zero", "MOD(n, zero)",
           "MOD(amount, 0)", "MOD(7, 0)"]


@pytest.fixture(scope="module")
def values(row):
    """The value of every text of the tests of one expression each."""
    return ev_each(row, [t for t, _ in PRECEDENCE] + NULL_ARITHMETIC + NULL_COMPARISON
                   + [t for t, _ in FUNCTION_FORMS] + BY_ZERO)


# ------------------------------------------------------------------ precedence and grouping on Spark
@pytest.mark.parametrize("text, value", PRECEDENCE)
def test_precedence_on_spark(values, text, value):
    assert result_of(values, text) == value


# ------------------------------------------------------------------ NULL
@pytest.mark.parametrize("text", NULL_ARITHMETIC)
def test_null_propagates_through_arithmetic(values, text):
    assert result_of(values, text) is None


@pytest.mark.parametrize("text", NULL_COMPARISON)
def test_null_propagates_through_comparison(values, text):
    assert result_of(values, text) is None


KLEENE = {"t": True, "f": False, "u": None}


def _and(a, b):
    if a is False or b is False:
        return False
    return None if a is None or b is None else True


def _or(a, b):
    if a is True or b is True:
        return True
    return None if a is None or b is None else False


@pytest.mark.parametrize("p", list(KLEENE))
@pytest.mark.parametrize("q", list(KLEENE))
def test_three_valued_and_or(row, p, q):
    a, b = KLEENE[p], KLEENE[q]
    r = row.sql(f"SELECT {to_sql(f'{p} AND {q}')} AS x, {to_sql(f'{p} OR {q}')} AS y, "
                f"{to_sql(f'AND({p}, {q})')} AS fx, {to_sql(f'OR({p}, {q})')} AS fy, "
                f"{to_sql(f'NOT {p}')} AS n FROM dsl_row").collect()[0]
    assert (r["x"], r["fx"]) == (_and(a, b), _and(a, b))
    assert (r["y"], r["fy"]) == (_or(a, b), _or(a, b))
    assert r["n"] == (None if a is None else not a)


def test_isnull_groups_its_argument(row):
    # (NULL AND TRUE) IS NULL is true; NULL AND (TRUE IS NULL) would be false
    assert ev(row, "ISNULL(u AND t)") is True
    assert ev(row, "IS_NULL(NOT t)") is False
    assert ev(row, "ISNULL(n_null = 1)") is True
    assert ev(row, "ISNULL(s)") is False and ev(row, "ISNULL(s_null)") is True


@pytest.mark.parametrize("text, value", FUNCTION_FORMS)
def test_function_forms_keep_their_grouping_on_spark(values, text, value):
    assert result_of(values, text) is value


def test_coalesce(row):
    assert ev(row, "COALESCE(n_null, n, 0)") == 7
    assert ev(row, "COALESCE(s_null, 'none')") == "none"
    assert ev(row, "COALESCE(d_null, d)") == datetime.date(2026, 1, 31)
    assert ev(row, "COALESCE(n_null, NULL)") is None
    assert ev(row, "COALESCE(amount_null, 1.5)") == Decimal("1.50")


def test_if(row):
    assert ev(row, "IF(t, 'yes', 'no')") == "yes"
    assert ev(row, "IF(f, 'yes', 'no')") == "no"
    assert ev(row, "IF(u, 'yes', 'no')") == "no"  # NULL condition takes the else branch
    assert ev(row, "IF(n_null > 1, 1, 2)") == 2
    assert ev(row, "IF(NULL, 1, 2)") == 2  # a NULL literal condition must still analyse
    assert ev(row, "IF(t, NULL, amount)") is None
    assert ev(row, "IF(f, d, ts)") == datetime.datetime(2026, 2, 10, 18, 30)


def test_null_literal_as_a_filter(row):
    rows = row.sql(f"SELECT 1 AS v FROM dsl_row WHERE {to_sql('NULL', expect='boolean')}").collect()
    assert rows == []


# ------------------------------------------------------------------ division and MOD
def test_raw_division_by_zero_raises_under_ansi(row):
    with pytest.raises(Exception, match="DIVIDE_BY_ZERO"):
        row.sql("SELECT n / zero FROM dsl_row").collect()


@pytest.mark.parametrize("text", BY_ZERO)
def test_division_and_mod_by_zero_are_null(values, text):
    assert result_of(values, text) is None


def test_division_by_zero_is_null_with_ansi_off_too(row):
    row.conf.set("spark.sql.ansi.enabled", "false")
    try:
        assert ev(row, "n / zero") is None and ev(row, "MOD(n, zero)") is None
    finally:
        row.conf.set("spark.sql.ansi.enabled", "true")


def test_division_and_mod_values(row):
    assert ev(row, "amount / 4") == Decimal("3750")
    assert ev(row, "n / 2") == 3.5  # INT / INT is a DOUBLE in Spark
    assert ev(row, "MOD(n, 3)") == 1
    assert ev(row, "MOD(m, 3)") == -1  # sign of the dividend, unlike Python's %
    assert ev(row, "MOD(amount, 7)") == Decimal("6.00")


# ------------------------------------------------------------------ decimals
@pytest.mark.parametrize("text, value", [
    ("amount * 1.05", Decimal("15750")),
    ("amount + 0.01", Decimal("15000.01")),
    ("amount - 0.1 * 3", Decimal("14999.70")),
    ("0.1 + 0.2", Decimal("0.3")),
    ("amount / 3", None),
    ("ROUND(amount * 1.0375, 2)", Decimal("15562.50")),
    ("ABS(-amount)", Decimal("15000")),
    ("MIN(amount, 20000)", Decimal("15000")),
    ("COALESCE(amount_null, amount) * 2", Decimal("30000")),
])
def test_decimals_stay_decimal(row, text, value):
    df = query(row, text)
    assert isinstance(df.schema["v"].dataType, DecimalType), df.schema
    got = df.collect()[0]["v"]
    assert isinstance(got, Decimal) and not isinstance(got, float)
    if value is not None:
        assert got == value
    else:
        assert abs(got - Decimal("5000")) < Decimal("0.01")


def test_round_half_up(row):
    assert ev(row, "ROUND(2.345, 2)") == Decimal("2.35")
    assert ev(row, "ROUND(-2.5, 0)") == Decimal("-3")
    assert ev(row, "FLOOR(-2.5)") == -3 and ev(row, "CEIL(2.1)") == 3


# ------------------------------------------------------------------ MIN / MAX of two scalars
def test_min_max_of_two_scalars(row):
    assert ev(row, "MIN(n, 3)") == 3 and ev(row, "MAX(n, 3)") == 7
    assert ev(row, "MIN(n, n_null)") is None and ev(row, "MAX(n_null, n)") is None
    assert ev(row, "MAX(n_null, n_null)") is None
    assert ev(row, "MIN(m, amount)") == Decimal("-7")
    assert ev(row, "MAX(MIN(n, 10), MIN(big, 5))") == 7


# ------------------------------------------------------------------ strings
def test_concat(row):
    assert ev(row, "CONCAT(s, ' #', n)") == "Product revenue #7"
    assert ev(row, "CONCAT(s, s_null)") is None
    assert ev(row, "CONCAT(s, NULL)") is None
    assert ev(row, "CONCAT(d, '|', t, '|', amount)") == "2026-01-31|true|15000.00"


def test_trim(row):
    assert ev(row, "TRIM(s_ws)") == "ab c"
    assert ev(row, "LEN(TRIM(s_ws))") == 4
    assert ev(row, "TRIM('\u00a0x')") == "\u00a0x"  # only space, tab, CR and LF


def test_len_counts_characters(row):
    assert ev(row, "LEN(s_accent)") == 5
    assert ev(row, "LEN('h\u00e9llo')") == 5
    assert ev(row, "LEN('\U0001F600')") == 1
    assert ev(row, "LEN('')") == 0 and ev(row, "LEN(s_null)") is None


def test_upper_lower(row):
    assert ev(row, "UPPER(s_accent)") == "H\u00c9LLO" and ev(row, "LOWER('ABC')") == "abc"


def test_contains_is_literal(row):
    assert ev(row, "CONTAINS(s_dots, '.')") is True
    assert ev(row, "CONTAINS(s, '.')") is False  # '.' is not "any character"
    assert ev(row, "CONTAINS(s_pct, '%')") is True
    assert ev(row, "CONTAINS(s, '%')") is False  # '%' is not a LIKE wildcard
    assert ev(row, "CONTAINS(s, '_')") is False
    assert ev(row, "CONTAINS(s, 'revenue')") is True and ev(row, "CONTAINS(s, 'Revenue')") is False
    assert ev(row, "CONTAINS(s, '[a-z]+')") is False
    assert ev(row, "CONTAINS(s_null, 'a')") is None


def test_replace_is_literal_and_global(row):
    assert ev(row, "REPLACE(s_dots, '.', '%')") == "a%b%c"
    assert ev(row, "REPLACE(s_pct, '%', '.')") == "100. done_ok"
    assert ev(row, "REPLACE(s, '.', 'x')") == "Product revenue"
    assert ev(row, "REPLACE('a$1$1', '$1', '\\\\')") == "a\\\\\\\\"  # no regex, no group references
    assert ev(row, "REPLACE(s, 'e', '')") == "Product rvnu"


def test_left_right(row):
    assert ev(row, "LEFT(s, 7)") == "Product" and ev(row, "RIGHT(s, 7)") == "revenue"
    assert ev(row, "LEFT(s, 100)") == "Product revenue" and ev(row, "LEFT(s, 0)") == ""
    assert ev(row, "LEFT(s_accent, 2)") == "h\u00e9"
    assert ev(row, "RIGHT(s, big)") == "Product revenue"
    assert ev(row, "LEFT(s_null, 2)") is None and ev(row, "LEFT(s, n_null)") is None


def test_string_literals_reach_spark_verbatim(row):
    for text in ["x'; DROP TABLE t; --", "C:\\new\\table", "a\\", 'say "hi"', "it's", "tab\there", "line\nbreak",
                 "%_."]:
        dsl = "'" + text.replace("'", "''") + "'"
        assert ev(row, dsl) == text
        assert ev(row, f"CONCAT({dsl}, s)") == text + "Product revenue"
        assert ev(row, f"s = {dsl}") is False


def test_column_names_with_backticks(row):
    row.sql("SELECT 'gold' AS `ti``er; --`, 5 AS `n``x`").createOrReplaceTempView("dsl_weird")
    scope = Scope("w", {}, joins={"j": JoinScope("j", {"tier": ("ti`er; --", T.STRING), "nx": ("n`x", T.INTEGER)})})
    rows = row.sql(f"SELECT {to_sql('CONCAT(j.tier, j.nx)', scope)} AS v FROM dsl_weird AS j").collect()
    assert rows[0]["v"] == "gold5"


# ------------------------------------------------------------------ dates
def test_date_parts(row):
    assert (ev(row, "YEAR(d)"), ev(row, "MONTH(d)"), ev(row, "DAY(d)")) == (2026, 1, 31)
    assert (ev(row, "YEAR(ts)"), ev(row, "MONTH(ts)"), ev(row, "DAY(ts)")) == (2026, 2, 10)
    assert ev(row, "YEAR(d_null)") is None


def test_datediff_and_dateadd(row):
    assert ev(row, "DATEDIFF(d2, d)") == 29
    assert ev(row, "DATEDIFF(d, d2)") == -29
    assert ev(row, 'DATEDIFF(DATE("2024-03-01"), DATE("2024-02-01"))') == 29
    assert ev(row, "DATEDIFF(ts, d)") == 10
    assert ev(row, "DATEADD(d, 1)") == datetime.date(2026, 2, 1)
    assert ev(row, "DATEADD(d, -31)") == datetime.date(2025, 12, 31)
    assert ev(row, "DATEADD(d, n)") == datetime.date(2026, 2, 7)
    assert ev(row, "DATEADD(d, big)") == datetime.date(2026, 3, 12)  # a BIGINT day count works too
    assert ev(row, "DATEADD(d, n_null)") is None and ev(row, "DATEADD(d_null, 1)") is None
    assert ev(row, "DATEADD(ts, 1)") == datetime.date(2026, 2, 11)


def test_date_literals_and_comparisons(row):
    assert ev(row, 'DATE("2026-01-31")') == datetime.date(2026, 1, 31)
    assert ev(row, "d = DATE('2026-01-31')") is True
    assert ev(row, "d < ts") is True
    assert ev(row, "d2 > DATE('2026-02-28')") is True


def test_today_is_the_run_start_date(row):
    assert ev(row, "TODAY()") == datetime.date(2026, 1, 15)
    assert ev(row, "TODAY()", run_at=datetime.datetime(2026, 1, 15, 23, 59, 59)) == datetime.date(2026, 1, 15)
    assert ev(row, "DATEDIFF(d, TODAY())") == 16
    assert ev(row, "TODAY() = DATE('2026-01-15')") is True


def test_today_in_a_filter_over_rows(row):
    row.sql("SELECT * FROM VALUES (DATE'2026-01-14'), (DATE'2026-01-15'), (DATE'2026-01-16') AS v(day)") \
        .createOrReplaceTempView("dsl_days")
    scope = Scope("days", {"day": T.DATE})
    cond = to_sql("day <= TODAY()", scope, expect="boolean")
    rows = row.sql(f"SELECT day FROM dsl_days WHERE {cond} ORDER BY day", args={"run_started_at": RUN_AT}).collect()
    assert [r["day"] for r in rows] == [datetime.date(2026, 1, 14), datetime.date(2026, 1, 15)]


# ------------------------------------------------------------------ aggregates
def test_aggregates(row):
    row.sql("SELECT * FROM VALUES ('a', CAST(1.50 AS DECIMAL(18,2))), ('a', NULL), ('b', CAST(2.25 AS DECIMAL(18,2)))"
            " AS v(k, x)").createOrReplaceTempView("dsl_agg")
    scope = Scope("agg", {"k": T.STRING, "x": DEC})
    exprs = {"s": "SUM(x)", "a": "AVG(x)", "lo": "MIN_AGG(x)", "hi": "MAX_AGG(x)", "c": "COUNT(x)",
             "all": "COUNT(*)", "all2": "COUNT_ALL()", "div": "SUM(x) / COUNT(*)"}
    select = ", ".join(f"{to_sql(e, scope, aggregates=True)} AS {n}" for n, e in exprs.items())
    r = row.sql(f"SELECT {select} FROM dsl_agg").collect()[0]
    assert r["s"] == Decimal("3.75") and isinstance(r["s"], Decimal)
    assert r["a"] == Decimal("1.875")
    assert (r["lo"], r["hi"]) == (Decimal("1.50"), Decimal("2.25"))
    assert (r["c"], r["all"], r["all2"]) == (2, 3, 3)
    assert r["div"] == Decimal("1.25")


# ------------------------------------------------------------------ random valid expressions vs Spark's analyzer

_SPARK_KIND = {"IntegerType": "number", "LongType": "number", "DecimalType": "number", "DoubleType": "number",
               "StringType": "string", "BooleanType": "boolean", "DateType": "date", "TimestampType": "timestamp",
               "NullType": "null"}


@pytest.fixture(scope="module")
def gen_view(spark):
    values = {"n1": "3", "n2": "-4", "big": "CAST(5000000000 AS BIGINT)", "amount": "CAST(1234.56 AS DECIMAL(18,2))",
              "s1": "' Abc.def '", "s2": "CAST(NULL AS STRING)", "b1": "TRUE", "b2": "CAST(NULL AS BOOLEAN)",
              "d1": "DATE'2026-01-31'", "d2": "CAST(NULL AS DATE)", "ts": "TIMESTAMP'2026-02-01 12:00:00'"}
    assert set(values) == set(GEN_COLUMNS)
    spark.sql("SELECT " + ", ".join(f"{v} AS `{k}`" for k, v in values.items())).createOrReplaceTempView("dsl_gen")
    spark.sql("SELECT CAST(1.5 AS DECIMAL(18,6)) AS rate, 'X' AS code, FALSE AS active, DATE'2025-12-01' AS since") \
        .createOrReplaceTempView("dsl_gen_j")
    return spark


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(expressions(), min_size=1, max_size=6))
@example([("number", "IF((NULL + NULL + NULL + NULL) = (NULL + NULL), n1, -NULL)")])  # -NULL is a double
def test_random_valid_expressions_pass_spark_analysis(gen_view, cases):
    typed = [Translator(GEN_SCOPE, GEN_SELECTORS).translate(Source(text, "gen.yml", 1, 1)) for _, text in cases]
    select = ", ".join(f"{t.sql.sql('spark')} AS c{i}" for i, t in enumerate(typed))
    df = gen_view.sql(f"SELECT {select} FROM dsl_gen CROSS JOIN dsl_gen_j AS j", args={"run_started_at": RUN_AT})
    for i, ((kind, text), t) in enumerate(zip(cases, typed)):
        spark_type = df.schema[f"c{i}"].dataType
        spark_kind = _SPARK_KIND[type(spark_type).__name__]
        assert kinds_match(kind, spark_kind), (text, spark_type)
        if t.type.kind not in ("null", "unknown"):
            assert spark_kind == t.type.kind or {spark_kind, t.type.kind} <= {"date", "timestamp"}, (text, t.type,
                                                                                                     spark_type)
        if t.type.sql and t.type.kind != "null":
            assert spark_type.simpleString() == t.type.sql, (text, t.type, spark_type)

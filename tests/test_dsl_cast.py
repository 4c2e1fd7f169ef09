"""CAST(x AS type) in the DSL, at compile time (issue 43, point 1): the types it takes, the conversions
Spark's ANSI mode refuses, and the SQL that stops a run on a value that does not convert
(the run itself: tests/test_types_spark.py)."""
from __future__ import annotations

import pytest

from ledgerflow.compiler import types as T
from ledgerflow.compiler.dsl.ast import Source
from ledgerflow.compiler.dsl.translate import ExprError, Scope, Translator

SCOPE = Scope("t", {"amount": T.from_sql("decimal(18,2)"), "rate": T.from_sql("decimal(18,6)"), "s": T.STRING,
                    "d": T.DATE, "ts": T.TIMESTAMP, "flag": T.BOOLEAN, "n": T.INTEGER})


def translate(text: str):
    tr = Translator(SCOPE)
    tr.context = "operation 2 'Convert', column 'amount_eur'"
    return tr.translate(Source(text, "projects/p.yml", 7, 21))


def error(text: str) -> ExprError:
    with pytest.raises(ExprError) as info:
        translate(text)
    return info.value


@pytest.mark.parametrize("text,sql", [
    ("CAST(amount * rate AS decimal(20,2))", "decimal(20,2)"), ("cast(s as Integer)", "int"),
    ("CAST(s AS int)", "int"), ("CAST(n AS bigint)", "bigint"), ("CAST(amount AS double)", "double"),
    ("CAST(d AS string)", "string"), ("CAST(s AS date)", "date"), ("CAST(d AS timestamp)", "timestamp"),
    ("CAST(n AS boolean)", "boolean"), ("CAST(NULL AS decimal(7,3))", "decimal(7,3)"),
])
def test_cast_is_typed_as_its_target(text, sql):
    assert translate(text).type.sql == sql


def test_a_cast_names_the_operation_column_and_place_and_keeps_no_silent_null():
    sql = translate("CAST(amount * rate AS decimal(10,2))").sql.sql("spark")
    assert sql.startswith("COALESCE(TRY_CAST(`amount` * `rate` AS DECIMAL(10, 2)), CASE WHEN (`amount` * `rate`) IS NULL")
    assert ("RAISE_ERROR(CONCAT('ledgerflow: CAST(amount * rate AS decimal(10,2)) in operation 2 \\'Convert\\', "
            "column \\'amount_eur\\' (projects/p.yml line 7): the value \\'', CAST(`amount` * `rate` AS STRING), "
            "'\\'', ' (in a row where amount = ', COALESCE(CAST(`amount` AS STRING), 'NULL'), ', rate = ', "
            "COALESCE(CAST(`rate` AS STRING), 'NULL'), ')', ' does not convert to decimal(10,2)')") in sql


def test_a_failing_cast_names_no_column_inside_an_aggregate_function():
    tr = Translator(SCOPE, aggregates=True)
    sql = tr.translate(Source("CAST(SUM(amount) AS decimal(4,2))", "projects/p.yml", 7, 21)).sql.sql("spark")
    assert "in a row where" not in sql and "RAISE_ERROR" in sql


@pytest.mark.parametrize("text,words", [
    ("CAST(d AS integer)", "cannot turn date values into int"), ("CAST(n AS date)", "cannot turn int values into date"),
    ("CAST(flag AS timestamp)", "cannot turn boolean values"), ("CAST(ts AS boolean)", "cannot turn timestamp values"),
    ("CAST(amount AS money)", "cannot make a 'money'"), ("CAST(amount AS decimal(39,2))", "cannot make"),
    ("CAST(amount AS decimal(2,3))", "cannot make"),
])
def test_casts_spark_refuses_are_located_type_errors(text, words):
    err = error(text)
    assert err.kind == "type" and words in err.message and err.hint


@pytest.mark.parametrize("text", ["CAST(amount)", "CAST(amount decimal(1,0))", "CAST(amount AS)",
                                  "CAST(amount AS decimal(1,)", "CAST(amount AS decimal(1,0)"])
def test_malformed_casts_are_syntax_errors(text):
    assert error(text).kind == "syntax"


def test_casts_nest_three_deep_at_most():
    assert translate("CAST(CAST(CAST(s AS double) AS decimal(20,4)) AS decimal(10,2))").type.sql == "decimal(10,2)"
    err = error("CAST(CAST(CAST(CAST(s AS double) AS decimal(20,4)) AS decimal(10,2)) AS string)")
    assert err.kind == "syntax" and "nest" in err.message


def test_round_takes_its_places_as_a_whole_number():
    assert translate("ROUND(amount * rate, 2)").type.sql == "decimal(32,2)"  # the ROUND(amount * rate, 2)
    for text in ("ROUND(amount, n)", "ROUND(amount, 1.5)"):
        assert error(text).kind == "type"

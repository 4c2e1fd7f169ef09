"""The type cache wrapped around ``sqlglot.parse_one`` (compiler/type_cache.py) changes no result."""
from __future__ import annotations

import sqlglot
from sqlglot import exp

from ledgerflow.compiler import render, type_cache  # noqa: F401  (importing render installs the cache)


def test_installed_once():
    assert hasattr(sqlglot.parse_one, "uncached")
    wrapper = sqlglot.parse_one
    type_cache.install()
    assert sqlglot.parse_one is wrapper


def test_types_equal_a_fresh_parse_and_are_the_callers_own():
    for text in ("json", "char", "varchar", "decimal(18, 2)", "array<struct<a: int>>", "timestamp"):
        first, second = exp.DataType.build(text), exp.DataType.build(text)
        assert first == second == sqlglot.parse_one.uncached(text, into=exp.DataType, error_level=sqlglot.ErrorLevel.IGNORE)
        assert first is not second
        first.set("this", exp.DType.BOOLEAN)  # changing one result leaves the next untouched
        assert exp.DataType.build(text) == second


def test_type_checks_and_other_parses_unchanged():
    cast = sqlglot.parse_one("CAST(x AS CHAR(3))", read="spark")
    assert cast.sql("spark") == "CAST(x AS STRING)"  # Hive's parser still turns CHAR into STRING
    assert sqlglot.parse_one("CAST(x AS JSON)").is_type("json")
    assert not sqlglot.parse_one("CAST(x AS INT)").is_type("json")
    assert sqlglot.parse_one("SELECT 1 AS a", read="spark").sql("spark") == "SELECT 1 AS a"
    assert exp.DataType.build("my_type", udt=True).this == exp.DType.USERDEFINED

"""Unit tests of the expression DSL: parsing, typing, the function table and the Spark SQL it emits.

SQL is compared as sqlglot trees (read="spark") with parentheses removed, so a test checks the
grouping Spark will see, not the spelling: ``a OR b AND c`` and ``a OR (b AND c)`` are equal, while
``(a OR b) AND c`` is not.
"""
from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from ledgerflow.compiler import types as T
from ledgerflow.compiler.dsl import functions
from ledgerflow.compiler.dsl.ast import Binary, Call, ColumnRef, Literal, Paren, Source, Unary
from ledgerflow.compiler.dsl.parser import DslSyntaxError, parse_expression, tokenize
from ledgerflow.compiler.dsl.translate import (
    DEFAULT_CODES, MAX_NESTING, MAX_SELECTOR_DEPTH, ExprError, JoinScope, Scope, Translator, source_location,
)
from ledgerflow.compiler.errors import LedgerflowError

DEC = T.SqlType("number", "decimal(18,2)")
COLUMNS = {
    "a": T.INTEGER, "b": T.INTEGER, "c": T.INTEGER, "qty": T.BIGINT, "amount": DEC,
    "rate": T.SqlType("number", "double"),
    "name": T.STRING, "region": T.STRING, "d": T.DATE, "d2": T.DATE, "ts": T.TIMESTAMP,
    "flag": T.BOOLEAN, "other": T.BOOLEAN, "_period": T.STRING, "_deleted": T.BOOLEAN,
}
SCOPE = Scope("orders", COLUMNS, joins={"cust": JoinScope("cust", {"tier": ("tier", T.STRING),
                                                                   "since": ("since", T.DATE)})})
SELECTORS = {
    "A": Source("a = 1 OR b = 2", "selectors.yml", 3, 8),
    "B": Source("{{A}} AND flag", "selectors.yml", 4, 8),
    "NUM": Source("a + 1", "selectors.yml", 5, 8),
    "CYC1": Source("flag AND {{CYC2}}", "selectors.yml", 6, 8),
    "CYC2": Source("{{CYC1}} OR other", "selectors.yml", 7, 8),
    "SELF": Source("{{SELF}}", "selectors.yml", 8, 8),
    "BROKEN": Source("a = = 1", "selectors.yml", 9, 8),
    "UNKNOWN_COL": Source("flag AND nope = 1", "selectors.yml", 10, 8),
}


def src(text: str, line: int = 5, column: int = 7) -> Source:
    return Source(text, "ops.yml", line, column)


def translate(text: str, *, expect=None, aggregates=False, scope=SCOPE, selectors=None, group_keys=None):
    tr = Translator(scope, SELECTORS if selectors is None else selectors, aggregates=aggregates, group_keys=group_keys)
    return tr.translate(src(text), expect)


def sql_of(text: str, **kw) -> str:
    return translate(text, **kw).sql.sql("spark")


def _unparen(tree: exp.Expression) -> exp.Expression:
    while isinstance(tree, exp.Paren):
        tree = tree.this
    for node in list(tree.find_all(exp.Paren)):
        node.replace(node.this)
    return tree


def spark_tree(sql: str) -> exp.Expression:
    return _unparen(sqlglot.parse_one(sql, read="spark"))


def assert_sql(got: str, expected: str) -> None:
    """``got`` and ``expected`` parse (as Spark SQL) to the same tree, parentheses aside."""
    assert spark_tree(got) == spark_tree(expected), f"\n got:      {got}\n expected: {expected}"


def assert_dsl(text: str, expected: str, **kw) -> None:
    assert_sql(sql_of(text, **kw), expected)


def error_of(text: str, **kw) -> ExprError:
    with pytest.raises(ExprError) as info:
        translate(text, **kw)
    return info.value


def code_of(text: str, **kw) -> str:
    return error_of(text, **kw).diagnostic({}).code


# ------------------------------------------------------------------ helper sanity
def test_assert_sql_tells_groupings_apart():
    assert_sql("a OR b AND c", "a OR (b AND c)")
    assert spark_tree("(a OR b) AND c") != spark_tree("a OR b AND c")
    assert spark_tree("a - (b - c)") != spark_tree("a - b - c")


# ------------------------------------------------------------------ precedence
@pytest.mark.parametrize("text, expected", [
    ("a = 1 OR b = 2 AND c = 3", "`a` = 1 OR (`b` = 2 AND `c` = 3)"),
    ("a = 1 AND b = 2 OR c = 3", "(`a` = 1 AND `b` = 2) OR `c` = 3"),
    ("(a = 1 OR b = 2) AND c = 3", "(`a` = 1 OR `b` = 2) AND `c` = 3"),
    ("NOT flag AND other", "(NOT `flag`) AND `other`"),
    ("NOT flag OR other", "(NOT `flag`) OR `other`"),
    ("NOT (flag AND other)", "NOT (`flag` AND `other`)"),
    ("NOT a = 1", "NOT (`a` = 1)"),
    ("NOT NOT flag", "NOT (NOT `flag`)"),
    ("a + b = c * 2", "(`a` + `b`) = (`c` * 2)"),
    ("a + b * c", "`a` + (`b` * `c`)"),
    ("(a + b) * c", "(`a` + `b`) * `c`"),
    ("a - b - c", "(`a` - `b`) - `c`"),
    ("a - (b - c)", "`a` - (`b` - `c`)"),
    ("a * b + c * a", "(`a` * `b`) + (`c` * `a`)"),
    ("-a * b", "(-`a`) * `b`"),
    ("-(a * b)", "-(`a` * `b`)"),
    ("-(a + b) * c", "(-(`a` + `b`)) * `c`"),
    ("- - a", "-(-`a`)"),
    ("a--b", "`a` - (-`b`)"),
    ("1 - -1", "1 - (-1)"),
    ("-a = 1", "(-`a`) = 1"),
    ("a * (b + c) - -(a - b)", "(`a` * (`b` + `c`)) - (-(`a` - `b`))"),
    ("flag = (a > b)", "`flag` = (`a` > `b`)"),
    ("flag OR other AND NOT flag OR other", "(`flag` OR (`other` AND (NOT `flag`))) OR `other`"),
])
def test_precedence(text, expected):
    assert_dsl(text, expected)


def test_precedence_is_kept_in_the_ast():
    node = parse_expression("a = 1 OR NOT b = 2 AND c + d * -e > 0")
    assert isinstance(node, Binary) and node.op == "OR"
    right = node.right
    assert right.op == "AND" and isinstance(right.left, Unary) and right.left.op == "NOT"
    cmp = right.right
    assert cmp.op == ">" and cmp.left.op == "+" and cmp.left.right.op == "*"
    assert isinstance(cmp.left.right.right, Unary) and cmp.left.right.right.op == "-"


@pytest.mark.parametrize("text, expected", [
    ("OR(flag, other) AND flag", "(`flag` OR `other`) AND `flag`"),
    ("flag AND OR(flag, other)", "`flag` AND (`flag` OR `other`)"),
    ("NOT OR(flag, other)", "NOT (`flag` OR `other`)"),
    ("NOT AND(flag, other)", "NOT (`flag` AND `other`)"),
    ("AND(flag, other) OR flag", "(`flag` AND `other`) OR `flag`"),
    ("flag = AND(flag, other)", "`flag` = (`flag` AND `other`)"),
    ("flag = ISNULL(a)", "`flag` = (`a` IS NULL)"),
    ("ISNULL(a) = flag", "(`a` IS NULL) = `flag`"),
    ("NOT ISNULL(a)", "NOT (`a` IS NULL)"),
    ("flag = NOT(other)", "`flag` = (NOT `other`)"),
    ("flag <> NOT(a = 1)", "`flag` <> (NOT (`a` = 1))"),
    ("IF(flag, NOT(other), other)", "CASE WHEN `flag` THEN NOT `other` ELSE `other` END"),
    # in operator position NOT(x) is the NOT operator, which binds looser than '=' (as in SQL)
    ("NOT(flag) = other", "NOT (`flag` = `other`)"),
])
def test_function_forms_keep_their_grouping(text, expected):
    assert_dsl(text, expected)


def test_not_function_arity():
    assert error_of("flag = NOT(flag, other)").kind == "arity"
    assert error_of("NOT(flag, other)").kind == "syntax"  # operator position: NOT applied to '(flag, other)'
    assert "NOT" in functions.FUNCTIONS


def test_division_keeps_its_operand_grouping():
    assert_dsl("a / b / c", "TRY_DIVIDE(TRY_DIVIDE(`a`, `b`), `c`)")
    assert_dsl("a / (b / c)", "TRY_DIVIDE(`a`, TRY_DIVIDE(`b`, `c`))")
    assert_dsl("a + b / c", "`a` + TRY_DIVIDE(`b`, `c`)")
    assert_dsl("(a + b) / c", "TRY_DIVIDE(`a` + `b`, `c`)")
    assert_dsl("a * b / c", "TRY_DIVIDE(`a` * `b`, `c`)")


def test_chained_comparisons_are_rejected():
    err = error_of("a = 1 = 2")
    assert err.kind == "syntax" and "chained" in err.message and err.pos == 6


# ------------------------------------------------------------------ literals, quotes, keywords
@pytest.mark.parametrize("text, value", [
    ('"abc"', "abc"),
    ("'abc'", "abc"),
    ("'it''s'", "it's"),
    ('"say ""hi"""', 'say "hi"'),
    ("'say \"hi\"'", 'say "hi"'),
    ('"it\'s"', "it's"),
    ("''", ""),
    ('""""', '"'),
    ("''''", "'"),
    ("'a\\b'", "a\\b"),
])
def test_string_literals_both_quote_styles(text, value):
    tokens = tokenize(text)
    assert [t.kind for t in tokens] == ["str", "eof"] and tokens[0].value == value
    typed = translate(text)
    assert typed.type == T.STRING
    tree = sqlglot.parse_one(typed.sql.sql("spark"), read="spark")
    assert isinstance(tree, exp.Literal) and tree.is_string and tree.this == value


def test_unterminated_strings_are_located():
    err = error_of("name = 'abc")
    assert err.kind == "syntax" and "unterminated" in err.message and err.pos == 7
    assert error_of('"it""s').pos == 0


@pytest.mark.parametrize("text", ["flag and other", "flag AND other", "flag And other", "flag aNd other"])
def test_keywords_any_case_and(text):
    assert_dsl(text, "`flag` AND `other`")


@pytest.mark.parametrize("text, expected", [
    ("flag or other", "`flag` OR `other`"),
    ("not flag", "NOT `flag`"),
    ("Not Flag = true", None),
    ("flag = True", "`flag` = TRUE"),
    ("flag = false", "`flag` = FALSE"),
    ("name = null", "`name` = NULL"),
    ("name = Null", "`name` = NULL"),
])
def test_keywords_any_case(text, expected):
    if expected is None:  # column names are case-sensitive: 'Flag' is not 'flag'
        assert error_of(text).kind == "unknown_column"
    else:
        assert_dsl(text, expected)


def test_literal_types():
    assert translate("42").type == T.INTEGER
    assert translate("3000000000").type == T.BIGINT
    assert translate("99999999999999999999").type == T.SqlType("number", "decimal(20,0)")
    assert translate("-2147483648").type == T.INTEGER  # Spark reads the sign as part of the literal
    assert translate("0.050").type == T.SqlType("number", "decimal(3,3)")
    dec = translate("3.14")
    assert dec.type == T.SqlType("number", "decimal(3,2)")
    assert isinstance(dec.sql, exp.Literal) and dec.sql.this == "3.14"  # exact decimal text, no float
    assert translate(".5").sql.sql("spark") == ".5"
    assert translate("TRUE").type == T.BOOLEAN and translate("NULL").type == T.NULL


def test_a_literal_of_more_than_38_digits_is_a_type_error_not_a_crash():
    for text in ["1" * 5000 + " + a", "1" * 39, "0." + "1" * 39]:
        err = error_of(text)
        assert err.kind == "type" and "more than 38 digits" in err.message
    assert translate("0" * 5000 + "7 + a").type == T.INTEGER  # leading zeros are not digits


def test_not_equal_spellings_are_the_same():
    assert sql_of("a != 1") == sql_of("a <> 1")
    assert_dsl("a != 1", "`a` <> 1")
    assert parse_expression("a != 1").op == "<>"


@pytest.mark.parametrize("op, cls", [("=", exp.EQ), ("<>", exp.NEQ), ("<", exp.LT), ("<=", exp.LTE),
                                     (">", exp.GT), (">=", exp.GTE)])
def test_every_comparison(op, cls):
    tree = spark_tree(sql_of(f"a {op} b"))
    assert isinstance(tree, cls)


def test_unicode_digits_are_not_numbers():
    err = error_of("a = \u0663")  # ARABIC-INDIC DIGIT THREE: \d would match it, Spark would not
    assert err.kind == "syntax" and err.pos == 4


# ------------------------------------------------------------------ columns, quoting, injection
def test_identifiers_are_quoted():
    got = sql_of("amount > 0 AND orders._period = '2026-01' AND NOT _deleted")
    assert "`amount`" in got and "`_period`" in got and "`_deleted`" in got
    assert_sql(got, "`amount` > 0 AND `_period` = '2026-01' AND NOT `_deleted`")


def test_table_prefix_and_join_alias():
    assert_dsl("orders.amount * 2", "`amount` * 2")
    assert_dsl("cust.tier = 'gold'", "`cust`.`tier` = 'gold'")
    q = Scope("orders", COLUMNS, qualifier="w")
    assert_dsl("amount > 0", "`w`.`amount` > 0", scope=q)


def test_string_literal_cannot_inject_sql():
    text = "name = \"x'; DROP TABLE t; --\""
    got = sql_of(text)
    tree = sqlglot.parse_one(got, read="spark")
    assert isinstance(tree, exp.EQ)
    assert tree.expression.is_string and tree.expression.this == "x'; DROP TABLE t; --"
    assert len(sqlglot.parse(got, read="spark")) == 1
    # a backslash before the closing quote must not escape it
    got = sql_of("name = 'x\\' OR flag")
    tree = sqlglot.parse_one(got, read="spark")
    assert isinstance(tree, exp.Or) and tree.this.expression.this == "x\\"


def test_backticks_in_sql_column_names_are_escaped():
    scope = Scope("orders", {"a": T.INTEGER}, qualifier="w`x",
                  joins={"j": JoinScope("j`y", {"tier": ("ti`er; DROP TABLE t; --", T.STRING)})})
    got = sql_of("j.tier = 'gold' AND a = 1", scope=scope)
    assert "`j``y`.`ti``er; DROP TABLE t; --`" in got and "`w``x`.`a`" in got
    tree = sqlglot.parse_one(got, read="spark")
    cols = sorted((c.table, c.name) for c in tree.find_all(exp.Column))
    assert cols == [("j`y", "ti`er; DROP TABLE t; --"), ("w`x", "a")]


def test_a_backtick_cannot_be_written_in_an_expression():
    err = error_of("`a` = 1")
    assert err.kind == "syntax" and err.pos == 0
    scope = Scope("orders", {"x`y": T.INTEGER, "a": T.INTEGER})
    assert "x`y" in scope.columns  # such a column exists but the DSL has no way to name it
    assert error_of("x`y = 1", scope=scope).kind == "syntax"


def test_unknown_column_with_hint():
    err = error_of("amout > 0")
    diag = err.diagnostic({})
    assert diag.code == "BR-015" and "amout" in diag.message and "did you mean 'amount'" in diag.hint
    assert err.pos == 0 and diag.text == "amout"


def test_unknown_table_and_unknown_join_column():
    err = error_of("custs.tier = 'gold'")
    assert err.diagnostic({}).code == "BR-015" and "cust" in err.hint
    err = error_of("cust.tire = 'gold'")
    assert err.diagnostic({}).code == "BR-015" and "did you mean 'tier'" in err.hint


# ------------------------------------------------------------------ the function table
FUNCTION_CASES = [
    ("IF(flag, a, b)", "CASE WHEN `flag` THEN `a` ELSE `b` END", T.INTEGER),
    ("if(flag, name, 'x')", "CASE WHEN `flag` THEN `name` ELSE 'x' END", T.STRING),
    ("AND(flag, other, a = 1)", "`flag` AND `other` AND `a` = 1", T.BOOLEAN),
    ("OR(flag, other)", "`flag` OR `other`", T.BOOLEAN),
    ("AND(flag OR other, NOT flag)", "(`flag` OR `other`) AND (NOT `flag`)", T.BOOLEAN),
    ("OR(flag AND other, a = 1 OR b = 2)", "(`flag` AND `other`) OR (`a` = 1 OR `b` = 2)", T.BOOLEAN),
    ("NOT(flag)", "NOT `flag`", T.BOOLEAN),
    ("other = NOT(flag)", "`other` = (NOT `flag`)", T.BOOLEAN),
    ("NOT(flag) AND other", "(NOT `flag`) AND `other`", T.BOOLEAN),
    ("ISNULL(a)", "`a` IS NULL", T.BOOLEAN),
    ("IS_NULL(name)", "`name` IS NULL", T.BOOLEAN),
    ("is_null(name)", "`name` IS NULL", T.BOOLEAN),
    ("ISNULL(flag AND other)", "(`flag` AND `other`) IS NULL", T.BOOLEAN),
    ("ISNULL(NOT flag)", "(NOT `flag`) IS NULL", T.BOOLEAN),
    ("ISNULL(a = 1)", "(`a` = 1) IS NULL", T.BOOLEAN),
    ("COALESCE(a, b, 0)", "COALESCE(`a`, `b`, 0)", T.INTEGER),
    ("COALESCE(name)", "COALESCE(`name`)", T.STRING),
    ("ABS(amount)", "ABS(`amount`)", DEC),
    ("FLOOR(amount)", "FLOOR(`amount`)", T.SqlType("number", "decimal(17,0)")),
    ("CEIL(amount)", "CEIL(`amount`)", T.SqlType("number", "decimal(17,0)")),
    ("ROUND(amount, 2)", "ROUND(`amount`, 2)", T.SqlType("number", "decimal(19,2)")),
    ("MOD(a, b)", "TRY_MOD(`a`, `b`)", T.INTEGER),
    ("MIN(a, b)", "CASE WHEN `a` IS NULL OR `b` IS NULL THEN NULL ELSE LEAST(`a`, `b`) END", T.INTEGER),
    ("MAX(a, amount)", "CASE WHEN `a` IS NULL OR `amount` IS NULL THEN NULL ELSE GREATEST(`a`, `amount`) END",
     DEC),
    ("MIN(a + 1, b)", "CASE WHEN (`a` + 1) IS NULL OR `b` IS NULL THEN NULL ELSE LEAST(`a` + 1, `b`) END", T.INTEGER),
    ("CONCAT(name, '-', region)", "CONCAT(`name`, '-', `region`)", T.STRING),
    ("CONCAT(name, a, d, flag)",
     "CONCAT(`name`, CAST(`a` AS STRING), CAST(`d` AS STRING), CAST(`flag` AS STRING))", T.STRING),
    ("UPPER(name)", "UPPER(`name`)", T.STRING),
    ("LOWER(name)", "LOWER(`name`)", T.STRING),
    ("TRIM(name)", "TRIM(BOTH ' \\t\\r\\n' FROM `name`)", T.STRING),
    ("LEFT(name, 3)", "LEFT(`name`, 3)", T.STRING),
    ("RIGHT(name, 3)", "RIGHT(`name`, 3)", T.STRING),
    ("LEN(name)", "CHAR_LENGTH(`name`)", T.INTEGER),
    ("CONTAINS(name, '.')", "CONTAINS(`name`, '.')", T.BOOLEAN),
    ("REPLACE(name, '%', '_')", "REPLACE(`name`, '%', '_')", T.STRING),
    ('DATE("2026-01-31")', "CAST('2026-01-31' AS DATE)", T.DATE),
    ("TODAY()", "CAST(:run_started_at AS DATE)", T.DATE),
    ("YEAR(d)", "YEAR(`d`)", T.INTEGER),
    ("MONTH(d)", "MONTH(`d`)", T.INTEGER),
    ("DAY(ts)", "DAY(`ts`)", T.INTEGER),
    ("DATEDIFF(d2, d)", "DATEDIFF(`d2`, `d`)", T.INTEGER),
    ("DATEADD(d, 30)", "DATE_ADD(`d`, 30)", T.DATE),
    ("DATEADD(d, -1)", "DATE_ADD(`d`, CAST(-1 AS INT))", T.DATE),
    ("DATEADD(d, qty)", "DATE_ADD(`d`, CAST(`qty` AS INT))", T.DATE),
    ("SUM(amount)", "SUM(`amount`)", T.SqlType("number", "decimal(28,2)")),  # Spark: p + 10 digits
    ("SUM(a)", "SUM(`a`)", T.BIGINT),
    ("AVG(amount)", "AVG(`amount`)", T.SqlType("number", "decimal(22,6)")),
    ("MIN_AGG(d)", "MIN(`d`)", T.DATE),
    ("MAX_AGG(name)", "MAX(`name`)", T.STRING),
    ("COUNT(a)", "COUNT(`a`)", T.BIGINT),
    ("COUNT(*)", "COUNT(*)", T.BIGINT),
    ("count( * )", "COUNT(*)", T.BIGINT),
    ("COUNT_ALL()", "COUNT(*)", T.BIGINT),
    ("SUM(amount) / COUNT(*)", "TRY_DIVIDE(SUM(`amount`), COUNT(*))", T.SqlType("number", "decimal(38,12)")),
]


@pytest.mark.parametrize("text, expected, typ", FUNCTION_CASES)
def test_function_table(text, expected, typ):
    typed = translate(text, aggregates=True)
    assert_sql(typed.sql.sql("spark"), expected)
    assert typed.type == typ


def test_every_function_and_alias_is_covered():
    covered = {parse_expression(text).name for text, _, _ in FUNCTION_CASES
               if isinstance(parse_expression(text), Call)}
    covered |= {n.name for text, _, _ in FUNCTION_CASES for n in _calls(parse_expression(text))}
    assert set(functions.FUNCTIONS) | set(functions.ALIASES) | {"DATE"} <= covered


def _calls(node):
    if isinstance(node, Call):
        yield node
        for a in node.args:
            yield from _calls(a)
    elif isinstance(node, Binary):
        yield from _calls(node.left)
        yield from _calls(node.right)
    elif isinstance(node, (Unary, Paren)):
        yield from _calls(node.operand if isinstance(node, Unary) else node.expr)


def test_aggregate_flag_only_on_aggregates():
    assert translate("SUM(amount)", aggregates=True).aggregate
    assert translate("COUNT(*) + 1", aggregates=True).aggregate
    assert not translate("ABS(amount)", aggregates=True).aggregate


def test_function_names_any_case():
    assert sql_of("coalesce(a, 1)") == sql_of("COALESCE(a, 1)") == sql_of("CoAlEsCe(a, 1)")
    assert sql_of("today()") == sql_of("TODAY()")


def test_division_and_mod_never_raise_on_zero():
    assert_dsl("amount / 0", "TRY_DIVIDE(`amount`, 0)")
    assert_dsl("MOD(a, 0)", "TRY_MOD(`a`, 0)")
    assert not list(spark_tree(sql_of("a / b")).find_all(exp.Div))


def test_min_max_of_two_scalars_propagate_null():
    tree = spark_tree(sql_of("MIN(a, b)"))
    assert isinstance(tree, exp.Case)
    cond = tree.args["ifs"][0].this
    assert {c.this.name for c in cond.find_all(exp.Is)} == {"a", "b"}
    assert isinstance(tree.args["ifs"][0].args["true"], exp.Null)
    err = error_of("MIN(amount)")
    assert err.kind == "arity" and "MIN_AGG" in err.hint
    assert "MAX_AGG" in error_of("MAX(amount)").hint


def test_today_is_the_run_start_parameter():
    tree = spark_tree(sql_of("TODAY()"))
    assert isinstance(tree, exp.Cast) and tree.to.this == exp.DataType.Type.DATE
    assert isinstance(tree.this, exp.Placeholder) and tree.this.name == "run_started_at"
    assert translate("DATEDIFF(TODAY(), d) > 30").type == T.BOOLEAN


@pytest.mark.parametrize("text", ["2026-02-30", "2026-13-01", "2026-1-1", "26-01-01", "2026/01/01", "20260101",
                                  "2026-W01-1", "2026-01-01T00:00", "2026-01-01 ", "", "yesterday",
                                  "\uff12\uff10\uff12\uff16-01-01"])
def test_date_literal_validation(text):
    err = error_of(f'DATE("{text}")')
    assert err.kind == "type" and err.diagnostic({}).code == "DSL-002" and err.pos == 5


@pytest.mark.parametrize("text", ["DATE(name)", "DATE()", 'DATE("2026-01-01", "2026-01-02")', "DATE(20260101)"])
def test_date_takes_one_string_literal(text):
    err = error_of(text)
    assert err.kind == "arity" and "DATE(" in err.hint


def test_date_literal_leap_day():
    assert_dsl('d >= DATE("2024-02-29")', "`d` >= CAST('2024-02-29' AS DATE)")
    assert_dsl("d < DATE('2026-12-31')", "`d` < CAST('2026-12-31' AS DATE)")


def test_if_with_a_null_condition_is_cast_to_boolean():
    # Spark rejects CASE WHEN NULL (VOID is not BOOLEAN); the literal must become a typed NULL.
    assert_dsl("IF(NULL, 1, 2)", "CASE WHEN CAST(NULL AS BOOLEAN) THEN 1 ELSE 2 END")
    assert_dsl("NULL", "CAST(NULL AS BOOLEAN)", expect="boolean")
    assert translate("NULL", expect="boolean").type == T.BOOLEAN


@pytest.mark.parametrize("text, fn", [("IF(flag, 1)", "IF"), ("ABS(a, b)", "ABS"), ("ROUND(amount)", "ROUND"),
                                      ("TODAY(1)", "TODAY"), ("REPLACE(name, 'a')", "REPLACE"),
                                      ("AND(flag)", "AND"), ("CONCAT()", "CONCAT"), ("COALESCE()", "COALESCE")])
def test_arity_errors(text, fn):
    err = error_of(text)
    assert err.kind == "arity" and err.diagnostic({}).code == "DSL-004" and fn in err.message


def test_count_needs_an_argument_or_star():
    assert error_of("COUNT()", aggregates=True).kind == "arity"
    assert error_of("SUM(*)", aggregates=True).kind == "syntax"


# ------------------------------------------------------------------ types
@pytest.mark.parametrize("text, pos", [
    ("'abc' + 1", 6), ("name + 1", 5), ("a * name", 2), ("-name", 0), ("flag - 1", 5), ("d + 1", 2),
])
def test_arithmetic_type_errors(text, pos):
    err = error_of(text)
    assert err.kind == "type" and err.diagnostic({}).code == "DSL-002" and err.pos == pos


@pytest.mark.parametrize("text", ["a", "name", "amount + 1", "d", "IF(flag, 1, 2)", "COALESCE(name, 'x')"])
def test_non_boolean_selector(text):
    err = error_of(text, expect="boolean")
    assert err.kind == "type" and "boolean" in err.message and err.diagnostic({}).code == "DSL-002"


@pytest.mark.parametrize("text", ["flag", "a > 1", "ISNULL(name)", "CONTAINS(name, 'x')", "{{A}}",
                                  "IF(flag, flag, other)"])
def test_boolean_selector_accepted(text):
    assert translate(text, expect="boolean").type == T.BOOLEAN


@pytest.mark.parametrize("text", ["IF(flag, 1, 'x')", "IF(flag, d, a)", "IF(flag, name, flag)"])
def test_if_branches_must_be_compatible(text):
    err = error_of(text)
    assert err.kind == "type" and "IF branches" in err.message and err.pos == 0


def test_if_branch_types_unify():
    assert translate("IF(flag, a, NULL)").type == T.INTEGER
    assert translate("IF(flag, d, ts)").type == T.TIMESTAMP
    assert translate("IF(flag, a, amount)").type == T.SqlType("number", "decimal(18,2)")


@pytest.mark.parametrize("text", ["d = '2026-01-01'", "'2026-01-01' < d", "d >= name", "ts = '2026-01-01'"])
def test_comparing_date_with_string(text):
    err = error_of(text)
    assert err.kind == "type" and "date" in err.message.replace("timestamp", "date") and "DATE(" in err.hint


@pytest.mark.parametrize("text", ["flag = 1", "a = 'x'", "flag AND a", "NOT a", "COALESCE(a, name)",
                                  "UPPER(a)", "YEAR(name)", "LEFT(name, 'x')", "CONTAINS(name, 1)",
                                  "DATEADD(d, name)", "SUM(name)"])
def test_other_type_errors(text):
    assert error_of(text, aggregates=True).kind == "type"


def test_argument_type_error_points_at_the_argument():
    err = error_of("ROUND(amount, name)")
    assert err.pos == 14 and "argument 2 of ROUND" in err.message


def test_date_and_timestamp_compare():
    assert translate("d < ts").type == T.BOOLEAN
    assert translate("d = DATE('2026-01-01')").type == T.BOOLEAN


# ------------------------------------------------------------------ aggregates
@pytest.mark.parametrize("text", ["SUM(amount)", "AVG(a)", "MIN_AGG(a)", "MAX_AGG(a)", "COUNT(a)", "COUNT(*)",
                                  "COUNT_ALL()", "a + SUM(b)", "IF(flag, COUNT(*), 0)"])
def test_aggregates_rejected_outside_aggregations(text):
    err = error_of(text)
    diag = err.diagnostic({})
    assert diag.code == "BR-014" and "not allowed here" in diag.message and "aggregate" in diag.hint
    assert translate(text, aggregates=True).aggregate


def test_nested_aggregates_rejected():
    err = error_of("SUM(SUM(amount))", aggregates=True)
    assert err.diagnostic({}).code == "BR-014" and "nested" in err.message and err.pos == 4


def test_group_keys():
    typed = translate("SUM(amount) + COUNT(*)", aggregates=True, group_keys={"region"})
    assert typed.aggregate
    assert_sql(sql_of("CONCAT(region, '-')", aggregates=True, group_keys={"region"}), "CONCAT(`region`, '-')")
    err = error_of("amount + SUM(amount)", aggregates=True, group_keys={"region"})
    assert err.diagnostic({}).code == "DSL-005" and err.pos == 0


# ------------------------------------------------------------------ unknown functions
@pytest.mark.parametrize("text, hint", [("SUMM(amount)", "SUM"), ("UPPERR(name)", "UPPER"),
                                        ("CONCATENATE(name)", "CONCAT"), ("DATE_ADD(d, 1)", "DATEADD"),
                                        ("IFF(flag, 1, 2)", "IF")])
def test_unknown_function_with_did_you_mean(text, hint):
    err = error_of(text, aggregates=True)
    diag = err.diagnostic({})
    assert diag.code == "DSL-003" and "unknown function" in diag.message
    assert f"did you mean '{hint}'" in diag.hint
    assert err.pos == 0


def test_unknown_function_never_guessed_into_sql():
    assert error_of("current_date()").kind == "function"
    assert error_of("xyz_qq(a)").hint  # lists names or suggests one


# ------------------------------------------------------------------ named selectors
def test_selector_is_parenthesised():
    assert_dsl("{{A}} AND c = 3", "(`a` = 1 OR `b` = 2) AND `c` = 3")
    assert spark_tree(sql_of("{{A}} AND c = 3")) != spark_tree("`a` = 1 OR `b` = 2 AND `c` = 3")
    assert_dsl("NOT {{A}}", "NOT (`a` = 1 OR `b` = 2)")
    assert_dsl("{{NUM}} * 2", "(`a` + 1) * 2")
    assert_dsl("{{ A }}", "`a` = 1 OR `b` = 2")


def test_selector_expands_recursively():
    assert_dsl("{{B}} OR other", "((`a` = 1 OR `b` = 2) AND `flag`) OR `other`")
    assert "{{" not in sql_of("{{B}}")


def test_undefined_selector():
    err = error_of("flag AND {{NOPE}}")
    diag = err.diagnostic({})
    assert diag.code == "BR-006" and err.pos == 9 and diag.text == "{{NOPE}}"
    assert diag.location.column == 7 + 9


def test_undefined_selector_suggests_a_close_name():
    assert "did you mean 'NUM'" in error_of("{{NUMM}}").hint


def test_selector_cycle():
    err = error_of("{{CYC1}}")
    diag = err.diagnostic({})
    assert diag.code == "SEL-001" and "CYC1 -> CYC2 -> CYC1" in diag.message
    assert diag.location.file == "selectors.yml" and diag.location.line == 7  # where the cycle closes
    assert code_of("{{SELF}}") == "SEL-001"


def _chain(n: int) -> dict:
    sels = {f"S{i}": Source(f"{{{{S{i + 1}}}}}", "selectors.yml", i + 1, 5) for i in range(n - 1)}
    sels[f"S{n - 1}"] = Source("flag", "selectors.yml", n, 5)
    return sels


def test_selector_depth_limit():
    ok = _chain(MAX_SELECTOR_DEPTH)
    assert_dsl("{{S0}}", "`flag`", selectors=ok)
    err = error_of("{{S0}}", selectors=_chain(MAX_SELECTOR_DEPTH + 1))
    assert err.diagnostic({}).code == "SEL-002" and "10" in err.message


def test_errors_inside_a_selector_point_into_the_selector():
    err = error_of("flag OR {{BROKEN}}")
    diag = err.diagnostic({})
    assert diag.code == "DSL-001" and "BROKEN" in diag.message
    assert (diag.location.file, diag.location.line, diag.location.column) == ("selectors.yml", 9, 8 + 4)
    err = error_of("{{UNKNOWN_COL}}")
    diag = err.diagnostic({})
    assert diag.code == "BR-015" and (diag.location.file, diag.location.line, diag.location.column) == (
        "selectors.yml", 10, 8 + 9)


# ------------------------------------------------------------------ positions and diagnostics
def test_error_position_and_column():
    err = error_of("a + name")
    assert err.pos == 2
    diag = err.diagnostic({})
    assert (diag.location.file, diag.location.line, diag.location.column) == ("ops.yml", 5, 9)
    assert diag.render().startswith("ops.yml:5:9: DSL-002")


def test_error_position_on_a_later_line():
    text = "flag AND\n  nope > 1"
    with pytest.raises(ExprError) as info:
        Translator(SCOPE, SELECTORS).translate(Source(text, "ops.yml", 10, 15))
    err = info.value
    assert err.pos == 11
    loc = err.diagnostic({}).location
    assert (loc.line, loc.column) == (11, 3)


def test_source_location():
    s = Source("ab\ncd\nef", "x.yml", 3, 9)
    assert (source_location(s, 0).line, source_location(s, 0).column) == (3, 9)
    assert (source_location(s, 1).line, source_location(s, 1).column) == (3, 10)
    assert (source_location(s, 3).line, source_location(s, 3).column) == (4, 1)
    assert (source_location(s, 7).line, source_location(s, 7).column) == (5, 2)


@pytest.mark.parametrize("text, pos", [("a +", 3), ("a + * b", 4), ("(a + b", 6), ("a b", 2), ("", 0),
                                       ("a = 1,", 5), ("flag AND", 8), ("AND flag", 0), ("a $ b", 2),
                                       ("IF(flag, 1 2)", 11), ("{{A", 0)])
def test_syntax_error_positions(text, pos):
    err = error_of(text)
    assert err.kind == "syntax" and err.pos == pos and err.diagnostic({}).code == "DSL-001"
    assert err.diagnostic({}).location.column == 7 + pos


def test_caller_codes_override_defaults():
    err = error_of("a + name")
    assert err.diagnostic({"type": "UPD-VR-007"}).code == "UPD-VR-007"
    assert err.diagnostic({"syntax": "X"}).code == DEFAULT_CODES["type"]


def test_expr_error_is_a_ledgerflow_error():
    assert issubclass(ExprError, LedgerflowError)
    with pytest.raises(LedgerflowError):
        translate("nope")


def test_parser_reports_syntax_errors_as_dsl_syntax_error():
    with pytest.raises(DslSyntaxError) as info:
        parse_expression("a +")
    assert info.value.pos == 3


# ------------------------------------------------------------------ nesting limits
def test_deep_nesting_is_a_located_error_not_a_crash():
    ok = "(" * MAX_NESTING + "a" + ")" * MAX_NESTING
    assert_dsl(ok, "`a`")
    for text in ["(" * (MAX_NESTING + 1) + "a" + ")" * (MAX_NESTING + 1),
                 "(" * 5000 + "a" + ")" * 5000,
                 "NOT " * 2000 + "flag",
                 "-" * 3000 + "a",
                 "ABS(" * 400 + "a" + ")" * 400]:
        err = error_of(text)
        assert err.kind == "syntax" and "nest" in err.message


def test_long_flat_chains_still_translate():
    text = " OR ".join(f"a = {i}" for i in range(200))
    tree = sqlglot.parse_one(sql_of(text), read="spark")
    assert len(list(tree.find_all(exp.EQ))) == 200


def test_parse_ast_shapes():
    node = parse_expression("t.x + 1")
    assert isinstance(node.left, ColumnRef) and (node.left.table, node.left.name) == ("t", "x")
    assert isinstance(node.right, Literal) and node.right.value == "1"
    call = parse_expression("count(*)")
    assert isinstance(call, Call) and call.star and call.name == "COUNT"

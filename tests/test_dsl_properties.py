"""Property tests of the expression DSL (hypothesis).

(a) Randomly generated well-typed expressions always translate, have the kind they were built
    for, and give Spark SQL that sqlglot parses (and re-generates stably).
(b) Arbitrary text never raises anything but a LedgerflowError from the translator.

The grammar strategy (:func:`expressions`) is also used by test_dsl_spark.py to check the SQL
against Spark's analyzer.
"""
from __future__ import annotations

import datetime
import string

import sqlglot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledgerflow.compiler import types as T
from ledgerflow.compiler.dsl import functions
from ledgerflow.compiler.dsl.ast import Source
from ledgerflow.compiler.dsl.translate import DEFAULT_CODES, ExprError, JoinScope, Scope, Translator
from ledgerflow.compiler.errors import LedgerflowError

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

GEN_COLUMNS = {
    "n1": T.INTEGER, "n2": T.INTEGER, "big": T.BIGINT, "amount": T.SqlType("number", "decimal(18,2)"),
    "s1": T.STRING, "s2": T.STRING, "b1": T.BOOLEAN, "b2": T.BOOLEAN, "d1": T.DATE, "d2": T.DATE,
    "ts": T.TIMESTAMP,
}
COLUMNS_BY_KIND = {
    "number": ["n1", "n2", "big", "amount", "gen.n1", "j.rate"],
    "string": ["s1", "s2", "gen.s1", "j.code"],
    "boolean": ["b1", "b2", "gen.b2", "j.active"],
    "date": ["d1", "d2", "ts", "gen.d1", "j.since"],
}
JOIN = JoinScope("j", {"rate": ("rate", T.SqlType("number", "decimal(18,6)")), "code": ("code", T.STRING),
                       "active": ("active", T.BOOLEAN), "since": ("since", T.DATE)})
GEN_SCOPE = Scope("gen", GEN_COLUMNS, joins={"j": JOIN})
GEN_SELECTORS = {
    "POSITIVE": Source("amount > 0", "selectors.yml", 1, 12),
    "RECENT": Source("d1 >= DATE('2026-01-01') AND {{POSITIVE}}", "selectors.yml", 2, 12),
    "EITHER": Source("b1 OR {{RECENT}}", "selectors.yml", 3, 12),
}
KINDS = ["number", "string", "boolean", "date"]


def kinds_match(built: str, got: str) -> bool:
    """Whether a translated type kind is acceptable for an expression built as ``built``."""
    if got == "null":
        return True
    if built == "date":
        return got in ("date", "timestamp")
    return got == built


# ------------------------------------------------------------------ grammar strategy
def _word(draw, word: str) -> str:
    return draw(st.sampled_from([word, word.lower(), word.capitalize()]))


def _sp(draw) -> str:
    return draw(st.sampled_from([" ", " ", " ", "  ", "\n    ", "\t"]))


def _string_literal(draw) -> str:
    text = draw(st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12))
    quote = draw(st.sampled_from(["'", '"']))
    return quote + text.replace(quote, quote * 2) + quote


def _number_literal(draw) -> str:
    choice = draw(st.integers(0, 3))
    if choice == 0:
        return str(draw(st.integers(0, 1000)))
    if choice == 1:
        return f"{draw(st.integers(0, 99999))}.{draw(st.integers(0, 99)):02d}"
    if choice == 2:
        return f".{draw(st.integers(0, 999))}"
    return str(draw(st.integers(0, 10 ** 12)))


def _date_literal(draw) -> str:
    day = draw(st.dates(min_value=datetime.date(1000, 1, 1), max_value=datetime.date(9999, 12, 31)))
    quote = draw(st.sampled_from(["'", '"']))
    return f"{_word(draw, 'DATE')}({quote}{day.isoformat()}{quote})"


def _leaf(draw, kind: str) -> str:
    options = ["column", "column", "literal"]
    if draw(st.integers(0, 14)) == 0:
        return _word(draw, "NULL")
    if kind == "boolean":
        options.append("selector")
    if draw(st.sampled_from(options)) == "column":
        return draw(st.sampled_from(COLUMNS_BY_KIND[kind]))
    if kind == "number":
        return _number_literal(draw)
    if kind == "string":
        return _string_literal(draw)
    if kind == "boolean":
        if "selector" in options and draw(st.booleans()):
            name = draw(st.sampled_from(sorted(GEN_SELECTORS)))
            return draw(st.sampled_from([f"{{{{{name}}}}}", f"{{{{ {name} }}}}"]))
        return _word(draw, draw(st.sampled_from(["TRUE", "FALSE"])))
    return _date_literal(draw) if draw(st.booleans()) else f"{_word(draw, 'TODAY')}()"


def _call(draw, name: str, args: list[str]) -> str:
    sep = draw(st.sampled_from([", ", ",", " , ", ",\n  "]))
    return f"{_word(draw, name)}({sep.join(args)})"


class _Gen:
    """One draw of a random expression: ``(text, atomic)``; atomic texts need no parentheses."""

    def __init__(self, draw):
        self.draw = draw

    def operand(self, kind: str, depth: int, force: bool = False) -> str:
        text, atomic = self.expr(kind, depth)
        if not atomic and (force or self.draw(st.booleans())):
            return f"({text})"
        return text

    def strict(self, kind: str, depth: int) -> str:
        return self.operand(kind, depth, force=True)

    def arg(self, kind: str, depth: int) -> str:
        return self.expr(kind, depth)[0]

    def expr(self, kind: str, depth: int):
        draw = self.draw
        if depth <= 0 or draw(st.integers(0, 5)) == 0:
            return _leaf(draw, kind), True
        d = depth - 1
        form = draw(st.sampled_from(_FORMS[kind]))
        return form(self, d)


def _if(kind):
    return lambda g, d: (_call(g.draw, "IF", [g.arg("boolean", d), g.arg(kind, d), g.arg(kind, d)]), True)


def _coalesce(kind):
    return lambda g, d: (_call(g.draw, "COALESCE", [g.arg(kind, d) for _ in range(g.draw(st.integers(1, 3)))]), True)


def _arith(g, d):
    op = g.draw(st.sampled_from(["+", "-", "*", "/"]))
    return f"{g.operand('number', d)}{_sp(g.draw)}{op}{_sp(g.draw)}{g.operand('number', d)}", False


def _neg(g, d):
    return f"-{g.draw(st.sampled_from(['', ' ']))}{g.operand('number', d)}", False


def _num_fn(g, d):
    name = g.draw(st.sampled_from(["ABS", "FLOOR", "CEIL", "ROUND", "MOD", "MIN", "MAX", "LEN", "YEAR", "MONTH",
                                   "DAY", "DATEDIFF"]))
    if name in ("ABS", "FLOOR", "CEIL"):
        args = [g.arg("number", d)]
    elif name == "ROUND":
        args = [g.arg("number", d), str(g.draw(st.integers(0, 4)))]
    elif name in ("MOD", "MIN", "MAX"):
        dd = min(d, 1) if name != "MOD" else d  # MIN/MAX repeat their arguments in SQL: keep them shallow
        args = [g.arg("number", dd), g.arg("number", dd)]
    elif name == "LEN":
        args = [g.arg("string", d)]
    elif name == "DATEDIFF":
        args = [g.arg("date", d), g.arg("date", d)]
    else:
        args = [g.arg("date", d)]
    return _call(g.draw, name, args), True


def _str_fn(g, d):
    name = g.draw(st.sampled_from(["CONCAT", "UPPER", "LOWER", "TRIM", "LEFT", "RIGHT", "REPLACE"]))
    if name == "CONCAT":
        args = [g.arg(g.draw(st.sampled_from(KINDS)), d) for _ in range(g.draw(st.integers(1, 4)))]
    elif name in ("LEFT", "RIGHT"):
        args = [g.arg("string", d), g.arg("number", d)]
    elif name == "REPLACE":
        args = [g.arg("string", d), g.arg("string", d), g.arg("string", d)]
    else:
        args = [g.arg("string", d)]
    return _call(g.draw, name, args), True


def _compare(g, d):
    kind = g.draw(st.sampled_from(KINDS))
    op = g.draw(st.sampled_from(["=", "<>", "!=", "<", "<=", ">", ">="]))
    return f"{g.strict(kind, d)}{_sp(g.draw)}{op}{_sp(g.draw)}{g.strict(kind, d)}", False


def _and_or(g, d):
    op = _word(g.draw, g.draw(st.sampled_from(["AND", "OR"])))
    return f"{g.operand('boolean', d)} {op} {g.operand('boolean', d)}", False


def _not(g, d):
    return f"{_word(g.draw, 'NOT')} {g.operand('boolean', d)}", False


def _bool_fn(g, d):
    name = g.draw(st.sampled_from(["AND", "OR", "NOT", "ISNULL", "IS_NULL", "CONTAINS"]))
    if name in ("AND", "OR"):
        args = [g.arg("boolean", d) for _ in range(g.draw(st.integers(2, 3)))]
    elif name == "NOT":
        args = [g.arg("boolean", d)]
    elif name == "CONTAINS":
        args = [g.arg("string", d), g.arg("string", d)]
    else:
        args = [g.arg(g.draw(st.sampled_from(KINDS)), d)]
    return _call(g.draw, name, args), True


def _dateadd(g, d):
    return _call(g.draw, "DATEADD", [g.arg("date", d), g.arg("number", d)]), True


def _paren(kind):
    return lambda g, d: (f"({g.arg(kind, d)})", True)


_FORMS = {
    "number": [_arith, _arith, _neg, _num_fn, _num_fn, _if("number"), _coalesce("number"), _paren("number")],
    "string": [_str_fn, _str_fn, _if("string"), _coalesce("string"), _paren("string")],
    "boolean": [_compare, _compare, _and_or, _and_or, _not, _bool_fn, _if("boolean"), _coalesce("boolean"),
                _paren("boolean")],
    "date": [_dateadd, _if("date"), _coalesce("date"), _paren("date")],
}


@st.composite
def expressions(draw, kind: str | None = None, depth: int = 4):
    """A well-typed DSL expression over :data:`GEN_SCOPE`: ``(kind, text)``."""
    kind = kind or draw(st.sampled_from(KINDS))
    text, _ = _Gen(draw).expr(kind, draw(st.sampled_from([depth, depth, depth - 1, 1])))
    return kind, text


def translate_generated(text: str, **kw):
    return Translator(GEN_SCOPE, GEN_SELECTORS, **kw).translate(Source(text, "gen.yml", 3, 14))


# ------------------------------------------------------------------ (a) valid expressions
@SETTINGS
@given(expressions())
def test_valid_expressions_translate_to_parseable_spark_sql(case):
    kind, text = case
    typed = translate_generated(text)
    assert kinds_match(kind, typed.type.kind), (text, typed.type)
    assert not typed.aggregate
    sql = typed.sql.sql("spark")
    tree = sqlglot.parse_one(sql, read="spark")
    assert tree is not None
    assert sqlglot.parse_one(tree.sql("spark"), read="spark") == tree  # stable round trip
    assert "{{" not in sql or "'" in sql or '"' in sql  # selectors are expanded (braces only inside strings)


@SETTINGS
@given(expressions(kind="boolean"))
def test_valid_conditions_are_boolean(case):
    _, text = case
    typed = Translator(GEN_SCOPE, GEN_SELECTORS).translate(Source(text, "gen.yml", 1, 1), "boolean")
    assert typed.type.kind == "boolean"


@settings(max_examples=60, deadline=None)
@given(expressions(kind="number", depth=3), st.sampled_from(["SUM", "AVG", "MIN_AGG", "MAX_AGG", "COUNT"]))
def test_aggregates_of_valid_expressions(case, fn):
    _, text = case
    agg = f"{fn}({text})"
    typed = translate_generated(agg, aggregates=True)
    assert typed.aggregate
    sqlglot.parse_one(typed.sql.sql("spark"), read="spark")
    try:
        translate_generated(agg)
    except ExprError as err:
        assert err.diagnostic({}).code == "BR-014"
    else:
        raise AssertionError(f"{agg} was accepted outside an aggregation")


# ------------------------------------------------------------------ (b) arbitrary text
TOKENS = [
    "(", ")", ",", "+", "-", "*", "/", "=", "<>", "!=", "<", "<=", ">", ">=", "!", "<<", "==", ".", "..",
    "AND", "and", "OR", "Or", "NOT", "not", "TRUE", "false", "NULL", "null",
    "0", "1", "42", "3.14", ".5", "1.", "007", "99999999999999999999999", "1e5", "-1",
    "'x'", '"y"', "''", '""', "'it''s'", "'", '"', "'unterminated", "`n1`", "\\",
    "n1", "n2", "big", "amount", "s1", "b1", "d1", "ts", "gen.n1", "gen.nope", "j.rate", "j.nope", "k.x", "nope",
    "a.b.c", "_deleted", "{{POSITIVE}}", "{{EITHER}}", "{{NOPE}}", "{{", "}}", "{", "}", "{{ RECENT }}",
    "DATE", "DATE('2026-01-01')", 'DATE("2026-02-30")', "DATE('2026-W01-1')", "TODAY", "TODAY()",
    *sorted(functions.FUNCTIONS), *sorted(functions.ALIASES), "FOO", "IFF", "MIN_AG", "COUNT(*)",
    " ", "  ", "\n", "\t", "\u00a0", "\u0663", "\u00e9", "\U0001F600", "\x00", ";", "--", "/*", "*/", "#", "$", "@",
]


def _assert_only_ledgerflow_errors(text: str, **kw) -> None:
    try:
        typed = Translator(GEN_SCOPE, GEN_SELECTORS, **kw).translate(Source(text, "f.yml", 1, 1))
    except LedgerflowError as err:
        assert isinstance(err, ExprError) and err.kind in DEFAULT_CODES
        diag = err.diagnostic({})
        assert diag.code and diag.message and diag.location.line >= 1 and diag.location.column >= 1
        assert 0 <= err.pos <= len(err.source.text)
        return
    sqlglot.parse_one(typed.sql.sql("spark"), read="spark")  # anything accepted must give valid SQL


@SETTINGS
@given(st.text())
def test_random_text_only_raises_ledgerflow_errors(text):
    _assert_only_ledgerflow_errors(text)


@SETTINGS
@given(st.lists(st.sampled_from(TOKENS), max_size=25), st.sampled_from([" ", ""]), st.booleans())
def test_token_soup_only_raises_ledgerflow_errors(tokens, sep, aggregates):
    _assert_only_ledgerflow_errors(sep.join(tokens), aggregates=aggregates)


@settings(max_examples=100, deadline=None)
@given(expressions(), st.integers(0, 200), st.text(string.printable + "\u00e9\u0663", max_size=3))
def test_mutated_valid_expressions_only_raise_ledgerflow_errors(case, at, insert):
    _, text = case
    at = min(at, len(text))
    _assert_only_ledgerflow_errors(text[:at] + insert + text[at + 1:], aggregates=True, group_keys={"s1"})


def test_deep_and_long_inputs_only_raise_ledgerflow_errors():
    for text in ["(" * 3000, "(" * 3000 + "1" + ")" * 3000, "NOT " * 3000 + "b1", "-" * 5000 + "1",
                 " + ".join(["n1"] * 3000), "ABS(" * 2000 + "1" + ")" * 2000, "9" * 10000, "'" + "x" * 100000 + "'"]:
        _assert_only_ledgerflow_errors(text)

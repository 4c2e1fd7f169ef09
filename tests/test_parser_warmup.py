"""The SQL parser is warmed with the run's own statements while the driver starts (issue 9)."""
from __future__ import annotations

from ledgerflow.adapters.spark import parser_warmup
from ledgerflow.adapters.run.context import warm_parser as _offer_to_parser
from ledgerflow.compiler.compile import compile_project
from ledgerflow.compiler.loading import FILE_METADATA_COLUMN
from ledgerflow.compiler.workspace import load_workspace

from conftest import PROJECTS


class _Parser:
    def __init__(self):
        self.parsed = []

    def parsePlan(self, text):  # noqa: N802 - the JVM method's name
        self.parsed.append(text)
        if "bad" in text:
            raise RuntimeError("ParseException")


class _Gateway:
    """What the warm-up reaches through py4j: jvm.<package>.CatalystSqlParser$.MODULE$."""

    def __init__(self, parser):
        package = type("Package", (), {"CatalystSqlParser$": type("Object", (), {"MODULE$": parser})})
        self.jvm = type("Jvm", (), {"org": type("Org", (), {"apache": type("Apache", (), {"spark": type(
            "Spark", (), {"sql": type("Sql", (), {"catalyst": type("Catalyst", (), {"parser": package})})})})})})


def test_offered_statements_are_parsed_in_order_and_failures_ignored():
    warmup, parser = parser_warmup.ParserWarmup(wait_seconds=5), _Parser()
    thread = warmup.start(_Gateway(parser))  # the gateway may come up before the compile ends
    warmup.offer(["SELECT 1", "bad", "SELECT 2"])
    warmup.offer(["SELECT 3"])  # only the first offer counts
    thread.join(5)
    assert parser.parsed == ["SELECT 1", "bad", "SELECT 2"]


def test_nothing_offered_leaves_the_parser_alone():
    warmup, parser = parser_warmup.ParserWarmup(wait_seconds=0.1), _Parser()
    warmup.start(_Gateway(parser)).join(2)
    assert parser.parsed == []


def test_the_runner_offers_its_input_views_then_its_statements(monkeypatch):
    warmup = parser_warmup.ParserWarmup()
    monkeypatch.setattr(parser_warmup, "_PROCESS", warmup)
    ws = load_workspace(str(PROJECTS / "finance"))
    compiled = compile_project(ws, ws.find_project("ts03_fx_conversion"))
    _offer_to_parser(compiled)
    views, statements = warmup.texts[:len(compiled.inputs)], warmup.texts[len(compiled.inputs):]
    assert statements == [st.sql for st in compiled.statements]
    assert all(v.startswith("SELECT") and "lf_warmup" in v for v in views) and len(views) == 2
    assert FILE_METADATA_COLUMN in views[0] and FILE_METADATA_COLUMN not in views[1]  # the input's ids, the join's none


def test_the_parser_is_reached_in_a_real_jvm(spark):
    """The py4j path the warm-up takes exists in this Spark (a wrong one would silently warm nothing)."""
    plan = parser_warmup.jvm_parser(spark.sparkContext._gateway).parsePlan("SELECT :p AS x FROM t")
    assert "namedparameter(p)" in plan.toString()

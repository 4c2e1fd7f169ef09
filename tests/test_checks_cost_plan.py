"""What a checked run computes, read from its plans rather than its timings (issue 29, point 6; BENCHMARKS.md
section 4): an output's row checks join its stage's bridge observation (one ``CollectMetrics`` in the write,
not two) and count violations there (their amount impact is read back only when there are some), and a ``unique`` check is judged without summing every row (MIN, MAX and COUNT in its aggregation;
the SUMs only for a duplicated key of more than two rows)."""
from __future__ import annotations

from decimal import Decimal

import pytest

from ledgerflow.adapters.run import check_eval
from ledgerflow.adapters.run.evaluator import PeriodRun
from ledgerflow.adapters.run.runner import Runner
from ledgerflow.compiler.checks.plan import CheckKind
from ledgerflow.compiler.checks.sql import set_check_query, unique_probe_query
from ledgerflow.compiler.errors import ChecksFailed
from test_checks_compile import _fixture_plan

PERIOD = "2026-01"


class _PlanOfWrites:
    """The checks hook of a run, noting the physical plan of every frame it hands to a write."""

    def __init__(self, checks):
        self.checks, self.plans = checks, {}

    def prepare(self, out):
        extra = self.checks.prepare(out)
        self.plans[out.statement.operation.seq] = out.frame._jdf.queryExecution().executedPlan().toString()
        return extra

    def __getattr__(self, name):
        return getattr(self.checks, name)


def test_a_checked_write_carries_one_collect_metrics(spark, finance, monkeypatch):
    """journal_controls' output 3 (no selector) has three row checks: observed with the stage's bridge, so its
    write carries one CollectMetrics (before: the stage's and the row checks' own, a second split of the
    write's generated code), counting violations only; the checks are judged from it all the same, and fail
    when their rows do, with the amount impact of the violating rows."""
    hooks = []
    runner = Runner(str(finance), echo=lambda _s: None, session_factory=lambda: spark)
    monkeypatch.setattr(PeriodRun, "publishing",
                        staticmethod(lambda record, ctx, checks: hooks.append(_PlanOfWrites(checks)) or hooks[-1]))
    rec = runner.run("journal_controls", PERIOD)
    assert rec["status"] == "completed"
    plan = hooks[0].plans[3]
    assert plan.count("CollectMetrics") == 1, plan
    # counted in the write; their amount impact (a decimal SUM per row) is read back only when they fail
    assert "check|currencies|_lf_violations" in plan and "check|currencies|amount_local" not in plan
    by = {c["name"]: c for c in rec["checks"]}
    assert {n: (by[n]["status"], by[n]["violations"]) for n in ("known_accounts", "amounts_present", "currencies")} \
        == {"known_accounts": ("passed", 0), "amounts_present": ("passed", 0), "currencies": ("passed", 0)}

    project = finance / "projects" / "journal_controls.yml"
    project.write_text(project.read_text().replace("values: [EUR, USD, GBP, JPY]", "values: [USD, GBP, JPY]"))
    monkeypatch.setattr(PeriodRun, "publishing",
                        staticmethod(lambda record, ctx, checks: hooks.append(_PlanOfWrites(checks)) or hooks[-1]))
    with pytest.raises(ChecksFailed) as failed:
        runner.run("journal_controls", PERIOD)
    assert hooks[-1].plans[3].count("CollectMetrics") == 1
    currencies = next(c for c in failed.value.results if c["name"] == "currencies")
    eur = [line.split(",") for line in (finance / "data" / "gl" / "v1" / "transactions.csv").read_text().splitlines()
           if ",EUR," in line and line.endswith(f",{PERIOD}")]
    assert currencies["status"] == "failed" and currencies["violations"] == len(eur) == 2
    assert currencies["amount_impact"]["amount_local"] == str(sum(Decimal(r[6]) for r in eur))
    assert [(s["journal_id"], s["line_number"]) for s in currencies["sample"]] == [(r[0], int(r[1])) for r in eur]


def _frame(spark, rows):
    frame = spark.createDataFrame(rows, "journal_id string, line_number int, a string, r string")
    return frame.selectExpr("journal_id", "line_number", "CAST(a AS DECIMAL(18,2)) AS amount_local",
                            "CAST(r AS DECIMAL(18,2)) AS amount_reporting")


def _by_sums(spark, check, frame):
    """The check's result from its own query (SUMs of every group), as the runner judged it before."""
    frame.createOrReplaceTempView("lf_unique_sums")
    found = spark.sql(set_check_query(check, "lf_unique_sums")).collect()
    return check_eval._sum_rows(found, check)


def test_a_unique_check_sums_no_row_unless_a_key_has_more_than_two(spark, monkeypatch):
    """The probe (MIN, MAX, COUNT per amount column) judges a passing check and duplicated keys of two rows,
    NULL amounts included, exactly as the SUMs do; a key of three rows falls back to the SUMs."""
    check = {c.name: c for c in _fixture_plan().checks}["one_row_per_line"]
    assert check.kind == CheckKind.UNIQUE and set(check.amount_columns) >= {"amount_local", "amount_reporting"}
    assert "SUM(" not in unique_probe_query(check, "v").upper()
    unique = _frame(spark, [(f"J{k}", 1, "1.00", "2.00") for k in range(5)])
    pairs = _frame(spark, [("J1", 1, "1.50", None), ("J1", 1, "-4.25", None), ("J2", 2, None, "3.00"),
                           ("J2", 2, "7.00", "3.00"), ("J3", 1, "9.99", "1.00")])
    triple = _frame(spark, [("J1", 1, "1.00", "1.00")] * 3 + [("J2", 1, "2.00", "2.00")])
    expected = {name: _by_sums(spark, check, frame) for name, frame in
                (("pairs", pairs), ("triple", triple))}
    assert expected["pairs"] == (4, {"amount_local": "4.25", "amount_reporting": "6.00"})

    real_query = check_eval.set_check_query
    monkeypatch.setattr(check_eval, "set_check_query", lambda *_a: (_ for _ in ()).throw(AssertionError("SUM query")))
    assert check_eval.set_result(spark, check, unique)["status"] == "passed"  # before: the SUM query
    got = check_eval.set_result(spark, check, pairs)
    assert (got["violations"], got["amount_impact"]) == expected["pairs"]
    assert [s["journal_id"] for s in got["sample"]] == ["J1", "J2"]
    monkeypatch.setattr(check_eval, "set_check_query", real_query)
    got = check_eval.set_result(spark, check, triple)
    assert (got["violations"], got["amount_impact"]) == expected["triple"] == (3, {"amount_local": "3.00",
                                                                                 "amount_reporting": "3.00"})

"""Judging checks (docs/checks.md) over Spark rows, wherever the rows come from: the result of one check
as the run record holds it, from the metrics a row check observed or from a set check's one query.

Used by the run (:mod:`.checks`, on the rows it stages) and by ``ledgerflow test`` (on the rows a test
computes). The SQL comes from :mod:`ledgerflow.compiler.checks.sql`; nothing here writes SQL text.
"""
from __future__ import annotations

import datetime
import uuid
from decimal import Decimal
from typing import Any, Callable, Iterable, Optional

from ...compiler.checks.plan import Action, CheckPlan
from ...compiler.checks.sql import (ROWS, VIOLATIONS, probe_sum, row_metrics_sql, set_check_query, unique_probe_query,
                                    violation_sql)
from ...compiler.kinds.registry import check_kind

SAMPLE = 5  # violating rows (or groups) a result names
COLLECTED = 1000  # a set check's violating groups read at once; beyond that they are totalled by Spark

# judge name (a check kind's registry entry names its judge) -> the function judging a check of that kind
JUDGES: dict[str, Callable] = {}


def judge(name: str) -> Callable[[Callable], Callable]:
    """Register the decorated function as the judge called ``name`` (a check kind's entry names it; a test
    asserts every check kind of the compiler has its judge). A name registered twice is a programming error."""
    def register(fn: Callable) -> Callable:
        if name in JUDGES:
            raise ValueError(f"two judges named {name}")
        JUDGES[name] = fn
        return fn
    return register


def plain(value: Any) -> Any:
    """A value as the run record's JSON holds it: decimals exact as strings, dates and times ISO."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    return value


def quoted(name: str):
    """The Spark column ``name`` (any characters)."""
    from pyspark.sql import functions as F
    return F.col("`" + name.replace("`", "``") + "`")


def violating(check: CheckPlan):
    """A row check's violation as a Spark column (TRUE: the row violates; never NULL)."""
    from pyspark.sql import functions as F
    return F.expr(violation_sql(check))


def result(check: CheckPlan, violations: int, impact: Optional[dict] = None, sample: Optional[list] = None,
           quarantined: int = 0) -> dict:
    """One entry of the run record's ``checks``: passed without violations, else failed (action fail) or
    warned (warn, quarantine)."""
    status = "passed" if not violations else "failed" if check.action == Action.FAIL else "warned"
    return {"name": check.name, "kind": check.kind.value, "on": check.target, "severity": check.severity,
            "status": status, "violations": int(violations), "amount_impact": dict(impact or {}),
            "sample": list(sample or []), "quarantined": int(quarantined)}


# ---------------------------------------------------------------------------------------- row checks
def metric_columns(check: CheckPlan, prefix: str, impact: bool = True) -> list:
    """The aggregates of a row check (:func:`~ledgerflow.compiler.checks.sql.row_metrics_sql`) as Spark
    columns named ``prefix + name``: what ``DataFrame.observe`` or one aggregation computes."""
    from pyspark.sql import functions as F
    return [F.expr(text).alias(prefix + name) for name, text in row_metrics_sql(check, impact=impact)]


def row_metrics(checks: list[CheckPlan], impact: bool = True) -> tuple[list, list[tuple[CheckPlan, str]]]:
    """(the columns to observe or aggregate, each check with its metrics' name prefix) for ``checks``; without
    ``impact`` only the violations are counted (:func:`row_result` reads the impact when there are some)."""
    columns, named = [], []
    for i, check in enumerate(checks):
        prefix = f"c{i}_"
        columns += metric_columns(check, prefix, impact)
        named.append((check, prefix))
    return columns, named


def aggregate(frame, checks: list[CheckPlan]) -> dict[str, dict]:
    """Every row check of ``checks`` judged by one aggregation over ``frame`` (no sample yet): name -> metrics."""
    if not checks:
        return {}
    columns, named = row_metrics(checks)
    row = frame.agg(*columns).collect()[0].asDict()
    return split_metrics(row, named)


def judge_rows(frame, checks: list[CheckPlan], quarantined: bool = False) -> dict[str, dict]:
    """Every row check of ``checks`` judged by one aggregation over ``frame``, sampled from it: name -> result."""
    by_name = {c.name: c for c in checks}
    return {name: row_result(by_name[name], metrics, frame, quarantined)
            for name, metrics in aggregate(frame, checks).items()}


def any_violation(checks: list[CheckPlan]):
    """TRUE where a row violates any of the row checks ``checks`` (never NULL)."""
    from pyspark.sql import functions as F
    bad = None
    for check in checks:
        bad = violating(check) if bad is None else bad | violating(check)
    return F.coalesce(bad, F.lit(True))


def split_metrics(values: dict, named: list[tuple[CheckPlan, str]]) -> dict[str, dict]:
    """Observed or aggregated ``values`` per check name: {metric name: value}."""
    return {check.name: {k[len(prefix):]: v for k, v in values.items() if k.startswith(prefix)}
            for check, prefix in named}


def sample_rows(frame, check: CheckPlan, condition=None) -> list[dict]:
    """Up to :data:`SAMPLE` violating rows of ``frame`` (``condition``: the violation; default the check's),
    their identifying columns (``check.key``), ordered by them."""
    keys = [k for k in check.key if k in frame.columns] or list(frame.columns)
    rows = (frame.filter(violating(check) if condition is None else condition)
            .select(*[quoted(k) for k in keys]).orderBy(*[quoted(k).asc_nulls_first() for k in keys])
            .limit(SAMPLE).collect())
    return [{k: plain(v) for k, v in zip(keys, r)} for r in rows]


def _violating_sums(frame, check: CheckPlan) -> dict:
    """Per amount column of ``check``, its SUM over the violating rows of ``frame`` (one aggregation)."""
    from pyspark.sql import functions as F
    sums = [F.sum(quoted(c)).alias(c) for c in check.amount_columns]
    return frame.filter(violating(check)).agg(*sums).collect()[0].asDict() if sums else {}


@judge("rows")
def row_result(check: CheckPlan, metrics: dict, frame=None, quarantined: bool = False) -> dict:
    """A row check's result from its ``metrics`` (``_lf_violations`` and the violating rows' sums), with a
    sample read from ``frame`` when there are violations."""
    violations = int(metrics.get(VIOLATIONS) or 0)
    if violations and frame is not None and any(c not in metrics for c in check.amount_columns):
        metrics = {**metrics, **_violating_sums(frame, check)}  # observed counting only: the impact read here
    impact = {c: plain(metrics[c]) for c in check.amount_columns
              if violations and metrics.get(c) is not None}
    sample = sample_rows(frame, check) if violations and frame is not None else []
    return result(check, violations, impact, sample, violations if quarantined else 0)


# ---------------------------------------------------------------------------------------- set checks
def _temp_view(frame) -> str:
    name = f"__lf_check_{uuid.uuid4().hex}"
    frame.createOrReplaceTempView(name)
    return name


def set_result(spark, check: CheckPlan, frame, rows: Optional[int] = None) -> dict:
    """A set check's result over ``frame`` (the checked rows), by the judge its kind's entry names: one
    aggregation (:func:`~ledgerflow.compiler.checks.sql.set_check_query`); ``row_count`` uses ``rows`` when known."""
    return JUDGES[check_kind(check.kind).judge](spark, check, frame, rows)


@judge("row_count")
def judge_row_count(spark, check: CheckPlan, frame, rows: Optional[int] = None) -> dict:
    """A ``row_count`` check: the rows counted (``rows`` when known), the violations how far outside min..max."""
    n = rows if rows is not None else frame.count()
    low = check.min_rows if check.min_rows is not None else 0
    outside = low - n if n < low else n - check.max_rows if check.max_rows is not None and n > check.max_rows else 0
    return result(check, outside, {}, [{"rows": n}] if outside else [])


@judge("unique")
def judge_unique(spark, check: CheckPlan, frame, rows: Optional[int] = None) -> dict:
    """A ``unique`` check: its duplicated keys (probed first by MIN and MAX, :func:`_violating_groups`), the
    impact the sums of the decimal columns that are not part of the key."""
    found, totals = _judged_groups(spark, check, frame, probe=True)
    return result(check, totals[0], totals[1], [{k: plain(r[k]) for k in check.group_by} for r in found[:SAMPLE]])


@judge("balanced")
def judge_balanced(spark, check: CheckPlan, frame, rows: Optional[int] = None) -> dict:
    """A ``balanced`` check: its groups (or the whole of the rows) whose amount does not sum to zero, each
    named with its imbalance."""
    groups, amount = check.group_by, check.amount
    found, totals = _judged_groups(spark, check, frame, probe=False)
    sample = [{**{k: plain(r[k]) for k in groups}, amount: plain(r[amount])} for r in found[:SAMPLE]]
    if not groups and found:
        sample = [{amount: plain(found[0][amount])}]
    return result(check, totals[0], totals[1], sample)


def _judged_groups(spark, check: CheckPlan, frame, probe: bool) -> tuple[list, tuple[int, dict]]:
    view = _temp_view(frame)
    try:
        return _violating_groups(spark, check, view, probe)
    finally:
        spark.catalog.dropTempView(view)


def _violating_groups(spark, check: CheckPlan, view: str, probe: bool) -> tuple[list, tuple[int, dict]]:
    """(the first violating groups of a set check over ``view``, ordered by key; (violations, impact)).

    One job: the aggregation, its first violating groups by key taken in the same pass (Spark plans ORDER BY ..
    LIMIT as a top-N per task, so no range partitioning, no sort of every group). A ``unique`` check reads
    :func:`~ledgerflow.compiler.checks.sql.unique_probe_query` (MIN, MAX and COUNT in place of SUMs): when no
    key is duplicated, or every duplicated key has two rows, that one aggregation is all; else the SUMs are
    read by the check's own query (``probe``: a unique check's judge asks for the probe first)."""
    if probe:
        found = spark.sql(unique_probe_query(check, view)).limit(COLLECTED + 1).collect()
        if len(found) <= COLLECTED and all(int(r[ROWS]) == 2 for r in found):
            return found, _probe_totals(found, check)
    groups = spark.sql(set_check_query(check, view))
    found = groups.limit(COLLECTED + 1).collect()
    if len(found) > COLLECTED:  # many violating groups: totalled by a second aggregation, the sample the first
        return found[:SAMPLE], _totals(groups, check)
    return found, _sum_rows(found, check)


def _probe_totals(found: list, check: CheckPlan) -> tuple[int, dict]:
    """(violations, impact) from :func:`~ledgerflow.compiler.checks.sql.unique_probe_query`'s groups of two rows."""
    violations, impact = 0, {}
    for r in found:
        violations += int(r[ROWS])
        for c in _impact_columns(check):
            value = probe_sum(r.asDict(), c)
            if value is not None:
                impact[c] = impact.get(c, Decimal(0)) + value
    return violations, {c: plain(v) for c, v in impact.items()}


def _impact_columns(check: CheckPlan) -> list[str]:
    """The columns whose sums over the violating groups are a set check's impact: a balanced check's amount (the
    one set check with an amount), else the decimal columns outside its key."""
    if check.amount is not None:
        return [check.amount]
    return [c for c in check.amount_columns if c not in check.group_by]


def _sum_rows(found: Iterable, check: CheckPlan) -> tuple[int, dict]:
    violations, impact = 0, {}
    for r in found:
        violations += int(r[ROWS])
        for c in _impact_columns(check):
            if r[c] is not None:
                impact[c] = impact.get(c, Decimal(0)) + r[c]
    return violations, {c: plain(v) for c, v in impact.items()}


def _totals(frame, check: CheckPlan) -> tuple[int, dict]:
    from pyspark.sql import functions as F
    columns = _impact_columns(check)
    row = frame.agg(F.sum(quoted(ROWS)).alias(ROWS), *[F.sum(quoted(c)).alias(c) for c in columns]).collect()[0]
    return int(row[ROWS] or 0), {c: plain(row[c]) for c in columns if row[c] is not None}


def judge_frame(spark, checks: list[CheckPlan], frame, rows: Optional[int] = None) -> dict[str, dict]:
    """Every check of ``checks`` (none a reconcile) over the rows of ``frame``: row checks by one aggregation,
    set checks by one query each. name -> result."""
    out = judge_rows(frame, [c for c in checks if c.kind.row_check])
    for check in checks:
        if check.kind.set_check:
            out[check.name] = set_result(spark, check, frame, rows)
    return out


def judge_output(spark, checks: list[CheckPlan], frame) -> tuple[dict[str, dict], object]:
    """The checks of one output over its rows in ``frame`` (``ledgerflow test``: the rows are small and not
    written): its quarantine checks first, then every other check over the rows kept. Returns (name ->
    result, the kept rows)."""
    moved = [c for c in checks if c.kind.row_check and c.action == Action.QUARANTINE]
    results = {}
    if moved:
        results = judge_rows(frame, moved, quarantined=True)
        frame = frame.filter(~any_violation(moved))
    results.update(judge_frame(spark, [c for c in checks if c not in moved], frame))
    return results, frame


# ---------------------------------------------------------------------------------------- the report
SHOWN_FAILURES = 5  # failed checks a report spells out; the rest are counted


def failure_report(intro: str, texts: list[str], rest: str = "") -> str:
    """``intro`` (``run ... failed its checks, so nothing was published``) and the failed checks' ``texts``
    (:func:`describe_failures`): one paragraph for one check; else a paragraph per check, the first
    :data:`SHOWN_FAILURES` of them, then how many more (``rest``: where to read them)."""
    if len(texts) == 1:
        return f"{intro}: {texts[0]}."
    lines = [f"{intro}: {len(texts)} checks failed."] + [f"  {t}." for t in texts[:SHOWN_FAILURES]]
    more = len(texts) - SHOWN_FAILURES
    if more > 0:
        lines.append(f"  and {more} more failed check{'s' if more != 1 else ''}" + (f" ({rest})" if rest else "") + ".")
    return "\n".join(lines)


def describe_failures(results: list[dict], checks: list[CheckPlan]) -> list[str]:
    """The failed checks of ``results``, a text each: the check, what it is on, its violating rows, their
    amount impact and up to 5 identifying keys."""
    plans = {c.name: c for c in checks}
    parts = []
    for r in results:
        if r["status"] != "failed":
            continue
        plan = plans.get(r["name"])
        where = "the input" if r["on"] == "input" else f"output {r['on']}"
        text = f"check '{r['name']}' ({r['kind']} on {where}) found {_violations(r, plan)}"
        if r["amount_impact"]:
            text += ", amount impact " + ", ".join(f"{c} {v}" for c, v in r["amount_impact"].items())
        if r["sample"] and r["kind"] != "row_count":
            text += "; first " + "; ".join("(" + ", ".join(f"{k}={v}" for k, v in s.items()) + ")" for s in r["sample"])
        parts.append(text)
    return parts


def _violations(r: dict, plan: Optional[CheckPlan]) -> str:
    n = r["violations"]
    if r["kind"] == "row_count" and plan is not None:
        rows = r["sample"][0]["rows"] if r["sample"] else "?"
        bounds = f"{plan.min_rows if plan.min_rows is not None else 0}..{plan.max_rows if plan.max_rows is not None else ''}"
        return f"{rows} rows, outside {bounds}"
    if r["kind"] == "balanced":
        where = "unbalanced groups" if plan is not None and plan.group_by else "rows that do not balance"
        return f"{n} violating row{'s' if n != 1 else ''} ({where})"
    return f"{n} violating row{'s' if n != 1 else ''}"

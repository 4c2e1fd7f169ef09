"""Periods (``2026-01``, ``2026-Q1``, ``2026``, ``2026-01-15``) and the one place that builds period filters."""
from __future__ import annotations

import calendar
import datetime
import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from .errors import LedgerflowError

if TYPE_CHECKING:
    from sqlglot import exp

PARAMETERS = ("period_identifier", "period_start", "period_end", "run_started_at")
LEVEL_ORDER = {"day": 0, "month": 1, "quarter": 2, "year": 3}


class PeriodError(LedgerflowError):
    """A period identifier that is not one of the accepted forms."""

    exit_code = 2


@dataclass(frozen=True)
class Period:
    """A run period: identifier as typed, level, inclusive start and end dates."""

    identifier: str
    level: str
    start: datetime.date
    end: datetime.date

    def sub_periods(self, level: str) -> list["Period"]:
        """The periods of ``level`` that cover this one (a quarter -> its three months)."""
        if level == "any" or LEVEL_ORDER[level] >= LEVEL_ORDER[self.level]:
            return [self]
        out, day = [], self.start
        while day <= self.end:
            if level == "day":
                p = parse_period(day.isoformat())
            elif level == "month":
                p = parse_period(f"{day.year:04d}-{day.month:02d}")
            else:
                p = parse_period(f"{day.year:04d}-Q{(day.month - 1) // 3 + 1}")
            out.append(p)
            day = p.end + datetime.timedelta(days=1)
        return out


def parse_period(text: str) -> Period:
    """Parse a period identifier; raises :class:`PeriodError` for anything else."""
    t = str(text).strip()
    try:
        if re.fullmatch(r"[0-9]{4}", t):
            y = int(t)
            return Period(t, "year", datetime.date(y, 1, 1), datetime.date(y, 12, 31))
        m = re.fullmatch(r"([0-9]{4})-Q([1-4])", t)
        if m:
            y, q = int(m.group(1)), int(m.group(2))
            start = datetime.date(y, 3 * q - 2, 1)
            end_month = 3 * q
            return Period(t, "quarter", start, datetime.date(y, end_month, calendar.monthrange(y, end_month)[1]))
        m = re.fullmatch(r"([0-9]{4})-([0-9]{2})", t)
        if m:
            y, mo = int(m.group(1)), int(m.group(2))
            return Period(t, "month", datetime.date(y, mo, 1), datetime.date(y, mo, calendar.monthrange(y, mo)[1]))
        if re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", t):
            d = datetime.date.fromisoformat(t)
            return Period(t, "day", d, d)
    except ValueError:
        pass
    raise PeriodError(f"'{text}' is not a period: use YYYY-MM (2026-01), YYYY-Qn (2026-Q1), YYYY (2026) "
                      "or YYYY-MM-DD (2026-01-15).")


MAX_PERIODS = 1000  # periods one invocation may name (a range of days over three years is already 1,096)
_LEVEL_NAME = {"day": "a day", "month": "a month", "quarter": "a quarter", "year": "a year"}


def parse_periods(text: str) -> list[Period]:
    """The periods ``--period`` names: one period (:func:`parse_period`), an inclusive range of one level
    (``2026-01..2026-12``, ``2025-Q3..2026-Q2``, ``2024..2026``, ``2026-01-30..2026-02-02``) or a
    comma-separated list whose items are periods or ranges (``2026-01,2026-03``), in ascending order (start
    date, then end date: ``2026-01`` before ``2026-Q1``). Raises :class:`PeriodError` naming the problem: a
    range across levels, a reversed range, more than :data:`MAX_PERIODS` periods, a period named twice, an
    empty list item."""
    t = str(text).strip()
    if "," not in t:
        periods = _parse_item(t, text)
    else:
        periods = []
        for i, item in enumerate(t.split(","), 1):
            if not item.strip():
                raise PeriodError(f"--period '{text}': item {i} of the list is empty; separate periods by single "
                                  "commas, e.g. 2026-01,2026-03.")
            periods += _parse_item(item.strip(), text)
            _check_count(len(periods), text)
        seen: set[str] = set()
        for p in periods:
            if p.identifier in seen:
                raise PeriodError(f"--period '{text}' names {p.identifier} twice; name each period once.")
            seen.add(p.identifier)
    return sorted(periods, key=lambda p: (p.start, p.end))


def _parse_item(item: str, text: str) -> list[Period]:
    """One period, or the periods of one ``FIRST..LAST`` range (``text``: the whole option, for messages)."""
    if ".." not in item:
        return [parse_period(item)]
    first_text, _, last_text = item.partition("..")
    if not first_text.strip() or not last_text.strip() or ".." in last_text:
        raise PeriodError(f"--period '{text}': '{item}' is not a range; write FIRST..LAST with two periods of one "
                          "level, e.g. 2026-01..2026-12.")
    first, last = parse_period(first_text), parse_period(last_text)
    if first.level != last.level:
        raise PeriodError(f"--period '{text}' is a range across levels: {first.identifier} is "
                          f"{_LEVEL_NAME[first.level]}, {last.identifier} {_LEVEL_NAME[last.level]}; both ends of a "
                          "range must be of one level (e.g. 2026-01..2026-09, or 2026-Q1..2026-Q3).")
    if last.start < first.start:
        raise PeriodError(f"--period '{text}' is reversed: {last.identifier} comes before {first.identifier}; write "
                          f"{last.identifier}..{first.identifier}.")
    out = [first]
    while out[-1].end < last.end:
        _check_count(len(out) + 1, text)
        out.append(_next(out[-1]))
    return out


def _next(p: Period) -> Period:
    """The period of ``p``'s level that follows it."""
    day = p.end + datetime.timedelta(days=1)
    if p.level == "day":
        return parse_period(day.isoformat())
    if p.level == "month":
        return parse_period(f"{day.year:04d}-{day.month:02d}")
    if p.level == "quarter":
        return parse_period(f"{day.year:04d}-Q{(day.month - 1) // 3 + 1}")
    return parse_period(f"{day.year:04d}")


def _check_count(n: int, text: str) -> None:
    if n > MAX_PERIODS:
        raise PeriodError(f"--period '{text}' names more than {MAX_PERIODS:,} periods; one invocation runs at most "
                          f"{MAX_PERIODS:,}: split it into several (e.g. one range per year).")


# A `period` row belongs to the run when its _period is the run's identifier, or a finer period
# inside the run (docs/workspace.md, datasets: a `2026` run reads 2026, 2026-Q1..Q4, 2026-01..12 and the days of
# 2026; a `2026-Q1` run reads 2026-Q1, 2026-01..03 and their days; a `2026-01` run 2026-01 and its
# days; a day run only that day). Identifiers sort so that the finer periods of a run form one range
# of strings: [Y-, Y.) for a year, [M-, M.) for a month ('.' follows '-'), [first month, last
# month.) for a quarter, nothing but junk for a day. The condition is two conjuncts:
# - `_period = :period_identifier OR (_period >= lo AND _period < hi)` with lo/hi computed from the
#   parameters only, so Spark folds them to literals and pushes the conjunct into the scan
#   (Parquet/ORC `PushedFilters: [Or(EqualTo, And(GreaterThanOrEqual, LessThan))]`, a partition
#   filter on `_period=` folders): only the run's row groups and partitions are read;
# - an exact residual that keeps only well-formed identifiers of real dates, so that
#   junk such as `2026-1-5`, `2026-02-30`, `2026-Q5` or `2026-01x` never counts (Spark evaluates it
#   on the rows the scan returns; it cannot be pushed and need not be).
_QUARTER_RUN = ":period_identifier LIKE '%Q%'"
_PERIOD_LO = (f"CASE WHEN {_QUARTER_RUN} THEN DATE_FORMAT(:period_start, 'yyyy-MM') "
              "ELSE CONCAT(:period_identifier, '-') END")
_PERIOD_HI = (f"CASE WHEN {_QUARTER_RUN} THEN CONCAT(DATE_FORMAT(:period_end, 'yyyy-MM'), '.') "
              "ELSE CONCAT(:period_identifier, '.') END")
_PERIOD_WELL_FORMED = ("LENGTH({c}) IN (4, 7, 10) AND {c} RLIKE '^[0-9]{{4}}(-(Q[1-4]|[0-9]{{2}}(-[0-9]{{2}})?))?$' "
                       "AND (SUBSTR({c}, 6, 1) = 'Q' OR TRY_TO_DATE(RPAD({c}, 10, '-01')) IS NOT NULL)")
# The run's own identifier is well formed, so the residual is skipped for rows that carry it (a
# month run's rows, mostly): `_period <=> :period_identifier OR <residual>` spares them the regular
# expression and the date parse (issue 9: ~0.15 s per million rows). `<=>`, not `=`: Spark's
# optimizer would factor `(a OR b) AND (a OR c)` into `a OR (b AND c)`, which it cannot push.
_PERIOD_FILTER = ("({c} = :period_identifier OR ({c} >= " + _PERIOD_LO + " AND {c} < " + _PERIOD_HI + ")) "
                  "AND ({c} <=> :period_identifier OR (" + _PERIOD_WELL_FORMED + "))")
_ASOF_FILTER = "{f} <= :period_start AND ({t} IS NULL OR {t} > :period_start)"


def period_filter(temporal_mode: str, qualifier: Optional[str] = None) -> Optional[exp.Expression]:
    """The WHERE condition selecting a run's rows of a table of ``temporal_mode`` (None for snapshot): a tree of
    the caller's own, copied from the one parsed first (a copy costs a third of a parse; a workspace of 1,000
    projects asks for thousands)."""
    parsed = _parsed_filter(temporal_mode, qualifier)
    return parsed.copy() if parsed is not None else None


@functools.lru_cache(maxsize=64)
def _parsed_filter(temporal_mode: str, qualifier: Optional[str]) -> Optional[exp.Expression]:
    import sqlglot  # here: a command that only reads periods (promote, status) never loads the SQL parser
    from sqlglot import exp

    def col(name: str) -> str:
        return exp.column(name, table=qualifier, quoted=True).sql("spark")

    if temporal_mode == "period":
        parsed = sqlglot.parse_one(_PERIOD_FILTER.format(c=col("_period")), read="spark")
    elif temporal_mode == "bitemporal":
        parsed = sqlglot.parse_one(_ASOF_FILTER.format(f=col("_period_from"), t=col("_period_to")), read="spark")
    else:
        return None
    for node in parsed.walk():  # the parser's positions in a text no user wrote: half the cost of each copy
        if node._meta and set(node._meta) <= _POSITIONS:
            node._meta = None
    return parsed


_POSITIONS = {"line", "col", "start", "end"}

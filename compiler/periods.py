"""Periods (``2026-01``, ``2026-Q1``, ``2026``, ``2026-01-15``) and the one place that builds period filters."""
from __future__ import annotations

import calendar
import datetime
import re
from dataclasses import dataclass
from typing import Optional

import sqlglot
from sqlglot import exp

from .errors import LedgerflowError

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
        if re.fullmatch(r"\d{4}", t):
            y = int(t)
            return Period(t, "year", datetime.date(y, 1, 1), datetime.date(y, 12, 31))
        m = re.fullmatch(r"(\d{4})-Q([1-4])", t)
        if m:
            y, q = int(m.group(1)), int(m.group(2))
            start = datetime.date(y, 3 * q - 2, 1)
            end_month = 3 * q
            return Period(t, "quarter", start, datetime.date(y, end_month, calendar.monthrange(y, end_month)[1]))
        m = re.fullmatch(r"(\d{4})-(\d{2})", t)
        if m:
            y, mo = int(m.group(1)), int(m.group(2))
            return Period(t, "month", datetime.date(y, mo, 1), datetime.date(y, mo, calendar.monthrange(y, mo)[1]))
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", t):
            d = datetime.date.fromisoformat(t)
            return Period(t, "day", d, d)
    except ValueError:
        pass
    raise PeriodError(f"'{text}' is not a period: use YYYY-MM (2026-01), YYYY-Qn (2026-Q1), YYYY (2026) "
                      "or YYYY-MM-DD (2026-01-15).")


# A `period` row belongs to the run when its _period is the run's identifier, or a finer month/day
# period inside the run (a quarter run reading monthly files whose rows carry "2026-01").
_PERIOD_FILTER = (
    "{c} = :period_identifier OR (LENGTH({c}) >= 7 AND (LENGTH({c}) > LENGTH(:period_identifier) "
    "OR :period_identifier LIKE '%Q%') AND TRY_TO_DATE(RPAD({c}, 10, '-01')) BETWEEN :period_start AND :period_end)"
)
_ASOF_FILTER = "{f} <= :period_start AND ({t} IS NULL OR {t} > :period_start)"


def period_filter(temporal_mode: str, qualifier: Optional[str] = None) -> Optional[exp.Expression]:
    """The WHERE condition selecting a run's rows of a table of ``temporal_mode`` (None for snapshot)."""
    def col(name: str) -> str:
        return exp.column(name, table=qualifier, quoted=True).sql("spark")

    if temporal_mode == "period":
        return sqlglot.parse_one(_PERIOD_FILTER.format(c=col("_period")), read="spark")
    if temporal_mode == "bitemporal":
        return sqlglot.parse_one(_ASOF_FILTER.format(f=col("_period_from"), t=col("_period_to")), read="spark")
    return None

"""A column's type from the values a sample of it holds as text (CSV fields, JSON strings and numbers,
partition folder values): :class:`TextColumn` sees every value and names the narrowest type of
docs/workspace.md's column types that reads each of them exactly.

- an empty field is NULL (as the CSV loader reads it) and says nothing about the type;
- ``true``/``false`` (any case): boolean;
- ASCII digits with an optional sign: integer when every value fits 32 bits, else bigint, else a decimal;
  digits of other scripts (Arabic-Indic, full-width) are text, as Spark reads them: a string;
  a value with a leading zero (``007``) is a code, so the column stays a string;
- digits with a decimal point: ``decimal(p,s)``, ``s`` the most digits seen after the point and ``p``
  the most seen before it plus ``s``, raised to at least 18 (:data:`MIN_PRECISION`) so that next month's
  larger amounts still fit (integers mixed in count as digits before the point);
- ``YYYY-MM-DD``: date; ``YYYY-MM-DD hh:mm[:ss[.f]]`` (or with ``T``, a ``Z`` or an offset): timestamp;
  dates mixed with timestamps: timestamp;
- anything else, or a mix the rules above do not join: string.
"""
from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Optional

MIN_PRECISION = 18
MAX_PRECISION = 38
_INT32 = 2 ** 31
_INT64 = 2 ** 63

# re.ASCII: \d is 0-9 only. Spark reads no other digits as a number or a date (Arabic-Indic or
# full-width digits would be typed integer here and refused by the run), so such text is a string.
_INTEGER = re.compile(r"^[+-]?(\d+)$", re.ASCII)
_DECIMAL = re.compile(r"^[+-]?(\d*)\.(\d*)$", re.ASCII)
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$", re.ASCII)
_TIMESTAMP = re.compile(r"^(\d{4}-\d{2}-\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$",
                        re.ASCII)


def _is_date(text: str) -> bool:
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _is_timestamp(text: str) -> bool:
    m = _TIMESTAMP.match(text)
    if not m or not _is_date(m.group(1)):
        return False
    return int(m.group(2)) < 24 and int(m.group(3)) < 60 and int(m.group(4) or 0) < 60


def _significant(digits: str) -> int:
    """Digits before the point that count toward a decimal's precision (leading zeros do not)."""
    return len(digits.lstrip("0"))


@dataclass
class TextColumn:
    """What the sample of one column held: the kinds of value seen and the digits of its numbers."""

    kinds: set = field(default_factory=set)  # boolean, integer, decimal, date, timestamp, string
    int_digits: int = 0  # most digits seen before the point (integers included)
    scale: int = 0  # most digits seen after the point
    widest: int = 0  # the largest integer's magnitude
    values: int = 0  # values seen that are not NULL

    def add_text(self, text: Optional[str]) -> None:
        """Take one value as written (a CSV field, a JSON string, a partition folder's value)."""
        if text is None or text == "":
            return
        self.values += 1
        low = text.lower()
        if low in ("true", "false"):
            self.kinds.add("boolean")
            return
        m = _INTEGER.match(text)
        if m:
            if len(m.group(1)) > 1 and m.group(1).startswith("0"):
                self.kinds.add("string")  # 007: a code, not a number
                return
            self.kinds.add("integer")
            self.int_digits = max(self.int_digits, _significant(m.group(1)))
            self.widest = max(self.widest, abs(int(text)))
            return
        m = _DECIMAL.match(text)
        if m and (m.group(1) or m.group(2)):
            self.kinds.add("decimal")
            self.int_digits = max(self.int_digits, _significant(m.group(1)))
            self.scale = max(self.scale, len(m.group(2)))
            return
        if _DATE.match(text) and _is_date(text):
            self.kinds.add("date")
        elif _is_timestamp(text):
            self.kinds.add("timestamp")
        else:
            self.kinds.add("string")

    def add_number(self, value) -> None:
        """Take one JSON number (an int, or a :class:`~decimal.Decimal` keeping the digits it was written with)."""
        if isinstance(value, bool):
            self.values += 1
            self.kinds.add("boolean")
        elif isinstance(value, int):
            self.add_text(str(value))
        elif isinstance(value, Decimal):
            sign, digits, exponent = value.as_tuple()
            if not isinstance(exponent, int):
                self.values += 1
                self.kinds.add("string")  # NaN, Infinity: no decimal holds them
            elif exponent >= 0:
                self.add_text(str(int(value)))
            else:
                self.values += 1
                self.kinds.add("decimal")
                self.int_digits = max(self.int_digits, max(len(digits) + exponent, 0))
                self.scale = max(self.scale, -exponent)

    def result(self) -> tuple[str, str]:
        """(the declared type, a note on what the sample showed: "" when nothing is worth saying)."""
        kinds = self.kinds
        if not kinds:
            return "string", "no value in the sample: typed string, check it"
        if kinds <= {"integer", "decimal"}:
            if kinds == {"integer"}:
                if self.widest < _INT32:
                    return "integer", ""
                if self.widest < _INT64:
                    return "bigint", ""
            precision = max(MIN_PRECISION, self.int_digits + self.scale)
            if precision > MAX_PRECISION:
                return "string", f"numbers of {self.int_digits + self.scale} digits: more than a decimal holds"
            seen = f"sample: up to {self.int_digits} digit{'s' if self.int_digits != 1 else ''} before the point, " \
                   f"{self.scale} after"
            return f"decimal({precision},{self.scale})", seen
        if kinds <= {"date", "timestamp"}:
            return ("date", "") if kinds == {"date"} else ("timestamp", "")
        if len(kinds) == 1:
            return next(iter(kinds)), ""
        return "string", ""

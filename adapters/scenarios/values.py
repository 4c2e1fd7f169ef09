"""Exact conversion of the values a test file writes into Python values of a Spark column type.

Given rows are converted strictly (a value that does not fit its declared column is an error in the
test, like a value that does not fit when a real file is read); expected values only need to parse,
since a value the column cannot hold is simply not equal to what the run produced. Numbers are
never routed through binary floating point: decimals come from their text; an unquoted YAML number
that a double cannot carry exactly as written (more than 15 significant digits) must be quoted.
"""
from __future__ import annotations

import datetime
import decimal
import re
from decimal import Decimal, InvalidOperation
from typing import Any

_DECIMAL = re.compile(r"^decimal\((\d+),(\d+)\)$")
_INTEGRAL = {"tinyint": 8, "smallint": 16, "int": 32, "integer": 32, "bigint": 64}
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TIMESTAMP = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2})?)(?:\.(\d+))?)?(Z|[+-]\d{2}:?\d{2})?$")


class ConversionError(Exception):
    """A value that does not convert; ``hint`` says how to write it."""

    def __init__(self, message: str, hint: str = ""):
        super().__init__(message)
        self.hint = hint


def _number_text(value: Any) -> str:
    """The digits of a YAML number or string, refusing floats a double did not keep exactly."""
    if isinstance(value, bool):
        raise ConversionError(f"{value} is a boolean, not a number")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        if value != value or value in (float("inf"), float("-inf")):
            raise ConversionError(f"{text} is not a finite number")
        digits = re.sub(r"[^0-9]", "", text.split("e")[0].split("E")[0]).lstrip("0")
        if len(digits) > 15:
            raise ConversionError(f"the unquoted number {text} has more digits than YAML keeps exactly",
                                  "quote it, e.g. \"12345678901234567.89\"")
        return text
    if isinstance(value, str):
        return value.strip()
    raise ConversionError(f"'{value}' is not a number")


def to_decimal(value: Any) -> Decimal:
    """A Decimal from a YAML number or string (exact as written)."""
    text = _number_text(value)
    try:
        d = Decimal(text)
    except InvalidOperation:
        raise ConversionError(f"'{text}' is not a number") from None
    if not d.is_finite():
        raise ConversionError(f"'{text}' is not a finite number")
    return d


def _decimal(value: Any, precision: int, scale: int, strict: bool) -> Decimal:
    d = to_decimal(value)
    if not strict:
        return d
    quantum = Decimal(1).scaleb(-scale)
    fitted = d.quantize(quantum) if d.adjusted() < 60 else d
    if fitted != d:
        raise ConversionError(f"'{value}' has more than {scale} digit{'s' if scale != 1 else ''} after the point",
                              "write the value the column holds")
    if d != 0 and d.adjusted() + 1 > precision - scale:
        raise ConversionError(f"'{value}' has more than {precision - scale} digits before the point")
    return fitted


def _integer(value: Any, bits: int, type_name: str) -> int:
    if isinstance(value, bool):
        raise ConversionError(f"{value} is a boolean, not an integer")
    if isinstance(value, int):
        n = value
    else:
        text = _number_text(value)
        if not re.fullmatch(r"[+-]?\d+", text):
            raise ConversionError(f"'{text}' is not an integer ({type_name})")
        n = int(text)
    if not -(1 << (bits - 1)) <= n < (1 << (bits - 1)):
        raise ConversionError(f"{n} does not fit in {type_name}")
    return n


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ConversionError(f"'{value}' is not a boolean", "write true or false")


def _date(value: Any) -> datetime.date:
    if isinstance(value, datetime.datetime):
        if value.time() != datetime.time(0):
            raise ConversionError(f"'{value}' has a time of day; the column is a date")
        return value.date()
    if isinstance(value, datetime.date):
        return value
    if isinstance(value, str) and _DATE.match(value.strip()):
        try:
            return datetime.date.fromisoformat(value.strip())
        except ValueError as exc:
            raise ConversionError(f"'{value}' is not a date: {exc}") from None
    raise ConversionError(f"'{value}' is not a date", "write YYYY-MM-DD")


def _timestamp(value: Any) -> datetime.datetime:
    """A naive datetime, the UTC wall clock (the session time zone of ledgerflow's Spark is UTC)."""
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return value
    if isinstance(value, datetime.date):
        return datetime.datetime(value.year, value.month, value.day)
    text = value.strip() if isinstance(value, str) else None
    m = _TIMESTAMP.match(text) if text else None
    if not m:
        raise ConversionError(f"'{value}' is not a timestamp", "write YYYY-MM-DDTHH:MM:SS[.ffffff] (UTC)")
    fraction = m.group(3) or ""
    if len(fraction.rstrip("0")) > 6:
        raise ConversionError(f"'{value}' has digits beyond microseconds")
    base = m.group(1) + ("T" + m.group(2) if m.group(2) else "") + ("." + fraction[:6].ljust(6, "0") if fraction else "")
    try:
        parsed = datetime.datetime.fromisoformat(base)
    except ValueError as exc:
        raise ConversionError(f"'{value}' is not a timestamp: {exc}") from None
    zone = m.group(4)
    if zone and zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        hh, mm = int(zone[1:3]), int(zone[-2:])
        parsed -= sign * datetime.timedelta(hours=hh, minutes=mm)
    return parsed


def _string(value: Any) -> str:
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bool) or isinstance(value, float):
        raise ConversionError(f"the unquoted {value!r} is read by YAML as a {type(value).__name__}, not a string",
                              "quote it")
    if isinstance(value, (int, datetime.date)):
        return value.isoformat() if isinstance(value, datetime.date) else str(value)
    raise ConversionError(f"'{value}' is not a string")


def convert(value: Any, spark_type: str, strict: bool = True) -> Any:
    """``value`` (a YAML scalar) as the Python value of a column of ``spark_type`` (None stays None).

    ``strict`` (given rows): a decimal must fit the column's precision and scale exactly."""
    if value is None:
        return None
    if isinstance(value, (dict, list)):
        raise ConversionError("a value must be a scalar, not a mapping or list")
    t = spark_type.lower()
    m = _DECIMAL.match(t)
    if m:
        with decimal.localcontext() as ctx:  # 38 digits and more: beyond the default context's 28
            ctx.prec = 100
            return _decimal(value, int(m.group(1)), int(m.group(2)), strict)
    if t in _INTEGRAL:
        return _integer(value, _INTEGRAL[t], t)
    if t in ("double", "float"):
        return float(to_decimal(value))
    if t == "boolean":
        return _boolean(value)
    if t == "date":
        return _date(value)
    if t in ("timestamp", "timestamp_ntz"):
        return _timestamp(value)
    if t == "string" or t.startswith(("varchar", "char")):
        return _string(value)
    raise ConversionError(f"columns of type {spark_type} cannot be compared by ledgerflow test")


def show(value: Any) -> str:
    """A value as a failure message shows it (decimals with their scale, NULL, ISO dates)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return str(value)

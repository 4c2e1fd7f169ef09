"""JSON text of a tree of plain values, written by orjson where it writes the values exactly.

A promotion writes thousands of records and a journal listing thousands of partitions; the standard library's
``json`` takes three times orjson's time for them. The two spell the same values differently (``json`` puts a
space after ``:`` and ``,`` and escapes every character beyond ASCII; orjson writes neither), and read back the
same, with two exceptions the callers rule out or this module catches:

- a float ``NaN`` or ``Infinity``, which orjson writes as ``null``: the caller passes only values it knows hold
  none (a record parsed from a text without them, given only strings since; a promotion's journal without a
  restatement, which holds no float);
- anything orjson refuses (an integer beyond 64 bits, a string that is no valid UTF-8, a key that is no string,
  a value that is no JSON value): written by ``json`` instead (``slow``).
"""
from __future__ import annotations

from typing import Any, Callable


def plain_text(value: Any, slow: Callable[[Any], str]) -> str:
    """orjson's text of ``value`` (it holds no float ``NaN`` or ``Infinity``: see the module docstring), or
    ``slow(value)`` when orjson would not write it exactly."""
    import orjson  # loaded by the commands that write many records or long journals (a promotion)
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # orjson.JSONEncodeError is one
        return slow(value)

"""A DataFrame made on first use.

A fused range hands each period's run the period's rows as a query over the fused rows (a filter on the
period, the period columns dropped). Making that query is two calls into Spark's analyser on the whole fused
plan (~0.1 s a period); a period whose rows were already written for the range (``fused_writes``) and which
has no checks never reads it, so it is made only when something asks for it.
"""
from __future__ import annotations

from typing import Any, Callable


class LazyFrame:
    """Stands for the DataFrame ``make()`` returns, made on the first attribute read and kept."""

    __slots__ = ("_make", "_frame")

    def __init__(self, make: Callable[[], Any]):
        self._make = make
        self._frame = None

    def frame(self):
        """The DataFrame itself."""
        if self._frame is None:
            self._frame = self._make()
        return self._frame

    def __getattr__(self, name: str):
        return getattr(self.frame(), name)

    def __getitem__(self, item):
        return self.frame()[item]

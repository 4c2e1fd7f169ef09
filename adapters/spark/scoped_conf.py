"""Session settings that hold for one piece of work and are restored after it."""
from __future__ import annotations

import contextlib
from typing import Iterator, Mapping


@contextlib.contextmanager
def session_settings(spark, settings: Mapping[str, str]) -> Iterator[None]:
    """Set ``settings`` on ``spark``'s session conf for the ``with`` block, then put back each previous value
    (unset when there was none), also when the block raises. Works on classic and Connect sessions."""
    before = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)

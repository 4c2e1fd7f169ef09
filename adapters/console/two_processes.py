"""One command's work on both cores: a part in a forked process while this one does the rest (``diff``'s two
sides, the first build of a large workspace's compiled scripts). The forked process inherits what this one
holds (nothing is pickled on the way there); only its result comes back pickled."""
from __future__ import annotations

import multiprocessing
import os
from typing import Callable, TypeVar

A = TypeVar("A")
B = TypeVar("B")

_CHILD: dict = {}  # the forked process's part, inherited


def can_fork() -> bool:
    """Whether a second process can share the work: more than one core, and ``fork`` on this system."""
    return (os.cpu_count() or 1) >= 2 and "fork" in multiprocessing.get_all_start_methods()


def _run_child():
    return _CHILD["part"]()


def in_two_processes(forked: Callable[[], A], here: Callable[[], B]) -> tuple[A, B]:
    """(``forked()`` run in a forked process, ``here()`` run meanwhile in this one). ``forked``'s result must
    pickle; an exception in it is raised here."""
    _CHILD["part"] = forked
    try:
        with multiprocessing.get_context("fork").Pool(1) as pool:
            pending = pool.apply_async(_run_child)
            mine = here()
            return pending.get(), mine
    finally:
        _CHILD.clear()

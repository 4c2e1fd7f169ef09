"""compile.gc_paused: the collector is off inside, back on after; ``until_exit`` freezes instead of collecting."""
from __future__ import annotations

import gc

from ledgerflow.compiler.compile import gc_paused


def test_paused_inside_and_enabled_after():
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():  # a nested pause leaves it to the outer one
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_until_exit_freezes_and_the_next_pause_gives_back():
    try:
        with gc_paused(until_exit=True):
            made = [[] for _ in range(1000)]
        assert gc.isenabled()
        frozen = gc.get_freeze_count()
        assert frozen >= len(made)
        del made
        with gc_paused(until_exit=True):
            assert gc.get_freeze_count() == 0  # the last command's objects are collectable again
    finally:
        gc.unfreeze()
    assert gc.isenabled()

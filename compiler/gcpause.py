"""Pause Python's cyclic garbage collector while a project compiles."""
from __future__ import annotations

import contextlib
import gc


@contextlib.contextmanager
def gc_paused(until_exit: bool = False):
    """Pause Python's cyclic garbage collector while a project compiles (or ``diff`` compiles two
    sides): the plan keeps hundreds of thousands of sqlglot nodes alive, which every generation-2
    pass walks again (a 500-operation compile spent about 40% of its time there); compiling creates
    little cyclic garbage, and what it does is collected after. Nested pauses leave it to the outer one.

    ``until_exit`` is for a command whose process ends when the pause does (``ledgerflow compile``):
    the objects made meanwhile are frozen (``gc.freeze``) instead of collected, so neither the
    collection that follows the pause (every object made during it is in the youngest generation)
    nor the interpreter's shutdown walks them: about 0.2 s of a 500-operation compile's process.
    When the process goes on after all (tests drive the CLI in process), the next such pause gives
    what the last one froze back to the collector, so at most one command's objects stay frozen.
    """
    if not gc.isenabled():
        yield
        return
    if until_exit:
        gc.unfreeze()
    gc.disable()
    try:
        yield
    finally:
        if until_exit:
            gc.freeze()
        gc.enable()

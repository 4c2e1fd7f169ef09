"""Pause Python's cyclic garbage collector while a project compiles."""
from __future__ import annotations

import contextlib
import gc


_one_command = False  # this process ends when its command does (the ``ledgerflow`` entry point said so)


def one_command_process() -> None:
    """Say that this process ends when its one command does (``ledgerflow`` as a program, not the CLI driven in
    process by tests or tools): what a loaded workspace holds may then be frozen until exit
    (:func:`loading_paused`)."""
    global _one_command
    _one_command = True


@contextlib.contextmanager
def loading_paused():
    """Pause the collector while a workspace loads and binds. Loading makes mostly objects that live as long as
    the workspace, and each full collection meanwhile walks all made so far again: at 1,000 projects half of
    ``validate``'s time. In a one-command process what the load made is then frozen (``gc.freeze``), so no
    later collection walks it either; otherwise it is left to the collector as usual."""
    with gc_paused(until_exit=_one_command):
        yield


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

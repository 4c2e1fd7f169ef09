"""Hold Ctrl-C and SIGTERM while a commit or a rollback must not be cut short."""
from __future__ import annotations

import contextlib
import signal
import threading
from typing import Optional


@contextlib.contextmanager
def signals_deferred(reraise_sigint: bool = True, into: Optional[list] = None):
    """Run the block with SIGINT and SIGTERM deferred: one that arrives meanwhile is acted on when the
    block ends (Ctrl-C raises KeyboardInterrupt there), except SIGINT with ``reraise_sigint=False``:
    the block yields the list of signals that arrived (``into``, when given), and the caller says what
    a Ctrl-C changed. Python runs signal handlers in the main thread only, so elsewhere (a runner in a
    worker thread) the block simply runs."""
    arrived: list[int] = into if into is not None else []
    if threading.current_thread() is not threading.main_thread():
        yield arrived
        return
    previous = {sig: signal.signal(sig, lambda signum, _frame: arrived.append(signum))
                for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield arrived
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        pending = [sig for sig in arrived if reraise_sigint or sig != signal.SIGINT]
        if pending:
            signal.raise_signal(pending[0])  # now handled as it would have been

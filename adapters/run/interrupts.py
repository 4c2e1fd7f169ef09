"""Ctrl-C during a run: Spark's jobs are cancelled from a thread of their own, never from a signal handler.

PySpark's own SIGINT handler (and the one ledgerflow installed before) called
``SparkContext.cancelAllJobs`` from inside the handler. Python runs a handler in the main thread,
which during a run is nearly always blocked in a py4j call waiting for Spark's answer on that
thread's one connection: the nested call broke the connection (py4j printed "reentrant call"
tracebacks) and the run's error became py4j's.

Here the handler (:func:`watching`) only records the request and starts a thread that cancels the
jobs over its own connection. It raises ``KeyboardInterrupt`` itself only when the main thread is
not inside py4j. Inside py4j, the pending call returns once its jobs are cancelled (or finish); the
runner then raises at its next checkpoint (:func:`check`) or takes the failure of a cancelled job
for the interrupt (:func:`requested`). A py4j call that is no Spark job (a metastore call, a Hadoop
rename, a wedged JVM) is not ended by cancelling jobs: a second Ctrl-C raises ``KeyboardInterrupt``
at once, inside py4j or not (what follows, a rollback, is filesystem work and needs no py4j).

PySpark installs its own handler when a SparkContext is created on the main thread: a session
created during a run (the Python API's default session) is followed by :func:`reclaim`.
"""
from __future__ import annotations

import contextlib
import signal
import threading
from typing import Callable, Optional


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C before its commit point; ``str()`` says what became of it (recorded
    failed, outputs rolled back). The CLI prints it as one line and exits with ``exit_code``. A
    ``KeyboardInterrupt`` still, so that a caller of the Python API stops as it would have."""

    exit_code = 3


_requested = threading.Event()
_cancel: list[Optional[Callable[[], None]]] = [None]  # how to cancel the running jobs (set by the runner)
_cancelling = threading.Lock()
_watching = [0]  # how many watching() blocks the main thread is in
_holding = [False]  # hold() was called in the current watching() block


def requested() -> bool:
    """Whether Ctrl-C was pressed since the current run began."""
    return _requested.is_set()


def check() -> None:
    """Raise ``KeyboardInterrupt`` when Ctrl-C was pressed during a call the handler could not interrupt."""
    if _requested.is_set():
        raise KeyboardInterrupt


def set_cancel(cancel: Optional[Callable[[], None]]) -> None:
    """How Ctrl-C cancels the session's running jobs (e.g. ``SparkContext.cancelAllJobs``)."""
    _cancel[0] = cancel


def session_cancel(session) -> Optional[Callable[[], None]]:
    """The call that cancels every running job of ``session`` (classic or Spark Connect), if it has one."""
    if type(session).__module__.startswith("pyspark.sql.connect"):
        return getattr(session, "interruptAll", None)
    context = getattr(session, "sparkContext", None)
    return getattr(context, "cancelAllJobs", None)


def _in_py4j(frame) -> bool:
    """Whether the interrupted main thread is inside a py4j call (a frame of py4j on its stack)."""
    while frame is not None:
        if str(frame.f_globals.get("__name__", "")).startswith("py4j"):
            return True
        frame = frame.f_back
    return False


def _cancel_in_background() -> None:
    cancel = _cancel[0]
    if cancel is None or not _cancelling.acquire(blocking=False):
        return  # nothing to cancel, or a cancellation is under way

    def run() -> None:
        try:
            cancel()
        except Exception:  # noqa: BLE001 - the JVM may be gone; the run reports the interrupt itself
            pass
        finally:
            _cancelling.release()
    threading.Thread(target=run, name="ledgerflow-cancel-jobs", daemon=True).start()


def hold() -> None:
    """Until the current :func:`watching` block ends, a first Ctrl-C is only noted (:func:`requested`):
    no job is cancelled and nothing is raised. For a run past the point where stopping would leave a
    mix (a URI or catalog table written, which no rollback undoes): it goes on to its commit point.
    A second Ctrl-C still raises at once. Outside a block of the main thread nothing changes."""
    if _watching[0] and threading.current_thread() is threading.main_thread():
        _holding[0] = True


def _handler(_signum, frame) -> None:
    again = _requested.is_set()  # pressed before and the run has not stopped yet: stop now, py4j or not
    _requested.set()
    if _holding[0] and not again:
        return
    _cancel_in_background()
    if again or not _in_py4j(frame):
        raise KeyboardInterrupt


def install() -> None:
    """Make Ctrl-C use this module's handler (main thread only; elsewhere Python cannot set one)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _handler)


def reclaim() -> None:
    """Inside a :func:`watching` block on the main thread, make this module's handler the one installed
    again (call it after creating a SparkSession: PySpark installs its own handler with the
    SparkContext, which calls py4j from inside the handler). Elsewhere nothing changes."""
    if _watching[0] and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _handler)


@contextlib.contextmanager
def watching(cancel: Optional[Callable[[], None]] = None):
    """The block is a run: Ctrl-C is handled as described in the module docstring, and the handler
    that was there before comes back after it. Outside the main thread the block simply runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    set_cancel(cancel)  # a Ctrl-C noted before the block (inside py4j) still counts: check() raises it
    signal.signal(signal.SIGINT, _handler)
    _watching[0] += 1
    try:
        yield
    finally:
        _watching[0] -= 1
        signal.signal(signal.SIGINT, previous if previous is not None else signal.default_int_handler)
        set_cancel(None)
        _requested.clear()
        _holding[0] = False


@contextlib.contextmanager
def outside_a_run():
    """A Ctrl-C in the block that no run turned into :class:`RunInterrupted` (it came while no run was
    under way) becomes one saying so."""
    try:
        yield
    except RunInterrupted:
        raise
    except KeyboardInterrupt as stop:
        raise RunInterrupted("stopped while no run was under way; nothing was left half-written.") from stop

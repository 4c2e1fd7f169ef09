"""Is the process that runs a run still alive? An OS lock it holds for the run's whole life.

The runner takes an exclusive ``flock`` on ``target/runs/<run_id>/lock`` before it claims anything
(a registered version, a lease on a destination partition) or records the run as ``running``, and
gives it up only once the record is final (completed or failed). The kernel
drops the lock when the process dies, however it dies (``kill -9``, the OOM killer, a crash), so
another process that can take the lock without waiting knows the owner is gone. A pid alone
cannot tell that: a dead run's pid may belong to an unrelated process a minute later.

The lock file is opened close-on-exec, so the JVM and other children never inherit it (a
surviving child would otherwise keep a dead run "alive"). A forked copy of the owner does keep it,
which errs on the safe side: a live run is never taken for dead.

Limits: ``flock`` is exact on a local filesystem. On NFS, Linux emulates it with POSIX locks
held by the server (NFSv4, or v3 with the lock manager), which also answers across hosts, but a
mount with ``nolock`` / ``local_lock=all`` only sees the locks of its own host. The caller
therefore leaves runs started on another host alone unless told to trust the lock
(see :mod:`.recovery`). Where ``fcntl`` does not exist (Windows), nothing is locked and every
probe answers ``unsupported``: a run there is never recovered automatically.
"""
from __future__ import annotations

import os
from typing import Optional

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = "lock"

# run_id -> (lock path, fd) of the runs this process owns. Also consulted before probing: on an NFS
# mount flock is a POSIX lock, which never conflicts within one process.
_HELD: dict[str, tuple[str, int]] = {}


def lock_path(runs_dir: str, run_id: str) -> str:
    """The lock file of a run."""
    return os.path.join(runs_dir, run_id, LOCK_NAME)


def this_host() -> str:
    """The host name recorded with a run (and compared by recovery): the kernel's node name, which
    ``socket.gethostname`` returns too, without loading the socket module where ``os.uname`` exists."""
    if hasattr(os, "uname"):
        return os.uname().nodename
    import socket
    return socket.gethostname()


def owner() -> dict:
    """This process as the run record's ``process`` entry."""
    return {"pid": os.getpid(), "host": this_host()}


def hold(runs_dir: str, run_id: str) -> dict:
    """Take ``run_id``'s lock for this process (kept until :func:`release` or the process ends) and
    return the ``process`` entry of its record. Call it before the run is first recorded as running."""
    path = lock_path(runs_dir, run_id)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if fcntl is None:  # pragma: no cover
        return owner()
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()} on host {this_host()}\n".encode())  # for a human looking
    except BaseException:
        os.close(fd)
        raise
    _HELD[run_id] = (path, fd)
    return owner()


def release(run_id: str, keep_file: bool = False) -> None:
    """Give up ``run_id``'s lock once its record is final; the lock file goes too, unless ``keep_file``
    (the record's fate is unknown: the next command finds the lock free and recovers the run). Nothing
    happens when this process does not hold it."""
    held = _HELD.pop(run_id, None)
    if held is None:
        return
    path, fd = held
    try:
        if not keep_file:
            os.remove(path)  # while still locked: a prober that opened it before re-reads a final record
    except FileNotFoundError:
        pass
    finally:
        os.close(fd)


def holds(run_id: str) -> bool:
    """Whether this process owns ``run_id``."""
    return run_id in _HELD


class Probe:
    """The answer of :func:`probe`. ``state`` is ``abandoned`` (the lock was free: this probe now
    holds it, until :meth:`close`), ``held`` (a live process holds it), ``missing`` (no lock file)
    or ``unsupported`` (no ``flock`` here)."""

    def __init__(self, state: str, path: str, fd: Optional[int] = None):
        self.state, self.path, self._fd = state, path, fd

    def settled(self) -> None:
        """The run's record is final now: drop its lock file (before the lock itself, in :meth:`close`)."""
        try:
            os.remove(self.path)
        except FileNotFoundError:
            pass

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "Probe":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def probe(runs_dir: str, run_id: str) -> Probe:
    """Try to take ``run_id``'s lock without waiting (never creating the file)."""
    path = lock_path(runs_dir, run_id)
    if run_id in _HELD:
        return Probe("held", path)
    if fcntl is None:  # pragma: no cover
        return Probe("unsupported", path)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return Probe("missing", path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return Probe("held", path)
    except BaseException:
        os.close(fd)
        raise
    return Probe("abandoned", path, fd)


def pid_alive(pid) -> bool:
    """Whether a process ``pid`` exists on this host (a reused pid answers yes: the safe side)."""
    if not isinstance(pid, int) or pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def may_be_alive(runs_dir: str, run_id: str, pid, host: Optional[str]) -> bool:
    """Whether the process of a run not yet final (started by ``pid`` on ``host``) may still be running; when in
    doubt, yes. A run on another host is taken for alive (its lock may not be visible from here: ``runs clean
    --other-hosts`` decides); here its lock answers, and without a lock file its pid."""
    if holds(run_id):
        return True
    if host != this_host():
        return True
    with probe(runs_dir, run_id) as lock:
        if lock.state == "abandoned":
            return False
        if lock.state == "missing":
            return pid_alive(pid)
        return True

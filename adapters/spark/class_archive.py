"""A class-data archive for the driver JVM: the classes a command loads, mapped at every later start.

A cold ``ledgerflow run`` loads and verifies some 20,000 JVM classes (Spark's planner, Parquet, the
Python gateway) before and while its job runs; the JVM's class-data sharing (JDK 13+, ``-XX:
ArchiveClassesAtExit`` / ``-XX:SharedArchiveFile``) stores them, already parsed and verified, in a
file that later JVMs map instead. Measured on the benchmark machine on 2026-11-27 (bench/results/history.md,
"the driver JVM's class archive"): a cold run of pipeline P at 1M rows ~32 s -> ~26 s; a whole
``ledgerflow test`` of the sample 0.77 of the time without it (the session up in ~5 s instead of ~10 s).

How it works, per command kind (``run``: run, replay, test --record; ``test``: ledgerflow test):

- The archive is ``<cache>/jvm/<kind>-<key>-<bytes>.jsa``, where ``<key>`` hashes what the archive
  depends on (the ``java`` executable, pyspark's version and jars, this module's format) and
  ``<bytes>`` is its size when it was written. A file whose size differs (truncated by a full disk
  or a crash: the JVM would die mapping it) is never used, and is replaced. The three archives of a
  kind used last are kept (one per installation: virtual environments, Java versions), older ones go.
- No archive yet: one process at a time (a lock file holding its pid) has its JVM write one at
  exit into a ``.partial`` file; at the end of the command, ledgerflow closes the JVM's pipe, waits
  for it to exit (the dump takes a few seconds, once), and only after a clean exit renames the
  partial file into place. Every other process simply runs without an archive.
- ``<cache>`` is ``$LEDGERFLOW_CACHE_DIR``, else ``$XDG_CACHE_HOME/ledgerflow``, else
  ``~/.cache/ledgerflow``. A class archive is code the JVM trusts, so it is used or written only when
  its folder and the file belong to this user and no one else can write them.
- ``LEDGERFLOW_JVM_ARCHIVE=off`` turns it off (``on`` forces it; the default ``auto`` is on except
  where ``CI`` is set); so do Java options of the workspace that set the JVM's own sharing flags. The JVM itself checks the archive against its class path and version
  and runs without it when they differ.
"""
from __future__ import annotations

import atexit
import glob
import hashlib
import os
import shutil
import stat
import struct
import sys
from dataclasses import dataclass
from typing import Optional

from .java_options import quote as quote_option

# 2: every run observes its bridge (CollectMetrics, Observation, AggregatingAccumulator): an archive
# written before would miss those classes, so each installation writes a new one once
FORMAT = 2
KINDS = ("run", "test")
DUMP_TIMEOUT_S = 180
KEEP = 3  # archives kept per kind: one per installation (virtual environment, Java) used lately
# Magic numbers of a dynamic (top-layer) archive's header, JDK 13-21 (little-endian u4).
_DYNAMIC_MAGIC = 0xF00BABA8
# The JVM prints its own warnings (e.g. about classes it cannot archive) on stdout by default:
# they go to stderr, which ledgerflow sends to target/logs/spark.log. These come first in the
# options, so -Xlog settings of the workspace still apply after them.
JVM_LOG = "-Xlog:disable -Xlog:all=warning:stderr"
NOTICE = ("ledgerflow: saving the JVM's class archive so later commands start faster (once; "
          "LEDGERFLOW_JVM_ARCHIVE=off skips it)")
_OWN_FLAGS = ("SharedArchiveFile", "ArchiveClassesAtExit", "-Xshare", "AutoCreateSharedArchive", "DumpSharedSpaces")


@dataclass
class Plan:
    """What to add to the driver JVM's options, and (when it writes the archive) where to publish it."""

    options: str
    archive: Optional[str] = None  # the archive the JVM maps
    partial: Optional[str] = None  # the file the JVM writes its archive into at exit: <stem>.<pid>.partial
    lock: Optional[str] = None

    @property
    def folder(self) -> str:
        """The archive folder (of the partial file)."""
        return os.path.dirname(self.partial)

    @property
    def stem(self) -> str:
        """``<kind>-<key>``: the partial file's name without ``.<pid>.partial``."""
        return os.path.basename(self.partial).rsplit(".", 2)[0]


def plan(kind: str, java_options: str = "") -> Optional[Plan]:
    """The archive options for a new driver JVM of ``kind``, or None (off, not possible, or another
    process is writing the archive right now)."""
    if kind not in KINDS or not enabled():
        return None
    if any(flag in java_options for flag in _OWN_FLAGS):
        return None
    folder = _private_folder(_folder())
    if folder is None or os.pathsep in folder:  # the JVM reads "a:b" as a base and a top archive
        return None
    stem = _stem(kind)
    found = usable_archive(folder, stem)
    if found:
        _touch(found)
        return Plan(mapping_options(found), archive=found)
    lock = os.path.join(folder, stem + ".lock")
    if not _take_lock(lock):
        return None
    for left in glob.glob(os.path.join(glob.escape(folder), glob.escape(stem) + ".*.partial")):
        _remove(left)  # written by a process killed before it could publish (the lock is ours now)
    partial = os.path.join(folder, f"{stem}.{os.getpid()}.partial")
    return Plan(f"{quote_option('-XX:ArchiveClassesAtExit=' + partial)} {JVM_LOG}", None, partial, lock)


def enabled() -> bool:
    """``LEDGERFLOW_JVM_ARCHIVE``: ``on``, ``off``, or ``auto`` (the default: on, except where the ``CI``
    variable is set, as on CI services: a fresh machine per job would pay for writing an archive no
    later run maps)."""
    setting = os.environ.get("LEDGERFLOW_JVM_ARCHIVE", "auto").strip().lower()
    if setting in ("off", "0", "false", "no"):
        return False
    if setting in ("on", "1", "true", "yes"):
        return True
    return not os.environ.get("CI")


def mapping_options(archive: str) -> str:
    """The Java options that make a JVM map ``archive`` (its own messages on stderr)."""
    return f"{quote_option('-XX:SharedArchiveFile=' + archive)} {JVM_LOG}"


def cache_root() -> str:
    """ledgerflow's cache folder (see the module docstring)."""
    if os.environ.get("LEDGERFLOW_CACHE_DIR"):
        return os.environ["LEDGERFLOW_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ledgerflow")


def existing(kind: str) -> Optional[str]:
    """The archive a new JVM of ``kind`` would map now, if any (for reports and benchmarks)."""
    folder = _folder()
    return usable_archive(folder, _stem(kind)) if os.path.isdir(folder) else None


def _folder() -> str:
    return os.path.join(cache_root(), "jvm")


def _stem(kind: str) -> str:
    return f"{kind}-{_key()}"


def usable_archive(folder: str, stem: str) -> Optional[str]:
    """The archive ``folder/stem-<bytes>.jsa`` when it is whole (its size as written) and private;
    a damaged one is removed (it is ledgerflow's own file)."""
    for path in glob.glob(os.path.join(glob.escape(folder), glob.escape(stem) + "-*.jsa")):
        recorded = path[:-len(".jsa")].rsplit("-", 1)[1]
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if not recorded.isdigit() or not _private(st):
            continue
        if st.st_size == int(recorded) and _is_archive(path):
            return path
        _remove(path)
    return None


def publish_at_exit(plan_: Plan, gateway) -> None:
    """When the command ends: let the JVM exit, then move its archive into place (see :func:`publish`)."""
    atexit.register(publish, plan_, getattr(gateway, "proc", None))


def publish(plan_: Plan, proc) -> Optional[str]:
    """Close the JVM's pipe (it exits and writes the archive), wait for it, and rename the partial file
    to its final name only after a clean exit; returns the archive's path or None. Of the kind's
    archives, the ``KEEP`` used last stay. Never raises: the archive is an optimisation."""
    try:
        if proc is not None:
            sys.stderr.write(NOTICE + "\n")
            sys.stderr.flush()
            _stop_context(proc)  # before the JVM goes: pyspark's accumulator server would report its end
            try:
                proc.stdin.close()
            except Exception:  # already closed
                pass
            if proc.wait(timeout=DUMP_TIMEOUT_S) != 0:
                return None
        if not os.path.exists(plan_.partial) or not _is_archive(plan_.partial):
            return None
        with open(plan_.partial, "rb") as fh:
            os.fsync(fh.fileno())
        final = os.path.join(plan_.folder, f"{plan_.stem}-{os.path.getsize(plan_.partial)}.jsa")
        os.replace(plan_.partial, final)
        _keep_recent(plan_.folder, plan_.stem.split("-", 1)[0], final)
        return final
    except Exception:  # a full disk, a JVM that did not exit in time: run without an archive next time too
        return None
    finally:
        release(plan_)


def _stop_context(proc) -> None:
    """Stop this process's SparkContext when ``proc`` is its JVM."""
    try:
        from pyspark import SparkContext
        context = SparkContext._active_spark_context
        if context is not None and getattr(SparkContext._gateway, "proc", None) is proc:
            context.stop()
    except Exception:  # the JVM is gone already
        pass


def release(plan_: Plan) -> None:
    """Give up writing the archive of ``plan_``: the partial file and the lock go."""
    _remove(plan_.partial)
    _remove(plan_.lock)


def discard(plan_: Plan) -> None:
    """The JVM given ``plan_`` did not start: give up writing its archive, or remove the archive it was
    to map (a damaged file the size check could not see), so the next start writes a new one."""
    release(plan_)
    _remove(plan_.archive)


def _keep_recent(folder: str, kind: str, newest: str) -> None:
    """Keep the ``KEEP`` archives of ``kind`` used last (one per installation: several virtual
    environments on one machine each keep theirs), remove older ones."""
    paths = [p for p in glob.glob(os.path.join(glob.escape(folder), glob.escape(kind) + "-*.jsa"))
             if os.path.basename(p).count("-") == 2 and p != newest]
    paths.sort(key=lambda p: os.lstat(p).st_mtime if os.path.lexists(p) else 0, reverse=True)
    for old in paths[KEEP - 1:]:
        _remove(old)


def _touch(path: str) -> None:
    """Mark an archive as used now (its modification time orders :func:`_keep_recent`)."""
    try:
        os.utime(path)
    except OSError:
        pass


def _key() -> str:
    """What an archive depends on: the java executable Spark starts, pyspark's version and jars."""
    import pyspark
    from pyspark.find_spark_home import _find_spark_home
    java_home = os.environ.get("JAVA_HOME")
    java = os.path.join(java_home, "bin", "java") if java_home else shutil.which("java") or "java"
    parts = [str(FORMAT), os.path.realpath(java), pyspark.__version__]
    for path in (os.path.realpath(java), os.path.join(_find_spark_home(), "jars")):
        try:
            st = os.stat(path)
            parts.append(f"{path}:{st.st_mtime_ns}:{st.st_size}")
        except OSError:
            parts.append(path)
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _private_folder(folder: str) -> Optional[str]:
    """``folder``, created (0700) when missing, when it and its parent are this user's and writable by
    no one else; None otherwise (no archive is read or written there)."""
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        for path in (folder, os.path.dirname(folder)):
            if not _private(os.lstat(path), folder=True):
                return None
        return folder
    except OSError:
        return None


def _private(st: os.stat_result, folder: bool = False) -> bool:
    kind_ok = stat.S_ISDIR(st.st_mode) if folder else stat.S_ISREG(st.st_mode)  # lstat: no symlinks
    return kind_ok and st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _is_archive(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
        return len(head) == 4 and struct.unpack("<I", head)[0] == _DYNAMIC_MAGIC
    except OSError:
        return False


def _take_lock(lock: str) -> bool:
    """Create ``lock`` holding this pid; a lock whose process is gone is taken over. The pid is written to a
    file of this process's own first and that file linked into place, so a lock is never seen without its
    pid (an empty one reads as a dead holder: two processes would both write the archive)."""
    mine = f"{lock}.{os.getpid()}.tmp"
    _remove(mine)  # left by a dead process of the same pid; a link there is unlinked, never followed
    try:
        fd = os.open(mine, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(str(os.getpid()))
    except OSError:
        _remove(mine)
        return False
    try:
        for _ in range(2):
            try:
                os.link(mine, lock)  # atomic: fails when the lock exists
                return True
            except FileExistsError:
                if _holder_alive(lock):
                    return False
                _remove(lock)
            except OSError:
                return False
        return False
    finally:
        _remove(mine)


def _holder_alive(lock: str) -> bool:
    try:
        with open(lock) as fh:
            pid = int(fh.read().strip() or "0")
        if pid <= 0:
            return False
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except (OSError, ValueError):
        return True  # unreadable or not ours to signal: leave it


def _remove(path: Optional[str]) -> None:
    if path:
        try:
            os.remove(path)
        except OSError:
            pass

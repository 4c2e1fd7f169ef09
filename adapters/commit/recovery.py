"""Runs whose process died: mark them ``failed`` ("interrupted: ...") and remove their staging folders.

A run records, before it writes anything, who runs it (``process: {pid, host}``) and the staging
folders it may create (``staging: [{link, versions}]``, one per local destination partition: the
partition symlink ``<dest>/_period=P`` and the folder ``<dest>/.lf_versions/_period=P`` where its
``<run_id>[.n]`` versions are written). Its process holds the run's lock (:mod:`.liveness`) until
the record is final. So a ``running`` record whose lock can be taken belongs to a dead process,
and what it may have left behind is known without guessing.

:func:`on_open` does this once per process and workspace, when a command first opens the run store
(``ledgerflow runs`` and ``ledgerflow runs clean`` check again every time). Only ``running`` rows are
looked at, so it costs one small query when nothing was interrupted.

A run that died while swapping its outputs in (or after, before its record said completed) is rolled
back first: the run records each swap before making it (``commit.partitions``: the partition, its
staged folder and the version it replaced), and each partition that still shows the run's folder is
pointed back at the version before it (``writers.roll_back``), so a dead run leaves every local output
as it was. Outputs Spark wrote to URIs or catalog tables cannot be rolled back; the error names them.

Removal is deliberately narrow: only a real folder (not a symlink) named ``<run_id>`` or
``<run_id>.<n>`` directly inside the real ``.lf_versions/_period=P`` folder of a recorded
destination, and never the folder the partition symlink points at. A staged folder that is still
live (a run recorded by an older ledgerflow, without a journal, or a partition whose previous version
is gone) is kept, and the run's error says so.

A process can also die after it reserved a registered version or leased a destination partition
(:mod:`.leases`) and before its run was first recorded. Those claims carry the run id and the
process (``pid``, ``host``); a claim whose run has no running record is released once the run's lock
can be taken (or, with no lock file, once no process has that pid), so that the version number and
the partitions are free again.
"""
from __future__ import annotations

import datetime
import os
import re
import sqlite3
import stat
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

from ...compiler.errors import LedgerflowError
from ..store import liveness
from . import writers

if TYPE_CHECKING:
    from ..run.runner import OutputDestination

VERSIONS = writers.VERSIONS

_CHECKED: set[str] = set()  # state databases this process has already recovered


@dataclass
class Outcome:
    """What recovery found for one run. ``action``: ``interrupted`` (marked failed now),
    ``cleaned`` (leftover staging of an already failed run removed), ``retired`` (versions a completed
    run replaced, left by a process that died before deleting them, removed), ``finished`` (its record was
    final after all: the registry row is brought in line with run.json), ``released`` (reserved versions
    and leases of a process that died before its run was recorded), ``live`` (its process holds
    the lock), ``other_host`` (started on another host: not checked), ``unknown`` (no lock to ask)."""

    run_id: str
    action: str
    detail: str = ""
    removed: list = field(default_factory=list)
    kept: list = field(default_factory=list)
    problems: list = field(default_factory=list)


# ------------------------------------------------------------------------------------------ staging
def staging_entries(destinations: dict[int, OutputDestination], period: str) -> list[dict]:
    """The staging folders a run may create, from its destinations (op seq -> where the output
    writes, as the runner resolves them before writing): one ``{link, versions}`` per local
    destination partition. Matches the layout of :func:`writers.stage_partition`."""
    out: list[dict] = []
    for dest in destinations.values():
        if not dest.local:
            continue  # URIs and catalog tables are staged by Spark itself
        target = dest.target
        root = target[len("file:"):] if target.startswith("file:") else target
        entry = {"link": writers.partition_link(root, period), "versions": writers.versions_dir(root, period)}
        if entry not in out:
            out.append(entry)
    return out


def _own_name(name: str, run_id: str) -> bool:
    return name == run_id or re.fullmatch(re.escape(run_id) + r"\.[0-9]+", name) is not None


def remove_staging(entry: dict, run_id: str) -> tuple[list[str], list[str], list[str]]:
    """Remove what run ``run_id`` staged for one ``{link, versions}`` entry and did not swap in.
    Returns (removed, kept as live, problems)."""
    removed: list[str] = []
    kept: list[str] = []
    problems: list[str] = []
    link, versions = entry.get("link") or "", entry.get("versions") or ""
    part = os.path.basename(link)
    if not (os.path.isabs(link) and part.startswith(f"{writers.PARTITION}=") and
            os.path.normpath(versions) == os.path.normpath(os.path.join(os.path.dirname(link), VERSIONS, part))):
        return removed, kept, [f"unexpected staging entry {entry!r}: left alone"]
    dest = os.path.realpath(os.path.dirname(link))
    folder = os.path.join(dest, VERSIONS, part)
    # neither .lf_versions nor _period=P may be a symlink leading elsewhere
    if os.path.realpath(folder) != folder or not os.path.isdir(folder):
        if os.path.lexists(folder) and os.path.realpath(folder) != folder:
            problems.append(f"{folder} is (or passes through) a symbolic link: left alone")
        names = []
    else:
        names = sorted(n for n in os.listdir(folder) if _own_name(n, run_id))
    live = os.path.realpath(os.path.join(dest, part)) if os.path.lexists(os.path.join(dest, part)) else None
    for name in names:
        path = os.path.join(folder, name)
        try:
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                problems.append(f"{path} is not a folder: left alone")
            elif live == path:
                kept.append(path)
            elif writers.remove_version(path, dest, part.split("=", 1)[1]):  # the one deletion rule
                removed.append(path)
            else:
                problems.append(f"could not remove {path} (or it is not a version folder ledgerflow created): left alone")
        except OSError as exc:
            problems.append(f"could not remove {path}: {exc.strerror or exc}")
    # the temporary link of an interrupted swap (writers._point): `<dest>/_period=P.<name>.tmp`
    try:
        tmp_links = [n for n in os.listdir(dest) if n.startswith(part + ".") and n.endswith(".tmp")
                     and _own_name(n[len(part) + 1:-len(".tmp")], run_id)]
    except OSError:
        tmp_links = []
    for name in tmp_links:
        path = os.path.join(dest, name)
        if os.path.islink(path):
            try:
                os.remove(path)  # the link only, never what it points at
                removed.append(path)
            except OSError as exc:
                problems.append(f"could not remove {path}: {exc.strerror or exc}")
    return removed, kept, problems


def release_registrations(store, record: dict) -> None:
    """Release the registered versions the interrupted run reserved but never confirmed.

    A version is reserved before anything runs and confirmed only after every partition was swapped
    in, so a pending row of a dead run was never visible to readers: it is dropped, under the run's
    lock, before the run is marked failed (its number is reused when it was the highest)."""
    store.release(record["run_id"])


# ------------------------------------------------------------------------------------------ recovery
def _now() -> str:
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    return now.isoformat(timespec="milliseconds")


def finder() -> str:
    """How the current process is described in an ``interrupted`` error: the command it runs."""
    try:
        import click
        ctx = click.get_current_context(silent=True)
    except ImportError:  # pragma: no cover
        ctx = None
    if ctx is not None and ctx.info_name:
        words = [ctx.info_name] + [str(ctx.params[k]) for k in ("action",) if ctx.params.get(k)]
        return f"`ledgerflow {' '.join(words)}` (pid {os.getpid()} on host {liveness.this_host()})"
    return f"process {os.getpid()} on host {liveness.this_host()} ({os.path.basename(sys.argv[0]) or 'python'})"


def _journal(rec: dict) -> tuple[list[dict], list, list[str]]:
    """The commit journal of a run record (``commit``: ``writers.swap_in``'s entries and the outputs Spark
    writes elsewhere), as (entries whose staged folder is named after the run, every other entry,
    the destinations elsewhere); whatever has the wrong shape counts as another entry."""
    commit = rec.get("commit")
    commit = commit if isinstance(commit, dict) else {}
    entries = commit.get("partitions") if isinstance(commit.get("partitions"), list) else []
    own = [e for e in entries if isinstance(e, dict) and isinstance(e.get("staged"), str)
           and _own_name(os.path.basename(e["staged"]), str(rec.get("run_id")))]
    elsewhere = commit.get("elsewhere") if isinstance(commit.get("elsewhere"), list) else []
    return own, [e for e in entries if e not in own], [str(d) for d in elsewhere]


def roll_back_commit(rec: dict) -> tuple[list[str], list[str], list[str]]:
    """Point the partitions a dead run had swapped in back at the versions before it, from the journal
    its record holds (written before each swap). Only entries whose staged folder is named after the
    run are followed. Returns (partitions rolled back, partitions that keep the run's rows, problems)."""
    own, other, _ = _journal(rec)
    rolled, kept, problems = writers.roll_back(own)
    return rolled, kept, problems + [f"unexpected commit entry {e!r}: left alone" for e in other]


def _describe(removed: list, kept: list, problems: list, rolled: tuple = (), elsewhere: tuple = ()) -> str:
    parts = []
    if rolled:
        parts.append(f"rolled back {len(rolled)} partition{'s' if len(rolled) != 1 else ''} it had swapped in to "
                     f"the version before it: {', '.join(rolled)}")
    if elsewhere:
        parts.append(f"outputs written by Spark to {', '.join(elsewhere)} are not rolled back (they may hold this "
                     "run's rows)")
    if removed:
        parts.append(f"removed {len(removed)} staging folder{'s' if len(removed) != 1 else ''}")
    if kept:
        parts.append("kept partition version(s) already swapped in before it died (this run's rows are "
                     f"visible there): {', '.join(kept)}")
    parts += problems
    return "; ".join(parts)


def _interrupt(store, rec: dict, found_by: str) -> Outcome:
    """Mark a run whose lock this process now holds as failed, after removing its staging."""
    run_id = rec["run_id"]
    rolled, _kept, problems = roll_back_commit(rec)  # a partition kept live is reported by remove_staging
    removed, kept = [], []
    for entry in rec.get("staging") or []:
        r, k, p = remove_staging(entry, run_id)
        removed, kept, problems = removed + r, kept + k, problems + p
    release_registrations(store, rec)
    proc = rec.get("process") or {}
    at = _now()
    error = (f"interrupted: the process (pid {proc.get('pid')} on host {proc.get('host')}) that ran it is gone; "
             f"found by {found_by} at {at}Z")
    done = _describe(removed, kept, problems, rolled, _journal(rec)[2])
    rec.update(status="failed", finished_at=at, error=error + (f"; {done}" if done else ""),
               interrupted={"found_by": found_by, "found_at": at, "removed": removed, "kept": kept,
                            "problems": problems, "rolled_back": rolled})
    store.save_run(rec)
    return Outcome(run_id, "interrupted", rec["error"], removed, kept, problems)


def _current(store, run_id: str) -> dict:
    """A run's newest record. ``save_run`` writes ``run.json`` before the registry row, and ``complete``
    (the commit point) the registry row before ``run.json``: a final status in the registry wins, else
    ``run.json``, else the registry's."""
    try:
        registered = store.get_run(run_id)
    except LedgerflowError:  # no registry row yet
        registered = None
    if registered is not None and registered.get("status") != "running":
        return registered
    rec = store.read_run_json(run_id)
    if rec is not None:
        return rec
    return registered if registered is not None else store.get_run(run_id)


def recover_run(store, rec: dict, found_by: str, other_hosts: bool = False) -> Outcome:
    """Check one ``running`` record; mark it interrupted when its process is gone."""
    run_id = rec["run_id"]
    proc = rec.get("process")
    if not proc:
        return Outcome(run_id, "unknown", "no process recorded (a run recorded by an older ledgerflow): left running")
    if proc.get("host") != liveness.this_host() and not other_hosts:
        return Outcome(run_id, "other_host", f"started on host {proc.get('host')}: not checked from this host "
                       "(pass --other-hosts when the run folder's locks are shared, e.g. NFSv4)")
    if proc.get("host") == liveness.this_host() and proc.get("pid") == os.getpid():
        return Outcome(run_id, "live", "run by this process")
    with liveness.probe(store.runs_dir, run_id) as lock:
        if lock.state == "held":
            return Outcome(run_id, "live", f"pid {proc.get('pid')} on host {proc.get('host')} holds its lock")
        if lock.state != "abandoned":
            return Outcome(run_id, "unknown", f"lock {lock.state}: left running")
        current = _current(store, run_id)  # re-read under the lock: the owner may have just finished
        if current.get("status") != "running":
            try:
                registered = store.get_run(run_id).get("status")
            except LedgerflowError:  # no registry row yet
                registered = None
            detail = f"finished ({current.get('status')}) before it was checked"
            if registered != current.get("status"):  # its process died between run.json and the registry row
                store.save_run(current, release=True)
                detail += "; registry updated from its run.json"
            elif (store.read_run_json(run_id) or {}).get("status") != current.get("status"):
                # its process died between the commit point and run.json
                store.write_files(current)
                detail += "; run.json updated from the registry"
            lock.settled()
            return Outcome(run_id, "finished", detail)
        outcome = _interrupt(store, current, found_by)
        lock.settled()
    return outcome


def recover(store, found_by: Optional[str] = None, other_hosts: bool = False) -> list[Outcome]:
    """Check every ``running`` run of ``store``, then the claims of runs never recorded; returns one
    :class:`Outcome` each."""
    if not os.path.exists(store.db_path) and not os.path.isdir(store.runs_dir):
        return []  # nothing ever recorded (and no database is created just to look)
    found_by = found_by or finder()
    outcomes = [recover_run(store, rec, found_by, other_hosts) for rec in store.running_records()]
    seen = {o.run_id for o in outcomes}
    for run_id, proc in store.claims().items():
        if run_id not in seen:
            outcome = release_claims(store, run_id, proc, other_hosts)
            if outcome is not None:
                outcomes.append(outcome)
    return outcomes


def release_claims(store, run_id: str, proc: dict, other_hosts: bool = False) -> Optional[Outcome]:
    """Release the reserved versions and leases of ``run_id``, which has no running record, when the
    process that took them is gone (or the run is final: they are stale); None when they stay."""
    def release(why: str) -> Outcome:
        held = [lease["resource"].split(" ", 1)[1] for lease in store.leases(run_id)]
        versions = [f"{r['name']} v{r['version']}" for r in store.pending_reservations(run_id)]
        store.release(run_id)
        what = ([f"reserved version{'s' if len(versions) != 1 else ''} {', '.join(versions)}"] if versions else []) \
            + ([f"lease{'s' if len(held) != 1 else ''} on {', '.join(held)}"] if held else [])
        return Outcome(run_id, "released", f"released {' and '.join(what) or 'nothing'} ({why})")

    status = store.run_status(run_id)
    if status is not None and status != "running":
        return release(f"the run is {status}")
    if status is not None or store.read_run_json(run_id) is not None:
        return None  # a running record: recover_run decides
    if proc.get("host") != liveness.this_host() and not other_hosts:
        return None
    if liveness.holds(run_id) or (proc.get("host") == liveness.this_host() and proc.get("pid") == os.getpid()):
        return None
    with liveness.probe(store.runs_dir, run_id) as lock:
        if lock.state == "abandoned" or (lock.state == "missing" and proc.get("host") == liveness.this_host()
                                         and not _pid_alive(proc.get("pid"))):
            if store.run_status(run_id) is not None or store.read_run_json(run_id) is not None:
                return None  # recorded meanwhile: the next check looks at its record
            outcome = release(f"its process, pid {proc.get('pid')} on host {proc.get('host')}, died before the run "
                              "was recorded")
            if lock.state == "abandoned":
                lock.settled()
                try:
                    os.rmdir(os.path.dirname(lock.path))  # the run's folder held only its lock
                except OSError:
                    pass
            return outcome
    return None


def _pid_alive(pid) -> bool:
    from ..run.leases import pid_alive
    return pid_alive(pid)


def clean(store, other_hosts: bool = False) -> list[Outcome]:
    """``ledgerflow runs clean``: recover interrupted runs, then remove staging that failed runs left
    behind (a removal that failed before, or a run failed by an older ledgerflow that recorded its
    staging) and the versions completed runs replaced but had not deleted yet (their process died
    right after the commit point)."""
    found_by = f"`ledgerflow runs clean` (pid {os.getpid()} on host {liveness.this_host()})"
    outcomes = recover(store, found_by, other_hosts)
    seen = {o.run_id for o in outcomes}
    for rec in store.list_runs() if os.path.exists(store.db_path) else []:
        if rec["run_id"] not in seen and rec.get("status") in ("completed", "failed"):
            mended = _mend_final(store, rec)
            if mended is not None:
                outcomes.append(mended)
        if rec.get("status") == "completed" and rec["run_id"] not in seen:
            # a process that died after its commit point, before deleting the versions it replaced
            retired = writers.retire(_journal(rec)[0])
            if retired:
                outcomes.append(Outcome(rec["run_id"], "retired", f"removed {len(retired)} version"
                                        f"{'s' if len(retired) != 1 else ''} it replaced", retired))
            continue
        if rec.get("status") != "failed" or rec["run_id"] in seen or not rec.get("staging"):
            continue
        removed, problems = [], []
        for entry in rec["staging"]:
            r, _kept, p = remove_staging(entry, rec["run_id"])
            removed, problems = removed + r, problems + p
        if removed or problems:
            outcomes.append(Outcome(rec["run_id"], "cleaned", _describe(removed, [], problems), removed, [], problems))
    return outcomes


def _mend_final(store, rec: dict) -> Optional[Outcome]:
    """A run the registry records final whose lock file is still there: its process died after the
    final record (the commit point) and before it wrote run.json or released its lock. run.json is
    mended to the registry's record and the lock file removed, once nobody holds the lock."""
    run_id = rec["run_id"]
    if not os.path.exists(liveness.lock_path(store.runs_dir, run_id)) or liveness.holds(run_id):
        return None
    with liveness.probe(store.runs_dir, run_id) as lock:
        if lock.state != "abandoned":
            return None
        detail = f"finished ({rec.get('status')}); its process died before it released its lock"
        if (store.read_run_json(run_id) or {}).get("status") != rec.get("status"):
            store.write_files(rec)
            detail += "; run.json updated from the registry"
        lock.settled()
    return Outcome(run_id, "finished", detail)


def on_open(store) -> None:
    """Recover interrupted runs the first time this process opens ``store``'s workspace. Never fails
    the command that opened it: a problem is one warning on stderr; but a damaged database is raised
    as :class:`.store_health.RunStoreDamaged` (the command's one paragraph, or its warning)."""
    if store.db_path in _CHECKED:
        return
    _CHECKED.add(store.db_path)
    try:
        outcomes = recover(store)
    except (OSError, sqlite3.Error, ValueError, LedgerflowError) as exc:
        from ..store.health import damaged
        damage = damaged(exc, store.db_path)
        if damage is not None:
            raise damage from None
        print(f"ledgerflow: warning: could not check for interrupted runs: {exc}", file=sys.stderr)
        return
    for o in outcomes:
        if o.action == "interrupted":
            print(f"ledgerflow: run {o.run_id} was {o.detail}", file=sys.stderr)
        elif o.action == "released":
            print(f"ledgerflow: run {o.run_id}: {o.detail}", file=sys.stderr)


def report(outcomes: list[Outcome]) -> list[str]:
    """The lines ``ledgerflow runs clean`` prints."""
    lines = []
    for o in outcomes:
        if o.action == "interrupted":
            lines.append(f"{o.run_id}  marked failed: {o.detail}")
        elif o.action == "cleaned":
            lines.append(f"{o.run_id}  failed run: {o.detail}")
        elif o.action == "retired":
            lines.append(f"{o.run_id}  completed run: {o.detail}")
        elif o.action in ("finished", "released"):
            lines.append(f"{o.run_id}  {o.detail}")
        else:
            lines.append(f"{o.run_id}  left running ({o.action}): {o.detail}")
        lines += [f"    removed {p}" for p in o.removed]
    return lines or ["nothing to clean: no interrupted run, no leftover staging folder"]


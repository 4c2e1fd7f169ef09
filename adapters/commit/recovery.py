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
pointed back at the version before it (:meth:`.journal.CommitJournal.roll_back`), so a dead run leaves
every local output as it was. Outputs Spark wrote to URIs or catalog tables cannot be rolled back; the error names them.

Removal is deliberately narrow (:mod:`.leftovers`): only a real folder (not a symlink) named ``<run_id>``
or ``<run_id>.<n>`` directly inside the real ``.lf_versions/_period=P`` folder of a recorded
destination, and never the folder the partition symlink points at. A staged folder that is still
live (a run recorded by an older ledgerflow, without a journal, or a partition whose previous version
is gone) is kept, and the run's error says so.

A process can also die after it reserved a registered version or leased a destination partition
(:mod:`..run.leases`) and before its run was first recorded. Those claims carry the run id and the
process (``pid``, ``host``); a claim whose run has no running record is released once the run's lock
can be taken (or, with no lock file, once no process has that pid), so that the version number and
the partitions are free again.
"""
from __future__ import annotations

import datetime
import os
import sqlite3
import sys
from typing import Optional

from ...compiler.errors import LedgerflowError
from ..store import liveness
from . import leftovers, promotion_journal
from .journal import CommitJournal
from .outcomes import Outcome, describe, report

__all__ = ["Outcome", "recover", "recover_run", "release_claims", "clean", "on_open", "report"]

_CHECKED: set[str] = set()  # state databases this process has already recovered


def release_registrations(store, record: dict) -> None:
    """Release the registered versions the interrupted run reserved but never confirmed.

    A version is reserved before anything runs and confirmed only after every partition was swapped
    in, so a pending row of a dead run was never visible to readers: it is dropped, under the run's
    lock, before the run is marked failed (its number is reused when it was the highest)."""
    store.release(record["run_id"])


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


def _interrupt(store, rec: dict, found_by: str) -> Outcome:
    """Mark a run whose lock this process now holds as failed, after removing its staging."""
    run_id = rec["run_id"]
    journal = CommitJournal.from_record(rec)
    rolled, _kept, problems = journal.roll_back()  # a partition kept live is reported by remove_staging
    removed, kept, left = journal.remove_staging()
    fused_removed, fused_left = fused_leftovers(store, rec)
    removed, problems = removed + fused_removed, problems + left + fused_left
    release_registrations(store, rec)
    proc = rec.get("process") or {}
    at = _now()
    error = (f"interrupted: the process (pid {proc.get('pid')} on host {proc.get('host')}) that ran it is gone; "
             f"found by {found_by} at {at}Z")
    done = describe(removed, kept, problems, rolled, journal.elsewhere)
    rec.update(status="failed", finished_at=at, error=error + (f"; {done}" if done else ""),
               interrupted={"found_by": found_by, "found_at": at, "removed": removed, "kept": kept,
                            "problems": problems, "rolled_back": rolled})
    store.save_run(rec)
    return Outcome(run_id, "interrupted", rec["error"], removed, kept, problems)


def fused_leftovers(store, rec: dict, records: Optional[list[dict]] = None) -> tuple[list[str], list[str]]:
    """Remove what a fused range (issue 30) whose process is gone left in the destinations of run ``rec``, one
    of its runs: the folder of every period's rows, named after whichever run of the range computed them (a
    run of the same batch, recorded by the same process; ``records``: the store's runs, when already read).
    Returns (removed, problems)."""
    batch, proc = rec.get("batch_id"), rec.get("process")
    if not batch or not proc:
        return [], []
    if records is None:
        records = store.list_runs() if os.path.exists(store.db_path) else []
    runs = {rec["run_id"]} | {r["run_id"] for r in records if r.get("batch_id") == batch and r.get("process") == proc}
    return leftovers.remove_fused_roots(rec.get("staging") or [], runs)


def _gone(proc: Optional[dict]) -> bool:
    """Whether the process ``proc`` (a record's ``process``) ran on this host and has exited."""
    return bool(proc) and proc.get("host") == liveness.this_host() and proc.get("pid") != os.getpid() \
        and not liveness.pid_alive(proc.get("pid"))


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
        away = promotion_journal.outside_workspace(store, current, ("staged",))
        if away is not None:
            return Outcome(run_id, "unknown", f"left running: its record names {away}, outside this workspace (a "
                           "copy of another workspace's run?); nothing was changed")
        outcome = _interrupt(store, current, found_by)
        lock.settled()
    return outcome


def recover(store, found_by: Optional[str] = None, other_hosts: bool = False) -> list[Outcome]:
    """Check every ``running`` run of ``store``, then every promotion, then the claims of runs never recorded;
    returns one :class:`Outcome` each. A dead promotion is rolled back before the claims: its leases (which it
    releases itself) keep its partitions from any run until then."""
    if not os.path.exists(store.db_path) and not os.path.isdir(store.runs_dir):
        return []  # nothing ever recorded (and no database is created just to look)
    found_by = found_by or finder()
    outcomes = [recover_run(store, rec, found_by, other_hosts) for rec in store.running_records()]
    for promotion_id, detail in promotion_journal.recover_promotions(store):
        outcomes.append(Outcome(promotion_id, "interrupted", detail))
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
                                         and not liveness.pid_alive(proc.get("pid"))):
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


def clean(store, other_hosts: bool = False) -> list[Outcome]:
    """``ledgerflow runs clean``: recover interrupted runs, then remove staging that failed runs left
    behind (a removal that failed before, or a run failed by an older ledgerflow that recorded its
    staging), the versions completed runs replaced but had not deleted yet (their process died
    right after the commit point) and the folders of a fused range's rows its dead process left."""
    found_by = f"`ledgerflow runs clean` (pid {os.getpid()} on host {liveness.this_host()})"
    outcomes = recover(store, found_by, other_hosts)
    seen = {o.run_id for o in outcomes}
    records = store.list_runs() if os.path.exists(store.db_path) else []
    outcomes += _dead_ranges(store, records, seen)
    for rec in records:
        if rec["run_id"] not in seen and rec.get("status") in ("completed", "failed"):
            mended = _mend_final(store, rec)
            if mended is not None:
                outcomes.append(mended)
        if rec.get("status") == "completed" and rec["run_id"] not in seen:
            # a process that died after its commit point, before deleting the versions it replaced
            retired = CommitJournal.from_record(rec).retire()
            if retired:
                outcomes.append(Outcome(rec["run_id"], "retired", f"removed {len(retired)} version"
                                        f"{'s' if len(retired) != 1 else ''} it replaced", retired))
            continue
        if rec.get("status") != "failed" or rec["run_id"] in seen or not rec.get("staging"):
            continue
        removed, _kept, problems = CommitJournal.from_record(rec).remove_staging()
        if removed or problems:
            outcomes.append(Outcome(rec["run_id"], "cleaned", describe(removed, [], problems), removed, [], problems))
    return outcomes + _converted(store, records)


def _converted(store, records: list[dict]) -> list[Outcome]:
    """Each partition an earlier release published as a symbolic link (named by a completed run's journal, in
    this workspace, leased by no run under way) turned into a real folder showing the same version: what pyarrow
    and pandas read (a link shows the version folder's ``_SUCCESS`` too)."""
    from ..layout.partition_paths import link_env, partition_key, root_period, versions_dir
    from ..layout.real_path import real_path, within
    from . import shown, sweeps
    workspace, leased = real_path(store.root), {lease["resource"] for lease in store.leases()}
    out = []
    for rec in records:
        if rec.get("status") != "completed":
            continue
        for entry in (rec.get("commit") or {}).get("partitions") or []:
            link = entry.get("link") if isinstance(entry, dict) else None
            if not (isinstance(link, str) and os.path.isabs(link) and os.path.islink(link)) \
                    or not within(os.path.dirname(link), workspace) \
                    or partition_key("path", *root_period(link), link_env(link)) in leased:
                continue
            versions = versions_dir(*root_period(link))
            version = shown.shown_version(link, versions)
            if version is not None and shown.convert(link, versions):
                sweeps.sweep(versions, sweeps.made_for(version))  # the link exchanged out
                out.append(Outcome(rec["run_id"], "converted", f"{link}: a symbolic link of an earlier release, "
                                   "now a real folder showing the same version"))
    return out


def _dead_ranges(store, records: list[dict], seen: set) -> list[Outcome]:
    """The folders of every period's rows that fused ranges whose process died between two of their runs
    left (no run of theirs is ``running``, so :func:`recover` did not see them): one look per process and
    destination."""
    outcomes, looked = [], set()
    for rec in records:
        dests = frozenset(os.path.dirname(e.get("link") or "") for e in rec.get("staging") or [])
        key = (rec.get("batch_id"), repr(rec.get("process")), dests)
        if rec["run_id"] in seen or not rec.get("batch_id") or key in looked or not _gone(rec.get("process")):
            continue
        looked.add(key)
        removed, problems = fused_leftovers(store, rec, records)
        if removed or problems:
            outcomes.append(Outcome(rec["run_id"], "cleaned", describe(removed, [], problems), removed, [], problems))
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
    as :class:`..store.health.RunStoreDamaged` (the command's one paragraph, or its warning)."""
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

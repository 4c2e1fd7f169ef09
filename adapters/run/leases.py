"""One writer per partition: a run leases every destination partition it will replace, in the run store.

Two runs writing the same partitions at once could each swap in some of them, and a reader would
then see outputs no run computed together. So before its first Spark query a run takes a lease on
each partition its outputs replace, all in one ``BEGIN IMMEDIATE`` transaction of
``.ledgerflow/state.db`` (:meth:`.RunStore.take_leases`): a local partition by the real path of its
destination folder and the period, a URI's partition by its text, a catalog table's period by the
table's name (its last part, as the session's catalog and database are not known before Spark:
tables of one name in two databases are serialised too, which is safe).

When another run holds one of them, its process is asked (its run lock, :mod:`.liveness`): alive,
the run stops at once (:class:`LeaseHeld`, exit 1, naming that run, its process and host), or with
``run --wait`` polls until the lease is free; dead, recovery rolls that run back and releases what it
held (:mod:`..commit.recovery`), and the lease is taken. A run's leases are released in the run-store
transaction that records it completed (its commit point) or failed (after its rollback); a lease
whose run is recorded completed or failed is stale whatever its process does.

A holder started on another host is taken for alive (its lock may not be visible from here), so
the message says so, says whether its lock looks abandoned from here, and names ``ledgerflow runs
clean --other-hosts``, which recovers it when that host's run is gone (e.g. a container killed and
replaced under a new host name on the same volume); ``--wait`` says the same in its waiting line.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable, Optional

from ...compiler.errors import ResolutionError
from ..store import liveness
from ..layout.partition_paths import partition_key
from ..commit import recovery

if TYPE_CHECKING:
    from ..commit.destinations import OutputDestination
    from ..store.runstore import RunStore

POLL_SECONDS = 0.5


class LeaseHeld(ResolutionError):
    """A destination partition the run needs is being written by another live run."""


def resources(destinations: dict[int, OutputDestination], period: str) -> list[str]:
    """The leases a run writing ``destinations`` for ``period`` needs, one per destination partition."""
    out: list[str] = []
    for dest in destinations.values():
        key = partition_key(dest.kind, dest.target, period, dest.env)
        if key not in out:
            out.append(key)
    return out


def take(store: RunStore, run_id: str, process: dict, needed: list[str], wait: bool = False,
         echo: Callable[[str], None] = print) -> None:
    """Lease ``needed`` to run ``run_id`` (run by ``process``), as the module docstring says."""
    if not needed:
        return
    told: Optional[str] = None
    recovered: set[str] = set()
    while True:
        held = store.take_leases(run_id, process, needed, _now())
        if held is None:
            return
        if held["run_id"] not in recovered and not _alive(store, held):
            recovered.add(held["run_id"])  # once: a holder recovery cannot settle counts as alive
            recovery.recover(store)
            continue
        who = (f"run {held['run_id']} (pid {held['pid']} on host {held['host']}, holding it since "
               f"{held['taken_at']}Z)")
        elsewhere = held.get("host") != liveness.this_host()
        if not wait:
            raise LeaseHeld(
                f"RUN-001 the destination partition {held['resource'].split(' ', 1)[1]} is being written by {who}; "
                "two runs writing one partition at once could publish a mix of both. Nothing was run. "
                + (f"{_other_host(store, held)} If that run is no longer running, `ledgerflow runs clean "
                   "--other-hosts` rolls it back and releases its partitions; else run" if elsewhere else "Run")
                + " again when it has finished, or pass --wait to wait for it.")
        if told != held["run_id"]:
            told = held["run_id"]
            echo(f"  waiting: the destination partition {held['resource'].split(' ', 1)[1]} is being written by "
                 f"{who}" + (f". {_other_host(store, held)} If that run is no longer running, this waits until "
                             "`ledgerflow runs clean --other-hosts` releases it" if elsewhere else "")
                 + " (Ctrl-C to stop)")
        time.sleep(POLL_SECONDS)


def _other_host(store: RunStore, lease: dict) -> str:
    """What can be said from here of a holder started on another host (a sentence)."""
    with liveness.probe(store.runs_dir, lease["run_id"]) as lock:
        state = lock.state
    look = {"abandoned": "its lock looks abandoned from here (nobody holds it; trust that only where all hosts "
                         "see each other's locks, e.g. NFSv4)",
            "held": "its lock is held, so it looks alive",
            "missing": "it has no lock file here"}.get(state, "its lock cannot be checked here")
    return (f"That run was started on host {lease.get('host')}, not this one ({liveness.this_host()}), so "
            f"ledgerflow does not take it for dead by itself; {look}.")


def _alive(store: RunStore, lease: dict) -> bool:
    """Whether the process holding ``lease`` may still be running (when in doubt: yes)."""
    run_id = lease["run_id"]
    if liveness.holds(run_id):
        return True
    if store.run_status(run_id) in ("completed", "failed"):
        return False  # the run is final: its lease is stale (recovery releases it), whatever its pid does now
    return liveness.may_be_alive(store.runs_dir, run_id, lease.get("pid"), lease.get("host"))


def _now() -> str:
    import datetime
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    return now.isoformat(timespec="milliseconds")

"""Events kept before they are sent, and sent in order (docs/openlineage.md, "When the receiver is down").

Every event is written first to the workspace's outbox, ``.ledgerflow/events/pending/<time>-<n>-<pid>-<n>-<type>.json``,
then sent through the openlineage-python client's transport; a sent event's file is removed. A transport that
fails (a receiver down, slow or refusing) never fails the run: the event stays in the outbox, the process stops
trying to send (so a run waits on a dead receiver once), and one line on standard error says how many events are
kept. ``ledgerflow events send`` sends them on request. Events are sent oldest first, so a receiver sees each run's
START before its end.

A run bounds what sending costs it: each send of its own events first, then at most :data:`BACKLOG_SLICE` events
kept earlier, none started after :data:`RUN_BUDGET_S` seconds, and no send waited on for more than
:data:`EVENT_TIMEOUT_S` seconds whatever the transport (one that has not answered by then counts as failed: its
event stays kept, and the process sends nothing more). The rest of the backlog is left for ``events send``.

Concurrent senders (runs in parallel, two ``events send``) send each event at most once: a sender first claims a
file by renaming it to ``<name>~<host>~<pid>~<token>`` (a rename only one of them can win), then sends it, then
removes it (or renames it back when the send failed). A claim whose process is gone (same host) or older than
:data:`STALE_CLAIM_S` is renamed back and sent later. A sender that finds an older event claimed by another one
stops there (``events send`` waits for it), so the order holds across senders too.

A kept file that is not an event (not JSON, not an object with an ``eventType``) can never be sent: it is moved to
``.ledgerflow/events/damaged/`` and one line on standard error names it and says what is wrong.
"""
from __future__ import annotations

import atexit
import itertools
import json
import os
import sys
import threading
import time
import uuid
from typing import Callable, Optional

from ..store.liveness import this_host
from ..store.whole_files import write_json_whole
from .settings import EventSettings, client_transport

PENDING = os.path.join("events", "pending")  # under .ledgerflow/
DAMAGED = os.path.join("events", "damaged")
EVENT_TIMEOUT_S = 3.0  # a run's longest wait on one send
RUN_BUDGET_S = 3.0  # after this, a run starts no send of an earlier event
BACKLOG_SLICE = 10  # earlier events a run sends at most, each time it emits one of its own
STALE_CLAIM_S = 600.0
WAIT_FOR_OTHER_S = 60.0  # how long `events send` waits on one claim of another sender
_counter = itertools.count()
_HOST = this_host().replace("~", "-")


def outbox_dir(root: str) -> str:
    """``<workspace>/.ledgerflow/events/pending``."""
    return os.path.join(root, ".ledgerflow", PENDING)


def damaged_dir(root: str) -> str:
    """``<workspace>/.ledgerflow/events/damaged``: kept files that are not events, moved out of the outbox."""
    return os.path.join(root, ".ledgerflow", DAMAGED)


def pending(root: str) -> list[str]:
    """The events not sent yet, oldest first (their files; an event another sender has claimed is not listed)."""
    folder = outbox_dir(root)
    if not os.path.isdir(folder) or os.path.islink(folder):
        return []
    return [os.path.join(folder, n) for n in sorted(os.listdir(folder)) if n.endswith(".json")]


def keep(root: str, event: dict) -> str:
    """Write ``event`` into the outbox whole (a temporary file renamed); returns its file."""
    folder = outbox_dir(root)
    os.makedirs(folder, exist_ok=True)
    now = time.time_ns()  # one reading for both parts, so names sort as they were kept
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now // 10**9))
    name = f"{stamp}-{now % 10**9:09d}-{os.getpid()}-{next(_counter):06d}-{event['eventType'].lower()}.json"
    path = os.path.join(folder, name)
    write_json_whole(path, event, sort_keys=True)
    return path


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # someone else's process, or a pid that cannot be asked about: presumed alive
    return True


def _stale(folder: str, claim: str) -> bool:
    """Whether a claim's sender is gone: its process has ended (same host), or it is older than STALE_CLAIM_S."""
    _, host, pid, _ = claim.split("~")
    if host == _HOST and pid.isdigit() and not _alive(int(pid)):
        return True
    try:
        return time.time() - os.stat(os.path.join(folder, claim)).st_mtime > STALE_CLAIM_S
    except OSError:
        return False


def _scan(folder: str) -> list[tuple[str, Optional[str]]]:
    """The outbox, oldest first: (event file name, the live claim's file name or None when unclaimed). Stale
    claims are renamed back first."""
    if not os.path.isdir(folder) or os.path.islink(folder):
        return []
    entries: dict[str, Optional[str]] = {}
    for name in os.listdir(folder):
        if name.endswith(".json"):
            entries.setdefault(name, None)
        elif name.count("~") == 3 and name.split("~")[0].endswith(".json"):
            original = name.split("~")[0]
            if _stale(folder, name):
                try:
                    os.rename(os.path.join(folder, name), os.path.join(folder, original))
                    entries.setdefault(original, None)
                except OSError:  # another sender took it back first, and may have claimed it since: busy
                    entries[original] = name
            else:
                entries[original] = name
    return sorted(entries.items())


def _load(path: str) -> tuple[Optional[dict], Optional[str]]:
    """(the event, None) or (None, what is wrong with the file)."""
    try:
        with open(path, encoding="utf-8") as fh:
            event = json.load(fh)
    except OSError as exc:
        return None, f"unreadable: {exc.strerror or exc}"
    except ValueError as exc:
        return None, f"not JSON: {exc}"
    if not isinstance(event, dict) or not isinstance(event.get("eventType"), str):
        return None, "not an OpenLineage event (no eventType)"
    return event, None


class Sender:
    """Sends kept events through the client's transport, in order; after the first failure it sends nothing more
    in this process (see the module docstring)."""

    def __init__(self, settings: EventSettings, warn: Callable[[str], None] = lambda line: print(line, file=sys.stderr),
                 tell: Callable[[str], None] = lambda line: print(line, file=sys.stderr)):
        """``warn`` says that events stay kept after a failure; ``tell`` names a damaged file moved aside."""
        self.settings, self.warn, self.tell = settings, warn, tell
        self.broken: Optional[str] = None
        self.busy: Optional[str] = None  # why the last send_pending stopped before a claim of another sender
        self._transport = None
        self._inflight: Optional[tuple[threading.Thread, float, dict]] = None  # a send going on: until when, outcome
        self._told_backlog = False

    def transport(self):
        """The client's transport, made once (the client is imported only here)."""
        if self._transport is None:
            from openlineage.client import OpenLineageClient
            config = self.settings.transport or client_transport()
            client = OpenLineageClient(config={"transport": dict(config)}) if config else OpenLineageClient()
            self._transport = client.transport
        return self._transport

    def send_pending(self, root: str, first: Optional[str] = None, backlog: Optional[int] = None,
                     budget: Optional[float] = None, event_timeout: Optional[float] = None,
                     wait: bool = False) -> tuple[int, int]:
        """Send the pending events of ``root``: the file ``first`` (the event a run just kept) first, then the
        others, oldest first, until one fails; returns (sent, left). ``backlog``: at most that many of the others;
        ``budget``: none of theirs started after that many seconds; ``event_timeout``: no send waited on longer
        (None: the transport's own bounds, in this thread); ``wait``: wait for another sender's claim instead of
        stopping at it."""
        folder = outbox_dir(root)
        deadline = None if budget is None else time.monotonic() + budget
        self.busy = None
        self._settle()
        was_broken = self.broken is not None
        if self.broken is None:
            self.transport()
        sent = 0
        entries = _scan(folder) if self.broken is None else []
        own = os.path.basename(first) if first else None
        if own in dict(entries) and dict(entries)[own] is None:
            sent += self._send(root, own, event_timeout, None) == "sent"
        others = [e for e in entries if e[0] != own]
        taken, waited, head = 0, time.monotonic(), None
        while others and self.broken is None and (backlog is None or taken < backlog):
            if deadline is not None and time.monotonic() >= deadline:
                break
            name, claim = others[0]
            outcome = "taken" if claim is not None else self._send(root, name, event_timeout, deadline)
            if outcome == "taken":
                owner = claim.split("~")[2] if claim else "?"
                self.busy = f"another ledgerflow process (pid {owner}) is sending them"
                if name != head:  # the other sender moves on: wait as long as it does
                    head, waited = name, time.monotonic()
                if not wait or time.monotonic() - waited > WAIT_FOR_OTHER_S:
                    break
                time.sleep(0.1)
                others = _scan(folder)
                continue
            self.busy, waited = None, time.monotonic()
            others.pop(0)
            if outcome in ("sent", "inflight"):
                taken += 1
                sent += outcome == "sent"
            if outcome == "inflight":
                break
        left = len(_scan(folder))
        if self.broken is not None and not was_broken:
            self.warn(f"warning: OpenLineage events not sent ({self.broken[:300]}); {left} kept in "
                      f"{folder}: `ledgerflow events send` sends them.")
        elif self.broken is None and left and backlog is not None and not self._told_backlog:
            self._told_backlog = True
            self.warn(f"note: {left} OpenLineage events kept earlier are still pending in {folder}: "
                      "`ledgerflow events send` sends them.")
        return sent, left

    def _settle(self) -> None:
        """Wait for a send still going from an earlier call, up to its own time limit (then: broken)."""
        if self._inflight is None:
            return
        thread, until, outcome = self._inflight
        thread.join(max(0.0, until - time.monotonic()))
        if self.broken is None and (thread.is_alive() or "error" in outcome):
            self.broken = outcome.get("error") or "the receiver did not answer in time"
        self._inflight = None

    def _send(self, root: str, name: str, timeout: Optional[float], deadline: Optional[float]) -> str:
        """Claim, send and remove one event: "sent", "taken" (another sender has it), "damaged", "failed" (now
        broken) or "inflight" (still sending when ``deadline`` came: left to finish on its own)."""
        folder = outbox_dir(root)
        path = os.path.join(folder, name)
        claimed = os.path.join(folder, f"{name}~{_HOST}~{os.getpid()}~{uuid.uuid4().hex[:8]}")
        try:
            os.rename(path, claimed)
        except FileNotFoundError:
            return "taken"
        except OSError as exc:
            self.broken = f"{path} could not be claimed: {exc.strerror or exc}"
            return "failed"
        try:
            os.utime(claimed)  # the claim's age, for STALE_CLAIM_S
        except OSError:
            pass
        event, wrong = _load(claimed)
        if event is None:
            return self._set_aside(root, name, claimed, wrong or "")
        outcome: dict = {}

        def deliver() -> None:
            try:
                self.transport().emit(event)
            except Exception as exc:  # noqa: BLE001 - any transport's failure: the event stays kept
                outcome["error"] = f"{type(exc).__name__}: {exc}"
                _rename_quietly(claimed, path)
            else:
                outcome["sent"] = True
                _remove_quietly(claimed)

        if timeout is None:
            deliver()
        else:
            started = time.monotonic()
            worker = threading.Thread(target=deliver, name="openlineage-send", daemon=True)
            worker.start()
            limit = timeout if deadline is None else max(0.0, min(timeout, deadline - started))
            worker.join(limit)
            if worker.is_alive():
                if limit < timeout:  # the run's budget ran out, not the event's own time: it goes on meanwhile
                    self._inflight = (worker, started + timeout, outcome)
                    _going.append(self._inflight)
                    return "inflight"
                self.broken = f"the receiver did not answer within {timeout:g} s"
                return "failed"
        if "error" in outcome:
            self.broken = outcome["error"]
            return "failed"
        return "sent"

    def _set_aside(self, root: str, name: str, claimed: str, wrong: str) -> str:
        """Move a kept file that can never be sent to the damaged folder, and say so in one line."""
        target = os.path.join(damaged_dir(root), name)
        try:
            os.makedirs(damaged_dir(root), exist_ok=True)
            os.rename(claimed, target)
        except OSError as exc:
            _rename_quietly(claimed, os.path.join(outbox_dir(root), name))
            self.tell(f"warning: kept OpenLineage event {os.path.join(outbox_dir(root), name)} cannot be sent "
                      f"({wrong[:200]}) and could not be moved aside ({exc.strerror or exc}).")
            return "damaged"
        self.tell(f"warning: kept OpenLineage event {os.path.join(outbox_dir(root), name)} cannot be sent "
                  f"({wrong[:200]}): moved to {target}.")
        return "damaged"


_going: list[tuple[threading.Thread, float, dict]] = []


@atexit.register
def _finish_going() -> None:
    """At exit, give a send still going the rest of its time: ended mid-send, its event would be sent again later."""
    for thread, until, _ in _going:
        thread.join(max(0.0, until - time.monotonic()))


def _rename_quietly(source: str, target: str) -> None:
    try:
        os.rename(source, target)
    except OSError:
        pass  # taken back as stale by another sender meanwhile


def _remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass

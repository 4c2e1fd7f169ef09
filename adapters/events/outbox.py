"""Events kept before they are sent, and sent in order (docs/openlineage.md, "When the receiver is down").

Every event is written first to the workspace's outbox, ``.ledgerflow/events/pending/<time>-<n>-<type>.json``,
then sent through the openlineage-python client's transport; a sent event's file is removed. A transport that
fails (a receiver down, slow or refusing) never fails the run: the event stays in the outbox, the process stops
trying to send (so a run waits on a dead receiver once, for the transport's timeout), and one line on standard
error says how many events are kept. The next run sends what is pending before its own events, and ``ledgerflow
events send`` sends them on request. Events are sent oldest first, so a receiver sees each run's START before its
end.
"""
from __future__ import annotations

import itertools
import json
import os
import sys
import time
from typing import Callable, Optional

from ..store.whole_files import write_json_whole
from .settings import EventSettings, standard_transport

PENDING = os.path.join("events", "pending")  # under .ledgerflow/
_counter = itertools.count()


def outbox_dir(root: str) -> str:
    """``<workspace>/.ledgerflow/events/pending``."""
    return os.path.join(root, ".ledgerflow", PENDING)


def pending(root: str) -> list[str]:
    """The events not sent yet, oldest first (their files)."""
    folder = outbox_dir(root)
    if not os.path.isdir(folder) or os.path.islink(folder):
        return []
    return [os.path.join(folder, n) for n in sorted(os.listdir(folder)) if n.endswith(".json")]


def keep(root: str, event: dict) -> str:
    """Write ``event`` into the outbox whole (a temporary file renamed); returns its file."""
    folder = outbox_dir(root)
    os.makedirs(folder, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    name = f"{stamp}-{time.time_ns() % 10**9:09d}-{os.getpid()}-{next(_counter):06d}-{event['eventType'].lower()}.json"
    path = os.path.join(folder, name)
    write_json_whole(path, event, sort_keys=True)
    return path


class Sender:
    """Sends kept events through the client's transport, in order; after the first failure it sends nothing more
    in this process (see the module docstring)."""

    def __init__(self, settings: EventSettings, warn: Callable[[str], None] = lambda line: print(line, file=sys.stderr)):
        self.settings, self.warn = settings, warn
        self.broken: Optional[str] = None
        self._transport = None

    def transport(self):
        """The client's transport, made once (the client is imported only here)."""
        if self._transport is None:
            from openlineage.client import OpenLineageClient
            config = self.settings.transport or standard_transport()
            client = OpenLineageClient(config={"transport": dict(config)}) if config else OpenLineageClient()
            self._transport = client.transport
        return self._transport

    def send_pending(self, root: str) -> tuple[int, int]:
        """Send every pending event of ``root`` (oldest first) until one fails; returns (sent, left)."""
        files = pending(root)
        sent = 0
        for path in files:
            if self.broken is not None:
                break
            try:
                with open(path, encoding="utf-8") as fh:
                    event = json.load(fh)
            except (OSError, ValueError):
                continue  # a damaged file is left where it is, for a person to look at
            try:
                self.transport().emit(event)
            except Exception as exc:  # noqa: BLE001 - any transport's failure: the event stays kept
                self.broken = f"{type(exc).__name__}: {exc}"
                left = len(files) - sent
                self.warn(f"warning: OpenLineage events not sent ({self.broken[:300]}); {left} kept in "
                          f"{outbox_dir(root)}: `ledgerflow events send` sends them.")
                break
            os.remove(path)
            sent += 1
        return sent, len(files) - sent

"""What a run, a promotion and ``ledgerflow events send`` call: keep an event, then send it and a bounded slice
of what is pending (:mod:`.outbox`: a run spends a few seconds on events at most). Nothing here ever raises into a
run: an event that cannot even be built or kept is reported in one line on standard error and the run goes on."""
from __future__ import annotations

import json
import sys
from typing import Optional

from .outbox import BACKLOG_SLICE, EVENT_TIMEOUT_S, RUN_BUDGET_S, Sender, keep
from .settings import EventSettings, event_settings

_senders: dict[tuple, Sender] = {}  # one per workspace and settings in a process: a broken receiver is tried once


def _sender(root: str, settings: EventSettings) -> Sender:
    key = (root, settings.namespace, json.dumps(settings.transport, sort_keys=True, default=str))
    if key not in _senders:
        _senders[key] = Sender(settings)
    return _senders[key]


def _emit(root: str, settings: EventSettings, build) -> None:
    try:
        kept = keep(root, build())
    except Exception as exc:  # noqa: BLE001 - lineage events never fail a run
        print(f"warning: an OpenLineage event could not be built or kept: {type(exc).__name__}: {exc}", file=sys.stderr)
        return
    try:
        _sender(root, settings).send_pending(root, first=kept, backlog=BACKLOG_SLICE, budget=RUN_BUDGET_S,
                                             event_timeout=EVENT_TIMEOUT_S)
    except Exception as exc:  # noqa: BLE001 - the client could not even be set up: the events stay kept
        print(f"warning: OpenLineage events not sent ({type(exc).__name__}: {exc}); they are kept in "
              f"{root}/.ledgerflow/events/pending: `ledgerflow events send` sends them.", file=sys.stderr)


def emit_run(root: str, config, event_type: str, record: dict, types: Optional[dict] = None,
             sql: Optional[str] = None) -> None:
    """Emit the ``event_type`` event of the run ``record`` (nothing when the workspace's ``config`` has events off)."""
    settings = event_settings(config)
    if settings is not None:
        from .run_events import run_event  # here: with events off, nothing loads the lineage walk and its SQL
        _emit(root, settings, lambda: run_event(event_type, record, settings.namespace, types, sql))


def emit_of_run(root: str, ctx, event_type: Optional[str], record: dict, echo=print) -> None:
    """:func:`emit_run` for a run's context (``ctx``: its compiled project, whose plan gives the outputs' column
    types, and its workspace's configuration); a failure is one line through ``echo``, never an exception.
    ``event_type`` None: the end of a failed run, ``ABORT`` when it was interrupted, else ``FAIL`` (nothing when the
    record does not say failed)."""
    if event_type is None:
        if record.get("status") != "failed":
            return
        event_type = "ABORT" if str(record.get("error") or "").startswith("interrupted") else "FAIL"
    try:
        settings = event_settings(ctx.workspace.config)
        if settings is None:  # events off: no plan walked, no script rendered
            return
        from ...compiler.plan import output_types
        from .run_events import run_event
        plan = ctx.compiled.plan
        types = output_types(plan) if plan is not None and event_type == "COMPLETE" else {}
        _emit(root, settings, lambda: run_event(event_type, record, settings.namespace, types, ctx.compiled.script()))
    except Exception as exc:  # noqa: BLE001 - lineage events never fail a run
        echo(f"  warning: no OpenLineage {event_type} event: {type(exc).__name__}: {exc}")


def emit_promotion(root: str, config, event_type: str, promotion: dict) -> None:
    """Emit the ``event_type`` event of a promotion (its journal's record)."""
    settings = event_settings(config)
    if settings is not None:
        from .run_events import promotion_event
        _emit(root, settings, lambda: promotion_event(event_type, promotion, settings.namespace))


def send_all(root: str, config) -> tuple[int, int, Optional[str]]:
    """``ledgerflow events send``: every pending event, oldest first (waiting for another process sending some);
    (sent, left, why the first one left was not sent). With events off, nothing is sent (why: they are off). A kept
    file that is not an event is moved aside and named in one line on standard error."""
    settings = event_settings(config)
    if settings is None:
        from .outbox import pending
        return 0, len(pending(root)), "OpenLineage events are off in this workspace (docs/openlineage.md)"
    sender = Sender(settings, warn=lambda line: None)
    sent, left = sender.send_pending(root, wait=True)
    why = sender.broken or sender.busy
    if left and why is None:  # written by a run while this one was sending
        why = "they were kept while this command was sending"
    return sent, left, why

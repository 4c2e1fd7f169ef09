"""Whether a workspace emits OpenLineage events, under which namespace and through which transport.

On when ``ledgerflow.yml`` has ``openlineage:`` (``{namespace, transport, disabled}``; the transport is the
openlineage-python client's own configuration, passed as written) or the client's standard variables
``OPENLINEAGE_URL`` / ``OPENLINEAGE_CONFIG`` are set; off otherwise, with ``disabled: true`` or with the client's
``OPENLINEAGE_DISABLED=true``. Nothing imports the client when events are off.

An HTTP transport gets ledgerflow's bounds where the configuration sets none, so that a receiver that is down or
slow costs a run at most a few seconds: a 2-second timeout and one retry of a refused connection (the client's own
default retries five times with back-off, about 10 seconds). That holds wherever the transport is configured:
``ledgerflow.yml``, ``OPENLINEAGE_URL``, or the client's own configuration (``OPENLINEAGE_CONFIG``'s file, an
``openlineage.yml``, ``OPENLINEAGE__TRANSPORT__...`` variables), and for each HTTP transport inside a ``composite``
one. Whatever the transport, a run also bounds each send in time (:mod:`.outbox`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

HTTP_TIMEOUT_S = 2.0
HTTP_RETRY = {"total": 1, "connect": 1, "read": 0, "backoff_factor": 0.2}


@dataclass(frozen=True)
class EventSettings:
    """An enabled workspace's events: the job namespace and the transport configuration (None: the client's
    standard configuration, from ``OPENLINEAGE_URL`` or ``OPENLINEAGE_CONFIG``)."""

    namespace: str
    transport: Optional[dict]


def event_settings(config) -> Optional[EventSettings]:
    """The events settings of a workspace's :class:`~ledgerflow.compiler.model.WorkspaceConfig` (None: off)."""
    if os.environ.get("OPENLINEAGE_DISABLED", "").strip().lower() == "true":
        return None
    section = getattr(config, "openlineage", None) or {}
    if section.get("disabled"):
        return None
    namespace = section.get("namespace") or os.environ.get("OPENLINEAGE_NAMESPACE") or config.name or "ledgerflow"
    transport = section.get("transport")
    if transport is None and not (os.environ.get("OPENLINEAGE_URL") or os.environ.get("OPENLINEAGE_CONFIG")):
        return None
    return EventSettings(namespace, bounded(transport) if transport is not None else None)


def bounded(transport: dict) -> dict:
    """``transport`` with ledgerflow's HTTP timeout and retries where it sets none (see the module docstring); a
    ``composite`` transport's HTTP transports each get them."""
    out = dict(transport)
    kind = str(out.get("type", "")).lower()
    if kind in ("http", "async_http"):
        out.setdefault("timeout", HTTP_TIMEOUT_S)
        out.setdefault("retry", dict(HTTP_RETRY))
    elif kind == "composite":
        inner = out.get("transports")
        if isinstance(inner, list):
            out["transports"] = [bounded(t) if isinstance(t, dict) else t for t in inner]
        elif isinstance(inner, dict):
            out["transports"] = {k: bounded(t) if isinstance(t, dict) else t for k, t in inner.items()}
    return out


def client_transport() -> Optional[dict]:
    """The transport the client's own configuration gives (``OPENLINEAGE_CONFIG``'s file, ``openlineage.yml``,
    ``OPENLINEAGE__...`` variables, else ``OPENLINEAGE_URL``), bounded as above; None when it gives none (the
    client then makes its default)."""
    from openlineage.client import OpenLineageClient
    from openlineage.client.transport.noop import NoopConfig, NoopTransport
    # a client given a transport reads its configuration without making (or connecting) one
    configured = OpenLineageClient(transport=NoopTransport(NoopConfig())).config.transport
    if isinstance(configured, dict) and configured.get("type"):
        return bounded(configured)
    return standard_transport()


def standard_transport() -> Optional[dict]:
    """The transport ``OPENLINEAGE_URL`` names, bounded as above (None when it is not set: ``OPENLINEAGE_CONFIG``'s
    file is the client's to read)."""
    url = os.environ.get("OPENLINEAGE_URL")
    if not url:
        return None
    transport = {"type": "http", "url": url, "endpoint": os.environ.get("OPENLINEAGE_ENDPOINT", "api/v1/lineage")}
    key = os.environ.get("OPENLINEAGE_API_KEY")
    if key:
        transport["auth"] = {"type": "api_key", "apiKey": key}
    return bounded(transport)

"""Checking OpenLineage events against the specification's JSON schemas (vendored in tests/openlineage_spec) and
ledgerflow's own facets' schema (docs/openlineage-facets.schema.json), and a receiver on 127.0.0.1."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import jsonschema
from referencing import Registry, Resource

REPO = Path(__file__).resolve().parent.parent
SPEC = REPO / "tests" / "openlineage_spec"


def _registry() -> Registry:
    files = [SPEC / "OpenLineage.json", *sorted((SPEC / "facets").glob("*.json")),
             REPO / "docs" / "openlineage-facets.schema.json"]
    resources = []
    for f in files:
        schema = json.loads(f.read_text())
        resources.append((schema["$id"], Resource.from_contents(schema)))
    return Registry().with_resources(resources)


REGISTRY = _registry()
CORE = "https://openlineage.io/spec/2-0-2/OpenLineage.json"


def _validate(instance, ref: str) -> None:
    jsonschema.Draft202012Validator({"$ref": ref}, registry=REGISTRY).validate(instance)


def _facets(facets: dict, where: str) -> int:
    """Each facet validated against the schema its ``_schemaURL`` names; returns how many."""
    for key, facet in (facets or {}).items():
        url = facet.get("_schemaURL")
        assert url and "#/$defs/" in url, f"{where}.{key} has no schema URL"
        base = url.split("#")[0]
        assert base in REGISTRY, f"{where}.{key}: {base} is not a vendored schema"
        _validate(facet, url)
    return len(facets or {})


def validate_event(event: dict) -> int:
    """Validate a run event against the core schema and every facet against its own; returns the facets checked."""
    _validate(event, f"{CORE}#/$defs/RunEvent")
    count = _facets(event["run"].get("facets"), "run") + _facets(event["job"].get("facets"), "job")
    for side, extra in (("inputs", "inputFacets"), ("outputs", "outputFacets")):
        for ds in event.get(side) or []:
            count += _facets(ds.get("facets"), f"{side}[{ds['name']}]") + _facets(ds.get(extra), f"{side}.{extra}")
    return count


class Receiver:
    """An OpenLineage HTTP receiver on 127.0.0.1: keeps every event POSTed; ``delay`` seconds before answering (a
    test may change it between sends)."""

    def __init__(self, delay: float = 0.0):
        received: list[dict] = []
        self.received = received
        self.delay = delay
        me = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - the http.server API
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                time.sleep(me.delay)
                received.append(json.loads(body))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):  # quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def free_port() -> int:
    """A port on 127.0.0.1 nothing listens on (a receiver that is down)."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

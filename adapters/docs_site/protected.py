"""The places ``docs --out`` must stay clear of: every folder ledgerflow reads or publishes data in, and its
own state. A site put there would mix with published partitions and run records, and replacing the site
later would put them at risk, so an ``--out`` that is one of these places, holds one or lies inside one is
refused before anything is written (:class:`DocsOutOverlap`, a usage error).

The places: the run store's records (``target/runs``) and state (``.ledgerflow``); each dataset location and
output destination (their folders before the first ``{{token}}``, as one writer per destination takes them:
:func:`...compiler.writers.project_writers`, which also gives each check's quarantine folder), the folders of
absolute resolver rule paths, and every location a recorded run published or a registered dataset version holds (so a place a
project wrote before its YAML changed stays protected). They are compared as text and as real paths (every
symbolic link resolved), so a link cannot hide an overlap."""
from __future__ import annotations

import os
from typing import Iterator, Optional

from ...compiler.bind.check_places import dataset_places
from ...compiler.errors import LedgerflowError
from ...compiler.model import Workspace
from ...compiler.realpaths import fixed_part, inside
from ...compiler.resolver import is_absolute_or_uri
from ...compiler.writers import project_writers


class DocsOutOverlap(LedgerflowError):
    """``--out`` is, holds or lies inside a place ledgerflow reads or publishes data in (exit 2: nothing was
    written or deleted)."""

    exit_code = 2


def _workspace_places(ws: Workspace) -> Iterator[tuple[str, str]]:
    """(what, folder) of the workspace's declared places; relative folders are relative to the workspace."""
    yield from dataset_places(ws)
    for project in ws.projects:  # outputs and quarantines, as one writer per destination sees them
        for writer in project_writers(ws, project):
            for place in writer.places:
                if place.kind == "path":
                    what = f"the destination of {writer.what}" if writer.key[1] == "output" else writer.what
                    yield what, place.fixed  # the real folder before the first token
    for rid, resolver in ws.config.resolvers.items():
        for rule in resolver.rules:
            path = str(rule.strategy.path or "")
            if rule.strategy.type == "path" and os.path.isabs(path):
                yield f"a location of resolver '{rid}' (rule '{rule.name}')", fixed_part(path)


def _store_places(store) -> Iterator[tuple[str, str]]:
    """(what, folder) of every path the run store names: outputs of recorded runs, registered versions."""
    for rec in store.list_runs():
        for out in rec.get("outputs") or []:
            if os.path.isabs(str(out.get("location") or "")):  # a path (a catalog table's is its name)
                yield f"output {out.get('operation_seq')} of run {rec.get('run_id')}", str(out["location"])
    for reg in store.registrations():
        if os.path.isabs(str(reg.get("location") or "")):
            yield f"version {reg.get('version')} of registered dataset '{reg.get('name')}'", str(reg["location"])


def _overlap(a: str, b: str) -> bool:
    """Whether two absolute folders are one, or one holds the other, as text or as real paths."""
    if inside(a, b, strict=False) or inside(b, a, strict=False):
        return True
    ra, rb = os.path.realpath(a), os.path.realpath(b)
    return inside(ra, rb, strict=False) or inside(rb, ra, strict=False)


def _absolute(root: str, folder: str) -> Optional[str]:
    if not folder or (is_absolute_or_uri(folder) and not os.path.isabs(folder)):
        return None  # a URI is no folder here; an empty fixed part (a token first) is checked by the run
    return os.path.normpath(os.path.join(root, folder))


def check_clear(out: str, root: str, ws: Optional[Workspace], store) -> None:
    """Raise :class:`DocsOutOverlap` when the absolute folder ``out`` is, holds or lies inside a place of the
    workspace at ``root`` (``ws``: None when its files do not load; ``store``: None when nothing ran)."""
    found: list[tuple[str, str]] = [("the run store's run records", os.path.join("target", "runs")),
                                    ("ledgerflow's state", ".ledgerflow")]
    if ws is not None:
        found += list(_workspace_places(ws))
    if store is not None:
        found += list(_store_places(store))
    hits = [(what, place) for what, place in ((w, _absolute(root, f)) for w, f in found)
            if place is not None and _overlap(out, place)]
    if not hits:
        return
    real = os.path.realpath(out)
    what, place = min(hits, key=lambda h: os.path.realpath(h[1]) != real)  # the place --out is, if any, first
    relation = "is" if os.path.realpath(place) == real else "holds" if inside(os.path.realpath(place), real) \
        else "lies inside"
    raise DocsOutOverlap(
        f"--out {out} {relation} {place}, {what}: a site there would mix with data or records ledgerflow keeps, "
        "and replacing it later would put them at risk. Nothing was written or deleted. Give a folder of its own "
        "for the site (the default is target/docs of the workspace).")

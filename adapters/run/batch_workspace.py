"""One workspace load for a whole batch, kept up to date with what the batch registers.

Each run reads the workspace with the datasets earlier runs registered (the run store's versions, and for a
computed number the exact type a registered version was written with), so a run in a batch used to load the
whole workspace again: every file parsed and every producing project bound, for every project-period of the
batch. At 1,000 projects that is a second per run, and a batch of all of them took minutes before the first
row was read. A batch now loads the workspace once (the files as they were when it started, as dbt parses once
per invocation) and, before each run, asks the run store what is registered now. What the batch's own runs
add changes only the registered datasets' version lists, which are updated in place. Anything a fresh load
could see otherwise is loaded afresh: a registered dataset the workspace does not derive from one of its
projects, or one whose columns take a type from the store (a computed number), a name that left the store, a
producer whose plan has errors (its consumers' errors depend on the store), or a version some project pins.
The tests compare the kept workspace with a fresh load after every run of a batch.
"""
from __future__ import annotations

from typing import Callable, Optional

from ...compiler.graph import project_refs
from ...compiler.model import Dataset, DatasetVersion, Workspace
from ...compiler.workspace import load_workspace
from ..store.runstore import STORE_FILE



def _seen(registered: list[Dataset]) -> dict[str, tuple]:
    return {d.name: (tuple(v.version for v in d.versions), tuple((c.name, c.type) for c in d.columns), d.id)
            for d in registered}


def _pinned(ws: Workspace) -> set[str]:
    """The names of the datasets some project reads at a pinned version."""
    names = set()
    for project in ws.projects:
        for ref, _role in project_refs(project):
            if ref.dataset_version is not None:
                ds = ws.find_dataset(ref.dataset_id)
                names.add(ds.name if ds is not None else ref.dataset_id)
    return names


class KeptWorkspace:
    """The workspace of one batch (see the module docstring)."""

    def __init__(self, root: str, registered: Callable[[], list[Dataset]]):
        self._root, self._registered = root, registered  # registered: the run store's datasets, as it lists them
        self.ws: Optional[Workspace] = None
        self.loads = 0  # full loads made (a test counts them)
        self._seen: dict[str, tuple] = {}
        self._pins: set[str] = set()

    def current(self) -> Workspace:
        """The workspace as a fresh load would give it now."""
        registered = self._registered()
        if self.ws is None or not self._refreshed(registered):
            self.ws = load_workspace(self._root, extra_datasets=lambda: registered)
            self.loads += 1
            self._pins = _pinned(self.ws)
        self._seen = _seen(registered)
        return self.ws

    def _refreshed(self, registered: list[Dataset]) -> bool:
        """Bring the kept workspace's registered datasets up to date in place; False (nothing changed) when a
        fresh load is needed instead."""
        ws = self.ws
        now = _seen(registered)
        if set(self._seen) - set(now) or ws.unavailable:
            return False
        changed = [d for d in registered if now[d.name] != self._seen.get(d.name)]
        updates = []
        for stored in changed:
            kept = ws.find_dataset(stored.name)
            if kept is None or stored.name in self._pins or stored.name in ws.inexact_registered:
                return False
            if not kept.registered:
                continue  # a declared dataset of that name: a load ignores the store's entry
            if kept.file == STORE_FILE:
                return False  # the store's own entry: its columns and id come from the store
            updates.append((kept, [DatasetVersion(v.version) for v in stored.versions]))
        for kept, versions in updates:
            kept.versions = versions
        return True



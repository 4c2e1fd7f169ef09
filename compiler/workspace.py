"""Load a workspace folder (``ledgerflow.yml``, ``datasets/*.yml``, ``projects/*.yml``) into the model.

Every file is checked strictly (:mod:`.yaml_reader`): an unknown key is an error naming the closest valid
key, a missing required key or a value of the wrong kind is an error with file and line. All problems of
all files are collected and raised together as one :class:`CompileError`. Each kind of file has its
loader: :mod:`.workspace_config`, :mod:`.workspace_datasets`, :mod:`.workspace_projects`. Then the
registered-datasets pass (:mod:`.registered_pass`) adds the datasets outputs register.

The adapters load workspaces and rebuild snapshots through this module: :func:`find_workspace`,
:func:`load_workspace`, :class:`WorkspaceNotFound`, ``MARKER``, :func:`from_snapshot` and the builders it
takes, :func:`dataset_from_data` and :func:`project_from_data`.
"""
from __future__ import annotations

import glob
import os
from typing import Any, Callable, Optional

import yaml

from .errors import CompileError, DiagnosticCollector, LedgerflowError, did_you_mean
from .gcpause import loading_paused
from .graph import has_registrations
from .model import Dataset, Workspace, WorkspaceConfig
from .workspace_config import MARKER, load_config
from .workspace_datasets import dataset_from_data, load_dataset  # noqa: F401  (dataset_from_data: for adapters)
from .workspace_projects import load_project, project_from_data  # noqa: F401  (project_from_data: for adapters)
from .yaml_reader import written_at
from .yaml_source import load_yaml_text


class WorkspaceNotFound(LedgerflowError):
    """No ``ledgerflow.yml`` where the workspace was looked for."""


def find_workspace(start: Optional[str] = None, explicit: Optional[str] = None) -> str:
    """The workspace root: ``explicit``, else $LEDGERFLOW_WORKSPACE, else the nearest ancestor with the marker."""
    for candidate in (explicit, os.environ.get("LEDGERFLOW_WORKSPACE")):
        if candidate:
            if not os.path.isfile(os.path.join(candidate, MARKER)):
                raise WorkspaceNotFound(f"{candidate} is not a ledgerflow workspace: it has no {MARKER}.")
            return os.path.abspath(candidate)
    here = os.path.abspath(start or os.getcwd())
    while True:
        if os.path.isfile(os.path.join(here, MARKER)):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            raise WorkspaceNotFound(f"no {MARKER} in {os.path.abspath(start or os.getcwd())} or any parent folder; "
                                    "pass --workspace DIR or set LEDGERFLOW_WORKSPACE.")
        here = parent


def from_snapshot(raw: Any, display: str, builder) -> Any:
    """Rebuild a dataset or project from its verbatim snapshot (plain dicts) with located values."""
    errors = DiagnosticCollector()
    data = load_yaml_text(yaml.safe_dump(raw, sort_keys=False), display)
    obj = builder(data, display, errors)
    errors.raise_if_any()
    return obj


def load_workspace(root: str, extra_datasets: Callable[[], list[Dataset]] | None = None) -> Workspace:
    """Load every file of the workspace at ``root``; raises :class:`CompileError` listing all problems.

    ``extra_datasets`` supplies datasets registered by earlier runs (the run store), which join the catalog.
    The collector is paused meanwhile (:func:`.gcpause.loading_paused`).
    """
    with loading_paused():
        return _load_workspace(root, extra_datasets)


def _load_workspace(root: str, extra_datasets: Callable[[], list[Dataset]] | None) -> Workspace:
    errors = DiagnosticCollector()
    root = os.path.abspath(root)
    if not os.path.isfile(os.path.join(root, MARKER)):
        raise WorkspaceNotFound(f"{root} is not a ledgerflow workspace: it has no {MARKER}.")

    def collect(loader, pattern):
        out = []
        for path in sorted(glob.glob(os.path.join(glob.escape(root), pattern))):
            display = os.path.relpath(path, root)
            try:
                obj = loader(path, display, errors)
            except CompileError as exc:
                errors.extend(exc.diagnostics)
                continue
            if obj is not None:
                out.append(obj)
        return out

    try:
        config = load_config(os.path.join(root, MARKER), MARKER, errors)
    except CompileError as exc:
        errors.extend(exc.diagnostics)
        config = WorkspaceConfig(name="", default_resolver=None, resolvers={}, file=MARKER)
    datasets = collect(load_dataset, "datasets/*.yml") + collect(load_dataset, "datasets/*.yaml")
    projects = collect(load_project, "projects/*.yml") + collect(load_project, "projects/*.yaml")
    if extra_datasets:
        declared = {d.name for d in datasets}
        datasets += [d for d in extra_datasets() if d.name not in declared]
    _check_unique(datasets, "dataset", errors)
    _check_unique(projects, "project", errors)
    for ds in datasets:
        if ds.resolver_id and ds.resolver_id not in config.resolvers:
            errors.add("WS-004", f"dataset '{ds.name}' names resolver '{ds.resolver_id}', which ledgerflow.yml does "
                       "not define", written_at(ds.resolver_id, ds.location), ds.resolver_id,
                       did_you_mean(ds.resolver_id, config.resolvers))
    errors.raise_if_any()
    ws = Workspace(root=root, config=config, datasets=datasets, projects=projects)
    if has_registrations(ws):
        # imported here for start-up speed, not to dodge a circle: binding (sqlglot) costs ~0.1 s that a
        # workspace where no output registers a dataset never needs
        from .registered_pass import derive_registered
        derive_registered(ws)
    return ws


def _check_unique(items: list, what: str, errors: DiagnosticCollector) -> None:
    for attr in ("id", "name"):
        seen: dict[str, Any] = {}
        for item in items:
            key = getattr(item, attr)
            if key and key in seen:
                errors.add("WS-002", f"{what} {attr} '{key}' is used by both {seen[key].file} and {item.file}",
                           written_at(key, item.location), key, f"each {what} needs a unique {attr}")
            seen[key] = item

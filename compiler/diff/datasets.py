"""What changed in each dataset's declaration, and in the resolver that locates it by default.

A project-level ``resolver_overrides`` entry is part of the project (it reaches that project's prints);
here a dataset's resolver is its own ``resolver_id``, else the workspace's ``default_resolver``.
"""
from __future__ import annotations

from typing import Optional

from ..model import Dataset, Workspace
from .prints import resolver_print
from .result import DatasetDiff, Status


def _versions(ds: Dataset) -> str:
    return ", ".join(f"{v.version}{'' if v.status == 'active' else ' (disabled)'}" for v in ds.versions) or "none"


def _resolver(ws: Workspace, ds: Dataset) -> Optional[str]:
    return ds.resolver_id or ws.config.default_resolver


def dataset_changes(base_ws: Workspace, base: Dataset, head_ws: Workspace, head: Dataset) -> list[str]:
    """Human-readable changes from ``base`` to ``head`` (empty when none matters to a compile or a run)."""
    out: list[str] = []
    for attr, label in (("id", "id"), ("status", "status"), ("table_name", "table name"),
                        ("temporal_mode", "temporal_mode")):
        a, b = getattr(base, attr), getattr(head, attr)
        if a != b:
            out.append(f"{label} {a} -> {b}")
    base_cols = {c.name: c for c in base.columns}
    head_cols = {c.name: c for c in head.columns}
    for name, col in head_cols.items():
        old = base_cols.get(name)
        if old is None:
            out.append(f"column {name} added ({col.type})")
        elif old.type != col.type:
            out.append(f"column {name} type {old.type} -> {col.type}")
        elif old.nullable != col.nullable:
            out.append(f"column {name} nullable {str(old.nullable).lower()} -> {str(col.nullable).lower()}")
    out += [f"column {name} removed" for name in base_cols if name not in head_cols]
    if [c for c in base_cols if c in head_cols] != [c for c in head_cols if c in base_cols]:
        out.append("column order changed")
    if _versions(base) != _versions(head):
        out.append(f"versions {_versions(base)} -> {_versions(head)}")
        if base.latest_active_version() != head.latest_active_version():
            out.append(f"latest active version {base.latest_active_version()} -> {head.latest_active_version()} "
                       "(projects that do not pin a version read the new one)")
    rb, rh = _resolver(base_ws, base), _resolver(head_ws, head)
    if rb != rh:
        out.append(f"resolver {rb} -> {rh}")
    elif resolver_print(base_ws, rb) != resolver_print(head_ws, rh):
        out.append(f"resolver {rh}: rules changed in ledgerflow.yml")
    return out


def compare_datasets(base_ws: Workspace, head_ws: Workspace) -> list[DatasetDiff]:
    """Every declared dataset of either side, by name (registered datasets are the same on both sides)."""
    base = {d.name: d for d in base_ws.datasets if not d.registered}
    head = {d.name: d for d in head_ws.datasets if not d.registered}
    out = []
    for name in sorted(set(base) | set(head)):
        if name not in base:
            out.append(DatasetDiff(name, Status.ADDED, [f"declared ({head[name].temporal_mode}, "
                                                        f"{len(head[name].columns)} columns)"]))
        elif name not in head:
            out.append(DatasetDiff(name, Status.REMOVED, ["no longer declared"]))
        else:
            changes = dataset_changes(base_ws, base[name], head_ws, head[name])
            out.append(DatasetDiff(name, Status.MODIFIED if changes else Status.UNCHANGED, changes))
    return out

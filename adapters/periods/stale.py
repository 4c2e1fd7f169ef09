"""Stale project-periods (``ledgerflow status``, ``run --stale``; docs/commands.md "Stale periods"): those whose
last completed run read inputs that changed since.

A project-period's last completed run (:meth:`..store.published.PublishedTable.last_completed`, one query for
all of them) is compared with the workspace as it is now:

- its project file: a different sha256 than the run recorded is a changed project declaration;
- each dataset declaration it read: a different digest (:func:`..store.published.declaration_sha256`), or no
  longer declared;
- each input it read unpinned: a newer active version of a declared dataset, or a registered dataset with a
  newer version holding the period (its producing project ran again);
- each local input location it read: the files now against its recorded fingerprint, by listing, size
  and modification time only (no file is read: a file touched without a change counts as edited). Catalog
  tables and remote URIs are not checked without Spark: they are counted as not checked.

A project-period downstream (in the workspace graph) of a stale open one is stale too, for the same period:
running its upstream registers a new version it reads. A closed upstream's published outputs stand, so it
makes nothing downstream stale. Each location's files are listed once however many runs read it.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Optional

from ..inputs.fingerprint import HashBudget, compare, describe_change, fingerprint_path, local_path
from ..inputs.registered_reads import version_read
from ..store.closure_table import CLOSE, describe
from ..store.published import declaration_sha256



@dataclass
class StaleEntry:
    """One stale project-period: its last completed run and why it is stale."""

    project: str
    period: str
    run_id: str
    reasons: list[str]
    closure: Optional[dict] = None  # the close holding it (it needs `restate`, not `run`)


@dataclass
class StaleReport:
    """What ``status`` found: the stale project-periods (period, then project), how many were checked, and the
    inputs it could not check."""

    entries: list[StaleEntry] = field(default_factory=list)
    checked: int = 0
    unchecked: set = field(default_factory=set)  # (dataset, location) not fingerprinted without Spark
    gone: set = field(default_factory=set)  # projects with runs that are no longer in the workspace


class _Now:
    """The workspace as it is now, each fact computed once: project file digests, dataset declaration
    digests, registered versions by period, local locations' listings."""

    def __init__(self, store, ws):
        self.ws = ws
        self.projects = {p.name: p for p in ws.projects}
        self.datasets = {d.id: d for d in ws.datasets}
        self._project_sha: dict[str, Optional[str]] = {}
        self._declared: dict[str, str] = {}
        self._holding: Optional[dict] = None
        self._listings: dict[str, dict] = {}
        self.files_judged: dict[str, list[str]] = {}  # runs.input_files text -> its changes
        self.store = store

    def project_sha(self, name: str) -> Optional[str]:
        if name not in self._project_sha:
            path = os.path.join(self.ws.root, self.projects[name].file)
            try:
                with open(path, "rb") as fh:
                    self._project_sha[name] = hashlib.sha256(fh.read()).hexdigest()
            except OSError:
                self._project_sha[name] = None
        return self._project_sha[name]

    def declaration(self, dataset_id: str) -> Optional[str]:
        if dataset_id not in self._declared:
            ds = self.datasets.get(dataset_id)
            self._declared[dataset_id] = None if ds is None or ds.raw is None else declaration_sha256(ds.raw)
        return self._declared[dataset_id]

    def newest_holding(self, name: str, period: str) -> Optional[int]:
        """The version of registered dataset ``name`` a run would read for ``period`` now (:func:`version_read`)."""
        if self._holding is None:
            self._holding = {}
            for reg in self.store.registrations():
                self._holding.setdefault(reg["name"], []).append(reg)
        return version_read(self._holding.get(name, []), period)

    def listing(self, path: str) -> dict:
        if path not in self._listings:
            self._listings[path] = fingerprint_path(path, HashBudget(0))  # sizes and mtimes: no file is read
        return self._listings[path]


def _reasons(now: _Now, row: dict, report: StaleReport) -> list[str]:
    """Why the last completed run ``row`` of a project-period is stale (empty: it is not)."""
    facts, out = row["inputs"], []
    project = now.projects[row["project"]]
    if facts.get("project_sha256") and facts["project_sha256"] != now.project_sha(project.name):
        out.append(f"project declaration {project.file} changed since the run")
    for d in facts.get("datasets") or []:
        current = now.declaration(d["id"])
        if current is None:
            out.append(f"dataset '{d['name']}' is no longer declared")
        elif current != d["sha256"]:
            out.append(f"dataset declaration '{d['name']}' ({now.datasets[d['id']].file}) changed since the run")
    for r in facts.get("reads") or []:
        if r.get("pinned") or r.get("source") == "in_memory":
            continue
        if r.get("source") == "registered":
            newest = now.newest_holding(r["dataset"], row["period"])
            if newest is not None and newest > r["version"]:
                out.append(f"registered dataset '{r['dataset']}' has version {newest} for {row['period']} now; the "
                           f"run read version {r['version']} (not pinned)")
            continue
        ds = now.datasets.get(r.get("dataset_id"))
        latest = ds.latest_active_version() if ds is not None else None
        if latest is not None and latest != r["version"]:
            out.append(f"dataset '{r['dataset']}' has active version {latest} now; the run read version "
                       f"{r['version']} (not pinned)")
    files_key = (row.get("keys") or (None, None))[1]
    if files_key is None or files_key not in now.files_judged:  # runs recording the same files: judged once
        judged = _file_reasons(now, facts.get("fingerprints") or [], report)
        if files_key is None:
            return out + judged
        now.files_judged[files_key] = judged
    return out + now.files_judged[files_key]


def _file_reasons(now: _Now, prints: list[dict], report: StaleReport) -> list[str]:
    """The changes of the local input locations ``prints`` (recorded fingerprints) against their files now."""
    out = []
    for fp in prints:
        path = local_path(fp.get("location") or "")
        if fp.get("kind") != "path" or not fp.get("checked") or path is None:
            report.unchecked.add((fp.get("dataset"), fp.get("location")))
            continue
        change = _compare(fp, now.listing(path))
        if change is not None:
            out.append(describe_change({**fp, **change}))
    return out


def _compare(recorded: dict, current: dict) -> Optional[dict]:
    """What changed at one local location (:func:`..inputs.fingerprint.compare`, by size and mtime); a
    location recorded without its file list (over 10,000 files) by its file count and total bytes."""
    if recorded.get("exists") is not False and current.get("exists") is not False and recorded.get("files") is None:
        before = (recorded.get("file_count"), recorded.get("total_bytes"))
        after = (current.get("file_count"), current.get("total_bytes"))
        return None if before == after else {"change": "files", "listing": f"{before[0]} -> {after[0]} files, "
                                             f"{before[1]} -> {after[1]} bytes"}
    return compare(recorded, current)


def current_names(ws) -> dict[str, str]:
    """Project id -> its name, of every project of the workspace ``ws`` now (closes and renamed runs are found by id)."""
    return {p.id: p.name for p in ws.projects}


def published_runs(store, ws, periods: Optional[list[str]] = None, names: Optional[list[str]] = None) -> list[dict]:
    """The last completed run of every project-period (:meth:`last_completed`'s rows; of ``periods`` and of the projects
    ``names`` when given), under its project's name now: a renamed project's runs under an earlier name are found by
    its id, and the newest under either name is the one published. A project no longer in the workspace keeps the name
    its runs were recorded under."""
    current = current_names(ws)
    renamed = {old: current[pid] for old, pid in store.names_ran_as().items()
               if pid in current and current[pid] != old}
    published: dict[tuple[str, str], dict] = {}
    for r in sorted(store.last_completed(periods, None if names is None else list(names) + list(renamed)),
                    key=lambda r: r["finished_at"] or ""):
        key = (renamed.get(r["project"], r["project"]), r["period"])
        if names is None or key[0] in names:
            published[key] = {**r, "project": key[0]}  # the newest under either name wins
    return list(published.values())


def stale_report(store, ws, periods: Optional[list[str]] = None, projects: Optional[list[str]] = None,
                 published: Optional[list[dict]] = None, graph=None) -> StaleReport:
    """The stale project-periods among the last completed runs (of ``periods`` / ``projects`` when given;
    ``published``: those runs, when the caller has them; else :func:`published_runs`, which follows a renamed
    project) of the workspace ``ws`` (see the module docstring).
    ``graph``: the workspace graph, when the caller has it (built here only when something is stale)."""
    now = _Now(store, ws)
    report = StaleReport()
    rows = published if published is not None else published_runs(store, ws, periods, projects)
    closures = store.closures(projects, periods, current=current_names(ws))
    by_key = {}
    for row in rows:
        if row["project"] not in now.projects:
            report.gone.add(row["project"])
            continue
        report.checked += 1
        by_key[(row["project"], row["period"])] = row
        reasons = _reasons(now, row, report)
        if reasons:
            report.entries.append(StaleEntry(row["project"], row["period"], row["run_id"], reasons))
    _downstream(report, by_key, closures, ws, graph)
    for e in report.entries:
        e.closure = _closed(closures, (e.project, e.period))
    report.entries.sort(key=lambda e: (e.period, e.project))
    return report


def _downstream(report: StaleReport, by_key: dict, closures: dict, ws, graph) -> None:
    """Add the project-periods downstream of a stale open one (see the module docstring), with their reason: the
    graph is walked project -> dataset -> project, and not on past a closed project-period."""
    if not report.entries:
        return
    from ...compiler.graph import PROJECT, WorkspaceGraph, node_id, split_id
    graph = graph or WorkspaceGraph(ws)
    found = {(e.project, e.period): e for e in report.entries}
    queue = [key for key in found if not _closed(closures, key)]
    while queue:
        project, period = queue.pop(0)
        below = set()
        for mid in graph.successors(node_id(PROJECT, project)):
            below |= {n for n in (graph.successors(mid) if split_id(mid)[0] != PROJECT else [mid])
                      if split_id(n)[0] == PROJECT}
        for node in sorted(below):
            key = (split_id(node)[1], period)
            if key not in by_key:
                continue  # never ran for the period: nothing published to be stale
            why = f"upstream project '{project}' is stale for {period}: running it registers a version this reads"
            if key in found:
                if why not in found[key].reasons:
                    found[key].reasons.append(why)
                continue
            found[key] = StaleEntry(key[0], period, by_key[key]["run_id"], [why])
            report.entries.append(found[key])
            if not _closed(closures, key):
                queue.append(key)


def _closed(closures: dict, key: tuple) -> Optional[dict]:
    closure = closures.get(key)
    return closure if closure and closure["action"] == CLOSE else None


def render_status(report: StaleReport, asked: str, hint: bool = True) -> list[str]:
    """``ledgerflow status``'s lines: each stale project-period with its run and reasons (a closed one says it
    needs ``restate``), then (``hint``) what ``run --stale`` would do; ``asked``: the periods asked (text)."""
    scope = f" of {asked}" if asked else ""
    if not report.checked:
        return [f"No completed run{scope} yet: nothing is published, so nothing can be stale."]
    lines = []
    if not report.entries:
        lines.append(f"Up to date: none of the {report.checked} published project-period"
                     f"{'s' if report.checked != 1 else ''}{scope} read an input that changed since its last "
                     "completed run.")
    else:
        closed = sum(e.closure is not None for e in report.entries)
        lines.append(f"Stale: {len(report.entries)} of {report.checked} published project-period"
                     f"{'s' if report.checked != 1 else ''}{scope} (last completed run, then why):")
        for e in report.entries:
            tail = (f"  {describe(e.closure)}: `ledgerflow restate {e.project} --period {e.period} --reason TEXT` "
                    "changes it" if e.closure else "")
            lines.append(f"  {e.period}  {e.project}  run {e.run_id}{tail}")
            lines += [f"      {reason}" for reason in e.reasons]
        if hint and len(report.entries) > closed:
            lines.append(f"`ledgerflow run --stale --period {asked or 'P'}` runs the {len(report.entries) - closed} "
                         "open one" + ("s" if len(report.entries) - closed != 1 else "") + ", upstream first.")
    if report.unchecked:
        names = sorted({d or "?" for d, _ in report.unchecked})
        lines.append(f"Not checked: {len(report.unchecked)} input location{'s' if len(report.unchecked) != 1 else ''} "
                     f"of {', '.join(names)} (catalog tables and remote URIs are not fingerprinted without Spark).")
    if report.gone:
        many = len(report.gone) != 1
        lines.append(f"Not checked: project{'s' if many else ''} {', '.join(sorted(report.gone))} "
                     f"ran but {'are' if many else 'is'} no longer in the workspace.")
    return lines

"""The workspace as one JSON-ready document (``ledgerflow manifest``; its schema: ``docs/manifest.schema.json``).

Everything comes from the compiler and the scenario tests' files: no JVM, no run store. Per project: its
identity, input, operations, the datasets it reads (with their roles), its outputs (destination, format, the
registered dataset, every column with its type), the projects it depends on (through registered datasets),
its checks, the scenario tests naming it, the SHA-256 of its compiled SQL and its errors. Per dataset: its
declaration (or ``registered`` with the project registering it), columns, versions and readers. Keys are
sorted and lists ordered, so one workspace always gives the same bytes.
"""
from __future__ import annotations

import hashlib
from typing import Optional

from ...compiler.errors import Diagnostic
from ...compiler.graph import dataset_name, project_reads, registrations
from ...compiler.model import Destination, OutputOperation, Project, Workspace
from ...compiler.plan import output_types
from ...compiler.version import version
from ..compile_out.script_cache import ScriptCache, plan_and_script
from ..scenarios.spec import load_all

MANIFEST_VERSION = 1


def _error(d: Diagnostic) -> dict:
    loc = d.location
    return {"code": d.code, "file": loc.file, "line": loc.line, "column": loc.column, "message": d.message}


def _destination(d: Optional[Destination]) -> Optional[dict]:
    if d is None:
        return None
    target = {"table": d.table, "path": d.path, "catalog_table": d.catalog_table}.get(d.kind)
    return {"kind": d.kind, "target": str(target) if target is not None else None,
            "format": "table" if d.kind == "catalog_table" else str(d.format),
            "resolver": str(d.resolver) if d.resolver else None}


def _project(ws: Workspace, project: Project, regs: dict, producers: dict, tests: list,
             scripts: Optional[ScriptCache]) -> tuple[dict, list]:
    """One project's entry and its errors."""
    plan, script, errors = plan_and_script(ws, project, scripts)
    sql = script + "\n" if plan is not None else None  # the bytes `compile` prints and `compile --out` writes
    reads = []
    for ref, role, _loc in project_reads(project):
        name = dataset_name(ws, str(ref), regs) or str(ref)
        reads.append({"dataset": name, "role": role, "registered": name in regs})
    columns = {seq: [{"name": n, "type": t} for n, t in cols] for seq, cols in (output_types(plan) if plan else {}).items()}
    # the output each check judges, as the compiler bound its `on` (a registered name, a table, a seq); None: the input
    judged = {str(c.check.name): c.on for c in plan.checks} if plan else {}
    outputs = []
    for op in project.operations:
        if isinstance(op, OutputOperation):
            outputs.append({"seq": op.seq, "name": str(op.name), "destination": _destination(op.destination),
                            "registers": str(op.register_as_dataset) if op.register_as_dataset else None,
                            "columns": columns.get(op.seq, [])})
    upstream = sorted({p for r in reads if r["registered"] for p in producers.get(r["dataset"], []) if p != project.name})
    named = [t for _display, t, _problems in tests if t is not None and str(t.project) in (project.name, project.id)]
    return {
        "id": str(project.id), "name": project.name, "version": project.version, "status": str(project.status),
        "file": project.file, "description": str(project.description or ""),
        "input": {"dataset": dataset_name(ws, str(project.input.dataset_id), regs) or str(project.input.dataset_id),
                  "version": project.input.dataset_version},
        "operations": [{"seq": op.seq, "name": str(op.name), "kind": str(op.kind) if op.kind else None,
                        "description": str(op.description or "")} for op in project.operations],
        "reads": reads,
        "outputs": outputs,
        "depends_on": upstream,
        "checks": [{"name": str(c.name), "kind": str(c.kind) if c.kind else None, "on": str(c.on or "input"),
                    "output_seq": judged.get(str(c.name)), "severity": str(c.severity),
                    "on_violation": str(c.on_violation) if c.on_violation else None}
                   for c in project.checks],
        "tests": sorted(({"name": str(t.name), "period": str(t.period)} for t in named),
                        key=lambda t: (t["name"], t["period"])),
        "sql_sha256": hashlib.sha256(sql.encode("utf-8")).hexdigest() if sql is not None else None,
        "errors": [_error(d) for d in errors],
    }, errors


def build_manifest(ws: Workspace, scripts: Optional[ScriptCache] = None) -> tuple[dict, list[Diagnostic]]:
    """The manifest of ``ws`` (see the module docstring) and the errors its projects have; ``scripts``: the
    compiled scripts kept between invocations, or None to compile each project."""
    regs = registrations(ws)
    producers = {name: [p.name for p, _op in found] for name, found in regs.items()}
    tests = load_all(ws.root)
    projects, errors = {}, []
    if scripts is not None:
        scripts.precompile(ws, sorted(ws.projects, key=lambda p: p.name))
    for project in sorted(ws.projects, key=lambda p: p.name):
        projects[project.name], found = _project(ws, project, regs, producers, tests, scripts)
        errors += found
    readers: dict[str, set] = {}
    for name, entry in projects.items():
        for read in entry["reads"]:
            readers.setdefault(read["dataset"], set()).add(name)
    datasets = {}
    for ds in sorted(ws.datasets, key=lambda d: d.name):
        datasets[ds.name] = {
            "id": str(ds.id), "name": ds.name, "status": str(ds.status), "table": str(ds.table_name),
            "temporal_mode": str(ds.temporal_mode), "registered": bool(ds.registered), "file": ds.file or None,
            "columns": [{"name": c.name, "type": str(c.type), "nullable": bool(c.nullable)} for c in ds.columns],
            "versions": sorted(v.version for v in ds.versions),
            "registered_by": producers.get(ds.name, []), "read_by": sorted(readers.get(ds.name, ()))}
    for name in sorted(set(regs) - set(datasets)):  # registered by an output, no version yet
        datasets[name] = {"id": None, "name": name, "status": "not yet registered", "table": name,
                          "temporal_mode": "period", "registered": True, "file": None, "columns": [], "versions": [],
                          "registered_by": producers[name], "read_by": sorted(readers.get(name, ()))}
    manifest = {"manifest_version": MANIFEST_VERSION, "ledgerflow_version": version(),
                "workspace": {"name": ws.config.name, "default_resolver": ws.config.default_resolver,
                              "resolvers": sorted(ws.config.resolvers)},
                "projects": projects, "datasets": datasets}
    return manifest, errors

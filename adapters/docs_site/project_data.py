"""The data of a project's page and of its column lineage page: read from the project's typed plan
(:func:`~ledgerflow.compiler.compile.plan_project`), its compiled script (:func:`~ledgerflow.compiler.compile.
compile_project`), its lineage (:func:`~ledgerflow.compiler.lineage.plan_lineage`, across registered datasets)
and its scenario tests (:func:`..scenarios.spec.load_all`). Plain dicts out, JSON-ready."""
from __future__ import annotations

import os
from typing import Optional

from ...compiler.compile import plan_project
from ...compiler.errors import Diagnostic
from ...compiler.lineage import plan_lineage
from ...compiler.lineage_formats import _DESCRIPTION as KIND_DESCRIPTION
from ...compiler.lineage_formats import output_names
from ...compiler.model import OutputOperation, Project, Workspace
from ...compiler.plan import OutputPlan, Plan
from ..compile_out.script_cache import ScriptCache, plan_and_script
from . import ids


def diagnostic(d: Diagnostic) -> dict:
    """A diagnostic as the site shows it: code, place, message, offending text, hint and its one line."""
    loc = d.location
    return {"code": d.code, "file": loc.file, "line": loc.line, "column": loc.column, "message": d.message,
            "text": d.text, "hint": d.hint, "rendered": d.render()}


def source_lines(root: str, file: str) -> list[str]:
    """The lines of a workspace file as written (empty when it cannot be read: the page says so)."""
    try:
        with open(os.path.join(root, file), encoding="utf-8", errors="replace") as fh:
            return fh.read().splitlines()
    except OSError:
        return []


def operation_span(lines: list[str], line: int, column: int) -> tuple[int, int]:
    """The 1-based first and last line of the YAML list item whose first key is at ``line``:``column``: its
    lines run until a non-blank line indented less than the key (the next item or the next top-level key)."""
    indent = max(column - 1, 1)
    last = line
    for number in range(line + 1, len(lines) + 1):
        text = lines[number - 1]
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if len(text) - len(text.lstrip(" ")) < indent:
            break
        last = number
    return line, last


def _operation(op, lines: list[str]) -> dict:
    loc = op.location
    first, last = operation_span(lines, loc.line, loc.column) if loc and loc.line and lines else (0, 0)
    out = {"seq": op.seq, "name": str(op.name), "kind": str(op.kind) if op.kind else "?",
           "description": str(op.description or ""), "selector": str(op.selector) if op.selector else None,
           "first_line": first, "last_line": last}
    if isinstance(op, OutputOperation):
        out["register_as_dataset"] = str(op.register_as_dataset) if op.register_as_dataset else None
    return out


def _outputs(plan: Plan, known_datasets: set[str]) -> list[dict]:
    names = output_names(plan)
    out = []
    for op in plan.operations:
        if not isinstance(op, OutputPlan):
            continue
        registered = getattr(op.operation, "register_as_dataset", None)
        out.append({"seq": op.seq, "name": names.get(op.seq, f"output_{op.seq}"),
                    "registers": str(registered) if registered else None,
                    "registers_href": ids.dataset_page(str(registered)) if registered and str(registered) in known_datasets
                    else None,
                    "columns": [{"name": name, "type": str(col.type)} for name, col in op.columns.items()]})
    return out


def _checks(project: Project, plan: Optional[Plan]) -> list[dict]:
    bound = {c.check.name: c for c in (plan.checks if plan else [])}
    out = []
    for check in project.checks:
        b = bound.get(check.name)
        out.append({"name": str(check.name), "kind": str(check.kind or "?"), "on": str(check.on or "input"),
                    "severity": str(check.severity), "on_violation": str(check.on_violation or ""),
                    "columns": list(b.columns) if b else [],
                    "line": check.location.line if check.location else 0})
    return out


def _tests(project: Project, tests: list) -> list[dict]:
    """The scenario tests naming ``project`` (by name or id); a test file with errors is listed with them."""
    out = []
    for display, test, problems in tests:
        if test is None:
            continue
        if str(test.project) not in (project.name, project.id):
            continue
        out.append({"name": str(test.name), "file": display, "period": str(test.period),
                    "description": str(test.description or ""),
                    "given": [str(g.dataset) for g in test.given],
                    "expect": [str(e.output) for e in test.expect],
                    "error": str(test.error) if test.error else None,
                    "checks": {str(k): str(v) for k, v in test.checks.items()},
                    "problems": [diagnostic(d) for d in problems]})
    return out


def project_data(ws: Workspace, project: Project, tests: list, runs: list[dict],
                 scripts: Optional[ScriptCache] = None) -> tuple[dict, Optional[Plan], list[Diagnostic]]:
    """The project page's data, the project's plan (None when it has errors) and its errors: its operations
    (with their YAML lines), compiled SQL (from ``scripts`` when given), outputs, checks, tests, runs and errors."""
    lines = source_lines(ws.root, project.file)
    plan, sql, errors = plan_and_script(ws, project, scripts)  # binds once; its plan is the one lineage reads
    known = {d.name for d in ws.datasets}
    data = {
        "name": project.name, "id": str(project.id), "version": project.version, "status": str(project.status),
        "description": str(project.description or ""), "file": project.file, "source": lines,
        "input": {"dataset": str(project.input.dataset_id), "version": project.input.dataset_version,
                  "href": ids.dataset_page(plan.input_dataset.name) if plan and plan.input_dataset else None},
        "operations": [_operation(op, lines) for op in project.operations],
        "sql": sql,
        "outputs": _outputs(plan, known) if plan else [],
        "checks": _checks(project, plan),
        "tests": _tests(project, tests),
        "runs": runs,
        "errors": [diagnostic(d) for d in errors],
        "lineage_href": ids.lineage_page(project.name) if plan else None,
    }
    return data, plan, errors


VIA_ENDS = 5  # registered datasets shown at each end of a longer path


def _via(via: tuple) -> dict:
    """The registered datasets a path crossed, as the page shows them: all of them, or for a path longer than
    twice :data:`VIA_ENDS` the nearest and the furthest ones and how many between (``via_hidden``, at index
    ``VIA_ENDS``): a project at the end of a chain of a thousand stays a page of a few kilobytes, and the site of
    a long chain grows with its length, not its square."""
    if len(via) <= 2 * VIA_ENDS:
        return {"via": list(via)}
    return {"via": list(via[:VIA_ENDS]) + list(via[-VIA_ENDS:]), "via_hidden": len(via) - 2 * VIA_ENDS}


def lineage_data(ws: Workspace, project: Project, plan: Plan, walker=None) -> dict:
    """The lineage page's data: per output column its inputs (dataset, column, kind, the registered
    datasets the path went through) and the checks reading it; the kinds with what each means. ``walker``: a
    :class:`~ledgerflow.compiler.lineage.LineageWalker` shared by every project's page."""
    names = output_names(plan)
    graph_names = {d.name for d in ws.datasets}
    columns = []
    for c in plan_lineage(plan, ws, plan_project, walker):
        columns.append({
            "output": c.output, "output_name": names.get(c.output, f"output_{c.output}"), "column": c.column,
            "checks": list(c.checks),
            "inputs": [{"dataset": i.dataset, "column": i.column, "kind": i.kind, **_via(i.via),
                        "href": ids.dataset_page(i.dataset) if i.dataset in graph_names else None}
                       for i in c.inputs]})
    return {"project": project.name, "project_href": ids.project_page(project.name), "columns": columns,
            "kinds": dict(KIND_DESCRIPTION)}

"""Emit the compiled script: a header naming parameters and inputs, then each statement with a
comment saying what it does. Deterministic byte for byte."""
from __future__ import annotations

from . import parameters
from .checks.plan import CheckPlan
from .check_script import script_section
from .model import Project
from .plan import InputView
from .render import comment
from .stage import Statement


def script(project: Project, inputs: list[InputView], statements: list[Statement], version: str,
           checks: tuple[CheckPlan, ...] | list[CheckPlan] = ()) -> str:
    """The whole compiled SQL script (parameters as markers); the checks' SQL follows the statements."""
    p = project
    lines = [comment(f"ledgerflow {version}: project {p.name} (id {p.id}, version {p.version})"),
             comment("Parameters: " + ", ".join(f":{name}" for name in parameters.NAMES)),
             comment("Inputs (views the runner creates from each dataset's resolved locations, normalised to the"),
             comment("declared columns plus system columns):")]
    for v in inputs:
        pin = f"version {v.pinned_version}" if v.pinned_version is not None else "latest active version"
        lines.append(comment(f"  {v.view} <- dataset {v.dataset.name} ({v.dataset.temporal_mode}, {pin})"))
    lines.append("")
    for st in statements:
        lines.append(describe(st))
        lines.append(st.sql + ";")
        lines.append("")
    if checks:
        lines.append(script_section(list(checks)))
    return "\n".join(lines)


def describe(st: Statement, note: str = "") -> str:
    """The comment line above a statement in the script (``note`` is appended to its text)."""
    return comment(statement_text(st) + note)


def statement_text(st: Statement) -> str:
    """What a statement does, in words (names as the user wrote them; :func:`comment` escapes them)."""
    if st.kind == "stage":
        ops = st.operations
        span = "input" if ops == [0] else f"operations {_span(ops)}"
        return f"{st.name}: {span}; materialised by the runner before the next statement"
    op = st.operation
    return f"{st.name}: operation {op.seq} '{op.name}' writes {destination_text(op)}"


def destination_text(op) -> str:
    """A short description of an output's destination."""
    d = op.destination
    if d.kind == "table":
        return f"table {d.table}" + (f" (resolver {d.resolver})" if d.resolver else "")
    if d.kind == "path":
        return f"path {d.path} ({d.format})"
    return f"catalog table {d.catalog_table}"


def _span(ops: list[int]) -> str:
    real = [o for o in ops if o]
    if not real:
        return "input"
    prefix = "input, " if 0 in ops else ""
    return prefix + (str(real[0]) if len(real) == 1 else f"{real[0]}-{real[-1]}")

"""The checks' part of a compiled script and a check's fingerprint (``diff``), from the SQL of each check's kind
(its registry entry, :mod:`ledgerflow.compiler.kinds.registry`; the SQL itself is in :mod:`.sql`)."""
from __future__ import annotations

import hashlib
from typing import Callable, Optional

from .kinds.registry import check_kind
from .render import comment
from .checks.plan import CheckPlan
from .checks.sql import LIVE_INPUT, check_view, describe


def statements(check: CheckPlan, view: Callable[[Optional[int]], str] = check_view) -> list[str]:
    """The statements ``compile`` prints for a check (its kind's SQL): a row check's violating rows, a set check's
    query, a reconcile's measures at both ends; ``view`` names the view read for an output seq (None: the input)."""
    return check_kind(check.kind).sql(check, view)


def script_section(checks: list[CheckPlan]) -> str:
    """The checks' part of the compiled script ("" without checks): deterministic, in the order written."""
    if not checks:
        return ""
    lines = [comment("Checks (evaluated by the run on the rows it stages, before the commit point; `input` is the"),
             comment("rows after the period filter, output_NNN the rows output NNN writes):"), ""]
    if any(c.live_input for c in checks):
        lines[1:2] = [comment(f"rows after the period filter, {LIVE_INPUT} those of them not deleted (what a reconcile "
                              "from the input"),
                      comment("to an output that leaves deleted rows out counts), output_NNN the rows output NNN "
                              "writes):")]
    for check in checks:
        lines.append(comment(describe(check)))
        for text in statements(check):
            lines.append(text + ";")
        lines.append("")
    return "\n".join(lines)


def fingerprint(check: CheckPlan) -> str:
    """A digest of what a check asserts and does (``diff``: modified when it changes; its name aside)."""
    text = "\n".join([describe(check).split(":", 1)[1], *statements(check), ",".join(check.key)])
    return hashlib.sha256(text.encode()).hexdigest()

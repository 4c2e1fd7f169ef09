"""``reconcile``: measures at two ends (the input or an output, and a later output) agree, but for the operations
that explain them (docs/checks.md)."""
from __future__ import annotations

from ...bind.check_reconcile import bind_reconcile
from ...checks.plan import CheckKind
from ...checks.sql import reconcile_statements
from ..entry import CheckKindEntry, YamlShape

ENTRY = CheckKindEntry(
    kind=CheckKind.RECONCILE, yaml=YamlShape.MAPPING,
    keys=(("from", "to", "by", "measures", "explained_by", "tolerance"), ("from", "to")),
    binder=bind_reconcile, sql=reconcile_statements, judge="reconcile")

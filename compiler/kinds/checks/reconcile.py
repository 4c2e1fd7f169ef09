"""``reconcile``: measures at two ends (the input or an output, and a later output) agree, but for the operations
that explain them (docs/checks.md)."""
from __future__ import annotations

from ...checks.plan import CheckKind
from ..entry import CheckKindEntry, Deferred, YamlShape

ENTRY = CheckKindEntry(
    kind=CheckKind.RECONCILE, yaml=YamlShape.MAPPING,
    keys=(("from", "to", "by", "measures", "explained_by", "tolerance"), ("from", "to")),
    binder=Deferred(".bind.check_reconcile", "bind_reconcile"), sql=Deferred(".checks.sql", "reconcile_statements"),
    judge="reconcile")

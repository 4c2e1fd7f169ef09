"""``balanced``: the rows (per ``group_by``, else the whole of them) sum ``amount`` to zero within ``tolerance``
(docs/checks.md)."""
from __future__ import annotations

from ...checks.plan import CheckKind
from ..entry import CheckKindEntry, Deferred, YamlShape

ENTRY = CheckKindEntry(
    kind=CheckKind.BALANCED, yaml=YamlShape.MAPPING, keys=(("group_by", "amount", "tolerance"), ("amount",)),
    binder=Deferred(".bind.check_kinds", "bind_balanced"), sql=Deferred(".checks.sql", "set_statements"),
    judge="balanced")

"""``balanced``: the rows (per ``group_by``, else the whole of them) sum ``amount`` to zero within ``tolerance``
(docs/checks.md)."""
from __future__ import annotations

from ...bind.check_kinds import bind_balanced
from ...checks.plan import CheckKind
from ...checks.sql import set_statements
from ..entry import CheckKindEntry, YamlShape

ENTRY = CheckKindEntry(
    kind=CheckKind.BALANCED, yaml=YamlShape.MAPPING, keys=(("group_by", "amount", "tolerance"), ("amount",)),
    binder=bind_balanced, sql=set_statements, judge="balanced")

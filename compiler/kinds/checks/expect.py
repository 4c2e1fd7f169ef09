"""``expect``: every row meets a condition (docs/checks.md)."""
from __future__ import annotations

from ...checks.plan import CheckKind
from ..entry import CheckKindEntry, Deferred, YamlShape

ENTRY = CheckKindEntry(
    kind=CheckKind.EXPECT, yaml=YamlShape.CONDITION, keys=((), ()),
    binder=Deferred(".bind.check_kinds", "bind_expect"), sql=Deferred(".checks.sql", "row_statements"), judge="rows")

"""``expect``: every row meets a condition (docs/checks.md)."""
from __future__ import annotations

from ...bind.check_kinds import bind_expect
from ...checks.plan import CheckKind
from ...checks.sql import row_statements
from ..entry import CheckKindEntry, YamlShape

ENTRY = CheckKindEntry(
    kind=CheckKind.EXPECT, yaml=YamlShape.CONDITION, keys=((), ()),
    binder=bind_expect, sql=row_statements, judge="rows")

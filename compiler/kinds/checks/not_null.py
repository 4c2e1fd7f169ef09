"""``not_null``: its columns are never NULL (docs/checks.md)."""
from __future__ import annotations

from ...bind.check_kinds import bind_not_null
from ...checks.plan import CheckKind
from ...checks.sql import row_statements
from ..entry import CheckKindEntry, YamlShape

ENTRY = CheckKindEntry(
    kind=CheckKind.NOT_NULL, yaml=YamlShape.COLUMNS, keys=((), ()),
    binder=bind_not_null, sql=row_statements, judge="rows")

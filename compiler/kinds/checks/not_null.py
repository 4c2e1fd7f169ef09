"""``not_null``: its columns are never NULL (docs/checks.md)."""
from __future__ import annotations

from ...checks.plan import CheckKind
from ..entry import CheckKindEntry, Deferred, YamlShape

ENTRY = CheckKindEntry(
    kind=CheckKind.NOT_NULL, yaml=YamlShape.COLUMNS, keys=((), ()),
    binder=Deferred(".bind.check_kinds", "bind_not_null"), sql=Deferred(".checks.sql", "row_statements"),
    judge="rows")

"""``unique``: no two rows share the values of its columns (docs/checks.md)."""
from __future__ import annotations

from ...checks.plan import CheckKind
from ..entry import CheckKindEntry, Deferred, YamlShape

ENTRY = CheckKindEntry(
    kind=CheckKind.UNIQUE, yaml=YamlShape.COLUMNS, keys=((), ()),
    binder=Deferred(".bind.check_kinds", "bind_unique"), sql=Deferred(".checks.sql", "set_statements"),
    judge="unique")

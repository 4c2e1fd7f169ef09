"""``row_count``: the number of rows is within ``min``..``max`` (docs/checks.md)."""
from __future__ import annotations

from ...checks.plan import CheckKind
from ..entry import CheckKindEntry, Deferred, YamlShape

ENTRY = CheckKindEntry(
    kind=CheckKind.ROW_COUNT, yaml=YamlShape.MAPPING, keys=(("min", "max"), ()),
    binder=Deferred(".bind.check_kinds", "bind_row_count"), sql=Deferred(".checks.sql", "set_statements"),
    judge="row_count")

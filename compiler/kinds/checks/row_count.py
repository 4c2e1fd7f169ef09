"""``row_count``: the number of rows is within ``min``..``max`` (docs/checks.md)."""
from __future__ import annotations

from ...bind.check_kinds import bind_row_count
from ...checks.plan import CheckKind
from ...checks.sql import set_statements
from ..entry import CheckKindEntry, YamlShape

ENTRY = CheckKindEntry(
    kind=CheckKind.ROW_COUNT, yaml=YamlShape.MAPPING, keys=(("min", "max"), ()),
    binder=bind_row_count, sql=set_statements, judge="row_count")

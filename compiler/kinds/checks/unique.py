"""``unique``: no two rows share the values of its columns (docs/checks.md)."""
from __future__ import annotations

from ...bind.check_kinds import bind_unique
from ...checks.plan import CheckKind
from ...checks.sql import set_statements
from ..entry import CheckKindEntry, YamlShape

ENTRY = CheckKindEntry(
    kind=CheckKind.UNIQUE, yaml=YamlShape.COLUMNS, keys=((), ()),
    binder=bind_unique, sql=set_statements, judge="unique")

"""``accepted_values``: a column's values are among those listed (docs/checks.md)."""
from __future__ import annotations

from ...checks.plan import CheckKind
from ..entry import CheckKindEntry, Deferred, YamlShape

ENTRY = CheckKindEntry(
    kind=CheckKind.ACCEPTED_VALUES, yaml=YamlShape.MAPPING, keys=(("column", "values"), ("column", "values")),
    binder=Deferred(".bind.check_kinds", "bind_accepted_values"), sql=Deferred(".checks.sql", "row_statements"),
    judge="rows")

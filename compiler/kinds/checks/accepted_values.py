"""``accepted_values``: a column's values are among those listed (docs/checks.md)."""
from __future__ import annotations

from ...bind.check_kinds import bind_accepted_values
from ...checks.plan import CheckKind
from ...checks.sql import row_statements
from ..entry import CheckKindEntry, YamlShape

ENTRY = CheckKindEntry(
    kind=CheckKind.ACCEPTED_VALUES, yaml=YamlShape.MAPPING, keys=(("column", "values"), ("column", "values")),
    binder=bind_accepted_values, sql=row_statements, judge="rows")

"""How the ``_row_id`` of an input row that arrives without one is derived (``row_identity`` in the run record).

A replay derives ids as the run it replays did, for every derivation listed in :data:`ROW_IDENTITIES`. Kept apart
from :mod:`.system_columns` (which builds the SQL of each derivation) so that what a run record says can be read
without loading the SQL parser."""
from __future__ import annotations

from typing import Optional

ROW_IDENTITY = 4  # 4: two xxhash64 of the identity fields, digits from a lookup table (issue 9)
SHA256_ROW_IDENTITY = 3  # 3: a SHA-256 of the identity as delimited text
ROW_IDENTITIES = (SHA256_ROW_IDENTITY, ROW_IDENTITY)


def reproducible_row_identity(recorded) -> Optional[int]:
    """The derivation a run record's ``row_identity`` names, when this version can derive ids that way
    again (:data:`ROW_IDENTITIES`); None for older records (no field, 2), whose ids cannot be reproduced."""
    return recorded if recorded in ROW_IDENTITIES else None

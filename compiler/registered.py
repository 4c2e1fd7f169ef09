"""The names of registered datasets: their stable ids and the stand-in types of columns only a run types.

An output with ``register_as_dataset: NAME`` makes ``NAME`` a dataset other projects may read; its id is
:func:`registered_id` of the name. A leaf: the graph, the binder, the registered-datasets pass
(:mod:`.registered_pass`) and the run store (``adapters/runstore.py``) all import it, it imports nothing
of theirs.
"""
from __future__ import annotations

import uuid

REGISTERED_NAMESPACE = uuid.UUID("6f1c1c8e-6a57-4b8e-9d43-2f1b0c9d7a11")
INEXACT_NUMBER = "number"  # a computed number whose exact Spark type only a run knows
INEXACT = "unknown"  # a value of unknown type (e.g. an assigned NULL)


def stand_in_type(column_type: str) -> str:
    """A Spark type for a declared column type, with a stand-in for the inexact ones (``decimal(38,10)``,
    the bare ``decimal``, for a number; ``string`` for an unknown): for tools that build empty or given
    rows of a registered dataset before any run registered it (e.g. the analyzer check of the tests)."""
    return {INEXACT_NUMBER: "decimal(38,10)", INEXACT: "string"}.get(column_type, column_type)


def registered_id(name: str) -> str:
    """The stable dataset id of a registered dataset (a UUIDv5 of its name)."""
    return str(uuid.uuid5(REGISTERED_NAMESPACE, name))

"""``delete``: a soft delete of the rows the selector matches (docs/workspace.md)."""
from __future__ import annotations

from ...errors import DiagnosticCollector
from ...model import DeleteOperation, OperationKind
from ...yaml_reader import Reader
from ..entry import BridgeEffect, Deferred, OperationKindEntry


def load(op: DeleteOperation, a: Reader, where: str, errors: DiagnosticCollector) -> None:
    """Nothing: a delete takes no arguments (its selector says which rows)."""


def fingerprint(plan, shape) -> list:
    """Nothing beyond what every operation prints (its condition is a common part)."""
    return []


ENTRY = OperationKindEntry(
    kind=OperationKind.DELETE, model=DeleteOperation, arguments=((), ()), load=load,
    binder=Deferred(".bind.rows", "bind_delete"),
    template="delete", lowering=Deferred(".lower_steps", "lower_delete"),
    fused=Deferred(".fused_rewrite", "rewrite_delete"), not_fused=None,
    bridge=BridgeEffect.MARKS_DELETED, fingerprint=fingerprint)

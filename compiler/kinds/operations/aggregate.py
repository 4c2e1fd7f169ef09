"""``aggregate``: summary rows of the selected rows, appended to the working dataset (docs/workspace.md)."""
from __future__ import annotations

from ...errors import DiagnosticCollector
from ...model import AggregateOperation, OperationKind
from ...operation_yaml import aggregations, group_by
from ...yaml_reader import Reader
from ..entry import BridgeEffect, Deferred, OperationKindEntry


def load(op: AggregateOperation, a: Reader, where: str, errors: DiagnosticCollector) -> None:
    """Its ``group_by`` and aggregations, read from its ``arguments``."""
    op.group_by = group_by(a, errors)
    op.aggregations = aggregations(a, errors, where)


def fingerprint(plan, shape) -> list:
    """Nothing beyond what every operation prints (its summary, grouping and condition are common parts)."""
    return []


ENTRY = OperationKindEntry(
    kind=OperationKind.AGGREGATE, model=AggregateOperation,
    arguments=(("group_by", "aggregations"), ("group_by", "aggregations")), load=load,
    binder=Deferred(".bind.rows", "bind_aggregate"),
    template="aggregate", lowering=Deferred(".lower_steps", "lower_aggregate"),
    fused=Deferred(".fused_rewrite", "rewrite_aggregate"), not_fused=None,
    bridge=BridgeEffect.CREATES_ROWS, fingerprint=fingerprint)

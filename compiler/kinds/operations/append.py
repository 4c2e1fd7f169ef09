"""``append``: rows of another dataset (optionally aggregated), aligned to the working columns (docs/workspace.md)."""
from __future__ import annotations

from ...errors import DiagnosticCollector
from ...model import AppendOperation, OperationKind
from ...operation_yaml import aggregations, dataset_ref, group_by
from ...yaml_reader import Reader
from ...yaml_source import YMap
from ..entry import BridgeEffect, Deferred, OperationKindEntry


def load(op: AppendOperation, a: Reader, where: str, errors: DiagnosticCollector) -> None:
    """Its source, source selector and optional aggregation, read from its ``arguments``."""
    op.source = dataset_ref(a.get("source", YMap, YMap()), f"source of {where}", a.loc("source"), errors)
    op.source_selector = a.get("source_selector", str)
    agg = a.get("aggregation", YMap)
    if agg is not None:
        op.has_aggregation = True
        ag = Reader(agg, f"aggregation of {where}", ("group_by", "aggregations"), ("group_by", "aggregations"),
                    errors, a.loc("aggregation"))
        op.group_by = group_by(ag, errors)
        op.aggregations = aggregations(ag, errors, where)


def fingerprint(plan, shape) -> list:
    """The filter of its source rows."""
    return [shape(plan.source_where)]


ENTRY = OperationKindEntry(
    kind=OperationKind.APPEND, model=AppendOperation, arguments=(("source", "source_selector", "aggregation"), ("source",)),
    load=load, binder=Deferred(".bind.rows", "bind_append"), template="append",
    lowering=Deferred(".lower_steps", "lower_append"), fused=Deferred(".fused_rewrite", "rewrite_append"),
    not_fused=None,
    bridge=BridgeEffect.CREATES_ROWS, fingerprint=fingerprint)

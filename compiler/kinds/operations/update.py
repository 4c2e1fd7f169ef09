"""``update``: assignments computed from the row as it was, with optional runtime left joins (docs/workspace.md)."""
from __future__ import annotations

from ...errors import DiagnosticCollector
from ...model import Assignment, DatasetRef, OperationKind, RuntimeJoin, UpdateOperation
from ...operation_yaml import literal_text, located_list
from ...yaml_reader import Reader, as_str
from ...yaml_source import YList
from ..entry import BridgeEffect, Deferred, OperationKindEntry


def load(op: UpdateOperation, a: Reader, where: str, errors: DiagnosticCollector) -> None:
    """Its joins and assignments, read from its ``arguments``."""
    for item, iloc in located_list(a.get("joins", YList, YList())):
        jr = Reader(item, f"join of {where}", ("alias", "dataset_id", "dataset_version", "on"),
                    ("alias", "dataset_id", "on"), errors, iloc)
        ref = DatasetRef(as_str(jr.get("dataset_id", (str, int))) or "", jr.get("dataset_version", int),
                         jr.loc("dataset_id"), jr.loc("dataset_version"))
        op.joins.append(RuntimeJoin(jr.get("alias", str, ""), ref, jr.get("on", str, ""), iloc))
    for item, iloc in located_list(a.get("assignments", YList, YList())):
        ar = Reader(item, f"assignment of {where}", ("column", "expression"), ("column", "expression"), errors, iloc)
        col = ar.get("column", str, "")
        expr = ar.get("expression", (str, int, float, bool))
        if expr is not None and not isinstance(expr, str):
            expr = literal_text(expr)
        op.assignments.append(Assignment(col, expr if expr is not None else "", iloc))


def fingerprint(plan, shape) -> list:
    """Its joins: alias, ON and the join side's filter."""
    return [(j.alias, shape(j.on), shape(j.where)) for j in plan.joins]


ENTRY = OperationKindEntry(
    kind=OperationKind.UPDATE, model=UpdateOperation, arguments=(("joins", "assignments"), ("assignments",)),
    load=load, binder=Deferred(".bind.update", "bind_update"), template="update",
    lowering=Deferred(".lower_steps", "lower_update"), fused=Deferred(".fused_rewrite", "rewrite_update"),
    not_fused=None,
    bridge=BridgeEffect.ASSIGNS, fingerprint=fingerprint)

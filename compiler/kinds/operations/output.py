"""``output``: writes a projection of the working dataset; never changes it (docs/workspace.md)."""
from __future__ import annotations

from ...errors import DiagnosticCollector
from ...model import OperationKind, OutputOperation
from ...operation_yaml import destination
from ...yaml_reader import Reader
from ...yaml_source import YList, YMap
from ..entry import BridgeEffect, Deferred, OperationKindEntry


def load(op: OutputOperation, a: Reader, where: str, errors: DiagnosticCollector) -> None:
    """Its destination, columns, ``include_deleted`` and registration, read from its ``arguments``."""
    op.destination = destination(a.get("destination", YMap, YMap()), a.loc("destination"), errors, where)
    cols = a.get("columns", YList)
    if cols is not None:
        op.columns = [c if isinstance(c, str) else str(c) for c in cols]  # YStr keeps its location
    op.include_deleted = bool(a.get("include_deleted", bool, False))
    op.register_as_dataset = a.get("register_as_dataset", str)


def output_definition(plan) -> str:
    """Where and how an output (its plan) writes: its destination and the dataset it registers."""
    o = plan.operation
    d = o.destination
    dest = (d.kind, d.table, d.resolver, d.path, d.format, d.catalog_table) if d is not None else None
    return repr((dest, o.register_as_dataset, o.include_deleted))


def fingerprint(plan, shape) -> list:
    """The columns it declares (``*``: every working column), its ``WHERE`` and its definition."""
    declared = plan.operation.columns  # None: every working column, whatever they are by then
    return [tuple(declared) if declared is not None else "*", shape(plan.where), output_definition(plan)]


ENTRY = OperationKindEntry(
    kind=OperationKind.OUTPUT, model=OutputOperation,
    arguments=(("destination", "columns", "include_deleted", "register_as_dataset"), ("destination",)), load=load,
    binder=Deferred(".bind.output", "bind_output"), template="output",
    lowering=Deferred(".lower_steps", "lower_output"), fused=Deferred(".fused_rewrite", "rewrite_output"),
    not_fused=None,
    bridge=BridgeEffect.NONE, fingerprint=fingerprint)

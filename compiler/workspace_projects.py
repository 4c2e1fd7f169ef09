"""Load ``projects/*.yml`` (or a run's snapshot of one) into :class:`~.model.Project` and its operations."""
from __future__ import annotations

import uuid
from typing import Any, Optional

from .checks.load import load_checks
from .errors import DiagnosticCollector, Location
from .model import (OPERATION_CLASSES, OPERATION_TYPES, Aggregation, Assignment, DatasetRef, Destination, Operation,
                    OperationKind, Project, RuntimeJoin)
from .workspace_config import FORMATS
from .yaml_reader import Reader, as_str, check_uuid, plain, text_of
from .yaml_source import YList, YMap, load_yaml_file

_OP_KEYS = ("id", "seq", "name", "description", "type", "selector", "arguments", "parameters")
_ARG_KEYS = {
    "update": (("joins", "assignments"), ("assignments",)),
    "aggregate": (("group_by", "aggregations"), ("group_by", "aggregations")),
    "append": (("source", "source_selector", "aggregation"), ("source",)),
    "delete": ((), ()),
    "output": (("destination", "columns", "include_deleted", "register_as_dataset"), ("destination",)),
}


def _dataset_ref(data: Any, where: str, loc: Location, errors: DiagnosticCollector) -> DatasetRef:
    r = Reader(data, where, ("dataset_id", "dataset_version"), ("dataset_id",), errors, loc)
    return DatasetRef(dataset_id=as_str(r.get("dataset_id", (str, int))) or "",
                      dataset_version=r.get("dataset_version", int), location=r.loc("dataset_id"),
                      version_location=r.loc("dataset_version"))


def _located_list(value: Any) -> list[tuple[Any, Location]]:
    if not isinstance(value, YList):
        return []
    return list(zip(value, getattr(value, "item_locations", [])))  # a default YList() has no locations


def _aggregations(r: Reader, errors: DiagnosticCollector, where: str) -> list[Aggregation]:
    out = []
    for item, loc in _located_list(r.get("aggregations", YList, YList())):
        ar = Reader(item, f"aggregation of {where}", ("column", "expression"), ("column", "expression"), errors, loc)
        out.append(Aggregation(ar.get("column", str, ""), ar.get("expression", str, ""), loc))
    return out


def _group_by(r: Reader, errors: DiagnosticCollector) -> list[str]:
    out = []
    lst = r.get("group_by", YList, YList())
    for item, loc in _located_list(lst):
        if not isinstance(item, str):
            errors.add("YAML-005", "group_by entries must be column names", loc, text_of(item))
            continue
        out.append(item)
    return out


def _load_operation(data: Any, loc: Location, project_id: str, errors: DiagnosticCollector) -> Optional[Operation]:
    r = Reader(data, "operation", _OP_KEYS, ("seq", "name", "type"), errors, loc)
    if not r.ok:
        return None
    seq = r.get("seq", int)
    op_type = r.choice("type", OPERATION_TYPES)
    where = f"operation {seq if seq is not None else '?'}"
    if "arguments" in r.data and "parameters" in r.data:
        errors.add("YAML-006", f"{where} has both 'arguments' and 'parameters'", r.data.key_location("parameters"),
                   "parameters", "they are synonyms: keep one")
    args_key = "arguments" if "arguments" in r.data else "parameters"
    args_data = r.data.get(args_key)
    if args_data is None:
        args_data = YMap()
        args_data.location, args_data.key_locations, args_data.value_locations = loc, {}, {}
        if op_type not in (None, "delete"):
            errors.add("YAML-004", f"{where} is missing the required key 'arguments'", loc, "", "add 'arguments:'")
            op_type = None if op_type != "delete" else op_type
    op_id = as_str(r.get("id", (str, int))) or str(uuid.uuid5(uuid.NAMESPACE_OID, f"{project_id}/{seq}"))
    cls = OPERATION_CLASSES[OperationKind(op_type)] if op_type is not None else Operation
    op = cls(seq=seq if seq is not None else 0, name=r.get("name", str, ""), id=op_id,
             selector=r.get("selector", str), description=r.get("description", str, ""), location=loc)
    if op_type is None:
        return op
    allowed, required = _ARG_KEYS[op_type]
    a = Reader(args_data, f"arguments of {op_type} {where}", allowed, required, errors, r.loc(args_key))
    if op_type == "update":
        for item, iloc in _located_list(a.get("joins", YList, YList())):
            jr = Reader(item, f"join of {where}", ("alias", "dataset_id", "dataset_version", "on"),
                        ("alias", "dataset_id", "on"), errors, iloc)
            ref = DatasetRef(as_str(jr.get("dataset_id", (str, int))) or "", jr.get("dataset_version", int),
                             jr.loc("dataset_id"), jr.loc("dataset_version"))
            op.joins.append(RuntimeJoin(jr.get("alias", str, ""), ref, jr.get("on", str, ""), iloc))
        for item, iloc in _located_list(a.get("assignments", YList, YList())):
            ar = Reader(item, f"assignment of {where}", ("column", "expression"), ("column", "expression"), errors, iloc)
            col = ar.get("column", str, "")
            expr = ar.get("expression", (str, int, float, bool))
            if expr is not None and not isinstance(expr, str):
                expr = _literal_text(expr)
            op.assignments.append(Assignment(col, expr if expr is not None else "", iloc))
    elif op_type == "aggregate":
        op.group_by = _group_by(a, errors)
        op.aggregations = _aggregations(a, errors, where)
    elif op_type == "append":
        op.source = _dataset_ref(a.get("source", YMap, YMap()), f"source of {where}", a.loc("source"), errors)
        op.source_selector = a.get("source_selector", str)
        agg = a.get("aggregation", YMap)
        if agg is not None:
            op.has_aggregation = True
            ag = Reader(agg, f"aggregation of {where}", ("group_by", "aggregations"), ("group_by", "aggregations"),
                        errors, a.loc("aggregation"))
            op.group_by = _group_by(ag, errors)
            op.aggregations = _aggregations(ag, errors, where)
    elif op_type == "output":
        op.destination = _destination(a.get("destination", YMap, YMap()), a.loc("destination"), errors, where)
        cols = a.get("columns", YList)
        if cols is not None:
            op.columns = [c if isinstance(c, str) else str(c) for c in cols]  # YStr keeps its location
        op.include_deleted = bool(a.get("include_deleted", bool, False))
        op.register_as_dataset = a.get("register_as_dataset", str)
    return op


def _literal_text(value: Any) -> str:
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    return str(value)


def _destination(data: Any, loc: Location, errors: DiagnosticCollector, where: str) -> Destination:
    written = isinstance(data, YMap) and hasattr(data, "location")  # else absent/mistyped: already reported
    r = Reader(data, f"destination of {where}",
               ("table", "resolver", "datasource_id", "path", "format", "catalog_table"), (), errors, loc)
    kinds = [k for k in ("table", "path", "catalog_table") if k in r.data]
    if len(kinds) != 1 and written:
        errors.add("YAML-005", f"the destination of {where} needs exactly one of table, path, catalog_table", loc,
                   ", ".join(kinds), "e.g. {table: fx_converted} or {path: out/fx, format: parquet}")
    if "resolver" in r.data and "datasource_id" in r.data:
        errors.add("YAML-006", "destination has both 'resolver' and 'datasource_id'", r.loc("datasource_id"),
                   "datasource_id", "they are synonyms: keep one")
    return Destination(kind=kinds[0] if kinds else "table", table=as_str(r.get("table", (str, int))),
                       resolver=r.get("resolver", str) or r.get("datasource_id", str), path=r.get("path", str),
                       format=r.choice("format", FORMATS, "parquet"), catalog_table=r.get("catalog_table", str),
                       location=loc)


def load_project(path: str, display: str, errors: DiagnosticCollector) -> Optional[Project]:
    """Read one ``projects/<name>.yml``."""
    return project_from_data(load_yaml_file(path, display), display, errors)


def project_from_data(data: Any, display: str, errors: DiagnosticCollector) -> Optional[Project]:
    """Build a project from parsed YAML (a file, or a run's snapshot)."""
    r = Reader(data, "project", ("id", "name", "version", "status", "description", "input_dataset_id",
                                 "input_dataset_version", "selectors", "resolver_overrides", "operations", "checks"),
               ("id", "name", "input_dataset_id", "operations"), errors, Location(display, 1, 1))
    if not r.ok:
        return None
    pid = as_str(r.get("id", (str, int))) or ""
    check_uuid(pid or None, r.loc("id"), errors, "project id")
    ops = []
    for item, loc in _located_list(r.get("operations", YList, YList())):
        op = _load_operation(item, loc, pid, errors)
        if op is not None:
            ops.append(op)
    seen: dict[int, Operation] = {}
    for op in ops:
        if op.seq <= 0 and op.location and "seq" in getattr(op, "_raw", {"seq": 1}):
            pass
        if op.seq in seen:
            errors.add("BR-001", f"seq {op.seq} is used by two operations", op.location, str(op.seq),
                       "seq values must be unique within a project")
        elif op.seq < 1:
            errors.add("BR-001", f"seq {op.seq} is not a positive integer", op.location, str(op.seq),
                       "use 1, 2, 3, ... (gaps are allowed)")
        seen[op.seq] = op
    ops.sort(key=lambda o: o.seq)
    selectors = {}
    for k, v in r.get("selectors", YMap, {}).items():
        if not isinstance(v, str):
            errors.add("YAML-005", f"selector '{k}' must be an expression string", r.loc("selectors"), text_of(v))
            continue
        selectors[str(k)] = v
    overrides = {str(k): as_str(v) for k, v in r.get("resolver_overrides", YMap, {}).items()}
    input_ref = DatasetRef(as_str(r.get("input_dataset_id", (str, int))) or "", r.get("input_dataset_version", int),
                           r.loc("input_dataset_id"), r.loc("input_dataset_version"))
    return Project(id=pid, name=r.get("name", str, ""), version=r.get("version", int, 1),
                   status=r.choice("status", ("draft", "active"), "active"), input=input_ref, operations=ops,
                   selectors=selectors, resolver_overrides=overrides, description=r.get("description", str, ""),
                   file=display, raw=plain(data), location=Location(display, 1, 1),
                   checks=load_checks(r.data.get("checks"), r.loc("checks"), errors))

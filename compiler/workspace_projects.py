"""Load ``projects/*.yml`` (or a run's snapshot of one) into :class:`~.model.Project` and its operations."""
from __future__ import annotations

import uuid
from typing import Any, Optional

from .check_loading import load_checks
from .errors import DiagnosticCollector, Location
from .kinds.registry import operation_kind
from .model import OPERATION_TYPES, DatasetRef, Operation, OperationKind, Project
from .operation_yaml import located_list
from .yaml_reader import Reader, as_str, check_uuid, plain, text_of
from .yaml_source import YList, YMap, read_yaml_file

_OP_KEYS = ("id", "seq", "name", "description", "type", "selector", "arguments", "parameters")


def _load_operation(data: Any, loc: Location, project_id: str, errors: DiagnosticCollector) -> Optional[Operation]:
    r = Reader(data, "operation", _OP_KEYS, ("seq", "name", "type"), errors, loc)
    if not r.ok:
        return None
    seq = r.get("seq", int)
    op_type = r.choice("type", OPERATION_TYPES)
    entry = operation_kind(OperationKind(op_type)) if op_type is not None else None
    where = f"operation {seq if seq is not None else '?'}"
    if "arguments" in r.data and "parameters" in r.data:
        errors.add("YAML-006", f"{where} has both 'arguments' and 'parameters'", r.data.key_location("parameters"),
                   "parameters", "they are synonyms: keep one")
    args_key = "arguments" if "arguments" in r.data else "parameters"
    args_data = r.data.get(args_key)
    if args_data is None:
        args_data = YMap()
        args_data.location, args_data.key_locations, args_data.value_locations = loc, {}, {}
        if entry is not None and entry.arguments[1]:  # a kind with a required argument needs 'arguments'
            errors.add("YAML-004", f"{where} is missing the required key 'arguments'", loc, "", "add 'arguments:'")
            entry = None
    op_id = as_str(r.get("id", (str, int))) or str(uuid.uuid5(uuid.NAMESPACE_OID, f"{project_id}/{seq}"))
    cls = entry.model if entry is not None else Operation
    op = cls(seq=seq if seq is not None else 0, name=r.get("name", str, ""), id=op_id,
             selector=r.get("selector", str), description=r.get("description", str, ""), location=loc)
    if entry is None:
        return op
    allowed, required = entry.arguments
    a = Reader(args_data, f"arguments of {op_type} {where}", allowed, required, errors, r.loc(args_key))
    entry.load(op, a, where, errors)
    return op


def load_project(path: str, display: str, errors: DiagnosticCollector) -> Optional[Project]:
    """Read one ``projects/<name>.yml``."""
    data, digest = read_yaml_file(path, display)
    project = project_from_data(data, display, errors)
    if project is not None:
        project.text_sha256 = digest
    return project


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
    for item, loc in located_list(r.get("operations", YList, YList())):
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

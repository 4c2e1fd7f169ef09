"""Load a workspace folder (``ledgerflow.yml``, ``datasets/*.yml``, ``projects/*.yml``) into the model.

Every file is checked strictly: an unknown key is an error naming the closest valid key, a missing
required key or a value of the wrong kind is an error with file and line. All problems of all files
are collected and raised together as one :class:`CompileError`.
"""
from __future__ import annotations

import glob
import os
import re
import uuid
from typing import Any, Callable, Optional

from .errors import CompileError, DiagnosticCollector, LedgerflowError, Location, did_you_mean
from .model import (OPERATION_CLASSES, OPERATION_TYPES, TEMPORAL_MODES, OperationKind, Aggregation, Assignment, ColumnDef, Dataset, DatasetRef,
                    DatasetVersion, Destination, Operation, Project, Resolver, ResolverRule, RuntimeJoin, Strategy,
                    Workspace, WorkspaceConfig)
from .yaml_source import YList, YMap, YStr, load_yaml_file, load_yaml_text

MARKER = "ledgerflow.yml"
DATA_LEVELS = ("any", "day", "month", "quarter", "year")
FORMATS = ("parquet", "csv", "json", "orc")
_DECIMAL = re.compile(r"^decimal\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)$")
_SIMPLE_TYPES = {"string": "string", "integer": "int", "int": "int", "bigint": "bigint", "double": "double",
                 "boolean": "boolean", "date": "date", "timestamp": "timestamp", "decimal": "decimal(38,10)"}
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class WorkspaceNotFound(LedgerflowError):
    """No ``ledgerflow.yml`` where the workspace was looked for."""


def normalise_type(text: str) -> Optional[str]:
    """Map a declared column type to its Spark SQL spelling, or None when unknown."""
    t = str(text).strip().lower()
    if t in _SIMPLE_TYPES:
        return _SIMPLE_TYPES[t]
    m = _DECIMAL.match(t)
    if m:
        p, s = int(m.group(1)), int(m.group(2))
        if 1 <= p <= 38 and 0 <= s <= p:
            return f"decimal({p},{s})"
    return None


def find_workspace(start: Optional[str] = None, explicit: Optional[str] = None) -> str:
    """The workspace root: ``explicit``, else $LEDGERFLOW_WORKSPACE, else the nearest ancestor with the marker."""
    for candidate in (explicit, os.environ.get("LEDGERFLOW_WORKSPACE")):
        if candidate:
            if not os.path.isfile(os.path.join(candidate, MARKER)):
                raise WorkspaceNotFound(f"{candidate} is not a ledgerflow workspace: it has no {MARKER}.")
            return os.path.abspath(candidate)
    here = os.path.abspath(start or os.getcwd())
    while True:
        if os.path.isfile(os.path.join(here, MARKER)):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            raise WorkspaceNotFound(f"no {MARKER} in {os.path.abspath(start or os.getcwd())} or any parent folder; "
                                    "pass --workspace DIR or set LEDGERFLOW_WORKSPACE.")
        here = parent


class _Reader:
    """Strict reading of one YAML mapping: known keys only, required keys present, values of the right kind."""

    def __init__(self, data: Any, where: str, allowed: tuple, required: tuple, errors: DiagnosticCollector,
                 location: Location):
        self.errors = errors
        self.where = where
        self.ok = isinstance(data, YMap)
        self.data = data if self.ok else YMap()
        if not self.ok:
            self.data.location = location
            self.data.key_locations, self.data.value_locations = {}, {}
            errors.add("YAML-005", f"{where} must be a mapping", location, _text(data), "write it as 'key: value' lines")
            return
        if not hasattr(self.data, "location"):
            # the empty stand-in for an absent or mistyped section: its parent already reported it
            self.data.location = location
            self.data.key_locations, self.data.value_locations = {}, {}
            return
        for key in self.data:
            if key not in allowed:
                errors.add("YAML-003", f"unknown key '{key}' in {where}", self.data.key_location(key), key,
                           did_you_mean(key, allowed))
        for key in required:
            if key not in self.data:
                errors.add("YAML-004", f"{where} is missing the required key '{key}'", self.data.location, "",
                           f"add '{key}:'")

    def loc(self, key: str) -> Location:
        return self.data.value_location(key)

    def get(self, key: str, kind: type | tuple, default: Any = None) -> Any:
        """The value of ``key`` if present and of ``kind`` (bool is never accepted as int), else ``default``."""
        if key not in self.data or self.data[key] is None:
            return default
        value = self.data[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if isinstance(value, bool) and bool not in kinds:
            good = False
        else:
            good = isinstance(value, kinds)
        if not good:
            names = "/".join({str: "string", int: "integer", bool: "boolean", YMap: "mapping", YList: "list",
                              float: "number"}.get(k, k.__name__) for k in kinds)
            self.errors.add("YAML-005", f"'{key}' in {self.where} must be a {names}", self.loc(key), _text(value))
            return default
        return value

    def choice(self, key: str, choices: tuple, default: Optional[str] = None) -> Optional[str]:
        """A string value that must be one of ``choices``."""
        value = self.get(key, str, default)
        if value is not None and value not in choices:
            self.errors.add("YAML-005", f"'{key}' in {self.where} must be one of {', '.join(choices)}",
                            self.loc(key), str(value), did_you_mean(str(value), choices))
            return default
        return value


def _text(value: Any) -> str:
    s = str(value)
    return s if len(s) <= 60 else s[:57] + "..."


def _as_str(value: Any) -> Optional[str]:
    """Scalars that YAML typed as numbers (``version: 1``, ``code: 4100``) used where names are expected."""
    if value is None or isinstance(value, (YMap, YList)):
        return None
    return value if isinstance(value, str) else str(value)


# ----------------------------------------------------------------------------------------------- config
def _load_config(path: str, display: str, errors: DiagnosticCollector) -> WorkspaceConfig:
    data = load_yaml_file(path, display)
    r = _Reader(data, MARKER, ("name", "default_resolver", "resolvers", "spark", "description"), ("name",), errors,
                Location(display, 1, 1))
    resolvers: dict[str, Resolver] = {}
    res_map = r.get("resolvers", YMap, YMap())
    for rname, rdata in res_map.items():
        rr = _Reader(rdata, f"resolver '{rname}'", ("rules", "description"), ("rules",), errors,
                     res_map.value_location(rname) if isinstance(res_map, YMap) else Location(display))
        rules = []
        rule_list = rr.get("rules", YList, YList())
        for i, rule in enumerate(rule_list):
            loc = rule_list.item_locations[i]
            ru = _Reader(rule, f"rule {i + 1} of resolver '{rname}'", ("name", "when", "data_level", "strategy"),
                         ("name", "strategy"), errors, loc)
            strategy = _load_strategy(ru, errors, f"rule '{ru.get('name', str, '?')}'")
            rules.append(ResolverRule(name=ru.get("name", str, f"rule{i + 1}"),
                                      data_level=ru.choice("data_level", DATA_LEVELS, "any"),
                                      strategy=strategy, when=ru.get("when", str), location=loc))
        resolvers[str(rname)] = Resolver(str(rname), rules, res_map.key_location(rname))
    spark = r.get("spark", YMap, YMap())
    sr = _Reader(spark, "spark", ("master", "conf"), (), errors, r.loc("spark"))
    conf = {str(k): _as_str(v) for k, v in sr.get("conf", YMap, {}).items()}
    default = r.get("default_resolver", str)
    if default and default not in resolvers:
        errors.add("WS-004", f"default_resolver '{default}' is not defined under resolvers", r.loc("default_resolver"),
                   default, did_you_mean(default, resolvers))
    return WorkspaceConfig(name=r.get("name", str, ""), default_resolver=default, resolvers=resolvers,
                           spark_master=sr.get("master", str), spark_conf=conf, file=display)


def _load_strategy(ru: _Reader, errors: DiagnosticCollector, where: str) -> Strategy:
    data = ru.get("strategy", YMap, None)
    if data is None:
        return Strategy(type="path", path="")
    s = _Reader(data, f"strategy of {where}", ("type", "path", "format", "table", "options"), ("type",), errors,
                ru.loc("strategy"))
    kind = s.choice("type", ("path", "table"), "path")
    if kind == "path" and "path" not in data:
        errors.add("YAML-004", f"a path strategy needs 'path' ({where})", s.data.location, "", "add 'path:'")
    if kind == "table" and "table" not in data:
        errors.add("YAML-004", f"a table strategy needs 'table' ({where})", s.data.location, "", "add 'table:'")
    # A table rule's names are checked where a project uses the rule (bind: an output writing through it, a
    # dataset read through it), with that use's token values: a rule no project uses fails nobody's validate.
    table = s.get("table", str)
    options = tuple(sorted((str(k), _as_str(v)) for k, v in s.get("options", YMap, {}).items()))
    return Strategy(type=kind, path=s.get("path", str), format=s.choice("format", FORMATS, "parquet"),
                    table=table, options=options)


# ---------------------------------------------------------------------------------------------- datasets
def load_dataset(path: str, display: str, errors: DiagnosticCollector) -> Optional[Dataset]:
    """Read one ``datasets/<name>.yml``."""
    return dataset_from_data(load_yaml_file(path, display), display, errors)


def dataset_from_data(data: Any, display: str, errors: DiagnosticCollector) -> Optional[Dataset]:
    """Build a dataset from parsed YAML (a file, or a run's snapshot)."""
    r = _Reader(data, "dataset", ("id", "name", "status", "resolver_id", "description", "versions", "main_table"),
                ("id", "name", "versions", "main_table"), errors, Location(display, 1, 1))
    if not r.ok:
        return None
    ds_id = _as_str(r.get("id", (str, int)))
    _check_uuid(ds_id, r.loc("id"), errors, "dataset id")
    versions = []
    vlist = r.get("versions", YList, YList())
    seen = set()
    for i, v in enumerate(vlist):
        vr = _Reader(v, "dataset version", ("version", "status", "description", "created_at"), ("version",), errors,
                     vlist.item_locations[i])
        num = vr.get("version", int)
        if num is None:
            continue
        if num < 1 or num in seen:
            errors.add("DS-004", f"version {num} is {'duplicated' if num in seen else 'not a positive integer'}",
                       vr.loc("version"), str(num), "versions are unique positive integers")
        seen.add(num)
        versions.append(DatasetVersion(num, vr.choice("status", ("active", "disabled"), "active")))
    if "versions" in r.data and not versions:
        errors.add("DS-004", "a dataset needs at least one version", r.loc("versions"), "", "add '- {version: 1}'")
    mt = _Reader(r.get("main_table", YMap, YMap()), "main_table", ("name", "temporal_mode", "columns", "description"),
                 ("name", "temporal_mode", "columns"), errors, r.loc("main_table"))
    columns = []
    clist = mt.get("columns", YList, YList())
    names = set()
    for i, c in enumerate(clist):
        cr = _Reader(c, "column", ("name", "type", "nullable", "description"), ("name", "type"), errors,
                     clist.item_locations[i])
        name = cr.get("name", str)
        ctype = _as_str(cr.get("type", str))
        if not name:
            continue
        if not _IDENT.match(name) or name.startswith("_"):
            errors.add("DS-002", f"invalid column name '{name}'", cr.loc("name"), name,
                       "user columns are identifiers ([A-Za-z][A-Za-z0-9_]*) and may not start with '_' "
                       "(reserved for system columns)")
        if name in names:
            errors.add("DS-003", f"column '{name}' is declared twice", cr.loc("name"), name)
        names.add(name)
        norm = normalise_type(ctype) if ctype else None
        if ctype and norm is None:
            errors.add("DS-001", f"unknown column type '{ctype}'", cr.loc("type"), ctype,
                       "use string, integer, bigint, decimal(p,s), decimal, double, boolean, date or timestamp")
        columns.append(ColumnDef(name, norm or "string", bool(cr.get("nullable", bool, True)), cr.loc("name")))
    return Dataset(id=ds_id or "", name=r.get("name", str, ""), status=r.choice("status", ("active", "disabled"), "active"),
                   table_name=mt.get("name", str, ""), temporal_mode=mt.choice("temporal_mode", TEMPORAL_MODES, "snapshot"),
                   columns=columns, versions=versions, resolver_id=r.get("resolver_id", str),
                   description=r.get("description", str, ""), file=display, location=Location(display, 1, 1),
                   raw=_plain(data))


def _check_uuid(value: Optional[str], loc: Location, errors: DiagnosticCollector, what: str) -> None:
    if value is None:
        return
    try:
        uuid.UUID(str(value))
    except ValueError:
        errors.add("YAML-005", f"{what} '{value}' is not a UUID", loc, str(value),
                   f"use a UUID such as {uuid.uuid5(uuid.NAMESPACE_URL, str(value))}")


# ---------------------------------------------------------------------------------------------- projects
_OP_KEYS = ("id", "seq", "name", "description", "type", "selector", "arguments", "parameters")
_ARG_KEYS = {
    "update": (("joins", "assignments"), ("assignments",)),
    "aggregate": (("group_by", "aggregations"), ("group_by", "aggregations")),
    "append": (("source", "source_selector", "aggregation"), ("source",)),
    "delete": ((), ()),
    "output": (("destination", "columns", "include_deleted", "register_as_dataset"), ("destination",)),
}


def _dataset_ref(data: Any, where: str, loc: Location, errors: DiagnosticCollector) -> DatasetRef:
    r = _Reader(data, where, ("dataset_id", "dataset_version"), ("dataset_id",), errors, loc)
    return DatasetRef(dataset_id=_as_str(r.get("dataset_id", (str, int))) or "",
                      dataset_version=r.get("dataset_version", int), location=r.loc("dataset_id"),
                      version_location=r.loc("dataset_version"))


def _located_list(value: Any) -> list[tuple[Any, Location]]:
    if not isinstance(value, YList):
        return []
    return list(zip(value, getattr(value, "item_locations", [])))  # a default YList() has no locations


def _aggregations(r: _Reader, errors: DiagnosticCollector, where: str) -> list[Aggregation]:
    out = []
    for item, loc in _located_list(r.get("aggregations", YList, YList())):
        ar = _Reader(item, f"aggregation of {where}", ("column", "expression"), ("column", "expression"), errors, loc)
        out.append(Aggregation(ar.get("column", str, ""), ar.get("expression", str, ""), loc))
    return out


def _group_by(r: _Reader, errors: DiagnosticCollector) -> list[str]:
    out = []
    lst = r.get("group_by", YList, YList())
    for item, loc in _located_list(lst):
        if not isinstance(item, str):
            errors.add("YAML-005", "group_by entries must be column names", loc, _text(item))
            continue
        out.append(item)
    return out


def _load_operation(data: Any, loc: Location, project_id: str, errors: DiagnosticCollector) -> Optional[Operation]:
    r = _Reader(data, "operation", _OP_KEYS, ("seq", "name", "type"), errors, loc)
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
    op_id = _as_str(r.get("id", (str, int))) or str(uuid.uuid5(uuid.NAMESPACE_OID, f"{project_id}/{seq}"))
    cls = OPERATION_CLASSES[OperationKind(op_type)] if op_type is not None else Operation
    op = cls(seq=seq if seq is not None else 0, name=r.get("name", str, ""), id=op_id,
             selector=r.get("selector", str), description=r.get("description", str, ""), location=loc)
    if op_type is None:
        return op
    allowed, required = _ARG_KEYS[op_type]
    a = _Reader(args_data, f"arguments of {op_type} {where}", allowed, required, errors, r.loc(args_key))
    if op_type == "update":
        for item, iloc in _located_list(a.get("joins", YList, YList())):
            jr = _Reader(item, f"join of {where}", ("alias", "dataset_id", "dataset_version", "on"),
                         ("alias", "dataset_id", "on"), errors, iloc)
            ref = DatasetRef(_as_str(jr.get("dataset_id", (str, int))) or "", jr.get("dataset_version", int),
                             jr.loc("dataset_id"), jr.loc("dataset_version"))
            op.joins.append(RuntimeJoin(jr.get("alias", str, ""), ref, jr.get("on", str, ""), iloc))
        for item, iloc in _located_list(a.get("assignments", YList, YList())):
            ar = _Reader(item, f"assignment of {where}", ("column", "expression"), ("column", "expression"), errors, iloc)
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
            ag = _Reader(agg, f"aggregation of {where}", ("group_by", "aggregations"), ("group_by", "aggregations"),
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
    r = _Reader(data, f"destination of {where}",
                ("table", "resolver", "datasource_id", "path", "format", "catalog_table"), (), errors, loc)
    kinds = [k for k in ("table", "path", "catalog_table") if k in r.data]
    if len(kinds) != 1 and written:
        errors.add("YAML-005", f"the destination of {where} needs exactly one of table, path, catalog_table", loc,
                   ", ".join(kinds), "e.g. {table: fx_converted} or {path: out/fx, format: parquet}")
    if "resolver" in r.data and "datasource_id" in r.data:
        errors.add("YAML-006", "destination has both 'resolver' and 'datasource_id'", r.loc("datasource_id"),
                   "datasource_id", "they are synonyms: keep one")
    return Destination(kind=kinds[0] if kinds else "table", table=_as_str(r.get("table", (str, int))),
                       resolver=r.get("resolver", str) or r.get("datasource_id", str), path=r.get("path", str),
                       format=r.choice("format", FORMATS, "parquet"), catalog_table=r.get("catalog_table", str),
                       location=loc)


def load_project(path: str, display: str, errors: DiagnosticCollector) -> Optional[Project]:
    """Read one ``projects/<name>.yml``."""
    return project_from_data(load_yaml_file(path, display), display, errors)


def project_from_data(data: Any, display: str, errors: DiagnosticCollector) -> Optional[Project]:
    """Build a project from parsed YAML (a file, or a run's snapshot)."""
    r = _Reader(data, "project", ("id", "name", "version", "status", "description", "input_dataset_id",
                                  "input_dataset_version", "selectors", "resolver_overrides", "operations"),
                ("id", "name", "input_dataset_id", "operations"), errors, Location(display, 1, 1))
    if not r.ok:
        return None
    pid = _as_str(r.get("id", (str, int))) or ""
    _check_uuid(pid or None, r.loc("id"), errors, "project id")
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
            errors.add("YAML-005", f"selector '{k}' must be an expression string", r.loc("selectors"), _text(v))
            continue
        selectors[str(k)] = v
    overrides = {str(k): _as_str(v) for k, v in r.get("resolver_overrides", YMap, {}).items()}
    input_ref = DatasetRef(_as_str(r.get("input_dataset_id", (str, int))) or "", r.get("input_dataset_version", int),
                           r.loc("input_dataset_id"), r.loc("input_dataset_version"))
    return Project(id=pid, name=r.get("name", str, ""), version=r.get("version", int, 1),
                   status=r.choice("status", ("draft", "active"), "active"), input=input_ref, operations=ops,
                   selectors=selectors, resolver_overrides=overrides, description=r.get("description", str, ""),
                   file=display, raw=_plain(data), location=Location(display, 1, 1))


def from_snapshot(raw: Any, display: str, builder) -> Any:
    """Rebuild a dataset or project from its verbatim snapshot (plain dicts) with located values."""
    import yaml
    errors = DiagnosticCollector()
    data = load_yaml_text(yaml.safe_dump(raw, sort_keys=False), display)
    obj = builder(data, display, errors)
    errors.raise_if_any()
    return obj


def _plain(value: Any) -> Any:
    """Strip location wrappers: the verbatim parsed YAML as plain dict/list/str values."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    return value


# --------------------------------------------------------------------------------------------- workspace
def load_workspace(root: str, extra_datasets: Callable[[], list[Dataset]] | None = None) -> Workspace:
    """Load every file of the workspace at ``root``; raises :class:`CompileError` listing all problems.

    ``extra_datasets`` supplies datasets registered by earlier runs (the run store), which join the catalog.
    """
    errors = DiagnosticCollector()
    root = os.path.abspath(root)
    if not os.path.isfile(os.path.join(root, MARKER)):
        raise WorkspaceNotFound(f"{root} is not a ledgerflow workspace: it has no {MARKER}.")

    def collect(loader, pattern):
        out = []
        for path in sorted(glob.glob(os.path.join(glob.escape(root), pattern))):
            display = os.path.relpath(path, root)
            try:
                obj = loader(path, display, errors)
            except CompileError as exc:
                errors.extend(exc.diagnostics)
                continue
            if obj is not None:
                out.append(obj)
        return out

    try:
        config = _load_config(os.path.join(root, MARKER), MARKER, errors)
    except CompileError as exc:
        errors.extend(exc.diagnostics)
        config = WorkspaceConfig(name="", default_resolver=None, resolvers={}, file=MARKER)
    datasets = collect(load_dataset, "datasets/*.yml") + collect(load_dataset, "datasets/*.yaml")
    projects = collect(load_project, "projects/*.yml") + collect(load_project, "projects/*.yaml")
    if extra_datasets:
        declared = {d.name for d in datasets}
        datasets += [d for d in extra_datasets() if d.name not in declared]
    _check_unique(datasets, "dataset", errors)
    _check_unique(projects, "project", errors)
    for ds in datasets:
        if ds.resolver_id and ds.resolver_id not in config.resolvers:
            errors.add("WS-004", f"dataset '{ds.name}' names resolver '{ds.resolver_id}', which ledgerflow.yml does "
                       "not define", _at(ds.resolver_id, ds.location), ds.resolver_id,
                       did_you_mean(ds.resolver_id, config.resolvers))
    errors.raise_if_any()
    ws = Workspace(root=root, config=config, datasets=datasets, projects=projects)
    _registered_datasets(ws)
    return ws


def _registered_datasets(ws: Workspace) -> None:
    """Check the workspace graph (GRAPH-001 cycles, GRAPH-002) and add the datasets outputs register, with
    the columns of their producers' plans (:mod:`.registered`). Only a workspace where an output registers
    a dataset has edges between projects: others skip the graph (and networkx) entirely."""
    from .graph import WorkspaceGraph, has_registrations
    if not has_registrations(ws):
        return
    problems = WorkspaceGraph(ws).problems()
    if problems:
        raise CompileError(problems)
    from .registered import derive_registered
    derive_registered(ws)


def _at(value: Any, fallback: Optional[Location]) -> Optional[Location]:
    """Where a value read from YAML is written (a :class:`YStr`), else ``fallback``."""
    return value.location() if isinstance(value, YStr) else fallback


def _check_unique(items: list, what: str, errors: DiagnosticCollector) -> None:
    for attr in ("id", "name"):
        seen: dict[str, Any] = {}
        for item in items:
            key = getattr(item, attr)
            if key and key in seen:
                errors.add("WS-002", f"{what} {attr} '{key}' is used by both {seen[key].file} and {item.file}",
                           _at(key, item.location), key, f"each {what} needs a unique {attr}")
            seen[key] = item

"""Load ``datasets/*.yml`` (or a run's snapshot of one) into :class:`~.model.Dataset`."""
from __future__ import annotations

import re
from typing import Any, Optional

from .errors import DiagnosticCollector, Location
from .model import TEMPORAL_MODES, ColumnDef, Dataset, DatasetVersion
from .yaml_reader import Reader, as_str, check_uuid, plain
from .yaml_source import YList, YMap, read_yaml_file

_DECIMAL = re.compile(r"^decimal\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)$")
_SIMPLE_TYPES = {"string": "string", "integer": "int", "int": "int", "bigint": "bigint", "double": "double",
                 "boolean": "boolean", "date": "date", "timestamp": "timestamp", "decimal": "decimal(38,10)"}
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


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


def load_dataset(path: str, display: str, errors: DiagnosticCollector) -> Optional[Dataset]:
    """Read one ``datasets/<name>.yml``."""
    data, digest = read_yaml_file(path, display)
    dataset = dataset_from_data(data, display, errors)
    if dataset is not None:
        dataset.text_sha256 = digest
    return dataset


def dataset_from_data(data: Any, display: str, errors: DiagnosticCollector) -> Optional[Dataset]:
    """Build a dataset from parsed YAML (a file, or a run's snapshot)."""
    r = Reader(data, "dataset", ("id", "name", "status", "resolver_id", "description", "versions", "main_table"),
               ("id", "name", "versions", "main_table"), errors, Location(display, 1, 1))
    if not r.ok:
        return None
    ds_id = as_str(r.get("id", (str, int)))
    check_uuid(ds_id, r.loc("id"), errors, "dataset id")
    versions = []
    vlist = r.get("versions", YList, YList())
    seen = set()
    for i, v in enumerate(vlist):
        vr = Reader(v, "dataset version", ("version", "status", "description", "created_at"), ("version",), errors,
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
    mt = Reader(r.get("main_table", YMap, YMap()), "main_table", ("name", "temporal_mode", "columns", "description"),
                ("name", "temporal_mode", "columns"), errors, r.loc("main_table"))
    columns = []
    clist = mt.get("columns", YList, YList())
    names = set()
    for i, c in enumerate(clist):
        cr = Reader(c, "column", ("name", "type", "nullable", "description"), ("name", "type"), errors,
                    clist.item_locations[i])
        name = cr.get("name", str)
        ctype = as_str(cr.get("type", str))
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
                   raw=plain(data))


"""The YAML parts several operation kinds read in their ``arguments:`` (a dataset reference, a list of
aggregations, ``group_by``, a destination); each kind's own reading is in its registry entry
(:mod:`.kinds.operations`)."""
from __future__ import annotations

from typing import Any

from .errors import DiagnosticCollector, Location
from .model import Aggregation, DatasetRef, Destination
from .workspace_config import FORMATS
from .yaml_reader import Reader, as_str, text_of
from .yaml_source import YList, YMap


def dataset_ref(data: Any, where: str, loc: Location, errors: DiagnosticCollector) -> DatasetRef:
    """``{dataset_id, dataset_version}`` read from ``data``."""
    r = Reader(data, where, ("dataset_id", "dataset_version"), ("dataset_id",), errors, loc)
    return DatasetRef(dataset_id=as_str(r.get("dataset_id", (str, int))) or "",
                      dataset_version=r.get("dataset_version", int), location=r.loc("dataset_id"),
                      version_location=r.loc("dataset_version"))


def located_list(value: Any) -> list[tuple[Any, Location]]:
    """The items of a YAML list with where each is written (empty for anything else)."""
    if not isinstance(value, YList):
        return []
    return list(zip(value, getattr(value, "item_locations", [])))  # a default YList() has no locations


def aggregations(r: Reader, errors: DiagnosticCollector, where: str) -> list[Aggregation]:
    """The ``aggregations`` list of ``r``."""
    out = []
    for item, loc in located_list(r.get("aggregations", YList, YList())):
        ar = Reader(item, f"aggregation of {where}", ("column", "expression"), ("column", "expression"), errors, loc)
        out.append(Aggregation(ar.get("column", str, ""), ar.get("expression", str, ""), loc))
    return out


def group_by(r: Reader, errors: DiagnosticCollector) -> list[str]:
    """The ``group_by`` column names of ``r``."""
    out = []
    lst = r.get("group_by", YList, YList())
    for item, loc in located_list(lst):
        if not isinstance(item, str):
            errors.add("YAML-005", "group_by entries must be column names", loc, text_of(item))
            continue
        out.append(item)
    return out


def literal_text(value: Any) -> str:
    """A YAML scalar written where an expression is expected, as the DSL writes it."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    return str(value)


def destination(data: Any, loc: Location, errors: DiagnosticCollector, where: str) -> Destination:
    """An output's ``destination`` (exactly one of table, path, catalog_table)."""
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

"""Read a project's ``checks:`` list (docs/checks.md) into :class:`~ledgerflow.compiler.model.Check`.

Only the YAML's shape is judged here (known keys, mappings and lists where they belong, one kind per
check: CHK-012); what the values mean (columns, outputs, tolerances, destinations) is judged when the
project is bound (:mod:`ledgerflow.compiler.check_binding`), where the columns are known.
"""
from __future__ import annotations

from typing import Any, Optional

from .errors import DiagnosticCollector, Location
from .kinds.entry import IncompleteKind, YamlShape
from .kinds.registry import CHECK_NAMES, check_kind
from .model import Check, Destination
from .operation_yaml import located_list
from .workspace_config import FORMATS
from .yaml_reader import Reader, as_str, text_of
from .yaml_source import YList, YMap

BASE_KEYS = ("name", "on", "severity", "on_violation", "quarantine", "key", "description")
KIND_HINT = "give exactly one of " + ", ".join(CHECK_NAMES)


def names(value: Any, loc: Location, what: str, errors: DiagnosticCollector, required: bool = True) -> list[str]:
    """A list of column names (each a YAML string, which keeps its location); YAML-005 otherwise."""
    if not isinstance(value, YList) or (required and not value):
        errors.add("YAML-005", f"{what} must be a non-empty list of column names", loc, text_of(value),
                   "e.g. [journal_id, line_number]")
        return []
    out = []
    for item, iloc in located_list(value):
        if not isinstance(item, str):
            errors.add("YAML-005", f"{what} must list column names", iloc, text_of(item))
            continue
        out.append(item)
    return out


def _arguments(kind: str, value: Any, loc: Location, name: str, errors: DiagnosticCollector) -> tuple[Any, dict]:
    """The kind's value, shaped: ``{"columns": [...]}``, ``{"condition": text}`` or the mapping's values;
    and where each of them is written."""
    what = f"'{kind}' of check '{name}'"
    entry = check_kind(kind)
    if entry.yaml == YamlShape.COLUMNS:
        return {"columns": names(value, loc, what, errors)}, {"columns": loc}
    if entry.yaml == YamlShape.CONDITION:
        if not isinstance(value, str):
            errors.add("YAML-005", f"{what} must be a condition written as a string", loc, text_of(value),
                       "e.g. expect: 'transactions.amount_local <> 0'")
            return {"condition": None}, {"condition": loc}
        return {"condition": value}, {"condition": loc}
    if entry.yaml != YamlShape.MAPPING:
        raise IncompleteKind(f"the check kind {kind} is written in a shape the reader does not know: {entry.yaml}")
    allowed, required = entry.keys
    r = Reader(value, what, allowed, required, errors, loc)
    args = {key: r.data.get(key) for key in allowed}
    return args, {key: r.loc(key) for key in allowed}


def load_check(data: Any, loc: Location, errors: DiagnosticCollector) -> Optional[Check]:
    """One entry of ``checks:`` (None when it is not even a mapping; reported)."""
    r = Reader(data, "check", BASE_KEYS + CHECK_NAMES, ("name",), errors, loc)
    if not r.ok:
        return None
    name = as_str(r.get("name", (str, int))) or ""
    kinds = [k for k in CHECK_NAMES if k in r.data]
    unknown = [k for k in r.data if k not in BASE_KEYS + CHECK_NAMES]
    kind, args, where = None, None, {}
    if len(kinds) > 1:
        errors.add("CHK-012", f"check '{name}' has two kinds ({', '.join(kinds)})", r.data.key_location(kinds[1]),
                   kinds[1], "write one check per kind, each with its own name")
    elif not kinds:
        if not unknown:  # a misspelt kind is already YAML-003 naming the closest key
            errors.add("CHK-012", f"check '{name}' names no kind", loc, name, KIND_HINT)
    else:
        kind = kinds[0]
        args, where = _arguments(kind, r.data[kind], r.loc(kind), name, errors)
    quarantine = None
    q = r.get("quarantine", YMap)
    if q is not None:
        qr = Reader(q, f"quarantine of check '{name}'", ("path", "format"), ("path",), errors, r.loc("quarantine"))
        quarantine = Destination("path", path=qr.get("path", str), format=qr.choice("format", FORMATS, "parquet"),
                                 location=r.loc("quarantine"))
    key = None
    if "key" in r.data:
        key = names(r.data["key"], r.loc("key"), f"'key' of check '{name}'", errors)
    on = r.data.get("on")
    if isinstance(on, (YMap, YList)) or isinstance(on, bool):
        errors.add("CHK-003", f"'on' of check '{name}' must be an output's seq or name, or input", r.loc("on"),
                   text_of(on), "e.g. on: 3")
        on = None
    for k in ("name", "on", "quarantine", "key", "severity", "on_violation"):
        where[f"@{k}"] = r.loc(k)
    return Check(name=name, kind=kind, args=args, on=as_str(on), severity=r.choice("severity", ("fail", "warn"), "fail"),
                 on_violation=r.choice("on_violation", ("fail", "warn", "quarantine")), quarantine=quarantine,
                 key=key, location=loc, where=where)


def load_checks(value: Any, loc: Location, errors: DiagnosticCollector) -> list[Check]:
    """Every check of a project's ``checks:`` list, in the order written."""
    if value is None:
        return []
    if not isinstance(value, YList):
        errors.add("YAML-005", "'checks' of a project must be a list of checks", loc, text_of(value),
                   "write each check as '- name: ...' under checks:")
        return []
    out = []
    for item, iloc in located_list(value):
        check = load_check(item, iloc, errors)
        if check is not None:
            out.append(check)
    return out

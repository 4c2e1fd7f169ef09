"""Strict reading of the workspace's YAML: known keys only, required keys present, values of the right kind.

Shared by the loaders of ``ledgerflow.yml`` (:mod:`.workspace_config`), ``datasets/*.yml``
(:mod:`.workspace_datasets`) and ``projects/*.yml`` (:mod:`.workspace_projects`). Every problem is added
to a :class:`~.errors.DiagnosticCollector` with file and line; reading goes on to find them all.
"""
from __future__ import annotations

import uuid
from typing import Any, Optional

from .errors import DiagnosticCollector, Location, did_you_mean
from .yaml_source import YList, YMap, YStr


class Reader:
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
            errors.add("YAML-005", f"{where} must be a mapping", location, text_of(data),
                       "write it as 'key: value' lines")
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
        """Where the value of ``key`` is written."""
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
            self.errors.add("YAML-005", f"'{key}' in {self.where} must be a {names}", self.loc(key), text_of(value))
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


def text_of(value: Any) -> str:
    """A value as an error message shows it (60 characters at most)."""
    s = str(value)
    return s if len(s) <= 60 else s[:57] + "..."


def as_str(value: Any) -> Optional[str]:
    """Scalars that YAML typed as numbers (``version: 1``, ``code: 4100``) used where names are expected."""
    if value is None or isinstance(value, (YMap, YList)):
        return None
    return value if isinstance(value, str) else str(value)


def check_uuid(value: Optional[str], loc: Location, errors: DiagnosticCollector, what: str) -> None:
    """A YAML-005 error when ``value`` (if given) is not a UUID, suggesting one made from it."""
    if value is None:
        return
    try:
        uuid.UUID(str(value))
    except ValueError:
        errors.add("YAML-005", f"{what} '{value}' is not a UUID", loc, str(value),
                   f"use a UUID such as {uuid.uuid5(uuid.NAMESPACE_URL, str(value))}")


def plain(value: Any) -> Any:
    """Strip location wrappers: the verbatim parsed YAML as plain dict/list/str values."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    return value


def written_at(value: Any, fallback: Optional[Location]) -> Optional[Location]:
    """Where a value read from YAML is written (a :class:`YStr`), else ``fallback``."""
    return value.location() if isinstance(value, YStr) else fallback


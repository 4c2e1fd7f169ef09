"""Load YAML keeping the line and column of every value, so errors can point at the source.

Mappings become :class:`YMap` (a dict remembering where each key and value starts), sequences
:class:`YList`, strings :class:`YStr`; numbers, booleans and null stay plain Python values whose
place is found through the enclosing container.
"""
from __future__ import annotations

from typing import Any

import yaml

from .errors import CompileError, Diagnostic, Location


class YStr(str):
    """A string from YAML with its position; ``quote`` is '', "'" or '"'."""

    file: str
    line: int
    column: int
    quote: str

    def location(self, offset: int = 0) -> Location:
        """Location of the character ``offset`` inside the string (quotes accounted for)."""
        return Location(self.file, self.line, self.column + (1 if self.quote else 0) + offset)


class YMap(dict):
    """A mapping from YAML; ``key_locations`` / ``value_locations`` give each entry's place."""

    location: Location
    key_locations: dict
    value_locations: dict

    def key_location(self, key: str) -> Location:
        """Where ``key`` is written, or the mapping itself when absent."""
        return self.key_locations.get(key, self.location)

    def value_location(self, key: str) -> Location:
        """Where the value of ``key`` starts, or the mapping itself when absent."""
        return self.value_locations.get(key, self.location)


class YList(list):
    """A sequence from YAML; ``item_locations`` gives each item's place."""

    location: Location
    item_locations: list


def _loc(file: str, node: yaml.Node) -> Location:
    return Location(file, node.start_mark.line + 1, node.start_mark.column + 1)


def _convert(file: str, node: yaml.Node, loader: yaml.SafeLoader) -> Any:
    if isinstance(node, yaml.MappingNode):
        out = YMap()
        out.location = _loc(file, node)
        out.key_locations, out.value_locations = {}, {}
        for key_node, value_node in node.value:
            # Keys are names: YAML 1.1 would read a plain `on:` (a join's condition) as the boolean True.
            if isinstance(key_node, yaml.ScalarNode):
                key = key_node.value
            else:
                key = str(_convert(file, key_node, loader))
            if key in out:
                raise CompileError([Diagnostic("YAML-002", f"duplicate key '{key}'", _loc(file, key_node), key,
                                               "each key may appear once in a mapping")])
            out[str(key)] = _convert(file, value_node, loader)
            out.key_locations[str(key)] = _loc(file, key_node)
            out.value_locations[str(key)] = _loc(file, value_node)
        return out
    if isinstance(node, yaml.SequenceNode):
        out = YList(_convert(file, item, loader) for item in node.value)
        out.location = _loc(file, node)
        out.item_locations = [_loc(file, item) for item in node.value]
        return out
    value = loader.construct_object(node, deep=True)
    if isinstance(value, str):
        s = YStr(value)
        s.file, s.line, s.column = file, node.start_mark.line + 1, node.start_mark.column + 1
        s.quote = node.style if node.style in ("'", '"') else ""
        return s
    return value


def load_yaml_text(text: str, file: str) -> Any:
    """Parse one YAML document, returning located containers; syntax errors become YAML-001."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        return _convert(file, node, loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        loc = Location(file, mark.line + 1, mark.column + 1) if mark else Location(file)
        raise CompileError([Diagnostic("YAML-001", f"YAML syntax error: {exc.problem or exc}", loc, "",
                                       "check indentation and quoting; a DSL string containing ':' or '\"' "
                                       "is safest in single quotes")]) from None
    finally:
        loader.dispose()


def load_yaml_file(path: str, display: str | None = None) -> Any:
    """Read and parse a YAML file (see :func:`load_yaml_text`)."""
    with open(path, encoding="utf-8") as fh:
        return load_yaml_text(fh.read(), display or path)

"""Load YAML keeping the line and column of every value, so errors can point at the source.

Mappings become :class:`YMap` (a dict remembering where each key and value starts), sequences
:class:`YList`, strings :class:`YStr`; numbers, booleans and null stay plain Python values whose
place is found through the enclosing container.
"""
from __future__ import annotations

import hashlib
import os
from typing import Any

import yaml

from .errors import CompileError, Diagnostic, Location

# Bounds on what one YAML file may cost to load, well above any real workspace file: a generated
# project of 5,000 operations (ten times the longest the contract asks for) is 1.3 MB and 110,000
# values; the finance sample's largest file is under 2 KB. They stop a "billion laughs" file, whose
# nested aliases make a few hundred bytes stand for a billion values, before anything is expanded
# (loading takes about 15 µs and 0.5 KB per value, so the node bound caps a load near 4 s and
# 130 MB), and a huge file before it is read.
MAX_YAML_BYTES = 10 * 1024 * 1024  # YAML-008: a file larger than this is not read
MAX_YAML_NODES = 250_000  # YAML-007: values (mappings, sequences, scalars, keys), every alias expanded


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


# libyaml's parser when PyYAML was built with it (the same YAML 1.1 safe schema, marks and error
# messages, about ten times faster on a long project); the pure-Python parser otherwise.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


_STR_TAG = "tag:yaml.org,2002:str"


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
    # A plain string (most scalars of a project) is the node's text; the constructor adds nothing to it.
    value = node.value if node.tag == _STR_TAG else loader.construct_object(node, deep=True)
    if isinstance(value, str):
        s = YStr(value)
        s.file, s.line, s.column = file, node.start_mark.line + 1, node.start_mark.column + 1
        s.quote = node.style if node.style in ("'", '"') else ""
        return s
    return value


def _expanded_size(root: yaml.Node, file: str) -> int:
    """How many values :func:`_convert` would build from ``root``, every alias expanded; stops with
    YAML-007 past :data:`MAX_YAML_NODES` or at an alias inside the value it names (a cycle).

    An alias is the node it names, shared, so each distinct node is sized once (the walk costs the
    size of the file, not of its expansion) and a shared node counts once per use.
    """
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:  # iterative: deep nesting must not exhaust Python's stack here
        node, children_done = stack.pop()
        key = id(node)
        if key in sizes:
            continue
        children = ([n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode)
                    else list(node.value) if isinstance(node, yaml.SequenceNode) else [])
        if not children_done:
            if key in open_nodes:
                raise _too_large(file, node, "an alias refers to the value that contains it")
            open_nodes.add(key)
            stack.append((node, True))
            for child in children:
                if id(child) in open_nodes and id(child) not in sizes:
                    raise _too_large(file, child, "an alias refers to the value that contains it")
                stack.append((child, False))
            continue
        open_nodes.discard(key)
        sizes[key] = 1 + sum(sizes[id(child)] for child in children)
        if sizes[key] > MAX_YAML_NODES:
            raise _too_large(file, node, f"its aliases expand to more than {MAX_YAML_NODES:,} values")
    return sizes[id(root)]


def _count_values(root: yaml.Node, file: str) -> None:
    """:func:`_expanded_size` for a document without anchors, where no node is shared: a plain count
    (a quarter of the cost), YAML-007 past :data:`MAX_YAML_NODES`."""
    count, stack = 0, [root]
    while stack:
        node = stack.pop()
        count += 1
        if isinstance(node, yaml.MappingNode):
            for pair in node.value:
                stack.extend(pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    if count > MAX_YAML_NODES:
        raise _too_large(file, root, f"it holds more than {MAX_YAML_NODES:,} values")


def _too_large(file: str, node: yaml.Node, why: str) -> CompileError:
    return CompileError([Diagnostic("YAML-007", f"this YAML cannot be loaded: {why}", _loc(file, node), "",
                                    "write the values out, or use fewer nested aliases (&anchor / *alias)")])


def load_yaml_text(text: str, file: str) -> Any:
    """Parse one YAML document, returning located containers; syntax errors become YAML-001, a text
    longer than :data:`MAX_YAML_BYTES` YAML-008, aliases that expand past :data:`MAX_YAML_NODES`
    values (or nesting too deep to parse) YAML-007."""
    if len(text) > MAX_YAML_BYTES:
        raise _file_too_large(file, len(text.encode("utf-8")))
    loader = _LOADER(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if "&" in text:
            _expanded_size(node, file)
        else:  # an alias names an anchor (&name): without one, every value is built once
            _count_values(node, file)
        return _convert(file, node, loader)
    except RecursionError:
        raise CompileError([Diagnostic("YAML-007", "this YAML cannot be loaded: its values are nested too deeply",
                                       Location(file), "", "nest fewer levels of mappings and lists")]) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        loc = Location(file, mark.line + 1, mark.column + 1) if mark else Location(file)
        raise CompileError([Diagnostic("YAML-001", f"YAML syntax error: {exc.problem or exc}", loc, "",
                                       "check indentation and quoting; a DSL string containing ':' or '\"' "
                                       "is safest in single quotes")]) from None
    finally:
        loader.dispose()


def _file_too_large(file: str, size: int) -> CompileError:
    return CompileError([Diagnostic("YAML-008", f"the file is {size:,} bytes, more than the {MAX_YAML_BYTES:,} "
                                    "bytes ledgerflow reads from one YAML file", Location(file), "",
                                    "split it, or move data into the files the resolvers read")])


def load_yaml_file(path: str, display: str | None = None) -> Any:
    """Read and parse a YAML file (see :func:`load_yaml_text`); a file larger than
    :data:`MAX_YAML_BYTES` is refused (YAML-008) before it is read."""
    return read_yaml_file(path, display)[0]


def read_yaml_file(path: str, display: str | None = None) -> tuple[Any, str]:
    """:func:`load_yaml_file`, and the SHA-256 of the very bytes parsed: what a cache keyed by the file's content
    must use (reading the file again later could see an edit made in between)."""
    size = os.path.getsize(path)
    if size > MAX_YAML_BYTES:
        raise _file_too_large(display or path, size)
    with open(path, "rb") as fh:
        data = fh.read()
    text = data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")  # as text mode reads it
    return load_yaml_text(text, display or path), hashlib.sha256(data).hexdigest()

"""The dataset YAML ``datasets infer`` prints: the schema of a ``datasets/<name>.yml`` (docs/workspace.md,
Datasets), with comments saying where it came from, what the sample showed and what was left out."""
from __future__ import annotations

import json
import uuid

import yaml

from .infer_columns import Inferred
from .infer_read import Found

_COMMENT_WIDTH = 100


def _scalar(text: str) -> str:
    """``text`` as a YAML scalar that loads back as the same string (quoted when it would not)."""
    try:
        same = yaml.safe_load(text) == text and ":" not in text and "#" not in text and "{" not in text
    except yaml.YAMLError:
        same = False
    return text if same and text.strip() == text and text else json.dumps(text)


def _shown(text: str) -> str:
    """``text`` for a comment: one line, control characters escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _comment(text: str, indent: str = "") -> list[str]:
    """``text`` as comment lines of at most :data:`_COMMENT_WIDTH` characters."""
    lines, line = [], ""
    for word in _shown(text).split(" "):
        if line and len(indent) + 2 + len(line) + 1 + len(word) > _COMMENT_WIDTH:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return [f"{indent}# {x}" for x in lines]


def render(inferred: Inferred, found: Found, location: str, name: str, table: str) -> str:
    """The YAML text of the dataset ``name`` (main table ``table``), ending with a newline."""
    files = f"{len(found.files)} file{'s' if len(found.files) != 1 else ''}"
    how = "schema from the files' footers" if found.format in ("parquet", "orc") else \
        f"types from a sample of {found.sampled_rows} row{'s' if found.sampled_rows != 1 else ''}"
    out = _comment(f"Inferred by `ledgerflow datasets infer` from {location} ({found.format}, {files}; {how}). "
                   f"Save it as datasets/{name}.yml and check each type; `nullable: false` where a column must "
                   "always hold a value.")
    out += [f"id: {uuid.uuid4()}", f"name: {_scalar(name)}", "status: active", "versions:", "  - {version: 1}",
            "main_table:", f"  name: {_scalar(table)}"]
    mode = f"  temporal_mode: {inferred.temporal_mode}"
    if len(mode) + 5 + len(inferred.mode_note) <= _COMMENT_WIDTH:
        out.append(f"{mode}   # {_shown(inferred.mode_note)}")
    else:
        out += _comment(inferred.mode_note, "  ") + [mode]
    out.append("  columns:")
    for c in inferred.columns:
        typ = f'"{c.type}"' if "(" in c.type else c.type
        entry = f"    - {{name: {_scalar(c.name)}, type: {typ}" + ("" if c.nullable else ", nullable: false") + "}"
        out.append(entry + (f"   # {_shown(c.note)}" if c.note else ""))
    if inferred.system:
        shown = ", ".join(f"{c.name} ({c.type})" if c.type else c.name for c in inferred.system)
        out += _comment(f"System columns in the data, implied by temporal_mode and not declared: {shown}.", "  ")
    for why in inferred.left_out:
        out += _comment(f"Left out: {why}.", "  ")
    return "\n".join(out) + "\n"

"""From each file's columns to the dataset's: one column list for the location (a column every file
has, one type across the files), the system columns recognised (``_row_id``, ``_period``, ...: implied
by the temporal mode, never declared), the temporal mode the data supports, and every name that is not
a valid column name, reported together with the rename to make."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from ...compiler import system_columns as sysc
from .infer_read import Column, Found, InferError
from .infer_text import TextColumn

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


@dataclass
class Inferred:
    """The dataset's columns as inferred, and what the YAML's comments say beside them."""

    columns: list[Column]
    system: list[Column]  # system columns the data carries (or its partition folders)
    temporal_mode: str
    mode_note: str
    left_out: list[str] = field(default_factory=list)  # "name: why" of columns not declared


def suggested_name(name: str, taken: set) -> str:
    """A valid column name for ``name``: lower case, each run of other characters one ``_``, a leading
    digit prefixed with ``c_``; ``_2``, ``_3`` ... when another column has it."""
    base = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") or "column"
    if base[0].isdigit():
        base = f"c_{base}"
    out, n = base, 2
    while out in taken:
        out, n = f"{base}_{n}", n + 1
    taken.add(out)
    return out


def check_names(names: list[str], location: str) -> None:
    """Raise ``INFER-003`` listing every user column name that is not valid (with its rename) and every
    pair of names Spark would take for one column (they differ only in case)."""
    user = [n for n in names if n not in sysc.ALL_NAMES]
    bad = [n for n in user if not _NAME.match(n)]
    taken = {n.lower() for n in user if n not in bad}
    problems = [f"'{n}' (rename it {suggested_name(n, taken)})" for n in bad]
    seen: dict[str, str] = {}
    for n in user:
        if n in seen.values():
            problems.append(f"'{n}' twice (rename one)")
        elif n.lower() in seen:
            problems.append(f"'{seen[n.lower()]}' and '{n}' (Spark reads names ignoring case: rename one)")
        seen.setdefault(n.lower(), n)
    if problems:
        count = f"{len(problems)} column name{'s' if len(problems) != 1 else ''}"
        raise InferError(
            f"INFER-003 {count} of {location} cannot be a dataset's column: {'; '.join(problems)}. A column name "
            "is a letter, then letters, digits or '_' ([A-Za-z][A-Za-z0-9_]*); names starting with '_' are kept "
            "for system columns (_row_id, _deleted, _updated_at, _period, _period_from, _period_to). Rename the "
            "columns where the files are written (a CSV's header line), then run `ledgerflow datasets infer` again: "
            "a dataset's columns are read from its files by name.")


def _merge(found: Found, location: str) -> tuple[list[Column], list[str]]:
    """One column per name across the files, in first-seen order, and the names some files lack."""
    order: dict[str, list[Column]] = {}
    for cols in found.columns_of.values():
        for c in cols:
            order.setdefault(c.name, []).append(c)
    total = len(found.columns_of)
    merged, partial = [], []
    for name, copies in order.items():
        types = {c.type or c.source_type for c in copies}
        if len(types) > 1:
            where = {}
            for path, cols in found.columns_of.items():
                for c in cols:
                    if c.name == name:
                        where.setdefault(c.type or c.source_type, path)
            shown = ", ".join(f"{t} in {p}" for t, p in where.items())
            raise InferError(f"INFER-005 the files of {location} disagree on the type of column '{name}' ({shown}): "
                             "a dataset's column has one type; rewrite the odd files, or infer from one folder of "
                             "files that agree.")
        first = copies[0]
        nullable = any(c.nullable for c in copies)
        merged.append(Column(name, first.type, nullable, first.note, first.source_type))
        if len(copies) < total:
            partial.append(name)
    return merged, partial


def _partition_columns(found: Found) -> list[Column]:
    out = []
    for key, values in found.partitions.items():
        if key in sysc.ALL_NAMES:
            out.append(Column(key, dict(sysc.system_columns("period") + sysc.system_columns("bitemporal"))[key]))
            continue
        seen = TextColumn()
        for v in values:
            seen.add_text(v)
        typ, note = seen.result()
        out.append(Column(key, typ, True, note or f"from the {key}= folders"))
    return out


def _temporal_mode(system: set, given: Optional[str], location: str) -> tuple[str, str]:
    has_period = "_period" in system
    bitemporal = {"_period_from", "_period_to"} & system
    if given == "bitemporal" or (given is None and bitemporal and not has_period):
        if bitemporal != {"_period_from", "_period_to"}:
            lacks = " and ".join(sorted({"_period_from", "_period_to"} - bitemporal))
            raise InferError(f"INFER-004 {location} lacks {lacks}: a bitemporal dataset's rows carry _period_from "
                             "and _period_to (dates; _period_to exclusive, empty when open). Add the column(s) to the "
                             "data, or give --temporal-mode period or snapshot.")
        return "bitemporal", "the data's _period_from and _period_to say when each row is valid"
    if given is None and has_period and bitemporal:
        raise InferError(f"INFER-004 {location} carries both _period and {', '.join(sorted(bitemporal))}: say which "
                         "it is with --temporal-mode period (rows belong to a period) or bitemporal (rows valid "
                         "from _period_from to _period_to).")
    if given == "period" or (given is None and has_period):
        if has_period:
            return "period", "each row's _period says which period it belongs to"
        return "period", ("no _period in the data: rows get the period of their location, so the resolver's rule "
                          "must name one (period tokens in the path, or a data_level)")
    if given is None:
        return "snapshot", ("no _period or _period_from in the data: every row is read for every period "
                            "(--temporal-mode period for files that each hold one period)")
    return "snapshot", "every row is read for every period"


def infer_columns(found: Found, location: str, temporal_mode: Optional[str]) -> Inferred:
    """The dataset's columns from what :func:`.infer_read.read_columns` found; raises ``INFER-003`` to
    ``INFER-005`` (:class:`InferError`) for names, modes and files that cannot make a valid dataset."""
    merged, partial = _merge(found, location)
    parts = _partition_columns(found)
    merged = [c for c in merged if c.name not in found.partitions] + parts
    twice = {c.name for cols in found.columns_of.values() for c in cols
             if [x.name for x in cols].count(c.name) > 1}  # a CSV header naming a column twice
    check_names([c.name for c in merged] + sorted(twice), location)
    system = [c for c in merged if c.name in sysc.ALL_NAMES]
    odd_system = [c.name for c in system if c.name in partial]
    if odd_system:
        raise InferError(f"INFER-005 some files of {location} carry {', '.join(odd_system)} and others do not: the "
                         "loader refuses a location whose files disagree on their system columns; give every file "
                         "the column(s), or none.")
    mode, note = _temporal_mode({c.name for c in system}, temporal_mode, location)
    readable = {n for n, _ in sysc.system_columns(mode)}
    system_out = []
    for c in system:
        if c.name in readable:
            system_out.append(c)
    left_out = [f"{c.name}: a {mode} dataset does not read this system column" for c in system
                if c.name not in readable]
    columns = []
    for c in merged:
        if c.name in sysc.ALL_NAMES:
            continue
        if c.type is None:
            left_out.append(f"{c.name} ({c.source_type}): no ledgerflow column type holds it")
        elif c.name in partial:
            left_out.append(f"{c.name}: only some files have it (a declared column must be in every file)")
        else:
            columns.append(c)
    if not columns:
        raise InferError(f"INFER-003 {location} has no column a dataset can declare"
                         + (f" ({'; '.join(left_out)})" if left_out else "") + ".")
    return Inferred(columns, system_out, mode, note, left_out)

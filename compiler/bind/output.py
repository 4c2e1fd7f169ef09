"""Bind an ``output``: its columns, selector, registration and destination rules."""
from __future__ import annotations

import os
import re
from typing import Optional

from sqlglot import exp

from ..errors import did_you_mean
from ..model import OutputOperation
from ..plan import Column, Condition, ConditionKind, OutputPlan
from ..realpaths import escape, fixed_part
from ..resolver import is_absolute_or_uri
from ..table_names import HINT as TABLE_HINT, table_name_problem
from .context import IDENTIFIER, BindContext, and_all, loc_of, not_deleted


def bind_output(ctx: BindContext, op: OutputOperation) -> Optional[OutputPlan]:
    """The plan of an output (None when it has errors, all recorded in ``ctx``)."""
    ok, selector = ctx.selector(op, ctx.working_scope(), {})
    if not ok:
        return None
    cols = list(ctx.schema) if op.columns is None else list(op.columns)  # keep YStr locations
    bad = [c for c in cols if c not in ctx.schema]
    for c in bad:
        ctx.errors.add("BR-015", f"output column '{c}' is not a working column", loc_of(c, op.location), c,
                       did_you_mean(c, ctx.schema))
    if op.columns is not None and len(set(cols)) != len(cols):
        ctx.errors.add("BR-015", "output columns list a column twice", op.location, ", ".join(cols))
    name = op.register_as_dataset
    if name is not None and not IDENTIFIER.match(str(name)):
        ctx.errors.add("YAML-005", f"register_as_dataset '{name}' is not a valid name",
                       loc_of(name, op.location), str(name))
    if name and ctx.input_ds and str(name) == ctx.input_ds.name and not ctx.input_ds.registered:
        ctx.errors.add("YAML-005", f"register_as_dataset '{name}' is a declared dataset",
                       loc_of(name, op.location), str(name), "registered datasets need their own name")
    check_destination_path(ctx, op)
    check_rule_paths(ctx, op)
    check_table_names(ctx, op)
    if name:
        check_version_folder(ctx, op)
    if bad:
        return None
    conds = [] if op.include_deleted else [not_deleted()]
    if selector is not None:
        conds.append(exp.Paren(this=selector.copy()))
    columns = {str(c): Column(str(c), ctx.schema[c], exp.column(str(c), quoted=True)) for c in cols}
    conditions = [Condition(ConditionKind.SELECTOR, selector)] if selector is not None else []
    return OutputPlan(op, f"output_{op.seq:03d}", columns, conditions=conditions, where=and_all(conds))


def check_destination_path(ctx: BindContext, op: OutputOperation) -> None:
    """OUT-VR-002: an inline destination path of a project stays inside the workspace.

    CONTRACT §3: absolute paths and URIs are the workspace owner's choice, written in
    ledgerflow.yml's resolver rules; a project file (the thing a pull request changes) may only
    name a folder below the workspace, so ``validate`` refuses what ``run`` would write elsewhere."""
    d = op.destination
    if d is None or d.kind != "path" or d.path is None:
        return
    path = str(d.path)
    where = loc_of(d.path, d.location)
    hint = ("write a path relative to the workspace (e.g. 'out/name'), or name a table whose resolver rule "
            "in ledgerflow.yml gives the location: destination: {table: NAME, resolver: R}")
    if is_absolute_or_uri(path) or path.startswith("\\"):
        ctx.errors.add("OUT-VR-002", f"output {op.seq} writes to the absolute path or URI '{path}'; a project "
                       "may only write inside its workspace", where, path, hint)
        return
    parts = [p for p in re.split(r"[/\\]", path) if p not in ("", ".")]
    depth = 0
    for part in parts:
        depth += -1 if part == ".." else 1
        if depth < 0:
            break
    if depth <= 0:
        what = "leaves the workspace" if depth < 0 else "is the workspace folder itself"
        ctx.errors.add("OUT-VR-002", f"output {op.seq} writes to '{path}', which {what}", where, path, hint)
        return
    real = _escape_through_links(ctx.ws.root, path)
    if real is not None:
        ctx.errors.add("OUT-VR-002", f"output {op.seq} writes to '{path}', which leads to {real} through a symbolic "
                       "link, not inside the workspace", where, path, hint)


def _escape_through_links(root: str, template: str):
    """The real path the folders of ``template`` before its first ``{{token}}`` reach when that is not
    inside the workspace ``root`` (a symbolic link on the way), else None. The folders after a token
    are checked by the run, which knows the tokens' values."""
    fixed = os.path.normpath(os.path.join(root, fixed_part(template)))
    if fixed == os.path.normpath(root):  # a path starting with a token: nothing to check before the run
        return None
    return escape(root, fixed)


def check_rule_paths(ctx: BindContext, op: OutputOperation) -> None:
    """OUT-VR-002 for ``{table: T}``: every relative path rule of the destination's resolver (any of them
    may match a period, as for OUT-VR-001) stays inside the workspace, as text and as a real path; an
    absolute path or a URI in ledgerflow.yml is the workspace owner's choice of a location elsewhere."""
    d = op.destination
    if d is None or d.kind != "table":
        return
    rid = d.resolver or ctx.ws.config.default_resolver
    resolver = ctx.ws.config.resolvers.get(rid) if rid else None
    hint = ("keep the rule's relative path inside the workspace, or write the location it means as an absolute "
            "path in that rule")
    for rule in resolver.rules if resolver else []:
        st = rule.strategy
        if st.type != "path" or not st.path or is_absolute_or_uri(st.path) or st.path.startswith("\\"):
            continue
        root, full = os.path.normpath(ctx.ws.root), os.path.normpath(os.path.join(ctx.ws.root, st.path))
        real = full if os.path.commonpath([full, root]) != root else _escape_through_links(root, st.path)
        if real is not None:
            ctx.errors.add("OUT-VR-002", f"output {op.seq} writes through resolver '{rid}', whose rule '{rule.name}' "
                           f"({rule.location or 'ledgerflow.yml'}) gives the path '{st.path}', which leads to {real}, "
                           "not inside the workspace", loc_of(d.table, d.location), str(d.table), hint)


def check_table_names(ctx: BindContext, op: OutputOperation) -> None:
    """TABLE-001: a destination's ``catalog_table`` or ``table`` is a table name Spark can take."""
    d = op.destination
    if d is None:
        return
    for key, value in (("catalog_table", d.catalog_table), ("table", d.table)):
        if d.kind != key or value is None:
            continue
        problem = table_name_problem(value)
        if problem:
            ctx.errors.add("TABLE-001", f"output {op.seq}: the destination's {key} '{value}' {problem}",
                           loc_of(value, d.location), str(value), TABLE_HINT)


def check_version_folder(ctx: BindContext, op: OutputOperation) -> None:
    """OUT-VR-001: an output registering a dataset needs ``{{version}}`` in its destination path.

    A registered version is immutable and stays readable by runs that pinned it, so each version
    needs a folder of its own. Refusing a path without ``{{version}}`` (rather than inventing a
    version folder under it) keeps the data where the user's path says it is; for ``{table: T}``
    every path rule of the destination's resolver is checked, as any of them may match a period."""
    d, name = op.destination, str(op.register_as_dataset)
    hint = "put {{version}} in the path so that each registered version gets a folder of its own"
    if d is None:
        return
    table_hint = "write it to a folder with {{version}} in its path, e.g. 'out/" + name + "/v{{version}}'"
    if d.kind == "catalog_table":
        ctx.errors.add("OUT-VR-001", f"output {op.seq} registers dataset '{name}' in the catalog table "
                       f"'{d.catalog_table}': a table's rows change with every run, and a registered version "
                       "is immutable", loc_of(d.catalog_table, d.location), str(d.catalog_table), table_hint)
    elif d.kind == "path" and d.path and "{{version}}" not in d.path:
        ctx.errors.add("OUT-VR-001", f"output {op.seq} registers dataset '{name}' at the path '{d.path}', "
                       "which has no {{version}}: a new version would replace the previous one",
                       loc_of(d.path, d.location), str(d.path), hint + ", e.g. 'out/" + name + "/v{{version}}'")
    elif d.kind == "table":
        rid = d.resolver or ctx.ws.config.default_resolver
        resolver = ctx.ws.config.resolvers.get(rid) if rid else None
        for rule in resolver.rules if resolver else []:
            st = rule.strategy
            if st.type == "table":
                ctx.errors.add("OUT-VR-001", f"output {op.seq} registers dataset '{name}' through resolver '{rid}', "
                               f"whose rule '{rule.name}' ({rule.location or 'ledgerflow.yml'}) gives a catalog "
                               "table: a table's rows change with every run, and a registered version is immutable",
                               loc_of(d.table, d.location), str(d.table), table_hint + " (through a path rule)")
            elif st.type == "path" and st.path is not None and "{{version}}" not in st.path:
                ctx.errors.add("OUT-VR-001", f"output {op.seq} registers dataset '{name}' through resolver "
                               f"'{rid}', whose rule '{rule.name}' ({rule.location or 'ledgerflow.yml'}) gives "
                               f"the path '{st.path}' without {{{{version}}}}: a new version would replace the "
                               "previous one", loc_of(d.table, d.location), str(d.table),
                               hint + " (in that rule), or write the output through another resolver")

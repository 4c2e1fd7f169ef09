"""Bind an ``output``: its columns, selector, registration and destination rules."""
from __future__ import annotations

import os
from typing import Optional

from sqlglot import exp

from ..errors import did_you_mean
from ..model import Dataset, OutputOperation, ResolverRule
from ..plan import Column, Condition, ConditionKind, OutputPlan
from ..realpaths import LOOP, fixed_part, inside, outside
from ..registered import registered_id
from ..resolver import climbs, is_absolute_or_uri, rule_table_problem, rule_where
from ..table_names import HINT as TABLE_HINT, table_name_problem
from ..writers import Writer, output_places, own_folder_problem, shared_with
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
    check_one_writer(ctx, op)
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

    docs/workspace.md (resolvers): absolute paths and URIs are the workspace owner's choice, written in
    ledgerflow.yml's resolver rules; a project file (the thing a pull request changes) may only
    name a folder below the workspace, so ``validate`` refuses what ``run`` would write elsewhere."""
    d = op.destination
    if d is None or d.kind != "path" or d.path is None:
        return
    path = str(d.path)
    where = loc_of(d.path, d.location)
    hint = ("write a path relative to the workspace (e.g. 'out/name'), or name a table whose resolver rule "
            "in ledgerflow.yml gives the location: destination: {table: NAME, resolver: R}")
    if is_absolute_or_uri(path) or path.startswith("\\"):  # \\server\share: absolute on Windows
        ctx.errors.add("OUT-VR-002", f"output {op.seq} writes to the absolute path or URI '{path}'; a project "
                       "may only write inside its workspace", where, path, hint)
        return
    problem = template_path_problem(ctx.ws.root, path)
    if problem is not None:
        ctx.errors.add("OUT-VR-002", f"output {op.seq} writes to '{path}', which {problem}", where, path,
                       _LOOP_HINT if LOOP in problem else hint)


def check_one_writer(ctx: BindContext, op: OutputOperation) -> None:
    """OUT-VR-004: an output does not write into ledgerflow's own folders; OUT-VR-003: no other output or
    check quarantine of the workspace may write where it writes (:mod:`..writers`, real paths compared)."""
    d = op.destination
    if d is None:
        return
    written = d.path if d.kind == "path" else d.catalog_table if d.kind == "catalog_table" else d.table
    if written is None:
        return
    where, text = loc_of(written, d.location), str(written)
    places = output_places(ctx.ws, op)
    for place in places:
        problem = own_folder_problem(ctx.ws.root, place)
        if problem is not None:
            through = "" if place.shown == text else f" (through its resolver, the path '{place.shown}')"
            ctx.errors.add("OUT-VR-004", f"output {op.seq} writes to '{text}'{through}, which {problem}", where,
                           text, "write the output to a folder of its own, e.g. out/<name>")
            return
    name = str(ctx.project.name)
    found = shared_with(ctx.ws, Writer((name, "output", str(op.seq)), "", places))
    if found is not None:
        other, mine, theirs = found
        through = "" if mine.shown == text else f" (through its resolver, the path '{mine.shown}')"
        same = "" if mine.shown == theirs.shown else f" ('{theirs.shown}')"
        ctx.errors.add("OUT-VR-003", f"output {op.seq} of project '{name}' writes to '{text}'{through}, where "
                       f"{other.what} may also write{same}: each run would replace the other's partition of a "
                       "period, a closed one included", where, text,
                       "give each output and quarantine a destination of its own (one writer per destination)")


_LOOP_HINT = "remove the looping link (or replace it by a folder), or write the output elsewhere"


def template_path_problem(root: str, template: str) -> Optional[str]:
    """:func:`.realpaths.outside` of a relative destination path template before a run: the whole
    template as text (a ``{{token}}`` standing for one folder; a backslash taken as a separator too, so
    that a climb out is refused whichever system runs the project), then, as a real path, its folders
    before the first token (this system's separators: on Linux ``data\\out`` is one folder), which may be
    the workspace folder itself when a folder follows. The folders after a token are checked by the run,
    which knows the tokens' values."""
    full = os.path.normpath(os.path.join(root, template.replace("\\", "/")))
    if not inside(full, root):
        return "is the workspace folder itself" if full == os.path.normpath(root) else "leaves the workspace"
    fixed = fixed_part(template)
    return outside(root, fixed, strict=fixed == template)


def destination_rules(ctx: BindContext, op: OutputOperation) -> tuple[Optional[str], list[ResolverRule]]:
    """(resolver id, its rules) of a ``{table: T}`` destination (no rules when it names no known
    resolver): any rule may match a period, so each check below looks at every one."""
    d = op.destination
    rid = (d.resolver or ctx.ws.config.default_resolver) if d is not None else None
    resolver = ctx.ws.config.resolvers.get(rid) if rid else None
    return rid, list(resolver.rules) if resolver else []


def check_rule_paths(ctx: BindContext, op: OutputOperation) -> None:
    """OUT-VR-002 for ``{table: T}``: every relative path rule of the destination's resolver (any of them
    may match a period, as for OUT-VR-001) stays strictly inside the workspace, as text and as a real
    path; an absolute path or a URI in ledgerflow.yml is the workspace owner's choice of a location
    elsewhere."""
    d = op.destination
    if d is None or d.kind != "table":
        return
    rid, rules = destination_rules(ctx, op)
    hint = ("keep the rule's relative path inside the workspace, or write the location it means as an absolute "
            "path in that rule")
    for rule in rules:
        st = rule.strategy
        if st.type != "path" or not st.path or is_absolute_or_uri(st.path) or st.path.startswith("\\"):
            continue
        problem = template_path_problem(ctx.ws.root, st.path)
        if problem is not None:
            ctx.errors.add("OUT-VR-002", f"output {op.seq} writes through resolver '{rid}', whose "
                           f"{rule_where(rule)} gives the path '{st.path}', which {problem}",
                           loc_of(d.table, d.location), str(d.table), _LOOP_HINT if LOOP in problem else hint)


def check_table_names(ctx: BindContext, op: OutputOperation) -> None:
    """TABLE-001: a destination's ``catalog_table`` is a table name Spark can take; a ``{table: T}``
    gives one through each table rule of its resolver (T fills their ``{{table_name}}`` and
    ``{{dataset}}``, tried with a period of each level), and T can fill a folder of a path rule (no
    '..' or path separator, as the run's substitution requires of every token value). T itself need not
    be a table name: through a path rule it only names folders (``{table: gl-summary}``)."""
    d = op.destination
    if d is None:
        return
    if d.kind == "catalog_table" and d.catalog_table is not None:
        problem = table_name_problem(d.catalog_table)
        if problem:
            ctx.errors.add("TABLE-001", f"output {op.seq}: the destination's catalog_table '{d.catalog_table}' "
                           f"{problem}", loc_of(d.catalog_table, d.location), str(d.catalog_table), TABLE_HINT)
        return
    if d.kind != "table" or d.table is None:
        return
    table, where = str(d.table), loc_of(d.table, d.location)
    if table.strip() in ("", ".") or climbs(table):
        what = "holds '..' or a path separator" if climbs(table) else "is empty" if not table.strip() else "is '.'"
        ctx.errors.add("TABLE-001", f"output {op.seq}: the destination's table '{table}' {what}, so it cannot name a "
                       "folder: it fills the {{table_name}} and {{dataset}} tokens of its resolver's rules, which may "
                       "put it in a path", where, table, "name the table without '..', '/' or '\\'")
        return
    rid, rules = destination_rules(ctx, op)
    pseudo = Dataset(id=registered_id(op.register_as_dataset or table), name=table, status="active",
                     table_name=table, temporal_mode="period", columns=[], versions=[])  # as the run fills it
    table_hint = TABLE_HINT + "; the destination's table fills the rule's {{table_name}} and {{dataset}}"
    for rule in rules:
        problem, hint = rule_table_problem(rule, pseudo), table_hint
        st = rule.strategy
        if st.type == "path" and "`" in table and any(t in (st.path or "") for t in ("{{table_name}}", "{{dataset}}")):
            problem = (f"gives the path '{st.path}', where the table names a folder: its backquotes would be part of "
                       "the folder's name (backquotes quote a name in SQL, never in a path)")
            hint = "write the table without backquotes: through a path rule any name of letters and digits is a folder"
        if problem:
            ctx.errors.add("TABLE-001", f"output {op.seq} writes the table '{table}' through resolver '{rid}', whose "
                           f"{rule_where(rule)} {problem}", where, table, hint)


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
        rid, rules = destination_rules(ctx, op)
        for rule in rules:
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

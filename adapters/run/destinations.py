"""Where each output of a run writes, resolved before anything runs (so a bad destination costs nothing).

An output registering a dataset reserves its version in the run store: the next version's destination
is computed here, outside the store's transaction, and :meth:`RunStore.reserve` takes that version only
if it is still the next one (else another run took it meanwhile, and the next one is tried), so
concurrent runs never share a version.
"""
from __future__ import annotations

import os
from dataclasses import replace
from typing import Optional

from ...compiler import resolver as resolver_engine
from ...compiler.errors import ResolutionError
from ...compiler.model import Dataset
from ...compiler.registered import registered_id
from ...compiler.table_names import split_parts
from ..commit.destinations import OutputDestination, refuse_shared_destinations
from ..commit.partitions import check_partition
from ..layout.partition_paths import env_folder
from ..store.runstore import RunStore
from .context import RunContext


def resolve_destinations(ctx: RunContext, store: RunStore, process: Optional[dict] = None) -> dict[int, OutputDestination]:
    """Where each output of ``ctx`` writes, by output seq.

    The run's reservations (held by ``process``) are released when it fails, and here when resolving
    fails. Every local partition is checked to be absent or ledgerflow's own (``check_partition``), and
    no output may write into a registered version's location."""
    out: dict[int, OutputDestination] = {}
    period = ctx.period.identifier
    try:
        for st in ctx.compiled.outputs:
            op = st.operation
            if op.register_as_dataset:
                out[op.seq] = reserve_version(ctx, store, op, process)
            else:
                out[op.seq] = destination(ctx, op, 1)
                target = out[op.seq].target
                taken = store.live_registrations_at(target) if out[op.seq].kind == "path" else []
                if taken:
                    reg = taken[0]
                    raise ResolutionError(
                        f"output {op.seq}: the destination {target} overlaps the location {reg['location']} of "
                        f"registered dataset '{reg['name']}' version {reg['version']}, which is immutable; write "
                        "this output somewhere else.")
            out[op.seq] = in_env(out[op.seq], ctx.env, op.seq, ctx.workspace.root,
                                 registers=bool(op.register_as_dataset))
            if out[op.seq].local:
                check_partition(out[op.seq].target, period, create_only=bool(op.register_as_dataset),
                                where=f"output {op.seq}", env=ctx.env)
        refuse_shared_destinations(out, period)
    except BaseException:
        store.release(ctx.run_id)
        raise
    return out


def in_env(dest: OutputDestination, env: str, seq: int, workspace: str, registers: bool = False) -> OutputDestination:
    """``dest`` published to environment ``env``. An environment other than prod publishes a local folder's
    partitions in ``.lf_envs/<env>`` (:mod:`..layout.partition_paths`). A catalog table is written in place, where
    prod's readers read it, so an environment's rows of a table go to a folder of the workspace instead,
    :func:`env_table_folder` (Parquet, staged and swapped as any local folder; ``promote`` copies them into the
    table). A URI's rows (parquet or orc) go to ``<uri>/.lf_envs/<env>``, written in place by Spark as prod's are
    and hidden from every reader of ``<uri>``. A URI or a table an output registers as a dataset (other projects read
    it), and a CSV or JSON URI, are refused there (ENV-002) before anything runs."""
    if env == "prod":
        return dest
    if dest.local:
        return replace(dest, env=env)
    if dest.kind == "table" and not registers:
        return OutputDestination("path", env_table_folder(workspace, dest.target), "parquet", dest.version,
                                 workspace, env, stands_for=dest.target)
    if dest.kind == "path" and not registers and dest.format in URI_ENV_FORMATS:
        return OutputDestination("path", env_folder(dest.target.rstrip("/"), env), dest.format, dest.version, None,
                                 env, stands_for=dest.target)
    what = (f"the catalog table {dest.target} and registers it as a dataset" if dest.kind == "table" else
            f"the URI {dest.target} and registers it as a dataset" if registers else
            f"the URI {dest.target} as {dest.format} (a URI keeps an environment's rows only as parquet or orc, "
            "whose types a promotion copies exactly)")
    raise ResolutionError(
        f"ENV-002 output {seq} writes {what}, which Spark writes in place, where prod's readers read it: a run in "
        f"environment '{env}' keeps its rows elsewhere only for local folders, catalog tables and parquet or orc "
        "URIs that no project reads. Nothing was run. Hint: run this project in prod, or give the output a local "
        "destination path to try it in an environment.")


URI_ENV_FORMATS = ("parquet", "orc")  # typed formats: an environment's rows of a URI copy into prod's exactly


def env_table_folder(workspace: str, table: str) -> str:
    """The folder of the workspace holding every environment's rows of catalog table ``table`` (each environment's
    partitions in ``.lf_envs/<env>``): ``.ledgerflow/tables/<the table's name, lower case>``. A table's name holds
    only ASCII letters, digits and underscores in each of its parts (validation), so the folder's name is that
    text; two spellings of a name (quoted or not) are one folder."""
    parts = split_parts(table) or [(table, False)]
    return os.path.join(workspace, ".ledgerflow", "tables", ".".join(text.lower() for text, _ in parts))


def reserve_version(ctx: RunContext, store: RunStore, op, process: Optional[dict] = None) -> OutputDestination:
    """The destination of the next version of the dataset ``op`` registers, that version reserved for the run."""
    name = op.register_as_dataset
    while True:
        dest = destination(ctx, op, store.next_version(name))
        if store.reserve(name, ctx.run_id, [ctx.period.identifier], dest.version,
                         dest.target if dest.kind == "path" else None, dest.format, process):
            return dest  # else another run took that version meanwhile: try the next one


def destination(ctx: RunContext, op, version: int) -> OutputDestination:
    """Where output ``op`` writes at ``version``."""
    d = op.destination
    if d.kind == "catalog_table":
        return OutputDestination("table", d.catalog_table, "table", version)
    if d.kind == "path":
        # tokens as in a resolver path ({{version}} makes a registered version's folder its own)
        pseudo = Dataset(id=registered_id(op.register_as_dataset or ""), name=op.register_as_dataset or "",
                         status="active", table_name=op.register_as_dataset or "", temporal_mode="period",
                         columns=[], versions=[])
        text = resolver_engine.substitute(d.path, pseudo, version, ctx.period, f"output {op.seq}") \
            if "{{" in d.path else d.path
        place = getattr(d.path, "location", lambda: d.location)()  # the path's place in the project file
        where = f"output {op.seq} ({place})" if place else f"output {op.seq}"
        return OutputDestination("path", resolver_engine.destination_path(ctx.workspace.root, d.path, text, where),
                                 d.format, version, ctx.workspace.root)
    return _table_destination(ctx, op, version)


def _table_destination(ctx: RunContext, op, version: int) -> OutputDestination:
    """Where an output to a destination ``table`` writes: as the table's resolver says."""
    d = op.destination
    name = op.register_as_dataset or d.table
    resolver_id = d.resolver or ctx.workspace.config.default_resolver
    if not resolver_id or resolver_id not in ctx.workspace.config.resolvers:
        raise ResolutionError(f"output {op.seq}: resolver '{resolver_id}' for destination table '{d.table}' is not "
                              "defined in ledgerflow.yml.")
    pseudo = Dataset(id=registered_id(name), name=d.table, status="active", table_name=d.table,
                     temporal_mode="period", columns=[], versions=[])
    rule = resolver_engine.match_rule(ctx.workspace.config.resolvers[resolver_id], pseudo, ctx.period)
    st = rule.strategy
    text = resolver_engine.substitute((st.path if st.type == "path" else st.table) or "", pseudo, version,
                                      ctx.period, rule.name)
    if st.type == "table":
        return OutputDestination("table", resolver_engine.table_name(text, resolver_engine.rule_where(rule)), "table",
                                 version)
    within = None if resolver_engine.is_absolute_or_uri(st.path) else ctx.workspace.root
    return OutputDestination("path", resolver_engine.destination_path(ctx.workspace.root, st.path, text,
                                                                      resolver_engine.rule_where(rule)), st.format,
                             version, within)

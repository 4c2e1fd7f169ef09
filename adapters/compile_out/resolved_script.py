"""``ledgerflow compile --resolved``: one script that runs as is in ``spark-sql`` for one period.

Parameters are inlined as literals, inputs are read from the locations the resolvers give (the
same normalisation the runner applies), each stage is materialised with ``INSERT OVERWRITE
DIRECTORY`` into ``target/scratch`` and read back as a view, and each output query writes to
``target/resolved/<project>/<period>/`` (the runner's atomic partition swap into the real
destination cannot be expressed in SQL, so the script never touches real destinations). The project's
checks follow: each output read back as ``output_NNN`` and the input after the period filter as
``input`` (the views the checks' queries name), then each check's query, which lists what violates it (or
a reconcile's measures at both ends). The script does not judge them: the run does, before its commit.
"""
from __future__ import annotations

import csv
import datetime
import glob
import os

import sqlglot
from sqlglot import exp

from ...compiler.checks.plan import Action, CheckKind
from ...compiler.check_script import statements as check_statements
from ...compiler.checks.sql import LIVE_INPUT, check_view, describe as describe_check, input_rows_query, violation
from ...compiler.compile import CompiledProject, describe
from ...compiler.errors import LedgerflowError
from ...compiler.loading import FILE_METADATA_COLUMN, RowRules, normalised_select, spark_metadata_name, union_all
from ...compiler.model import Project, Workspace
from ...compiler.parameters import values as parameter_values
from ...compiler.periods import Period
from ...compiler.render import comment, ident
from ...compiler.yaml_source import YStr
from ..inputs.resolution import resolve_inputs
from ..run.context import RunContext, new_run_id, utcnow
from . import folders
from ..inputs.files import spark_path, spark_skips
from ..inputs.loaders import common_columns, csv_reads, file_root, read_options
from ..store.runstore import RunStore


def inline_parameters(sql: str, args: dict) -> str:
    """Replace ``:name`` markers with literals and pretty-print."""
    literals = {}
    for name, value in args.items():
        if isinstance(value, datetime.datetime):
            literals[name] = exp.Cast(this=exp.Literal.string(value.isoformat(sep=" ")), to=exp.DataType.build("timestamp"))
        elif isinstance(value, datetime.date):
            literals[name] = exp.Cast(this=exp.Literal.string(value.isoformat()), to=exp.DataType.build("date"))
        else:
            literals[name] = exp.Literal.string(str(value))
    tree = sqlglot.parse_one(sql, read="spark")
    tree = tree.transform(lambda n: literals[n.name].copy() if isinstance(n, exp.Placeholder) and n.name in literals else n)
    return tree.sql("spark", pretty=True)


def _string(value: str) -> str:
    return exp.Literal.string(value).sql("spark")


def peek_columns(target: str, fmt: str, declared: list[str]) -> dict[str, str]:
    """The columns a location holds (name -> Spark type), read cheaply without Spark: those of its first
    data file and the ``name=value`` folders that file lies in (Spark's partition columns)."""
    if fmt == "csv":
        files = [target] if os.path.isfile(target) else sorted(
            f for f in glob.glob(os.path.join(glob.escape(target), "**", "*.csv"), recursive=True) if "/.lf_versions/" not in f)
        if not files:
            return {c: "string" for c in declared}
        with open(files[0], encoding="utf-8-sig", newline="") as fh:  # a BOM is no part of the first name
            header = next(csv.reader(fh), [])
        return {**{c: "string" for c in header if c}, **_partition_columns(target, files[0])}
    path = _first_data_file(target) if fmt in ("parquet", "orc") else None
    if path is None:  # no local file to peek at (URI, json): assume the declared columns
        return {c: "" for c in declared}
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq
            schema = pq.read_schema(path)
        else:
            import pyarrow.orc as po
            schema = po.ORCFile(path).schema
    except Exception:  # not readable here: assume the declared columns
        return {c: "" for c in declared}
    return {**{f.name: _arrow_type(f.type) for f in schema}, **_partition_columns(target, path)}


# CSV records parsed whole before a filter is applied (see loaders.CSV_FILTER_PUSHDOWN: a malformed
# record a pushed-down filter rejects is dropped without the FAILFAST error)
_WHOLE_RECORDS = (comment("CSV records are parsed whole before any filter (a malformed one always fails)"),
                  "SET spark.sql.csv.filterPushdown.enabled=false")


def _csv_views(loc, dataset, raw: str, what: str) -> tuple[list[tuple[str, str]], dict[str, str]] | None:
    """(the statements creating the view ``raw`` of a local CSV location as the runner reads it, the
    columns it has), or None when ledgerflow does not read the location itself (then Spark's reader with
    the location's options). Files sharing a header and a reading (``multiLine``, the records' line
    ending) are one read with that header as schema, checked by Spark against each file's header
    (``enforceSchema`` off). When the files need several readings (another column order, a quoted line
    break, another line ending), each file is a view of its own and ``raw`` selects their common columns
    by name. A schema is always given: Spark's multiLine inference lists the files again as globs."""
    reads = csv_reads(loc, dataset)
    if not reads or any(r.schema is None for r in reads):
        return None
    base = read_options(loc)

    def view(name: str, path: str, read) -> str:
        opts = {"path": path, **base, **dict(read.options)}
        options = ", ".join(f"{k} {_string(str(v))}" for k, v in opts.items())
        return f"CREATE OR REPLACE TEMPORARY VIEW {ident(name)} ({read.schema}) USING csv OPTIONS ({options})"
    partitions = list(reads[0].partitions)
    if len(reads) == 1:  # the folder itself: Spark lists it when the script runs
        present = {c: "string" for c in reads[0].columns + tuple(partitions)}
        return [(what, view(raw, spark_path(loc.target), reads[0]))], present
    out, selects = [], []
    common = common_columns(reads)
    for read in reads:
        for path in read.paths:
            name = f"{raw}_{len(selects) + 1}"
            out.append((comment(f"{what.lstrip('- ')}: file {len(selects) + 1}"), view(name, path, read)))
            selects.append(f"SELECT {', '.join(ident(c) for c in common + partitions)} FROM {ident(name)}")
    out.append((what, f"CREATE OR REPLACE TEMPORARY VIEW {ident(raw)} AS\n" + "\nUNION ALL\n".join(selects)))
    return out, {c: "string" for c in common + partitions}


def _first_data_file(target: str) -> str | None:
    """The first file Spark would read at ``target`` (a file, or under a folder: names starting with ``.``
    or ``_`` skipped, except ``_name=value`` partition folders), or None."""
    if os.path.isfile(target):
        return target
    for root, dirs, files in os.walk(target, followlinks=True):  # links followed, as Spark does
        dirs[:] = sorted(d for d in dirs if not spark_skips(d, folder=True))
        for name in sorted(files):
            if not spark_skips(name):
                return os.path.join(root, name)
    return None


def _partition_columns(target: str, file: str) -> dict[str, str]:
    """The ``name=value`` folders between ``target`` and one of its data files, as Spark's partition
    columns (strings), outermost first."""
    folders = os.path.relpath(os.path.dirname(file), target).split(os.sep) if file != target else []
    return {f.split("=", 1)[0]: "string" for f in folders if "=" in f and not f.startswith(".")}


def _arrow_type(t) -> str:
    import pyarrow as pa
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    mapping = [(pa.types.is_string, "string"), (pa.types.is_int32, "int"), (pa.types.is_int64, "bigint"),
               (pa.types.is_float64, "double"), (pa.types.is_boolean, "boolean"), (pa.types.is_date32, "date"),
               (pa.types.is_timestamp, "timestamp")]
    for check, name in mapping:
        if check(t):
            return name
    return str(t)


def check_identifiers(compiled: CompiledProject) -> None:
    """Refuse names that ``spark-sql -f`` cannot read back inside a quoted identifier.

    spark-sql reads a file line by line (Java's ``readLine``: ``\\n``, ``\\r`` and ``\\r\\n`` end a line)
    and drops every line that starts with ``--`` before it splits statements, and a backquoted Spark
    identifier has no escape for a line break: a name holding one would be cut, and the text after it
    read as SQL. Dataset names are the only free text that reaches identifiers (as input view names;
    columns, aliases and registered names are checked as plain identifiers when loaded). The runner,
    which passes each statement to Spark whole, is not affected.
    """
    for view in compiled.inputs:
        name = view.dataset.name
        if "\n" in name or "\r" in name:
            loc = name.location() if isinstance(name, YStr) else view.dataset.location
            where = f" ({loc})" if loc else ""
            raise LedgerflowError(f"dataset name {str(name)!r}{where} holds a line break, which spark-sql "
                                  "cannot read inside a quoted identifier; rename the dataset to use "
                                  "compile --resolved (ledgerflow run is not affected).")


def resolved_statements(ws: Workspace, project: Project, compiled: CompiledProject, period: Period,
                        store: RunStore, started_at: datetime.datetime | None = None) -> list[tuple[str, str]]:
    """(comment, statement) pairs of the resolved script, in order."""
    check_identifiers(compiled)
    started = started_at or utcnow()
    ctx = RunContext(ws, project, compiled, period, started, new_run_id(started))
    resolve_inputs(ctx, store)
    args = parameter_values(period, started)
    scratch = os.path.join(ws.root, "target", "scratch", folders.segment(project.name), period.identifier)
    results = os.path.join(ws.root, "target", "resolved", folders.segment(project.name), period.identifier)
    out: list[tuple[str, str]] = []
    for view in compiled.inputs:
        res = ctx.resolutions[view.view]
        selects = []
        for i, loc in enumerate(res.locations):
            raw = f"raw_{view.view}_{i}"
            root = None
            if loc.kind == "table":
                relation = loc.target
                present = {c.name: "" for c in view.dataset.columns}
            else:
                what = comment(f"{view.dataset.name} v{res.version}: location {i + 1} of {len(res.locations)}")
                csv_views = _csv_views(loc, view.dataset, raw, what) if loc.format == "csv" else None
                if csv_views is None:
                    present = peek_columns(loc.target, loc.format, [c.name for c in view.dataset.columns])
                if csv_views is not None:  # the header of every file, as the runner reads them
                    statements, present = csv_views
                    out.extend(statements)
                elif view.row_ids and loc.format == "parquet" and not loc.options and "_row_id" not in present:
                    # rows identified by file + row index, as the runner does (a USING view hides _metadata)
                    root = file_root(loc)
                    metadata = f"{ident(spark_metadata_name(present))} AS {ident(FILE_METADATA_COLUMN)}"
                    out.append((what, f"CREATE OR REPLACE TEMPORARY VIEW {ident(raw)} AS SELECT *, "
                                      f"{metadata} FROM parquet.{ident(spark_path(loc.target))}"))
                else:
                    # the path read literally; CSV Spark reads with a header from the first file and a
                    # file whose header orders the columns otherwise fails (enforceSchema off)
                    opts = {"path": spark_path(loc.target), **read_options(loc)}
                    options = ", ".join(f"{k} {_string(str(v))}" for k, v in opts.items())
                    out.append((what, f"CREATE OR REPLACE TEMPORARY VIEW {ident(raw)} USING {loc.format} "
                                      f"OPTIONS ({options})"))
                relation = raw
            rows = RowRules(period_rows=True, file_root=root, row_ids=view.row_ids)
            selects.append(normalised_select(view.dataset, res.version, relation, present, loc.target, loc.period, i,
                                             rows))
        query = union_all(selects)
        if any(loc.format == "csv" for loc in res.locations) and not out[:1] == [_WHOLE_RECORDS]:
            out.insert(0, _WHOLE_RECORDS)
        out.append((comment(f"{view.view}: dataset {view.dataset.name} v{res.version} normalised (resolver "
                            f"{res.resolver_id}, {res.resolver_source})"),
                    f"CREATE OR REPLACE TEMPORARY VIEW {ident(view.view)} AS\n{inline_parameters(query, args)}"))
    for st in compiled.statements:
        body = inline_parameters(st.sql, args)
        if st.kind == "stage":
            folder = os.path.join(scratch, st.name)
            out.append((describe(st), f"INSERT OVERWRITE DIRECTORY {_string(folder)} USING parquet\n{body}"))
            out.append((comment(f"{st.name} read back from its materialised copy"),
                        f"CREATE OR REPLACE TEMPORARY VIEW {ident(st.name)} USING parquet OPTIONS (path {_string(folder)})"))
        else:
            folder = os.path.join(results, st.name)
            out.append((describe(st, f" (here: {folder})"),
                        f"INSERT OVERWRITE DIRECTORY {_string(folder)} USING parquet\n{body}"))
    return out + check_statements_resolved(compiled, args, results)


def check_statements_resolved(compiled: CompiledProject, args: dict, results: str) -> list[tuple[str, str]]:
    """(comment, statement) pairs of the project's checks over what the resolved script wrote, read as the run
    reads them: each output they name read back from its folder under ``results`` as ``output_NNN``, less the
    rows its quarantine checks move out (those checks read ``output_NNN_computed``, every row); ``input``, the
    rows after the period filter (a reconcile from it to an output that leaves deleted rows out reads
    ``input_live``, as the run's bridge counts them); then each check's queries."""
    checks = list(compiled.plan.checks) if compiled.plan is not None else []
    moved = {}  # output seq -> its quarantine checks
    for c in checks:
        if c.kind.row_check and c.action == Action.QUARANTINE:
            moved.setdefault(c.on, []).append(c)
    live = any(c.live_input for c in checks)
    ends = {c.on for c in checks} | {c.from_output for c in checks if c.kind == CheckKind.RECONCILE}
    out: list[tuple[str, str]] = []
    if None in ends:
        query = input_rows_query(compiled.statements[0].sql)
        out.append((comment("input: the rows after the period filter, before operation 1"),
                    f"CREATE OR REPLACE TEMPORARY VIEW {ident('input')} AS\n{inline_parameters(query, args)}"))
    if live:
        rows = exp.select(exp.Star()).from_(exp.to_identifier("input", quoted=True)).where(
            exp.Not(this=exp.column("_deleted", quoted=True)))
        out.append((comment(f"{LIVE_INPUT}: the input rows not deleted, as the bridge counts them for an output "
                            "that leaves deleted rows out"),
                    f"CREATE OR REPLACE TEMPORARY VIEW {ident(LIVE_INPUT)} AS\n{rows.sql('spark', pretty=True)}"))
    for seq in sorted(e for e in ends if e is not None):
        name = check_view(seq)
        read = f"USING parquet OPTIONS (path {_string(os.path.join(results, name))})"
        if seq not in moved:
            out.append((comment(f"{name} as the script wrote it, read back for the checks"),
                        f"CREATE OR REPLACE TEMPORARY VIEW {ident(name)} {read}"))
            continue
        computed = f"{name}_computed"
        out.append((comment(f"{computed}: every row the script wrote for output {seq}, read back for its "
                            "quarantine checks"), f"CREATE OR REPLACE TEMPORARY VIEW {ident(computed)} {read}"))
        kept = exp.select(exp.Star()).from_(exp.to_identifier(computed, quoted=True)).where(
            exp.Not(this=exp.Paren(this=exp.or_(*[violation(c) for c in moved[seq]]))))
        out.append((comment(f"{name}: the rows the run writes, those its quarantine checks move out left out"),
                    f"CREATE OR REPLACE TEMPORARY VIEW {ident(name)} AS\n{kept.sql('spark', pretty=True)}"))
    for check in checks:
        for i, text in enumerate(check_statements(check, _views_read(check))):
            note = "" if i == 0 else " (the other end)"
            out.append((comment(describe_check(check) + note), text))
    if out:
        head = comment("Checks: each query lists what violates the check (a reconcile: its measures at both ends); "
                       "the run judges them before its commit")
        out[0] = (f"{head}\n{out[0][0]}", out[0][1])
    return out


def _views_read(check):
    """The views ``check`` reads in the resolved script: a quarantine check every row its output computed
    (``output_NNN_computed``); otherwise the views the compiled script names (a reconcile's input end the rows
    not deleted, ``input_live``, when its output leaves them out: ``CheckPlan.live_input``)."""
    def view(seq):
        if seq is not None and check.kind.row_check and check.action == Action.QUARANTINE:
            return f"{check_view(seq)}_computed"
        return check_view(seq)
    return view


def resolved_script(ws: Workspace, project: Project, compiled: CompiledProject, period: Period,
                    store: RunStore) -> str:
    """The resolved script as text."""
    header = [comment(f"ledgerflow: project {project.name} resolved for period {period.identifier} "
                      f"({period.start} .. {period.end}); runs as is in spark-sql")]
    parts = [f"{comment}\n{statement};" for comment, statement in resolved_statements(ws, project, compiled, period, store)]
    return "\n".join(header) + "\n\n" + "\n\n".join(parts)

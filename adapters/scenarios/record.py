"""``ledgerflow test --record RUN_ID NAME``: turn a recorded run into a scenario test.

The test gives a sample of the run's input dataset as the run read it (its recorded versions and
locations, period-filtered, the first N rows by ``_row_id``), the rows of each runtime-join dataset
those rows can match and every period row of each append source; its expectations are the outputs
of running the project as it was recorded (the run's project snapshot) on exactly that data. A
join's rows are narrowed by the equality conditions of its ``on`` that compare an input column no
earlier update assigns with a join column; the project is then run on the narrowed and on the
whole join data, and the narrowed rows are kept only when every output is the same.
"""
from __future__ import annotations

import datetime
import os
import re
from decimal import Decimal
from typing import Any, Callable

import yaml
from sqlglot import expressions as exp

from ...compiler.compile import compile_project
from ...compiler.errors import LedgerflowError
from ...compiler.model import Project, UpdateOperation, Workspace
from ...compiler.periods import parse_period
from ...compiler.resolver import Resolution
from ...compiler.workspace import dataset_from_data, from_snapshot, project_from_data
from ...compiler.yaml_source import load_yaml_text
from ..compile_out import folders
from ..inputs import loaders
from ..compile_out.paths import check_file, write_failed
from ...compiler import parameters, system_columns as sysc
from ..run.open_store import open_store
from . import execute
from .prepare import Compiler, prepare
from .spec import parse_test
from .suite import Session

_EQUALITY = re.compile(r"\b(\w+)\.(\w+)\s*=\s*(\w+)\.(\w+)\b")


def _plain(value: Any) -> Any:
    """A collected value as the test file writes it (decimals and dates as exact strings)."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    if isinstance(value, datetime.date):
        return value.isoformat()
    return value


def _snapshot(rec: dict, ws: Workspace) -> tuple[Project, Workspace]:
    """The project as the run recorded it, in a workspace of the run's dataset snapshots."""
    label = f"run {rec['run_id']}"
    project = from_snapshot(rec["project_snapshot"], f"{label} project snapshot", project_from_data)
    project.file = ""
    datasets = [from_snapshot(raw, f"{label} dataset snapshot", dataset_from_data)
                for raw in rec.get("datasets_snapshot") or []]
    names = {d.name for d in datasets}
    datasets += [d for d in ws.datasets if d.name not in names]
    return project, Workspace(ws.root, ws.config, datasets, [project])


def _given_columns(ds, rows: list[dict]) -> list[str]:
    cols = [c.name for c in ds.columns]
    cols += {"period": ["_period"], "bitemporal": ["_period_from", "_period_to"]}.get(ds.temporal_mode, [])
    if any(r.get("_deleted") for r in rows):
        cols.append("_deleted")
    return cols


def _rows(spark, view: str, where: str = "", limit: int = 0) -> list[dict]:
    df = spark.table(view)
    if where:
        df = df.where(where)
    df = df.orderBy("_row_id")
    if limit:
        df = df.limit(limit)
    _, _, rows = execute.collect(df)
    return [dict(zip(df.columns, r)) for r in rows]


def _join_filters(project: Project, input_table: str, input_columns: set[str]) -> dict[tuple[int, str], list]:
    """(operation seq, alias) -> [(input column, join column)] of the join's usable equalities."""
    assigned: set[str] = set()
    out: dict[tuple[int, str], list] = {}
    for op in project.operations:
        if not isinstance(op, UpdateOperation):  # only updates join, and only they change input columns
            continue
        for join in op.joins:
            pairs = []
            for a_tab, a_col, b_tab, b_col in _EQUALITY.findall(join.on):
                for (t1, c1), (t2, c2) in (((a_tab, a_col), (b_tab, b_col)), ((b_tab, b_col), (a_tab, a_col))):
                    if t1 == input_table and t2 == join.alias and c1 in input_columns and c1 not in assigned:
                        pairs.append((c1, c2))
            out[(op.seq, join.alias)] = pairs
        assigned |= {a.column for a in op.assignments}
    return out


def _literal(value: Any) -> exp.Expression:
    """A collected value as a SQL literal of its own type: a float through its text (infinities and NaN
    have no numeric literal), a decimal in positional notation (``1E-8`` would read as a DOUBLE)."""
    if isinstance(value, float):
        return exp.cast(exp.Literal.string(repr(value)), "double")
    if isinstance(value, Decimal):
        return exp.Literal.number(format(value, "f"))
    return exp.convert(value)


def _in_sample(column: str, values: set) -> exp.Expression:
    """``column IN (values)`` built as SQL nodes (sqlglot quotes the name and escapes every literal);
    no values match no row."""
    if not values:
        return exp.false()
    return exp.column(column, quoted=True).isin(*(_literal(v) for v in sorted(values, key=repr)))


def _dump(data: Any) -> str:
    """YAML of plain values (rows as one-line mappings)."""
    def plain(v: Any) -> Any:
        if isinstance(v, dict):
            return {str(k): plain(x) for k, x in v.items()}
        if isinstance(v, list):
            return [plain(x) for x in v]
        return str(v) if isinstance(v, str) else v  # a located YStr is a str
    return yaml.safe_dump(plain(data), sort_keys=False, allow_unicode=True, default_flow_style=None, width=100000)


def _run_text(text: str, display: str, path: str, compiler: Compiler, spark) -> execute.Outcome:
    test = parse_test(load_yaml_text(text, display), path, display, _Raise())
    prepared, problems = prepare(test, compiler)
    if prepared is None:
        raise LedgerflowError("the recorded test is not valid: " + "; ".join(d.render() for d in problems))
    outcome = execute.run(spark, prepared, key_prefix="record:")
    if outcome.error:
        raise LedgerflowError(f"the project failed on the sampled rows: {outcome.error}")
    return outcome


def _same(a: execute.Outcome, b: execute.Outcome) -> bool:
    """Whether two runs wrote the same rows to every output (in any order), in the columns a recorded
    test expects (:func:`_expected`): generated ids depend on where a row is in the given data."""
    def rows(o: execute.Outcome) -> dict:
        return {seq: sorted(repr(row) for row in _expected(out)) for seq, out in o.outputs.items()}
    return rows(a) == rows(b)


def _expected(out: execute.OutputRows) -> list[dict]:
    """The rows of ``out`` as a recorded test expects them: every column but the system ones (``_deleted`` kept)."""
    cols = [c for c in out.columns if not c.startswith("_") or c == "_deleted"]
    return [{c: v for c, v in zip(out.columns, r) if c in cols} for r in out.rows]


class _Raise:
    """A diagnostic collector for text ledgerflow wrote itself: any problem is a bug, raised at once."""

    def add(self, code, message, location, text="", hint=""):
        raise LedgerflowError(f"{location}: {code} {message} (in the test ledgerflow wrote)")

    def extend(self, diagnostics):
        for d in diagnostics:
            self.add(d.code, d.message, d.location)


def recorded_file(root: str, name: str) -> tuple[str, str]:
    """(relative, full) path of the test ``name`` writes: ``tests/<segment>.yml``, the name escaped as
    project folders are (:func:`..folders.segment`: ``Close`` -> ``tests/+43lose.yml``)."""
    rel = os.path.join("tests", folders.segment(name) + ".yml")
    return rel, os.path.join(root, rel)


def _exists(rel: str) -> LedgerflowError:
    return LedgerflowError(f"{rel} exists already; choose another NAME or remove the file.")


def check_target(root: str, name: str) -> None:
    """Raise a one-paragraph error unless the test file of ``name`` is new and can be written: before
    any Spark work, so a bad target costs nothing."""
    rel, path = recorded_file(root, name)
    if os.path.exists(path):  # a file, or a link to one (a link to nothing: check_file says so)
        raise _exists(rel)
    check_file(path, "test --record: the test file")  # a dangling link, tests/ a file, a folder not writable


def write_new(root: str, name: str, text: str) -> None:
    """Write ``text`` as the new test file of ``name`` ("x": never over a file, or through a link, that
    appeared meanwhile); a failure is one paragraph."""
    rel, path = recorded_file(root, name)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "x", encoding="utf-8") as fh:
            fh.write(text)
    except FileExistsError:
        raise _exists(rel) from None
    except OSError as err:
        raise write_failed(path, err, "the recorded test") from None


def record_test(ws: Workspace, run_id: str, name: str, rows: int, session_factory: Callable[[], object]) -> str:
    """Write ``tests/<name>.yml`` (:func:`recorded_file`) from the run ``run_id``; returns what was written, in words."""
    rec = open_store(ws.root).get_run(run_id)
    if rec.get("status") != "completed":
        raise LedgerflowError(f"run {run_id} is {rec.get('status')}; only a completed run can become a test.")
    rel, path = recorded_file(ws.root, name)
    check_target(ws.root, name)
    project, snap_ws = _snapshot(rec, ws)
    compiled = compile_project(snap_ws, project)
    period = parse_period(rec["period"]["identifier"])
    started = datetime.datetime.fromisoformat(rec.get("run_started_at") or rec["started_at"])
    recorded = (rec.get("resolver_snapshot") or {}).get("resolutions") or {}
    missing = [v.view for v in compiled.inputs if v.view not in recorded]
    if missing:
        raise LedgerflowError(f"run {run_id} has no recorded resolution for {', '.join(missing)}.")
    # it reads the run's whole inputs, split as a run splits them; the sample test gives its rows inline
    spark = Session(session_factory, whole_files=False).get()
    args = parameters.values(period, started)
    identity = sysc.reproducible_row_identity(rec.get("row_identity")) or sysc.ROW_IDENTITY
    for view in compiled.inputs:  # the data as the run read it: recorded versions and locations, its row ids
        res = Resolution.from_json(recorded[view.view])
        for loc in res.locations:
            loaders.check_exists(loc, view.dataset)
        # every view with derived ids (not the plan's row_ids): the samples below are ordered by _row_id
        loaders.load_input(spark, view.view, view.dataset, res.version, res.locations, args, row_identity=identity)
    main = next(v for v in compiled.inputs if v.role == "input")
    sample = _rows(spark, main.view, limit=rows)
    given: dict[str, list[dict]] = {main.dataset.name: sample}
    filters = _join_filters(project, main.dataset.table_name, {c.name for c in main.dataset.columns})
    narrowed: dict[str, list[dict]] = {}
    for view in compiled.inputs:
        if view.role == "input":
            continue
        whole = _rows(spark, view.view)
        conditions = []
        for seq, alias in view.uses:
            pairs = filters.get((seq, alias), []) if alias else []
            if not pairs:
                conditions = []
                break
            conditions.append(exp.and_(*(_in_sample(jc, {r[ic] for r in sample if r[ic] is not None})
                                         for ic, jc in pairs)))
        given.setdefault(view.dataset.name, [])
        given[view.dataset.name] += whole
        if conditions:
            narrowed[view.dataset.name] = _rows(spark, view.view, exp.or_(*conditions).sql(dialect="spark"))
    for view in compiled.inputs:
        spark.catalog.dropTempView(view.view)

    def text_for(data: dict[str, list[dict]]) -> str:
        doc = {"name": name, "description": f"recorded from run {run_id} of project {project.name} v{project.version} "
               f"(period {period.identifier}): {len(sample)} input rows", "project": project.name,
               "period": period.identifier, "run_started_at": started.isoformat(timespec="milliseconds"), "given": {}}
        for ds_name, ds_rows in data.items():
            ds = snap_ws.find_dataset(ds_name)
            unique = list({tuple(sorted(r.items(), key=lambda kv: kv[0])): r for r in ds_rows}.values())
            cols = _given_columns(ds, unique)
            doc["given"][ds_name] = {"rows": [{c: _plain(r.get(c)) for c in cols} for r in unique]}
        return _dump(doc)

    compiler = Compiler(snap_ws)
    full_text = text_for(given)
    outcome = _run_text(full_text + "expect: []\n", rel, path, compiler, spark)
    text = full_text
    if narrowed:
        small = text_for({**given, **narrowed})
        if _same(_run_text(small + "expect: []\n", rel, path, compiler, spark), outcome):
            text = small
    expect = []
    for out in sorted(outcome.outputs.values(), key=lambda o: o.seq):
        expect.append({"output": out.seq, "rows": [{c: _plain(v) for c, v in row.items()} for row in _expected(out)]})
    header = (f"# Written by `ledgerflow test --record {run_id} {name}`: the expectations are the outputs of the\n"
              f"# project as that run recorded it, run on the rows given here.\n")
    write_new(ws.root, name, header + text + _dump({"expect": expect}))
    counts = ", ".join(f"{len(v['rows'])} rows of {k}" for k, v in yaml.safe_load(text)["given"].items())
    return f"wrote {rel}: {counts}; {sum(len(e['rows']) for e in expect)} expected rows in {len(expect)} output(s)"

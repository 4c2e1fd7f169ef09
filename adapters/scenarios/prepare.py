"""Bind a test to its workspace, before Spark: project compiled, given data checked, outputs found.

Everything a test file can get wrong is found here and reported with its place (TEST-00x codes, see
docs/tests.md): an unknown project or period, a dataset the project reads that the test does not
give, a given dataset the project does not read, an unknown column or a value that does not fit its
declared type in a given row, a missing fixture file, an expectation naming no output of the
project or a column the output does not have. The project is compiled once per invocation.
"""
from __future__ import annotations

import datetime
import os
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from ...compiler import system_columns as sysc
from ...compiler.compile import CompiledProject, compile_project, find_project
from ...compiler.errors import CompileError, Diagnostic, DiagnosticCollector, Location, did_you_mean
from ...compiler.model import Dataset, Project, Workspace
from ...compiler.periods import Period, PeriodError, parse_period
from ...compiler.plan import InputView
from ...compiler.realpaths import link_loop, outside
from ...compiler.stage import Statement
from .fixtures import columns as fixture_columns
from .spec import Expectation, Given, ScenarioTest
from .values import ConversionError, convert


@dataclass
class GivenTable:
    """Inline given rows converted to the dataset's declared types: ``columns`` is [(name, spark type)]."""

    dataset: Dataset
    columns: list[tuple[str, str]]
    rows: list[tuple]
    source: str  # e.g. "tests/fx.yml given gl" (named in load errors)


@dataclass
class GivenFile:
    """A CSV or Parquet fixture, read the way a resolved location of that format is read."""

    dataset: Dataset
    path: str
    file_format: str
    source: str


GivenData = Union[GivenTable, GivenFile]


@dataclass
class PreparedTest:
    """A test ready to run: what to load into which view, which statement each expectation checks."""

    test: ScenarioTest
    project: Project
    period: Period
    started_at: datetime.datetime
    compiled: Optional[CompiledProject] = None
    compile_error: Optional[CompileError] = None
    inputs: list[tuple[InputView, GivenData]] = field(default_factory=list)
    outputs: list[tuple[Expectation, Statement]] = field(default_factory=list)


class Compiler:
    """Compiles each project once per invocation (tests of one project share the result)."""

    def __init__(self, workspace: Workspace):
        self.workspace = workspace
        self._cache: dict[str, Any] = {}

    def compile(self, project: Project) -> Union[CompiledProject, CompileError]:
        """The compiled project, or the CompileError with every diagnostic."""
        if project.id not in self._cache:
            try:
                self._cache[project.id] = compile_project(self.workspace, project)
            except CompileError as err:
                self._cache[project.id] = err
        return self._cache[project.id]


def default_started_at(period: Period) -> datetime.datetime:
    """``run_started_at`` when a test does not fix it: the period's last day at 00:00:00 (UTC), so that
    TODAY(), ``_updated_at`` and ``_row_id`` never depend on when the test runs."""
    return datetime.datetime.combine(period.end, datetime.time(0))


def prepare(test: ScenarioTest, compiler: Compiler) -> tuple[Optional[PreparedTest], list[Diagnostic]]:
    """Check ``test`` against the workspace; (the prepared test, or None; every problem found)."""
    ws = compiler.workspace
    errors = DiagnosticCollector()
    project = _project(test, ws, errors)
    period = _period(test, errors)
    started = _started_at(test, period, errors) if period else None
    if project is None or period is None or started is None:
        return None, errors.diagnostics
    prepared = PreparedTest(test, project, period, started)
    result = compiler.compile(project)
    if isinstance(result, CompileError):
        if test.error is None:
            errors.add("TEST-002", f"project '{project.name}' does not compile ({len(result.diagnostics)} error"
                       f"{'s' if len(result.diagnostics) != 1 else ''} below)", test.loc("project"), test.project,
                       "fix the project, or expect its validation code with 'error:'")
            errors.extend(result.diagnostics)
        prepared.compile_error = result
        _check_given_names(test, ws, None, errors)
        return (None if errors else prepared), errors.diagnostics
    prepared.compiled = result
    by_dataset = _check_given_names(test, ws, result, errors)
    converted: dict[str, GivenData] = {}
    for view in result.inputs:
        given = by_dataset.get(view.dataset.name)
        if given is None:
            continue
        if view.dataset.name not in converted:
            data = _given_data(test, given, view.dataset, period, ws.root, errors)
            if data is None:
                continue
            converted[view.dataset.name] = data
        prepared.inputs.append((view, converted[view.dataset.name]))
    prepared.outputs = _outputs(test, result, errors)
    _check_names(test, result, errors)
    return (None if errors else prepared), errors.diagnostics


def _check_names(test: ScenarioTest, compiled: CompiledProject, errors: DiagnosticCollector) -> None:
    """TEST-001 for a check the test asserts that the project does not have (or that a test cannot judge)."""
    plans = {c.name: c for c in (compiled.plan.checks if compiled.plan else [])}
    for name in test.checks:
        if name not in plans:
            errors.add("TEST-001", f"project '{compiled.project.name}' has no check '{name}'", test.check_locations[name],
                       name, did_you_mean(name, plans) if plans else "the project declares no checks:")
        elif plans[name].kind.value == "reconcile":
            errors.add("TEST-001", f"check '{name}' is a reconcile, which a test does not judge (it needs a run's "
                       "bridge)", test.check_locations[name], name, "assert it on a run: ledgerflow runs show")


def _project(test: ScenarioTest, ws: Workspace, errors: DiagnosticCollector) -> Optional[Project]:
    if not test.project:
        return None
    found = find_project(ws, test.project)
    if found is None and test.project.endswith((".yml", ".yaml")):
        found = find_project(ws, os.path.join(ws.root, test.project)) or \
            find_project(ws, os.path.join(os.path.dirname(test.path), test.project))
    if found is None:
        errors.add("TEST-002", f"no project '{test.project}' in the workspace", test.loc("project"), test.project,
                   did_you_mean(test.project, [p.name for p in ws.projects]))
    return found


def _period(test: ScenarioTest, errors: DiagnosticCollector) -> Optional[Period]:
    if not test.period:
        return None
    try:
        return parse_period(test.period)
    except PeriodError as err:
        errors.add("TEST-003", f"period: {err}", test.loc("period"), test.period,
                   "write YYYY-MM, YYYY-Qn, YYYY or YYYY-MM-DD (quoted when a plain number: period: \"2026\")")
        return None


def _started_at(test: ScenarioTest, period: Period, errors: DiagnosticCollector) -> Optional[datetime.datetime]:
    if test.run_started_at is None:
        return default_started_at(period)
    try:
        value = convert(test.run_started_at, "timestamp")
    except ConversionError as err:
        errors.add("TEST-003", f"run_started_at: {err}", test.loc("run_started_at"), str(test.run_started_at),
                   err.hint)
        return None
    return value.replace(microsecond=value.microsecond // 1000 * 1000)  # the run's millisecond precision


def _check_given_names(test: ScenarioTest, ws: Workspace, compiled: Optional[CompiledProject],
                       errors: DiagnosticCollector) -> dict[str, Given]:
    """Given datasets by dataset name; reports unknown ones, unread ones and (when compiled) missing ones."""
    out: dict[str, Given] = {}
    read = {v.dataset.name: v.dataset for v in compiled.inputs} if compiled else {}
    for given in test.given:
        ds = ws.find_dataset(given.dataset)
        if ds is None:
            errors.add("TEST-005", f"given dataset '{given.dataset}' is not a dataset of the workspace",
                       given.location, given.dataset, did_you_mean(given.dataset, [d.name for d in ws.datasets]))
            continue
        if ds.name in out:
            errors.add("TEST-005", f"dataset '{ds.name}' is given twice", given.location, given.dataset,
                       "give each dataset once, by name")
            continue
        if compiled is not None and ds.name not in read:
            errors.add("TEST-005", f"project '{compiled.project.name}' does not read dataset '{ds.name}'",
                       given.location, given.dataset,
                       f"it reads: {', '.join(sorted(read))}; remove this entry")
            continue
        out[ds.name] = given
    if compiled is not None:
        for name in read:
            if name not in out and not any(ws.find_dataset(g.dataset) is read[name] for g in test.given):
                errors.add("TEST-004", f"project '{compiled.project.name}' reads dataset '{name}', which the test "
                           "does not give", test.loc("given"), "",
                           f"add '{name}:' under given (rows: [] for an empty dataset)")
    return out


def _given_data(test: ScenarioTest, given: Given, ds: Dataset, period: Period, root: str,
                errors: DiagnosticCollector) -> Optional[GivenData]:
    source = f"{test.file} given {ds.name}"
    if given.rows is None:
        # checked first: nothing is said about files outside the workspace (a link that loops is no file: TEST-008)
        if outside(root, given.path or "") is not None and link_loop(given.path or "") is None:
            errors.add("TEST-013", f"the {given.file_format} file {given.display} of given dataset '{ds.name}' is "
                       "not inside the workspace", given.location, given.display,
                       "keep fixtures inside the workspace (e.g. tests/fixtures/), named relative to the test file")
            return None
        if not os.path.isfile(given.path or ""):
            errors.add("TEST-008", f"no {given.file_format} file {given.display} beside the test", given.location,
                       given.display, f"looked for {given.path}")
            return None
        if not _fixture_columns_known(given, ds, errors):
            return None
        return GivenFile(ds, given.path, given.file_format,
                         os.path.normpath(os.path.join(os.path.dirname(test.file), given.display)))
    return _given_table(given, ds, period, source, errors)


def _fixture_columns_known(given: Given, ds: Dataset, errors: DiagnosticCollector) -> bool:
    """TEST-006 for each column of a fixture file that its dataset does not have (declared or system), or
    that it names twice, as for a key of an inline row; a declared column the file lacks is NULL, as in
    an inline row."""
    found = fixture_columns(given.path or "", given.file_format or "") or []
    known = [c.name for c in ds.columns] + [n for n, _ in sysc.system_columns(ds.temporal_mode)]
    unknown = list(dict.fromkeys(c for c in found if c not in known))  # a column named twice is reported once
    for column in unknown:
        errors.add("TEST-006", f"dataset '{ds.name}' has no column '{column}' (a column of {given.display})",
                   given.location, column, did_you_mean(column, known))
    twice = sorted({c for c in found if c in known and found.count(c) > 1})
    for column in twice:
        errors.add("TEST-006", f"{given.display} names the column '{column}' of dataset '{ds.name}' more than once",
                   given.location, column, "give each column once")
    return not unknown and not twice


def _given_table(given: Given, ds: Dataset, period: Period, source: str,
                 errors: DiagnosticCollector) -> Optional[GivenTable]:
    """Inline rows as typed tuples: declared columns (absent = NULL) plus the system columns given.

    A system column given on some rows only is filled on the others as a loader fills it for a whole
    location (``_period`` the test's period, ``_deleted`` false, ...); a ``bitemporal`` dataset's rows
    without ``_period_from`` are valid from the period's start, open-ended."""
    declared = [(c.name, c.type) for c in ds.columns]
    system = dict(sysc.system_columns(ds.temporal_mode))
    present_system = [n for n in system if any(n in row for row in given.rows)]
    if ds.temporal_mode == "bitemporal":
        present_system += [n for n in ("_period_from", "_period_to") if n not in present_system]
    columns = declared + [(n, system[n]) for n in present_system]
    fill = {"_period": period.identifier, "_period_from": period.start, "_deleted": False, "_labels": "",
            "_source_dataset": ds.id, "_operation_seq": 0}
    known = [c for c, _ in declared] + list(system)
    rows, ok = [], True
    for row, row_loc in zip(given.rows, given.row_locations):
        for key in row:
            if key not in known:
                ok = False
                errors.add("TEST-006", f"dataset '{ds.name}' has no column '{key}'", row.key_location(key), key,
                           did_you_mean(key, known))
        values = []
        for name, typ in columns:
            if name not in row:
                if name == "_row_id" and name in present_system:
                    ok = False
                    errors.add("TEST-006", f"this row of '{ds.name}' has no _row_id while others have one", row_loc,
                               "", "give _row_id on every row or on none (then ids are generated)")
                values.append(fill.get(name) if name in system else None)
                continue
            try:
                values.append(convert(row[name], typ, strict=True))
            except ConversionError as err:
                ok = False
                errors.add("TEST-007", f"dataset '{ds.name}', column '{name}' ({typ}): {err}",
                           row.value_location(name), str(row[name]), err.hint)
                values.append(None)
        rows.append(tuple(values))
    return GivenTable(ds, columns, rows, source) if ok else None


def _outputs(test: ScenarioTest, compiled: CompiledProject,
             errors: DiagnosticCollector) -> list[tuple[Expectation, Statement]]:
    out: list[tuple[Expectation, Statement]] = []
    statements = compiled.outputs
    for exp in test.expect:
        st = _find_output(exp.output, statements)
        if st is None:
            names = [f"{s.operation.seq} ({s.operation.name})" for s in statements]
            errors.add("TEST-009", f"project '{compiled.project.name}' has no output '{exp.output}'", exp.location,
                       str(exp.output), f"outputs (seq or name): {', '.join(names) or 'none'}")
            continue
        if any(s is st for _, s in out):
            errors.add("TEST-009", f"output {st.operation.seq} is expected twice", exp.location, str(exp.output),
                       "merge the two lists of rows")
            continue
        columns = [c for c, _ in st.columns]
        for row in exp.rows:
            for key in row:
                if key not in columns:
                    errors.add("TEST-010", f"output {st.operation.seq} ('{st.operation.name}') has no column '{key}'",
                               row.key_location(key), key, did_you_mean(key, columns))
        out.append((exp, st))
    return out


def _find_output(ref: Any, statements: list[Statement]) -> Optional[Statement]:
    for st in statements:
        if isinstance(ref, int) and st.operation.seq == ref:
            return st
        if isinstance(ref, str) and (st.operation.name == ref or ref.isdigit() and st.operation.seq == int(ref)):
            return st
    return None


def location_of(test: ScenarioTest) -> Location:
    """Where a test starts (its file, line 1)."""
    return Location(test.file, 1, 1)

"""Read one ``tests/*.yml`` file strictly into a :class:`ScenarioTest` (docs/tests.md).

Like every other ledgerflow file: an unknown or misspelt key is YAML-003 naming the closest valid
key, a missing key YAML-004, a value of the wrong kind YAML-005, each with file, line and column;
the rules particular to test files are TEST-001. Nothing here looks at the workspace (see
:mod:`.prepare`); values stay as written, with their places, until their column types are known.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Optional

from ...compiler.errors import CompileError, Diagnostic, DiagnosticCollector, Location, did_you_mean
from ...compiler.yaml_source import YList, YMap, YStr, load_yaml_file

TEST_KEYS = ("name", "description", "project", "period", "run_started_at", "given", "expect", "error", "checks")
CHECK_OUTCOMES = ("passed", "failed", "warned")  # what `checks: {NAME: ...}` may assert (docs/checks.md)
GIVEN_KEYS = ("rows", "csv", "parquet")
EXPECT_KEYS = ("output", "rows", "ordered")
_KIND_NAMES = {str: "string", int: "integer", bool: "boolean", YMap: "mapping", YList: "list"}


@dataclass
class Given:
    """The rows of one dataset: inline (``rows``) or a file beside the test (``csv`` / ``parquet``)."""

    dataset: str
    location: Location
    rows: Optional[list[YMap]] = None
    row_locations: list[Location] = field(default_factory=list)
    file_format: Optional[str] = None  # csv | parquet
    path: Optional[str] = None  # absolute path of the file
    display: str = ""  # the file as the test wrote it (for messages)


@dataclass
class Expectation:
    """The expected rows of one output, by the output operation's seq or name."""

    output: Any  # int seq or str name
    location: Location
    rows: list[YMap]
    row_locations: list[Location]
    ordered: bool = False


@dataclass
class ScenarioTest:
    """One test file, as written."""

    name: str
    file: str  # as displayed (relative to the workspace)
    path: str  # absolute
    project: str
    period: str
    run_started_at: Any  # as written (str or datetime), or None
    given: list[Given]
    expect: list[Expectation]
    error: Optional[str]
    source: YMap  # the parsed file, for the places of its values
    description: str = ""
    checks: dict[str, str] = field(default_factory=dict)  # check name -> the outcome the test asserts
    check_locations: dict[str, Location] = field(default_factory=dict)

    def loc(self, key: str) -> Location:
        """Where the value of top-level ``key`` is written."""
        return self.source.value_location(key)


def _mapping(data: Any, where: str, allowed: tuple, required: tuple, errors: DiagnosticCollector,
             location: Location) -> Optional[YMap]:
    """``data`` if it is a mapping (unknown and missing keys reported), else None (reported)."""
    if not isinstance(data, YMap):
        errors.add("YAML-005", f"{where} must be a mapping", location, _short(data), "write it as 'key: value' lines")
        return None
    for key in data:
        if key not in allowed:
            errors.add("YAML-003", f"unknown key '{key}' in {where}", data.key_location(key), key,
                       did_you_mean(key, allowed))
    for key in required:
        if key not in data:
            errors.add("YAML-004", f"{where} is missing the required key '{key}'", data.location, "", f"add '{key}:'")
    return data


def _get(data: YMap, key: str, kinds: tuple, where: str, errors: DiagnosticCollector) -> Any:
    """The value of ``key`` when present and of one of ``kinds`` (a bool is never an int), else None."""
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
        names = "/".join(_KIND_NAMES.get(k, k.__name__) for k in kinds)
        errors.add("YAML-005", f"'{key}' in {where} must be a {names}", data.value_location(key), _short(value))
        return None
    return value


def _short(value: Any) -> str:
    s = str(value)
    return s if len(s) <= 60 else s[:57] + "..."


def _rows(value: Any, where: str, errors: DiagnosticCollector) -> tuple[list[YMap], list[Location]]:
    rows, locs = [], []
    for item, loc in zip(value, getattr(value, "item_locations", [])):
        if not isinstance(item, YMap):
            errors.add("TEST-001", f"each row of {where} must be a mapping of column: value", loc, _short(item),
                       "e.g. - {journal_id: JE-1, amount_local: \"100.00\"}")
            continue
        for column, cell in item.items():
            if isinstance(cell, (YMap, YList)):
                errors.add("TEST-001", f"column '{column}' in a row of {where} must be a single value",
                           item.value_location(column), _short(cell))
        rows.append(item)
        locs.append(loc)
    return rows, locs


def _given(data: YMap, test_dir: str, errors: DiagnosticCollector) -> list[Given]:
    out = []
    for name, spec in data.items():
        where = f"given dataset '{name}'"
        loc = data.key_location(name)
        m = _mapping(spec, where, GIVEN_KEYS, (), errors, data.value_location(name))
        if m is None:
            continue
        kinds = [k for k in GIVEN_KEYS if k in m]
        if len(kinds) != 1:
            errors.add("TEST-001", f"{where} needs exactly one of rows, csv, parquet", m.location,
                       ", ".join(kinds), "e.g. rows: [...] or csv: fixtures/gl.csv (relative to the test file)")
            continue
        given = Given(dataset=str(name), location=loc)
        if kinds[0] == "rows":
            rows = _get(m, "rows", (YList,), where, errors)
            if rows is None and m.get("rows") is not None:
                continue
            given.rows, given.row_locations = _rows(rows, where, errors) if rows is not None else ([], [])
        else:
            text = _get(m, kinds[0], (str,), where, errors)
            if text is None:
                continue
            given.file_format, given.display = kinds[0], str(text)
            given.path = os.path.normpath(os.path.join(test_dir, str(text)))
            given.location = m.value_location(kinds[0])
        out.append(given)
    return out


def _expect(data: YList, errors: DiagnosticCollector) -> list[Expectation]:
    out = []
    for item, loc in zip(data, data.item_locations):
        m = _mapping(item, "an expect entry", EXPECT_KEYS, ("output", "rows"), errors, loc)
        if m is None:
            continue
        output = _get(m, "output", (int, str), "an expect entry", errors)
        rows = _get(m, "rows", (YList,), "an expect entry", errors)
        ordered = _get(m, "ordered", (bool,), "an expect entry", errors)
        if output is None or (rows is None and m.get("rows") is not None):
            continue
        rlist, rlocs = _rows(rows if rows is not None else YList(), f"output {output}", errors) \
            if rows is not None else ([], [])
        out.append(Expectation(output, m.value_location("output"), rlist, rlocs, bool(ordered)))
    return out


def _checks(data: YMap, errors: DiagnosticCollector) -> dict[str, tuple[str, Location]]:
    """``checks: {NAME: passed|failed|warned}``: the outcome each named check must have."""
    out = {}
    for name, outcome in data.items():
        if str(outcome) not in CHECK_OUTCOMES:
            errors.add("TEST-001", f"the outcome of check '{name}' must be one of {', '.join(CHECK_OUTCOMES)}",
                       data.value_location(name), _short(outcome), "e.g. checks: {journals_balance: failed}")
            continue
        out[str(name)] = (str(outcome), data.key_location(name))
    return out


def parse_test(data: Any, path: str, display: str, errors: DiagnosticCollector) -> Optional[ScenarioTest]:
    """Build a test from parsed YAML (``path`` locates its fixtures); problems go to ``errors``."""
    top = _mapping(data, "test", TEST_KEYS, ("project", "period", "given"), errors, Location(display, 1, 1))
    if top is None:
        return None
    where = "test"
    name = _get(top, "name", (str,), where, errors)
    project = _get(top, "project", (str,), where, errors)
    period = _get(top, "period", (str, int), where, errors)
    started = top.get("run_started_at")
    error = _get(top, "error", (str,), where, errors)
    given_map = _get(top, "given", (YMap,), where, errors)
    expect = _get(top, "expect", (YList,), where, errors)
    if ("expect" in top) == ("error" in top) and not ("checks" in top and "error" not in top):
        errors.add("TEST-001", "a test needs exactly one of 'expect' (the output rows) and 'error' (a validation "
                   "code or text of the run's error), or 'checks' (the outcome of the project's checks)",
                   top.location, "", "add 'expect:', 'error:' or 'checks:'")
    checks_map = _get(top, "checks", (YMap,), where, errors)
    checks = _checks(checks_map, errors) if checks_map is not None else {}
    given = _given(given_map, os.path.dirname(path), errors) if given_map is not None else []
    return ScenarioTest(name=str(name) if name else os.path.splitext(os.path.basename(path))[0], file=display,
                        path=path, project=str(project or ""), period=str(period or ""), run_started_at=started,
                        given=given, expect=_expect(expect, errors) if expect is not None else [], error=error,
                        source=top, description=str(top.get("description") or ""),
                        checks={k: v for k, (v, _) in checks.items()},
                        check_locations={k: loc for k, (_, loc) in checks.items()})


def load_test(path: str, display: str) -> tuple[Optional[ScenarioTest], list[Diagnostic]]:
    """Read one test file: (the test, or None when it cannot be built; every problem found)."""
    errors = DiagnosticCollector()
    try:
        data = load_yaml_file(path, display)
    except CompileError as exc:
        return None, exc.diagnostics
    test = parse_test(data, path, display, errors)
    return test, errors.diagnostics


def discover(root: str) -> list[str]:
    """The test files of the workspace at ``root``: ``tests/*.yml`` and ``tests/*.yaml``, sorted."""
    folder = os.path.join(root, "tests")
    if not os.path.isdir(folder):
        return []
    return sorted(os.path.join(folder, n) for n in os.listdir(folder)
                  if n.endswith((".yml", ".yaml")) and not n.startswith(".") and os.path.isfile(os.path.join(folder, n)))


def load_all(root: str) -> list[tuple[str, Optional[ScenarioTest], list[Diagnostic]]]:
    """Every test file of the workspace: (display path, the test or None, its problems)."""
    out = []
    for path in discover(root):
        display = os.path.relpath(path, root)
        test, problems = load_test(path, display)
        out.append((display, test, problems))
    return out


def is_text(value: Any) -> bool:
    """Whether ``value`` was written as a YAML string (quoted or plain)."""
    return isinstance(value, YStr)

"""``ledgerflow test``: find the workspace's tests, select them, run them in one SparkSession, judge.

Exit codes (docs/tests.md): 0 every selected test passed; 1 a test file or its project is invalid
(valid tests still run and are reported); 4 a test failed.
"""
from __future__ import annotations

import os
import re
import time
from typing import Callable, Optional

from ...compiler.errors import CompileError, Diagnostic, LedgerflowError, Location
from ...compiler.model import Workspace
from ..run import interrupts
from . import execute
from .compare import compare, summary
from .prepare import Compiler, PreparedTest, prepare
from .report import FAILED, INVALID, PASSED, TestResult, render, totals, write_junit
from .spec import ScenarioTest, load_all

Echo = Callable[[str], None]
# A validation code as the error codes of ledgerflow are spelt (JOIN-VR-001, APPEND_003, DSL-002, ...).
_CODE = re.compile(r"^[A-Z]+(?:[-_][A-Z]+)*[-_]\d{3}$")
# Spark settings of the test session: one shuffle partition is plenty for a test's rows (and each
# partition costs a task); results do not depend on it. Expressions and operators are interpreted,
# not compiled to Java: a test's few rows take less time to interpret than Janino takes to compile
# every new plan shape (bench/test_speed.py: 5 s for the first run of TS-03), and the interpreted
# paths compute the same values and raise the same errors (Spark tests both).
TEST_CONF = {"spark.sql.shuffle.partitions": "1", "spark.sql.adaptive.enabled": "false",
             "spark.sql.codegen.wholeStage": "false", "spark.sql.codegen.factoryMode": "NO_CODEGEN"}
# A fixture file is read as one partition whatever its size and the machine's cores, so that its
# rows are numbered in file order (given._file_position).
WHOLE_FILES_CONF = {"spark.sql.files.maxPartitionBytes": "1t", "spark.sql.files.openCostInBytes": "1t"}


def select(loaded: list, names: tuple, keyword: Optional[str]) -> list:
    """The tests named (by name or file name without extension) and matching ``-k`` (a case-insensitive
    substring of the name or file); an unknown name is an error listing the tests."""
    def ids(display: str, test: Optional[ScenarioTest]) -> set[str]:
        stem = os.path.splitext(os.path.basename(display))[0]
        return {stem, display} | ({test.name} if test else set())
    if names:
        known = set().union(*(ids(d, t) for d, t, _ in loaded)) if loaded else set()
        unknown = [n for n in names if n not in known]
        if unknown:
            listed = sorted(t.name if t else d for d, t, _ in loaded)
            raise LedgerflowError(f"TEST-012 no test named {', '.join(unknown)}; tests: {', '.join(listed) or 'none'} "
                                  "(tests/*.yml of the workspace).")
        loaded = [item for item in loaded if ids(item[0], item[1]) & set(names)]
    if keyword:
        k = keyword.lower()
        loaded = [item for item in loaded if any(k in i.lower() for i in ids(item[0], item[1]))]
    return loaded


def judge(prepared: PreparedTest, outcome: Optional[execute.Outcome]) -> TestResult:
    """The result of a prepared test from what its run gave (``outcome`` None: it did not compile)."""
    test = prepared.test
    result = TestResult(test.name, test.file, PASSED, project=prepared.project.name, period=prepared.period.identifier)
    if test.error is not None:
        return _judge_error(test, prepared.compile_error, outcome, result)
    if outcome.error is not None:
        result.status = FAILED
        result.lines = [f"the run failed: {outcome.error}"]
        return result
    result.lines += _judge_checks(test, outcome)
    if result.lines:
        result.status = FAILED
    for exp, st in prepared.outputs:
        got = outcome.outputs[st.operation.seq]
        diffs, problems = compare(exp, got)
        if problems:
            result.status = INVALID
            result.diagnostics += problems
            continue
        if diffs:
            result.status = FAILED if result.status != INVALID else INVALID
            result.lines.append(f"output {got.seq} '{got.name}': {summary(diffs)} ({len(got.rows)} rows written, "
                                f"{len(exp.rows)} expected)")
            result.lines += ["  " + d.describe() for d in diffs]
    return result


def _judge_checks(test: ScenarioTest, outcome: execute.Outcome) -> list[str]:
    """What differs from the check outcomes the test asserts (``checks: {NAME: ...}``); a check that failed
    and that the test does not say failed fails the test (the run would have failed, exit 4)."""
    lines = []
    for name, wanted in test.checks.items():
        got = outcome.checks.get(name)
        status = got["status"] if got else "not judged"
        if status != wanted:
            lines.append(f"check '{name}': expected {wanted}, got {status}" + (
                f" ({got['violations']} violating rows)" if got and got["violations"] else ""))
    unexpected = [r["name"] for r in outcome.checks.values() if r["status"] == "failed" and r["name"] not in test.checks]
    if unexpected and outcome.checks_failed:
        lines.append(outcome.checks_failed)
    return lines


def _judge_error(test: ScenarioTest, compile_error: Optional[CompileError], outcome: Optional[execute.Outcome],
                 result: TestResult) -> TestResult:
    wanted = test.error.strip()
    if compile_error is not None:
        got = compile_error.render()
        ok = wanted in compile_error.codes if _CODE.match(wanted) else wanted.lower() in got.lower()
        what = f"validation errors {', '.join(dict.fromkeys(compile_error.codes))}:\n" + got
    elif outcome is not None and (outcome.error or outcome.checks_failed) is not None:
        got = outcome.error or outcome.checks_failed
        ok = wanted.lower() in got.lower()
        what = f"the run's error: {got}"
    else:
        rows = ", ".join(f"output {o.seq}: {len(o.rows)} rows" for o in outcome.outputs.values()) if outcome else ""
        result.status = FAILED
        result.lines = [f"expected the error '{wanted}', but the project compiled and ran ({rows})"]
        return result
    if not ok:
        result.status = FAILED
        result.lines = [f"expected the error '{wanted}', got {what}"]
    return result


class Session:
    """The one SparkSession of an invocation, started when the first test needs Spark.

    It is a new session of the (possibly already running) local Spark application, so its settings
    and temporary views are its own. ``whole_files``: read every file as one partition
    (:data:`WHOLE_FILES_CONF`), as tests with fixture files need."""

    def __init__(self, factory: Callable[[], object], whole_files: bool = True):
        self.factory = factory
        self.whole_files = whole_files
        self.spark = None

    def get(self):
        """The session (started on first use)."""
        if self.spark is None:
            spark = self.factory().newSession()
            # a SparkContext created on the main thread installed PySpark's SIGINT handler, which calls py4j from
            # inside the handler: ledgerflow's cancels the jobs from a thread of its own (adapters/run/interrupts.py)
            interrupts.set_cancel(interrupts.session_cancel(spark))
            interrupts.reclaim()
            for k, v in {**TEST_CONF, **(WHOLE_FILES_CONF if self.whole_files else {})}.items():
                spark.conf.set(k, v)
            self.spark = spark
        return self.spark


def run_tests(ws: Workspace, names: tuple = (), keyword: Optional[str] = None,
              session_factory: Optional[Callable[[], object]] = None, echo: Echo = print,
              junit_xml: Optional[str] = None) -> tuple[list[TestResult], int]:
    """Run the selected tests of ``ws``; prints each result and the totals; returns (results, exit code).
    Ctrl-C stops the tests with ``KeyboardInterrupt`` (Spark's jobs cancelled, see :mod:`..interrupts`)."""
    with interrupts.watching():
        return _run_tests(ws, names, keyword, session_factory, echo, junit_xml)


def _run_tests(ws: Workspace, names: tuple, keyword: Optional[str], session_factory: Optional[Callable[[], object]],
               echo: Echo, junit_xml: Optional[str]) -> tuple[list[TestResult], int]:
    clock = time.monotonic()
    loaded = select(load_all(ws.root), names, keyword)
    session = Session(session_factory or _default_factory)
    compiler = Compiler(ws)
    results: list[TestResult] = []
    seen: dict[str, str] = {}
    for display, test, problems in loaded:
        start = time.monotonic()
        if test is not None and test.name in seen:
            problems = problems + [Diagnostic("TEST-012", f"the test name '{test.name}' is used by {seen[test.name]} "
                                              "too", test.source.value_location("name") if "name" in test.source
                                              else Location(display, 1, 1), test.name, "give each test its own name")]
        if test is not None:
            seen.setdefault(test.name, display)
        result = _one(test, problems, display, compiler, session)
        interrupts.check()  # Ctrl-C during a Spark call: the result is that of a cancelled job, not the test's
        result.seconds = time.monotonic() - start
        results.append(result)
        echo(render(result))
    seconds = time.monotonic() - clock
    if not loaded:
        echo(f"no tests in {os.path.join(ws.root, 'tests')}" if not (names or keyword) else "no test selected")
    echo(totals(results, seconds))
    if junit_xml:
        write_junit(junit_xml, results, seconds)
    return results, exit_code(results)


def _one(test: Optional[ScenarioTest], problems: list[Diagnostic], display: str, compiler: Compiler,
         session: Session) -> TestResult:
    if test is None or problems:
        name = test.name if test else os.path.splitext(os.path.basename(display))[0]
        return TestResult(name, display, INVALID, diagnostics=problems)
    prepared, problems = prepare(test, compiler)
    if prepared is None:
        return TestResult(test.name, display, INVALID, project=test.project, period=test.period, diagnostics=problems)
    if prepared.compile_error is not None:
        return judge(prepared, None)
    outcome = execute.run(session.get(), prepared)
    return judge(prepared, outcome)


def exit_code(results: list[TestResult]) -> int:
    """1 when a test is invalid, else 4 when one failed, else 0."""
    if any(r.status == INVALID for r in results):
        return 1
    return 4 if any(r.status == FAILED for r in results) else 0


def _default_factory():
    from ..spark.session import session_factory
    factory, _ = session_factory(for_tests=True)  # no workspace settings: two local cores, the test JVM's tuning
    return factory()

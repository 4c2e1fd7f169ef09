"""What a test run prints, and the JUnit XML a CI server reads."""
from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Optional

from ...compiler.errors import Diagnostic
from ...compiler.visible_text import visible
from ..compile_out.paths import write_failed

PASSED, FAILED, INVALID = "passed", "failed", "invalid"


@dataclass
class TestResult:
    """The outcome of one test: passed, failed (the run differs from the test) or invalid (the test
    file, its project or its data cannot be used; ``diagnostics`` say why)."""

    name: str
    file: str
    status: str
    seconds: float = 0.0
    project: str = ""
    period: str = ""
    lines: list[str] = field(default_factory=list)  # the failure, line by line
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def message(self) -> str:
        """The first line of what went wrong ('' when passed)."""
        if self.status == INVALID and self.diagnostics:
            return self.diagnostics[0].render()
        return self.lines[0] if self.lines else ""

    def details(self) -> str:
        """Everything that went wrong, one item a line."""
        if self.status == INVALID:
            return "\n".join(d.render() for d in self.diagnostics)
        return "\n".join(self.lines)


def line(result: TestResult) -> str:
    """The one-line status of a test, e.g. ``PASSED ts03 fx conversion (tests/ts03.yml) 0.4 s`` (hidden
    characters of the name, e.g. a terminal escape sequence, shown as ``\\uXXXX`` text)."""
    return visible(f"{result.status.upper():<7} {result.name} ({result.file}) {result.seconds:.1f} s")


def render(result: TestResult) -> str:
    """The status line, then (unless passed) what went wrong, indented."""
    out = line(result)
    if result.status != PASSED:
        out += "\n" + "\n".join("  " + visible(x, keep="\t") for x in result.details().splitlines())
    return out


def totals(results: list[TestResult], seconds: Optional[float] = None) -> str:
    """E.g. ``7 passed, 1 failed, 0 invalid in 5.1 s``."""
    n = {s: sum(1 for r in results if r.status == s) for s in (PASSED, FAILED, INVALID)}
    text = f"{n[PASSED]} passed, {n[FAILED]} failed, {n[INVALID]} invalid"
    return text + (f" in {seconds:.1f} s" if seconds is not None else "")


def xml_text(text: str) -> str:
    """``text`` with every hidden character but tab and line breaks written as ``\\uXXXX`` (ElementTree
    escapes the rest): what XML 1.0 cannot hold at all, even as a character reference (most control
    characters, lone surrogates from a file name read with surrogateescape, U+FFFE and U+FFFF), and
    what a CI page would not show (bidi overrides, zero-width characters: :mod:`...compiler.visible_text`)."""
    return visible(text, keep="\t\n\r")


def junit_xml(results: list[TestResult], seconds: float) -> str:
    """JUnit XML: one ``testsuite`` named ledgerflow; a failed test has a ``failure``, an invalid one an
    ``error`` (message = the first line, text = every line). Well-formed whatever the names hold."""
    suite = ET.Element("testsuite", name="ledgerflow", tests=str(len(results)),
                       failures=str(sum(r.status == FAILED for r in results)),
                       errors=str(sum(r.status == INVALID for r in results)), skipped="0", time=f"{seconds:.3f}")
    for r in results:
        case = ET.SubElement(suite, "testcase", name=xml_text(r.name),
                             classname=xml_text(os.path.splitext(r.file)[0].replace("/", ".")),
                             file=xml_text(r.file), time=f"{r.seconds:.3f}")
        if r.status == FAILED:
            failure = ET.SubElement(case, "failure", message=xml_text(r.message), type="ScenarioFailure")
            failure.text = xml_text(r.details())
        elif r.status == INVALID:
            error = ET.SubElement(case, "error", message=xml_text(r.message), type="InvalidTest")
            error.text = xml_text(r.details())
    root = ET.Element("testsuites", tests=suite.get("tests"), failures=suite.get("failures"),
                      errors=suite.get("errors"), time=suite.get("time"))
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(path: str, results: list[TestResult], seconds: float) -> None:
    """Write :func:`junit_xml` to ``path`` (its folder created); a failure is one paragraph
    (:class:`..output_paths.OutputWriteError`) saying the results printed above were not written."""
    text = junit_xml(results, seconds)
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as err:
        raise write_failed(path, err, f"the results above ({totals(results)}) as JUnit XML") from None

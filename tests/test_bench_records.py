"""The record of measurements is dated, not numbered (issue 44 point 7): BENCHMARKS.md is short and opens with a
table saying, for each figure, its date, commit, machine and command; result files are named by benchmark, size and
date; no text in the repository dates a figure by a "session N"; every result file the docs name exists."""
from __future__ import annotations

import os
import re
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "bench", "results")
BENCHMARKS = os.path.join(ROOT, "BENCHMARKS.md")
MAX_LINES = 300
# <benchmark>[_<size>][_<layout or variant>]_<YYYY-MM-DD>[_<short tag>].<ext>
RESULT_NAME = re.compile(r"^[a-z][a-z0-9_]*?_(\d{4}-\d{2}-\d{2})(_[a-z0-9_]+)?\.(txt|json|png)$")
NUMBERED = re.compile(r"(?:^|_)s\d{1,2}[a-z]?(?:_|\.|$)")
SESSION = re.compile(r"\b[Ss]essions? \d")
REFERENCE = re.compile(r"(?<![\w./-])(?:bench/results/)?([a-z][a-z0-9_]*_\d{4}-\d{2}-\d{2}(?:_[a-z0-9_]+)?\.(?:txt|json|png))"
                       r"|bench/results/([\w.-]+\.(?:txt|json|png))\b")
DOCS = ["BENCHMARKS.md", "README.md", os.path.join("bench", "results", "history.md")]


def _tracked_text_files() -> list[str]:
    """The repository's tracked files (all files below it when git is not there), text files only."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
        paths = [p for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        paths = [os.path.relpath(os.path.join(d, f), ROOT) for d, dirs, files in os.walk(ROOT)
                 for f in files if ".git" not in d.split(os.sep)]
    texts = []
    for rel in paths:
        path = os.path.join(ROOT, rel)
        if not os.path.isfile(path):
            continue
        with open(path, "rb") as fh:
            head = fh.read()
        if b"\0" not in head:
            texts.append(rel)
    return texts


def _doc_files() -> list[str]:
    docs_dir = os.path.join(ROOT, "docs")
    return DOCS + [os.path.join("docs", f) for f in sorted(os.listdir(docs_dir)) if f.endswith(".md")]


def test_benchmarks_page_is_short():
    with open(BENCHMARKS, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    assert len(lines) <= MAX_LINES, f"BENCHMARKS.md has {len(lines)} lines (at most {MAX_LINES}): move history " \
                                    "to bench/results/history.md"


def test_benchmarks_page_opens_with_a_dated_headline_table():
    with open(BENCHMARKS, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("|"))
    header = [cell.strip().lower() for cell in lines[first].strip("|").split("|")]
    for column in ("date", "commit", "machine", "command"):
        assert any(column in cell for cell in header), f"the first table's header {header} has no {column} column"
    rows = []
    for line in lines[first + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    assert rows, "the headline table has no rows"
    at = {column: next(i for i, cell in enumerate(header) if column in cell) for column in ("date", "commit")}
    for row in rows:
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", row[at["date"]]), f"no date in headline row {row}"
        assert re.fullmatch(r"[0-9a-f]{7,40}(, [0-9a-f]{7,40})*", row[at["commit"]]), f"no commit in headline row {row}"


def test_no_text_dates_a_figure_by_a_session_number():
    found = []
    for rel in _tracked_text_files():
        with open(os.path.join(ROOT, rel), encoding="utf-8", errors="replace") as fh:
            for number, line in enumerate(fh, 1):
                if SESSION.search(line):
                    found.append(f"{rel}:{number}: {line.strip()[:100]}")
    assert not found, "dated by a session number, not a date:\n" + "\n".join(found)


def test_result_files_are_named_by_benchmark_size_and_date():
    wrong = [name for name in sorted(os.listdir(RESULTS)) if name != "history.md"
             and (not RESULT_NAME.match(name) or NUMBERED.search(name))]
    assert not wrong, "bench/results files not named <benchmark>[_<size>]_<YYYY-MM-DD>[_<tag>].<ext>: " \
                      + ", ".join(wrong)


@pytest.mark.parametrize("doc", _doc_files())
def test_every_result_file_a_doc_names_exists(doc):
    with open(os.path.join(ROOT, doc), encoding="utf-8") as fh:
        named = {bare or path for bare, path in REFERENCE.findall(fh.read())}
    missing = sorted(name for name in named if not os.path.exists(os.path.join(RESULTS, name)))
    assert not missing, f"{doc} names result files that do not exist: {', '.join(missing)}"


def test_result_names_are_checked_against_the_rule():
    """The rule refuses the names it replaced: undated, and numbered by session."""
    assert not RESULT_NAME.match("cold_1000000.txt")
    assert NUMBERED.search("cold_10000000_flat_s15b.txt")
    assert RESULT_NAME.match("cold_10000000_flat_2026-11-28.txt")
    assert REFERENCE.findall("see `bench/results/cold_1000000_2026-11-27.txt`") == [("cold_1000000_2026-11-27.txt", "")]
    assert REFERENCE.findall("(`bench/results/cold_1000000_s8.txt`)") == [("", "cold_1000000_s8.txt")]

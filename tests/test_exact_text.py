"""Text ledgerflow writes from names a workspace holds, and one-paragraph failures of file-system and
git problems: collision-free file names for projects, escaping in the markdown/HTML/DOT/Mermaid/JUnit
writers, unique graph node ids, `diff` of revisions holding symlinks or many files, `--junit-xml` and
`--out` targets that cannot be written, a damaged run store. No Spark: everything here is offline."""
from __future__ import annotations

import json
import os
import random
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from cli_support import cli, describe
from conftest import copy_workspace
from ledgerflow.adapters.folders import segment

ADVERSARIAL = ["", ".", "..", "...", "a b", "a_b", "a_b-c8687a08", "a/b", "a\\b", "../../escape", "A", "a",
               "Close", "close", "CLOSE", "a.", "a..", ".hidden", "-x", "+", "+2b", "+h", "x\n", "x\r\n", "\x00",
               "con", "é", "e\u0301", "İ", "ß", "SS", "ss", "</details>", "-->", '"q"', "a" * 120, "a" * 121,
               "a" * 500, "A" * 500, "\udcff", "a+20b", "a%20b", "a~20b"]


def clone_project(ws: Path, name: str, source: str = "ts01_output_only", n: int = 1) -> Path:
    """A copy of ``projects/<source>.yml`` as a project of its own called ``name``."""
    text = (ws / "projects" / f"{source}.yml").read_text(encoding="utf-8")
    text = re.sub(r"^id: .*$", f"id: 0e000000-0000-4000-8000-{n:012d}", text, count=1, flags=re.M)
    text = re.sub(r"^name: .*$", "name: " + json.dumps(name), text, count=1, flags=re.M)
    path = ws / "projects" / f"clone_{n}.yml"
    path.write_text(text, encoding="utf-8")
    return path


# ------------------------------------------------------------------------------------ file names
def test_segment_is_injective_for_random_and_adversarial_names_even_when_case_is_folded():
    rng = random.Random(20261128)
    alphabet = "aAbBzZ09_.-+ /\\\n\t\x00é%~:*?<>|\"'"
    names = set(ADVERSARIAL)
    while len(names) < 10_000:
        names.add("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))))
    names = sorted(names)
    segments = [segment(n) for n in names]
    assert len(set(segments)) == len(names)
    assert len({s.casefold() for s in segments}) == len(names)  # macOS / Windows default file systems
    for name, s in zip(names, segments):
        assert s and s not in (".", "..") and re.fullmatch(r"[a-z0-9_.+-]+", s), (name, s)
        assert len(s) <= 120 and not s.endswith(".") and not s.startswith("-"), (name, s)
    assert segment("ts03_fx_conversion") == "ts03_fx_conversion"  # plain names map to themselves


def test_two_projects_never_share_a_compiled_file(finance, tmp_path):
    """`a b` used to be written to `a_b-c8687a08/`, the folder of a project with that very name: one
    project's SQL was lost and `compile --all --check` still said "up to date"."""
    clone_project(finance, "a b", n=1)
    clone_project(finance, "a_b-c8687a08", n=2)
    out = tmp_path / "compiled"
    written = cli(finance, "compile", "--all", "--out", out)
    assert written.exit_code == 0, describe(written)
    files = written.stdout.split("\n")[:-1]
    assert len(files) == len(set(files)) == len(list((finance / "projects").glob("*.yml")))
    first = cli(finance, "compile", "a b").stdout
    second = cli(finance, "compile", "a_b-c8687a08").stdout
    assert first != second
    assert (out / segment("a b") / f"{segment('a b')}.sql").read_text() == first
    assert (out / "a_b-c8687a08" / "a_b-c8687a08.sql").read_text() == second
    (out / segment("a b") / f"{segment('a b')}.sql").unlink()
    check = cli(finance, "compile", "--all", "--check", out)
    assert check.exit_code == 4 and "missing:" in check.stderr, describe(check)


# ------------------------------------------------------------------------------------ graphs
HOSTILE = 'x"y\\z\n</details>--><b>#quot;|`%%\x07\r\u2028;end'
DOT_STRING = r'"(?:[^"\\\n]|\\.)*"'
DOT_NODE = re.compile(rf'^  ("?n\d+"?) \[label=({DOT_STRING}), shape=(?:box|ellipse)\];$')
DOT_EDGE = re.compile(rf'^  ("?n\d+"?) -> ("?n\d+"?) \[label=({DOT_STRING})(?:, style=dashed)?\];$')
MERMAID_LABEL = r'"[^"<>|`\n\x00-\x1f\u2028]*"'
MERMAID_NODE = re.compile(rf'^  (n\d+)(?:\[{MERMAID_LABEL}\]|\(\[{MERMAID_LABEL}\]\)|\[\({MERMAID_LABEL}\)\])$')
MERMAID_EDGE = re.compile(rf'^  (n\d+) (?:-->|-\.->)\|(?:{MERMAID_LABEL}|[a-z]+)\| (n\d+)$')


def dot_text(token: str) -> str:
    """The text of a DOT escString as Graphviz shows it."""
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), token[1:-1])


def parse_dot(source: str) -> tuple[dict, list]:
    """Nodes {id: label} and edges [(from, to)] of a DOT source ledgerflow wrote; every line must be one
    statement (a name that broke a string or a line fails here)."""
    lines = source.splitlines()
    assert lines[0].startswith("digraph ") and re.fullmatch(rf"digraph (?:{DOT_STRING}|\w+) {{", lines[0]), lines[0]
    assert lines[1] == "  rankdir=LR;" and lines[-1] == "}"
    nodes, edges = {}, []
    for line in lines[2:-1]:
        node, edge = DOT_NODE.match(line), DOT_EDGE.match(line)
        assert node or edge, line
        if node:
            assert node.group(1) not in nodes
            nodes[node.group(1)] = dot_text(node.group(2))
        else:
            edges.append((edge.group(1), edge.group(2)))
    assert all(a in nodes and b in nodes for a, b in edges)
    return nodes, edges


def check_mermaid(source: str) -> tuple[set, list]:
    lines = source.splitlines()
    assert lines[0] == "flowchart LR"
    nodes, edges = set(), []
    for line in lines[1:]:
        node, edge = MERMAID_NODE.match(line), MERMAID_EDGE.match(line)
        assert node or edge, line
        if node:
            nodes.add(node.group(1))
        else:
            edges.append((edge.group(1), edge.group(2)))
    assert all(a in nodes and b in nodes for a, b in edges)
    return nodes, edges


def shown(name: str) -> str:
    """What a label shows for ``name``: control characters and line separators as ``\\uXXXX`` text."""
    return name.replace("\x07", "\\u0007").replace("\r", "\\u000d").replace("\u2028", "\\u2028")


def lineage_of(project: str, columns):
    from types import SimpleNamespace
    return columns, SimpleNamespace(project=SimpleNamespace(name=project, operations=[]))


def test_lineage_graph_nodes_are_unique_per_dataset_column_pair():
    """`cost`.`centers_code` and `cost_centers`.`code` used to be one node `i_cost_centers_code`."""
    from ledgerflow.compiler.lineage import ColumnLineage, Input
    from ledgerflow.compiler.lineage_formats import to_dot, to_mermaid
    columns, plan = lineage_of("p", [ColumnLineage(1, "x", [Input("cost", "centers_code", "identity")]),
                                     ColumnLineage(1, "y", [Input("cost_centers", "code", "identity")]),
                                     ColumnLineage(2, "x", [Input("cost", "centers_code", "filter")])])
    nodes, edges = parse_dot(to_dot(columns, plan))
    assert sorted(nodes.values()) == sorted(["cost.centers_code", "cost_centers.code", "p.1 (?).x", "p.1 (?).y",
                                             "p.2 (?).x"])
    by_label = {label: nid for nid, label in nodes.items()}
    assert set(edges) == {(by_label["cost.centers_code"], by_label["p.1 (?).x"]),
                          (by_label["cost_centers.code"], by_label["p.1 (?).y"]),
                          (by_label["cost.centers_code"], by_label["p.2 (?).x"])}
    mermaid_nodes, mermaid_edges = check_mermaid(to_mermaid(columns, plan))
    assert len(mermaid_nodes) == 5 and len(set(mermaid_edges)) == 3


def test_lineage_graph_labels_are_escaped():
    from ledgerflow.compiler.lineage import ColumnLineage, Input
    from ledgerflow.compiler.lineage_formats import to_dot, to_mermaid
    columns, plan = lineage_of(HOSTILE, [ColumnLineage(1, HOSTILE, [Input(HOSTILE, HOSTILE, "join", (HOSTILE,)),
                                                                      Input(HOSTILE + "2", "c", "identity")])])
    dot = to_dot(columns, plan)
    nodes, edges = parse_dot(dot)
    assert len(nodes) == 3 and len(edges) == 2
    assert shown(f"{HOSTILE}.{HOSTILE}") in nodes.values() and shown(f"{HOSTILE}2.c") in nodes.values()
    assert not re.search(r"[\x00-\x08\x0b-\x1f\u2028]", dot)
    mermaid = to_mermaid(columns, plan)
    assert len(check_mermaid(mermaid)[0]) == 3
    assert "#quot;" in mermaid and "#lt;/details#gt;" in mermaid and "#35;quot;" in mermaid


class FakeGraph:
    """The part of WorkspaceGraph dag_view reads."""

    def __init__(self, nodes: list[tuple[str, str]], edges: list[tuple[str, str, str]]):
        from types import SimpleNamespace
        self.nodes, self.edges = nodes, [SimpleNamespace(source=a, target=b, role=r) for a, b, r in edges]

    def order(self, nodes=None):
        return [n for n, _ in self.nodes]

    def kind(self, node):
        return dict(self.nodes)[node]

    def edge_list(self, order):
        return self.edges


def test_dag_dot_and_mermaid_escape_names():
    from ledgerflow.compiler.dag_view import render
    graph = FakeGraph([(f"dataset:{HOSTILE}", "dataset"), (f"project:{HOSTILE}", "project"),
                       ("project:a\\", "project"), ('project:a"', "project")],
                      [(f"dataset:{HOSTILE}", f"project:{HOSTILE}", "input"),
                       (f"project:{HOSTILE}", "project:a\\", "output")])
    dot = render(graph, "dot")
    nodes, edges = parse_dot(dot)
    assert len(nodes) == 4 and len(edges) == 2 and {"project:a\\", 'project:a"'} <= set(nodes.values())
    assert not re.search(r"[\x00-\x08\x0b-\x1f\u2028]", dot)
    mermaid = render(graph, "mermaid")
    assert len(check_mermaid(mermaid)[0]) == 4 and "#lt;b#gt;" in mermaid


# ------------------------------------------------------------------------------------ diff --format markdown
def hostile_diff(name: str = HOSTILE):
    from ledgerflow.compiler.diff.result import (Category, ColumnChange, ColumnChangeKind, DatasetDiff, OperationChange,
                                                 OutputChange, ProjectDiff, Status, WorkspaceDiff)
    project = ProjectDiff(name, Status.MODIFIED, Category.BREAKING,
                          operations=[OperationChange(1, name, Status.MODIFIED, "update")],
                          outputs=[OutputChange(2, name, True, [ColumnChange(name, ColumnChangeKind.EXPRESSION, name)])],
                          sql_diff=f"--- base/x.sql\n+++ head/x.sql\n-SELECT '{name}'\n+SELECT 1\n```\n</details>",
                          reasons=[f"operation 1 '{name}' changed", "1. a list?", "# a heading?", "    code?", "_x_ *y*"])
    return WorkspaceDiff(f"`{name}`", "working tree", [project],
                         [DatasetDiff(name, Status.MODIFIED, [f"column '{name}' added"])])


def unescape_markdown(text: str) -> str:
    """What markdown text written by diff_format shows (backslash escapes and &#32;)."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text.replace("&#32;", " "))


def without_code_spans(line: str) -> str:
    return re.sub(r"(`+)(.+?)\1", "", line)


def test_markdown_escapes_every_name_and_text():
    from ledgerflow.adapters.diff_format import render_markdown
    md = render_markdown(hostile_diff())
    lines = md.split("\n")
    shown = HOSTILE.replace("\r", " ").replace("\n", " ").replace("\x07", "\\u0007").replace("\u2028", " ")
    fence_open = lines.index(next(line for line in lines if line.endswith("diff") and line.startswith("```")))
    fence = lines[fence_open][:-len("diff")]
    fence_close = lines.index(fence, fence_open + 1)
    assert "</details>" in lines[fence_close - 1] and len(fence) > 3  # the SQL's own ``` and </details> stay inside
    # the structure: one section, opened and closed by our own lines only (the SQL diff is fenced)
    summary = next(line for line in lines if line.startswith("<details><summary><b>"))
    assert [line for k, line in enumerate(lines) if "details>" in without_code_spans(line)
            and not fence_open < k < fence_close] == [summary, "</details>"]
    name_html = summary[len("<details><summary><b>"):summary.index("</b>")]
    assert "<" not in name_html and ">" not in name_html and '"' not in name_html
    import html
    assert html.unescape(name_html) == shown
    outside_code = [without_code_spans(line) for k, line in enumerate(lines)
                    if not fence_open <= k <= fence_close and line not in (summary, "</details>")]
    for line in outside_code:
        assert not re.search(r"(?<!\\)[<>]", line), line  # no raw HTML from a name anywhere else
        assert not re.search(r"[\x00-\x08\x0b-\x1f\u2028]", line), line
    table = [line for line in lines if line.startswith("| `")]
    assert len(table) == 1 and len(re.findall(r"(?<!\\)\|", table[0])) == 6, table  # five cells, name's | escaped
    column_rows = [line for line in lines if line.startswith("| output 2")]
    assert len(column_rows) == 1 and len(re.findall(r"(?<!\\)\|", column_rows[0])) == 3, column_rows
    reasons = [line[2:] for line in lines[lines.index(summary) + 2:] if line.startswith("- ")][:5]
    assert [unescape_markdown(r) for r in reasons] == [f"operation 1 '{shown}' changed", "1. a list?", "# a heading?",
                                                       "    code?", "_x_ *y*"]
    assert reasons[1].startswith("1\\.") and reasons[2].startswith("\\#") and reasons[3].startswith("&#32;")
    assert lines[0].startswith("### ledgerflow diff: ``") and "\n" not in lines[0]


def many_changed_projects(n: int, sql_lines: int = 40):
    from ledgerflow.compiler.diff.result import (Category, ColumnChange, ColumnChangeKind, OperationChange,
                                                 OutputChange, ProjectDiff, Status, WorkspaceDiff)
    projects = []
    for k in range(n):
        name = f"project_{k:05d}_with_a_rather_long_descriptive_name"
        sql = "\n".join(f"-SELECT amount_{j} * rate AS converted_{j} FROM transactions_{k}" for j in range(sql_lines))
        projects.append(ProjectDiff(name, Status.MODIFIED, Category.BREAKING,
                                    [OperationChange(j, f"operation {j}", Status.MODIFIED, "update") for j in range(1, 8)],
                                    [OutputChange(9, "Write", True, [ColumnChange(f"c{j}", ColumnChangeKind.EXPRESSION)
                                                                    for j in range(12)])],
                                    sql_diff=sql, reasons=[f"operation {j} changed" for j in range(1, 8)]))
    return WorkspaceDiff("HEAD (0123456789ab)", "working tree", projects)


@pytest.mark.parametrize("n", [120, 3000])
def test_markdown_comment_stays_under_60000_characters_and_says_what_is_left_out(n):
    """120 changed projects made a 65,653-character comment, which GitHub refuses (65,536 at most)."""
    from ledgerflow.adapters.diff_format import render_markdown
    md = render_markdown(many_changed_projects(n))
    assert len(md) < 60_000, len(md)
    note = md.rstrip().split("\n")[-1]
    assert "left out" in note and "ledgerflow diff" in note and "changed projects' details" in note, note
    assert md.count("<details>") == md.count("</details>") > 0
    if n == 3000:
        assert "rows of the project table" in note
    shown_rows = md.count("\n| `project_")
    left = int(re.search(r"(\d+) changed projects' details", note).group(1))
    assert md.count("<details>") + left == n and shown_rows <= n


def test_markdown_of_a_small_diff_is_not_cut():
    from ledgerflow.adapters.diff_format import render_markdown
    md = render_markdown(many_changed_projects(3))
    assert "left out" not in md and md.count("<details>") == 3 and "SQL diff cut" not in md


# ------------------------------------------------------------------------------------ JUnit XML, --junit-xml, --out
def one_paragraph(result, code: int) -> str:
    """The stderr of a failed command: exit ``code``, one paragraph, no traceback."""
    assert result.exit_code == code, describe(result)
    assert "Traceback" not in result.output, describe(result)
    assert result.exception is None or isinstance(result.exception, SystemExit), describe(result)
    err = result.stderr.strip()
    assert err.startswith("Error: ") and "\n\n" not in err and err.count("Error:") == 1, err
    return err


def test_junit_xml_is_well_formed_for_any_name():
    from ledgerflow.adapters.scenarios.report import FAILED, INVALID, PASSED, TestResult, junit_xml
    from ledgerflow.compiler.errors import Diagnostic, Location
    rng = random.Random(7)
    names = ADVERSARIAL + ["".join(chr(rng.randint(0, 0x10FFFF)) for _ in range(8)) for _ in range(300)]
    results = []
    for k, name in enumerate(names):
        status = (PASSED, FAILED, INVALID)[k % 3]
        results.append(TestResult(name, f"tests/{name}.yml", status, lines=[f"row {name} differs", name],
                                  diagnostics=[Diagnostic("TEST-001", name, Location(f"tests/{name}.yml", 1, 1), name)]))
    text = junit_xml(results, 1.0)
    root = ET.fromstring(text.encode("utf-8"))  # well-formed XML, whatever the names held
    cases = root.findall("./testsuite/testcase")
    assert len(cases) == len(names)
    plain = {n for n in names if not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff\r]", n)}
    assert plain and all(c.get("name") == n for c, n in zip(cases, names) if n in plain)
    assert cases[names.index("\x00")].get("name") == "\\u0000"


def test_junit_xml_below_a_file_is_refused_before_any_test_runs(finance):
    (finance / "report").write_text("not a folder")
    result = cli(finance, "test", "-k", "no_such_test_zzz", "--junit-xml", finance / "report" / "junit.xml")
    err = one_paragraph(result, 2)
    assert "--junit-xml" in err and "report is a file" in err, err
    assert "no test selected" not in result.stdout  # refused before the tests, not after


def test_junit_xml_that_cannot_be_written_after_the_tests_keeps_the_printed_results(finance, monkeypatch):
    from ledgerflow.adapters import output_paths
    monkeypatch.setattr(output_paths, "check_file", lambda path, option: None)  # the path breaks after the check
    (finance / "report").write_text("not a folder")
    result = cli(finance, "test", "-k", "no_such_test_zzz", "--junit-xml", finance / "report" / "junit.xml")
    err = one_paragraph(result, 1)
    assert "0 passed, 0 failed, 0 invalid" in result.stdout  # what ran is still on the terminal
    assert "JUnit XML could not be written to" in err and "junit.xml" in err, err


def test_compile_out_below_a_file_is_one_paragraph(finance, tmp_path):
    (tmp_path / "file").write_text("x")
    for args in (["compile", "ts01_output_only", "--out", tmp_path / "file" / "sql"],
                 ["compile", "--all", "--out", tmp_path / "file" / "sql"]):
        err = one_paragraph(cli(finance, *args), 2)
        assert "--out" in err and "file" in err, err


def test_compile_out_write_failure_is_one_paragraph(finance, tmp_path, monkeypatch):
    from ledgerflow.adapters import output_paths
    monkeypatch.setattr(output_paths, "check_folder", lambda path, option: None)
    (tmp_path / "file").write_text("x")
    err = one_paragraph(cli(finance, "compile", "ts01_output_only", "--out", tmp_path / "file" / "sql"), 1)
    assert "SQL of project 'ts01_output_only' could not be written" in err, err
    err = one_paragraph(cli(finance, "compile", "--all", "--out", tmp_path / "file" / "sql"), 1)
    assert "compiled SQL could not be written" in err, err


# ------------------------------------------------------------------------------------ diff of revisions
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo: Path, *args: str, stdin: str = None) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, env={**os.environ, **GIT_ENV},
                          capture_output=True, text=True, input=stdin).stdout


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    copy_workspace("finance", root / "ws")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


def test_diff_of_a_revision_with_links_reads_them_in_the_repository_and_never_outside(repo, tmp_path):
    ws = repo / "ws"
    shared = repo / "shared"
    shared.mkdir()
    (ws / "projects" / "ts01_output_only.yml").rename(shared / "ts01.yml")
    os.symlink("../../shared/ts01.yml", ws / "projects" / "ts01_output_only.yml")  # inside the repository
    secret = tmp_path / "outside.yml"
    secret.write_text("name: not in the repository\n")
    os.symlink(str(secret), ws / "projects" / "zz_outside.yml")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "links")
    (ws / "projects" / "zz_outside.yml").unlink()
    git(repo, "rm", "-q", "--cached", "ws/projects/zz_outside.yml")
    git(repo, "commit", "-q", "-m", "no link outside")
    same = cli(ws, "diff", "--format", "json")  # HEAD (an in-repository link) against the working tree
    assert same.exit_code == 0, describe(same)
    assert {p["status"] for p in json.loads(same.stdout)["projects"]} == {"unchanged"}
    outside = cli(ws, "diff", "HEAD~1", "HEAD")
    err = one_paragraph(outside, 1)
    assert "projects/zz_outside.yml is a symbolic link to" in err and "outside the repository" in err, err
    assert "not in the repository" not in outside.output


def test_diff_of_a_revision_with_tens_of_thousands_of_files(repo):
    """Every path of the revision used to be passed to `git archive` on its command line: `Argument list
    too long` at about 25,000 files."""
    blob = git(repo, "hash-object", "-w", "--stdin", stdin="notes\n").strip()
    long = "n" * 180
    entries = "".join(f"100644 {blob}\tws/projects/{long}_{k:05d}.txt\n" for k in range(20_000))
    git(repo, "update-index", "--add", "--index-info", stdin=entries)
    git(repo, "commit", "-q", "-m", "many files")
    git(repo, "rm", "-r", "-q", "--cached", "ws/projects/")  # the working tree never had them
    git(repo, "add", "ws/projects")
    result = cli(repo / "ws", "diff", "HEAD", "--format", "json")
    assert result.exit_code == 0, describe(result)
    assert {p["status"] for p in json.loads(result.stdout)["projects"]} == {"unchanged"}


# ------------------------------------------------------------------------------------ a damaged run store
def not_a_database(ws: Path) -> Path:
    db = ws / ".ledgerflow" / "state.db"
    db.parent.mkdir(exist_ok=True)
    db.write_bytes(b"this is not an SQLite database\n" * 200)
    return db


def corrupt_pages(ws: Path) -> Path:
    """A real run store whose schema reads fine but whose tables' pages are overwritten."""
    import sqlite3
    from ledgerflow.adapters.runstore import RunStore
    store = RunStore(str(ws))
    assert store.list_runs() == []  # the database and its tables made
    with sqlite3.connect(store.db_path) as conn:
        conn.executescript("CREATE TABLE IF NOT EXISTS filler (x TEXT);")
        conn.executemany("INSERT INTO runs (run_id, status, started_at, record) VALUES (?, 'completed', '2026', ?)",
                         [(f"r{k:04d}", json.dumps({"run_id": f"r{k:04d}", "pad": "x" * 400})) for k in range(400)])
    data = bytearray(Path(store.db_path).read_bytes())
    page = 4096
    data[3 * page:len(data) - page] = b"\xab" * (len(data) - 4 * page)
    Path(store.db_path).write_bytes(bytes(data))
    from ledgerflow.adapters import recovery
    recovery._CHECKED.discard(store.db_path)  # as in a new process: the next open checks for interrupted runs
    return Path(store.db_path)


@pytest.mark.parametrize("damage", [not_a_database, corrupt_pages])
def test_commands_that_need_no_run_store_work_with_a_damaged_one(finance, damage):
    db = damage(finance)
    for args in (["validate"], ["compile", "ts01_output_only"], ["lineage", "ts01_output_only"], ["dag"],
                 ["diff", finance, finance]):
        result = cli(finance, *args)
        assert result.exit_code == 0, describe(result)
        assert "Traceback" not in result.output and result.stderr.count("\n") <= 1, describe(result)  # one warning
        if damage is not_a_database or args[0] == "validate":
            assert f"the run store {db} is damaged" in result.stderr, describe(result)


@pytest.mark.parametrize("damage", [not_a_database, corrupt_pages])
def test_commands_that_need_the_run_store_name_the_damaged_file_and_what_to_do(finance, damage):
    db = damage(finance)
    for args in (["runs", "list"], ["runs", "show", "r0001"], ["datasets"]):
        err = one_paragraph(cli(finance, *args), 1)
        assert f"the run store {db} is damaged" in err and f"mv {db} {db}.damaged" in err, err
        assert "warning" not in err


def test_a_run_stops_at_a_damaged_run_store_before_anything_runs(finance):
    from ledgerflow.adapters.runner import Runner
    from ledgerflow.adapters.store_health import RunStoreDamaged
    db = not_a_database(finance)
    with pytest.raises(RunStoreDamaged) as caught:
        Runner(str(finance), session_factory=lambda: pytest.fail("no session for a damaged store"))
    assert str(db) in caught.value.render() and caught.value.exit_code == 1

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
from ledgerflow.adapters.compile_out.folders import segment

ADVERSARIAL = ["", ".", "..", "...", "a b", "a_b", "a_b-c8687a08", "a/b", "a\\b", "../../escape", "A", "a",
               "Close", "close", "CLOSE", "a.", "a..", ".hidden", "-x", "+", "+2b", "+h", "x\n", "x\r\n", "\x00",
               "con", "é", "e\u0301", "İ", "ß", "SS", "ss", "</details>", "-->", '"q"', "a" * 120, "a" * 121,
               "a" * 500, "A" * 500, "\udcff", "a+20b", "a%20b", "a~20b"]


def clone_project(ws: Path, name: str, source: str = "ts01_output_only", n: int = 1) -> Path:
    """A copy of ``projects/<source>.yml`` as a project of its own called ``name``, writing tables of its own."""
    text = (ws / "projects" / f"{source}.yml").read_text(encoding="utf-8")
    text = re.sub(r"^id: .*$", f"id: 0e000000-0000-4000-8000-{n:012d}", text, count=1, flags=re.M)
    text = re.sub(r"^name: .*$", lambda _: "name: " + json.dumps(name), text, count=1, flags=re.M)
    text = re.sub(r"\{table: (\w+)\}", lambda m: f"{{table: {m.group(1)}_clone_{n}}}", text)  # one writer each
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


CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.*?)(?<!`)\1(?!`)")


def markdown_shows(line: str) -> str:
    """What a line of diff_format's markdown shows: code spans' text as is, the rest unescaped."""
    out, pos = [], 0
    for m in CODE_SPAN.finditer(line):
        inner = m.group(2)
        if len(inner) > 1 and inner[0] == inner[-1] == " " and inner.strip(" "):
            inner = inner[1:-1]
        out += [unescape_markdown(line[pos:m.start()]), inner]
        pos = m.end()
    return "".join(out + [unescape_markdown(line[pos:])])


def test_markdown_escapes_every_name_and_text():
    from ledgerflow.adapters.diff.formats import render_markdown
    md = render_markdown(hostile_diff())
    lines = md.split("\n")
    shown = HOSTILE.replace("\r", " ").replace("\n", " ").replace("\x07", "\\u0007").replace("\u2028", " ")
    fence_open = lines.index(next(line for line in lines if line.endswith("diff") and line.startswith("```")))
    fence = lines[fence_open][:-len("diff")]
    fence_close = lines.index(fence, fence_open + 1)
    assert "</details>" in lines[fence_close - 1] and len(fence) > 3  # the SQL's own ``` and </details> stay inside
    # the structure: one section, opened and closed by our own lines only (the SQL diff is fenced)
    summary = next(line for line in lines if line.startswith("<details><summary><b><code>"))
    assert [line for k, line in enumerate(lines) if "details>" in without_code_spans(line)
            and not fence_open < k < fence_close] == [summary, "</details>"]
    name_html = summary[len("<details><summary><b><code>"):summary.index("</code></b>")]
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
    assert [markdown_shows(r) for r in reasons] == [f"operation 1 '{shown}' changed", "1. a list?", "# a heading?",
                                                    "    code?", "_x_ *y*"]
    assert reasons[1].startswith("1\\.") and reasons[2].startswith(("\\#", "`#`")) and reasons[3].startswith("&#32;")
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
    from ledgerflow.adapters.diff.formats import render_markdown
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
    from ledgerflow.adapters.diff.formats import render_markdown
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
    from ledgerflow.compiler.visible_text import visible
    plain = {n for n in names if "\r" not in n}  # XML reads a CR as a line feed
    assert plain and all(c.get("name") == visible(n, keep="\t\n\r") for c, n in zip(cases, names) if n in plain)
    assert cases[names.index("x\n")].get("name") == "x\n" and cases[names.index("é")].get("name") == "é"
    assert cases[names.index("\x00")].get("name") == "\\u0000"


def test_junit_xml_below_a_file_is_refused_before_any_test_runs(finance):
    (finance / "report").write_text("not a folder")
    result = cli(finance, "test", "-k", "no_such_test_zzz", "--junit-xml", finance / "report" / "junit.xml")
    err = one_paragraph(result, 2)
    assert "--junit-xml" in err and "report is a file" in err, err
    assert "no test selected" not in result.stdout  # refused before the tests, not after


def test_junit_xml_that_cannot_be_written_after_the_tests_keeps_the_printed_results(finance, monkeypatch):
    from ledgerflow.adapters.compile_out import paths as output_paths
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
    from ledgerflow.adapters.compile_out import paths as output_paths
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
    from ledgerflow.adapters.store.runstore import RunStore
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
    from ledgerflow.adapters.commit import recovery
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
    from ledgerflow.adapters.run.runner import Runner
    from ledgerflow.adapters.store.health import RunStoreDamaged
    db = not_a_database(finance)
    with pytest.raises(RunStoreDamaged) as caught:
        Runner(str(finance), session_factory=lambda: pytest.fail("no session for a damaged store"))
    assert str(db) in caught.value.render() and caught.value.exit_code == 1


# ------------------------------------------------------------------------------------ review H4 follow-ups
def test_diff_of_a_revision_ignores_line_endings_git_converts_on_checkout(repo):
    """With `*.yml text eol=crlf` the working tree holds CRLF while git cat-file gives the committed LF:
    every project used to count as changed ("11 projects changed (worst: no_op)")."""
    (repo / ".gitattributes").write_text("*.yml text eol=crlf\n*.yaml text eol=crlf\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-q", "-m", "crlf")
    for path in (repo / "ws").rglob("*.yml"):
        path.unlink()
    git(repo, "checkout", "--", "ws")  # a fresh checkout: CRLF in the working tree
    assert b"\r\n" in (repo / "ws" / "projects" / "ts01_output_only.yml").read_bytes()
    result = cli(repo / "ws", "diff", "HEAD", "--format", "json")
    assert result.exit_code == 0, describe(result)
    assert {p["status"] for p in json.loads(result.stdout)["projects"]} == {"unchanged"}
    # a real edit still counts
    project = repo / "ws" / "projects" / "ts01_output_only.yml"
    project.write_bytes(project.read_bytes().replace(b"\r\n", b"\n", 1).replace(b"name: ", b"name:  ", 1) + b"\r\n")
    text = cli(repo / "ws", "diff", "HEAD", "--format", "json")
    assert [p["status"] for p in json.loads(text.stdout)["projects"] if p["name"] == "ts01_output_only"] == ["modified"]


def raw_tree(entries: list[tuple[str, str, str]]) -> bytes:
    """A tree object's bytes from (mode, name, id) entries, modes written as given (git mktree would
    normalise a legacy 100664 to 100644)."""
    key = lambda e: e[1] + ("/" if e[0] == "40000" else "")  # noqa: E731  (git's tree order)
    return b"".join(f"{m} {n}".encode() + b"\0" + bytes.fromhex(oid) for m, n, oid in sorted(entries, key=key))


def write_tree(repo: Path, entries: list[tuple[str, str, str]]) -> str:
    proc = subprocess.run(["git", "-C", str(repo), "hash-object", "-t", "tree", "--literally", "-w", "--stdin"],
                          input=raw_tree(entries), capture_output=True, check=True)
    return proc.stdout.decode().strip()


def ls_tree(repo: Path, treeish: str) -> list[tuple[str, str, str]]:
    out = []
    for line in git(repo, "ls-tree", treeish).splitlines():
        meta, name = line.split("\t", 1)
        mode, _, oid = meta.split()
        out.append((mode.lstrip("0") if mode == "040000" else mode, name, oid))
    return out


def test_diff_of_a_revision_reads_files_of_legacy_mode_100664(repo):
    """Old git wrote group-writable files as 100664; such a project was left out of the revision."""
    projects = [(("100664" if n == "ts01_output_only.yml" else m), n, o) for m, n, o in ls_tree(repo, "HEAD:ws/projects")]
    ws = [(m, n, write_tree(repo, projects) if n == "projects" else o) for m, n, o in ls_tree(repo, "HEAD:ws")]
    root = [(m, n, write_tree(repo, ws) if n == "ws" else o) for m, n, o in ls_tree(repo, "HEAD")]
    commit = git(repo, "commit-tree", write_tree(repo, root), "-p", "HEAD", "-m", "legacy mode").strip()
    raw = subprocess.run(["git", "-C", str(repo), "cat-file", "tree", f"{commit}:ws/projects"], capture_output=True)
    assert b"100664 ts01_output_only.yml\0" in raw.stdout  # ls-tree would show it as 100644
    result = cli(repo / "ws", "diff", commit, "--format", "json")
    assert result.exit_code == 0, describe(result)
    assert {p["status"] for p in json.loads(result.stdout)["projects"]} == {"unchanged"}


def test_a_run_store_that_cannot_be_opened_is_one_warning_or_one_paragraph(finance):
    """A folder in state.db's place: a warning, then `sqlite3.OperationalError: unable to open database
    file` as a traceback from every command."""
    db = finance / ".ledgerflow" / "state.db"
    db.mkdir(parents=True)
    result = cli(finance, "validate")
    assert result.exit_code == 0 and "Traceback" not in result.output, describe(result)
    assert f"the run store {db} is unreadable (it is a folder)" in result.stderr, describe(result)
    assert result.stderr.count("\n") <= 1, describe(result)
    err = one_paragraph(cli(finance, "runs", "list"), 1)
    assert f"cannot open or read the run store {db}: it is a folder" in err and "mv " in err, err


def test_a_run_store_of_another_schema_is_one_warning_or_one_paragraph(finance):
    """A state.db whose runs table lacks `record`: `runs list` printed a traceback ("no such column: record")."""
    import sqlite3
    db = finance / ".ledgerflow" / "state.db"
    db.parent.mkdir()
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE runs (run_id TEXT PRIMARY KEY, status TEXT)")
    err = one_paragraph(cli(finance, "runs", "list"), 1)
    assert f"cannot open or read the run store {db}" in err and "runs.record" in err, err
    result = cli(finance, "validate")
    assert result.exit_code == 0 and "Traceback" not in result.output, describe(result)
    assert "is unreadable" in result.stderr and result.stderr.count("\n") <= 1, describe(result)


def test_any_sqlite_error_met_deep_in_a_command_is_one_paragraph(finance, monkeypatch):
    import sqlite3
    from ledgerflow.adapters.store.runstore import RunStore
    assert cli(finance, "runs", "list").exit_code == 0  # a good store

    def locked(self, *args, **kwargs):
        raise sqlite3.OperationalError("database is locked")
    monkeypatch.setattr(RunStore, "list_runs", locked)
    err = one_paragraph(cli(finance, "runs", "list"), 1)
    assert "cannot open or read the run store" in err and "database is locked" in err, err


MERMAID_DIRECTIVE = '%%{init: {"securityLevel": "loose", "theme": "dark"}}%%'


def test_mermaid_labels_cannot_hold_a_directive_or_a_comment():
    """Mermaid finds `%%{...}%%` anywhere in its source, quoted labels included."""
    from ledgerflow.compiler.dag_view import render
    from ledgerflow.compiler.lineage import ColumnLineage, Input
    from ledgerflow.compiler.lineage_formats import to_mermaid
    graph = FakeGraph([(f"dataset:{MERMAID_DIRECTIVE}", "dataset"), (f"project:x'{{y}}", "project")],
                      [(f"dataset:{MERMAID_DIRECTIVE}", "project:x'{y}", "input")])
    columns, plan = lineage_of(MERMAID_DIRECTIVE, [ColumnLineage(1, "c", [Input(MERMAID_DIRECTIVE, "%%", "identity")])])
    for source in (render(graph, "mermaid"), to_mermaid(columns, plan)):
        check_mermaid(source)
        body = source.split("\n", 1)[1]
        assert not re.search(r"[%{}']", body), body
        assert "#37;#37;#123;init" in body, body


def test_compile_all_out_removes_the_files_it_wrote_in_an_older_layout(finance, tmp_path):
    """After the folder names changed (FX_Close/ -> +46+58_+43lose/), `--check` kept failing on the old
    file even after following its own hint (`--all --out` left it there)."""
    clone_project(finance, "FX_Close", n=1)
    out = tmp_path / "compiled"
    old = out / "FX_Close" / "FX_Close.sql"
    old.parent.mkdir(parents=True)
    old.write_text("-- ledgerflow 0.9.0: project FX_Close (id 0e000000-0000-4000-8000-000000000001, version 1)\n"
                   "SELECT 1;\n")
    foreign = out / "notes" / "notes.sql"
    foreign.parent.mkdir()
    foreign.write_text("-- my own notes, not ledgerflow's\n")
    (out / "kept").mkdir()
    (out / "kept" / "kept.sql").symlink_to(old)  # a link: never removed, even to a file ledgerflow wrote
    check = cli(finance, "compile", "--all", "--check", out)
    assert check.exit_code == 4 and f"extra: {old}" in check.stderr, describe(check)
    written = cli(finance, "compile", "--all", "--out", out)
    assert written.exit_code == 0, describe(written)
    assert f"removed {old}" in written.stdout and not old.parent.exists(), describe(written)
    assert foreign.read_text() == "-- my own notes, not ledgerflow's\n" and (out / "kept" / "kept.sql").is_symlink()
    check = cli(finance, "compile", "--all", "--check", out)
    assert check.exit_code == 4 and "missing" not in check.stderr and "stale" not in check.stderr, describe(check)
    assert f"Delete by hand what ledgerflow does not remove" in check.stderr and str(foreign) in check.stderr
    foreign.unlink()
    (out / "kept" / "kept.sql").unlink()
    check = cli(finance, "compile", "--all", "--check", out)
    assert check.exit_code == 0, describe(check)


def test_compile_all_check_of_a_file_that_is_not_utf8_or_is_a_folder(finance, tmp_path):
    out = tmp_path / "compiled"
    assert cli(finance, "compile", "--all", "--out", out).exit_code == 0
    sql = out / "ts01_output_only" / "ts01_output_only.sql"
    sql.write_bytes(b"-- \xff\xfe not UTF-8\n")
    check = cli(finance, "compile", "--all", "--check", out)
    assert check.exit_code == 4 and f"stale: {sql}" in check.stderr and "Traceback" not in check.output, describe(check)
    sql.unlink()
    sql.mkdir()
    err = one_paragraph(cli(finance, "compile", "--all", "--check", out), 1)
    assert f"cannot read {sql}: a folder" in err, err


AUTOLINKS = re.compile(r"https?:|www\.|@\w|#\d|\b[0-9a-f]{7,}\b|:\w+:")


def test_markdown_puts_names_in_code_spans_where_github_links_nothing():
    """Reasons, operation lines and column changes were escaped text: GitHub still made links, @mentions
    and #references of names in them (`http\\://` still links)."""
    from ledgerflow.adapters.diff.formats import render_markdown
    from ledgerflow.compiler.diff.result import (Category, ColumnChange, ColumnChangeKind, DatasetDiff,
                                                 OperationChange, OutputChange, ProjectDiff, Status, WorkspaceDiff)
    name = "see http://evil.example/x www.evil.example a@b.example @alice #12 deadbeef12 :smile:"
    project = ProjectDiff(name, Status.MODIFIED, Category.BREAKING,
                          operations=[OperationChange(1, name, Status.MODIFIED, "update")],
                          outputs=[OutputChange(2, name, True, [ColumnChange(name, ColumnChangeKind.TYPE, name)])],
                          reasons=[f"output 2 '{name}' can write other rows", f"output 2 column {name}: type ({name})"])
    md = render_markdown(WorkspaceDiff("HEAD", "working tree", [project],
                                       [DatasetDiff(name, Status.MODIFIED, [f"column {name} added (string)"])]))
    lines = md.split("\n")
    for line in lines:
        text = re.sub(r"<code>.*?</code>", "", CODE_SPAN.sub("", line))
        assert not AUTOLINKS.search(text), line
    reasons = [line[2:] for line in lines if line.startswith("- output 2")]
    assert [markdown_shows(r) for r in reasons] == [f"output 2 '{name}' can write other rows",
                                                    f"output 2 column {name}: type ({name})"]
    assert any(markdown_shows(line) == f"- operation 1 update {name}: modified" for line in lines), md
    assert any(markdown_shows(line) == f"- {name} (modified): column {name} added (string)" for line in lines), md


def test_markdown_comment_cap_counts_utf8_bytes():
    """The cap counted Python characters: a comment of euro signs and CJK names went far past 60,000 bytes."""
    from ledgerflow.adapters.diff.formats import render_markdown
    from ledgerflow.compiler.diff.result import ProjectDiff
    diff = many_changed_projects(120)
    diff.projects = [ProjectDiff("会計_" * 10 + p.name, p.status, p.category, p.operations, p.outputs,
                                 p.sql_diff.replace("amount", "€€€€€€"), p.reasons) for p in diff.projects]
    md = render_markdown(diff)
    assert len(md.encode("utf-8")) < 60_000, len(md.encode("utf-8"))
    assert "left out" in md.rstrip().split("\n")[-1]


FORMAT_CHARACTERS = "a\u202eb\u200bc\u2066d"  # a right-to-left override, a zero-width space, an isolate


def test_every_writer_shows_format_characters():
    """Only SQL comments showed bidi overrides and zero-width characters; labels, the markdown comment and
    JUnit XML wrote them as they were (text shown reordered or hidden)."""
    from ledgerflow.adapters.diff.formats import render_markdown, render_text
    from ledgerflow.adapters.scenarios.report import FAILED, TestResult, junit_xml, render as render_result
    from ledgerflow.compiler.graph_text import dot_string, mermaid_string
    from ledgerflow.compiler.render import comment
    shown_as = "a\\u202eb\\u200bc\\u2066d"
    outputs = [dot_string(FORMAT_CHARACTERS), mermaid_string(FORMAT_CHARACTERS), comment(FORMAT_CHARACTERS),
               render_markdown(hostile_diff(FORMAT_CHARACTERS)), render_text(hostile_diff(FORMAT_CHARACTERS)),
               junit_xml([TestResult(FORMAT_CHARACTERS, "tests/x.yml", FAILED, lines=[FORMAT_CHARACTERS])], 1.0),
               render_result(TestResult(FORMAT_CHARACTERS, "tests/x.yml", FAILED, lines=[FORMAT_CHARACTERS]))]
    for text in outputs:
        assert not re.search("[\u202e\u200b\u2066]", text), text
        assert shown_as in text.replace("\\\\u", "\\u").replace("\\x", "\\u00"), text


TERMINAL_ESCAPE = "x\x1b]0;owned\x07\x1b[2J"


def test_terminal_output_shows_escape_sequences_of_names(finance):
    """Names went to the terminal raw: an OSC or CSI sequence in a name retitled or cleared it."""
    from ledgerflow.adapters.diff.formats import render_text
    from ledgerflow.adapters.scenarios.report import FAILED, TestResult, render as render_result
    from ledgerflow.compiler.dag_view import render as render_dag
    sgr = re.compile(r"\x1b\[[0-9;]*m")  # click's own colours
    texts = [render_text(hostile_diff(TERMINAL_ESCAPE), sql=True),
             render_result(TestResult(TERMINAL_ESCAPE, "tests/x.yml", FAILED, lines=[TERMINAL_ESCAPE])),
             render_dag(FakeGraph([(f"project:{TERMINAL_ESCAPE}", "project")], []), "text")]
    clone_project(finance, TERMINAL_ESCAPE, n=1)
    validated = cli(finance, "validate")
    assert validated.exit_code == 0, describe(validated)
    failed = cli(finance, "compile", TERMINAL_ESCAPE + "_nope")
    assert failed.exit_code != 0
    texts += [validated.stdout, failed.stderr]
    for text in texts:
        assert not re.search(r"[\x1b\x07]", sgr.sub("", text)), text
        assert "\\u001b]0;owned\\u0007" in text, text


def test_windows_device_names_are_escaped():
    reserved = {"con", "prn", "aux", "nul"} | {f"{d}{k}" for d in ("com", "lpt") for k in range(10)}
    for name in sorted(reserved) + ["con.sql", "nul.x", "aux.tar.gz", "lpt1."]:
        s = segment(name)
        assert "+" in s and s.split(".")[0] not in reserved, (name, s)
    assert [segment(n) for n in ("console", "con_", "com10", "nul-x")] == ["console", "con_", "com10", "nul-x"]
    names = sorted(reserved) + [segment(n) for n in reserved]
    assert len({segment(n) for n in names}) == len(set(names))


def completed_run(monkeypatch):
    from ledgerflow.adapters.store.runstore import RunStore
    monkeypatch.setattr(RunStore, "get_run", lambda self, run_id: {"run_id": run_id, "status": "completed"})


def test_record_checks_its_target_before_any_work(finance, tmp_path, monkeypatch):
    """`test --record` checked exists() (false for a link to nothing, then wrote through it) and opened
    the file with "w" after the Spark work."""
    completed_run(monkeypatch)
    (finance / "tests").mkdir(exist_ok=True)
    target = finance / "tests" / "+43lose.yml"
    target.symlink_to(tmp_path / "elsewhere.yml")
    err = one_paragraph(cli(finance, "test", "--record", "r1", "Close"), 2)
    assert "+43lose.yml is a symbolic link to" in err and "does not write through it" in err, err
    assert not (tmp_path / "elsewhere.yml").exists()
    target.unlink()
    target.write_text("mine\n")
    err = one_paragraph(cli(finance, "test", "--record", "r1", "Close"), 1)
    assert "+43lose.yml exists already" in err, err


def test_record_never_writes_over_a_file_that_appeared_meanwhile(finance):
    from ledgerflow.adapters.scenarios.record import check_target, write_new
    check_target(str(finance), "Close")  # nothing there yet
    (finance / "tests").mkdir(exist_ok=True)
    (finance / "tests" / "+43lose.yml").write_text("written meanwhile\n")
    with pytest.raises(Exception) as caught:
        write_new(str(finance), "Close", "recorded\n")
    assert "exists already" in str(caught.value)
    assert (finance / "tests" / "+43lose.yml").read_text() == "written meanwhile\n"
    helped = cli(finance, "test", "--help")
    assert "tests/+43lose.yml" in " ".join(helped.stdout.split()), helped.stdout


def test_junit_xml_target_a_link_to_nothing_is_named_and_missing_folders_are_made(finance, tmp_path):
    link = finance / "junit.xml"
    link.symlink_to(tmp_path / "nowhere" / "junit.xml")
    err = one_paragraph(cli(finance, "test", "-k", "no_such_test_zzz", "--junit-xml", link), 2)
    assert "is a symbolic link to" in err and "which does not exist" in err and "not writable" not in err, err
    report = finance / "reports" / "ci" / "junit.xml"
    result = cli(finance, "test", "-k", "no_such_test_zzz", "--junit-xml", report)
    assert result.exit_code == 0 and ET.parse(report).getroot().tag == "testsuites", describe(result)

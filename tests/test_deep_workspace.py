"""A workspace of projects chained through registered datasets, deeper than Python's recursion limit (issue 48
point 1): the graph walks are iterative, so lineage, validate, dag and the docs site's lineage pages answer."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from cli_support import cli, describe

DEPTH = 600


def _chain(root: Path, n: int) -> Path:
    """``n`` projects, each reading the dataset the one before registers (the first reads ``gl``): the
    workspace-scale benchmark's ``chain`` shape."""
    from bench.workspace_scale import chain
    chain(root, n)
    return root


def test_lineage_validate_and_dag_of_a_chain_deeper_than_the_recursion_limit(tmp_path):
    ws = _chain(tmp_path / "chain", DEPTH)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(400)  # below the chain's depth: nothing may recurse along it
    try:
        lineage = cli(ws, "lineage", f"p{DEPTH - 1:04d}.amount")
        validate = cli(ws, "validate")
        dag = cli(ws, "dag", "--format", "json")
    finally:
        sys.setrecursionlimit(limit)
    assert lineage.exit_code == 0, describe(lineage)[:2000]
    assert validate.exit_code == 0 and dag.exit_code == 0, describe(validate)[:2000]
    first = lineage.stdout.splitlines()[2]  # the value input, through every registered dataset of the chain
    assert first.split()[:2] == ["transformation", "gl.amount"], first[:200]
    assert first.count(" -> d") == DEPTH - 1 and first.endswith("p0000.2 -> d0000"), first[:200]


def test_the_docs_site_of_a_deep_chain_walks_each_project_once(tmp_path):
    """Every project's lineage page shares one walk upstream: planning is counted, not timed."""
    from ledgerflow.compiler import compile as compile_module
    from ledgerflow.compiler.workspace import load_workspace
    from ledgerflow.adapters.docs_site.collect import collect_site
    ws_root = _chain(tmp_path / "chain", 60)
    ws = load_workspace(str(ws_root))
    calls = []
    real = compile_module.plan_project

    def counted(workspace, project):
        calls.append(project.name)
        return real(workspace, project)
    import ledgerflow.adapters.docs_site.collect as collect_module
    original = collect_module.plan_project
    collect_module.plan_project = counted
    try:
        site = collect_site(ws)
    finally:
        collect_module.plan_project = original
    assert not site.errors
    assert len(calls) == len(set(calls)) <= 60, (len(calls), len(set(calls)))  # each upstream project planned once
    # the last project's page shows its path's five nearest and five furthest registered datasets and how many
    # between: a page of a few kilobytes at the end of any chain
    last = next(p for p in site.pages if p.kind == "lineage" and p.data["project"] == "p0059")
    value = next(i for c in last.data["columns"] if c["column"] == "amount" for i in c["inputs"] if i["dataset"] == "gl")
    assert len(value["via"]) == 10 and value["via_hidden"] == 59 - 10
    assert value["via"][0] == "p0058.2 -> d0058" and value["via"][-1] == "p0000.2 -> d0000"


def test_diff_of_a_change_at_the_root_compiles_only_what_can_differ(tmp_path):
    """``diff`` after a change to the chain's first project: an expression change leaves the dataset it registers
    as readers see it (columns, types, versions), so no reader is compiled again (one project per side, not the
    chain), and the impact walk still reaches every column downstream; a new column compiles the readers too."""
    import shutil

    from ledgerflow.compiler.diff import projects_to_compile
    from ledgerflow.compiler.workspace import load_workspace
    base = _chain(tmp_path / "base", 30)
    head = tmp_path / "head"
    shutil.copytree(base, head)
    first = head / "projects" / "p0000.yml"
    first.write_text(first.read_text().replace("amount + 1", "amount + 2"))
    names = sorted(p.name for p in load_workspace(str(head)).projects)
    assert projects_to_compile(load_workspace(str(base)), load_workspace(str(head)), names) == ["p0000"]
    result = cli(head, "diff", str(base), str(head), "--format", "json")
    impact = json.loads(result.stdout)["impact"]
    assert {(i["project"], i["column"]) for i in impact} == {(f"p{k:04d}", "amount") for k in range(1, 30)}
    first.write_text(first.read_text().replace("expression: amount + 2\n",
                                               "expression: amount + 2\n        - column: flag\n"
                                               "          expression: amount > 0\n"))  # a new column
    assert len(projects_to_compile(load_workspace(str(base)), load_workspace(str(head)), names)) == 30


def test_a_large_base_loaded_in_a_forked_process_gives_the_same_diff_and_its_errors(tmp_path, monkeypatch):
    """From ``PARALLEL_MIN_PROJECTS`` projects the base side loads in a forked process: the diff is the one of
    two loads in this process; a base that does not load is reported as the base's error either way."""
    import shutil

    from ledgerflow.adapters.diff import command
    base = _chain(tmp_path / "base", command.PARALLEL_MIN_PROJECTS + 10)
    head = tmp_path / "head"
    shutil.copytree(base, head)
    first = head / "projects" / "p0000.yml"
    first.write_text(first.read_text().replace("amount + 1", "amount + 2"))
    forked = cli(head, "diff", str(base), str(head), "--format", "json")
    monkeypatch.setattr(command, "PARALLEL_MIN_PROJECTS", 10**6)
    alone = cli(head, "diff", str(base), str(head), "--format", "json")
    assert forked.exit_code == alone.exit_code == 0 and forked.stdout == alone.stdout, describe(forked)
    monkeypatch.undo()
    broken = base / "projects" / "p0005.yml"
    broken.write_text(broken.read_text() + "  - seq: [\n")
    failed = cli(head, "diff", str(base), str(head))
    assert failed.exit_code == 1 and "base" in failed.output and "p0005.yml" in failed.output, describe(failed)

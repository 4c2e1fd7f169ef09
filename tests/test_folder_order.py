"""The order of folders (issue 44): folders import each other downwards only, and no function takes more than
8 parameters.

``adapters/`` packages sit on the levels of :data:`ADAPTERS_ORDER`, lowest first: a package imports only
packages on a lower level (never one on its own level), and ``compiler/`` never imports ``adapters/``.

``compiler/`` subfolders sit in the order of :data:`COMPILER_ORDER`; each top-level module of ``compiler/``
is a place of its own, sitting above what it imports and below what imports it (``plan.py`` above
``checks/``, below ``bind/``; ``resolver.py`` above ``dsl/``, below ``bind/``). So no chain of imports
leads from a subfolder back into itself, nor from a subfolder to one after it in the order.

Imports are read from the source (module level and inside functions alike): relative ones and absolute
``ledgerflow.`` ones. A failure names each offending import as ``file:line -> module``."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
MAX_PARAMETERS = 8
TOP = "(top)"

# Lowest first. Packages on one level import nothing of each other.
ADAPTERS_ORDER: list[tuple[str, ...]] = [
    ("store", "layout"),  # the run store (SQLite) / a destination's partition layout: only compiler/ below them
    ("inputs", "events"),  # resolving and reading inputs / OpenLineage events built from run records
    ("spark",),  # the session, Spark's error text (which names an input file's bad record)
    ("commit",),  # staged outputs, the commit journal, recovery, opening the run store
    ("run",),  # running a project-period
    ("console",),  # what every command's terminal side shares: the Invocation, free text shown safely
    ("diff", "compile_out", "onboarding"),  # commands built on runs
    ("envs",),  # environments and promotion: re-pointing what runs published (a dry run shows diff's data diff)
    ("periods",),  # closed, stale and restated project-periods: a restatement shows its data diff
    ("scenarios",),  # scenario tests: compile_out's scripts, runs
    ("docs_site", "manifest"),  # the docs site shows projects, periods, scenarios / the manifest describes them
    (TOP,),  # cli.py and api.py: the two front doors
]

# Lowest first; the top-level modules of compiler/ are places of their own between them.
COMPILER_ORDER: list[str] = ["dsl", "checks", "bind", "kinds", "diff"]


@dataclass(frozen=True)
class Import:
    """One import statement's target: ``source`` (a path under the repository) imports ``target`` (a dotted
    module name without ``ledgerflow.``) at ``line``."""

    source: str
    line: int
    target: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line} -> {self.target}"


def module_of(root: Path, path: Path) -> str:
    """The dotted name of ``path`` under ``root`` (``compiler.bind`` for ``compiler/bind/__init__.py``)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(root: Path, tops: tuple[str, ...] = ("compiler", "adapters")) -> list[Import]:
    """Every import of a module under ``root``'s ``tops`` by a module there: relative and absolute
    ``ledgerflow.`` imports, module level or inside a function; ``from .x import y`` targets ``x.y`` when
    ``y`` is a module itself."""
    files = sorted(p for top in tops for p in (root / top).rglob("*.py"))
    known = {module_of(root, p) for p in files}
    found = []
    for path in files:
        name = module_of(root, path)
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = ".".join(package[:len(package) - (node.level - 1)] + ([node.module] if node.module else []))
                elif (node.module or "").startswith("ledgerflow."):
                    base = node.module.removeprefix("ledgerflow.")
                else:
                    continue
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name.removeprefix("ledgerflow.") for a in node.names if a.name.startswith("ledgerflow.")]
            source = str(path.relative_to(root))
            found += [Import(source, node.lineno, t) for t in dict.fromkeys(targets) if t.split(".")[0] in tops]
    return found


def place(root: Path, module: str) -> str:
    """The folder a module belongs to: ``adapters/run`` for ``adapters.run.x``, ``adapters/(top)`` for
    ``adapters.cli``, ``compiler/bind`` for ``compiler.bind.x``; a top-level module of ``compiler/`` is a
    place of its own (``compiler/plan.py``)."""
    parts = module.split(".")
    if len(parts) > 1 and (root / parts[0] / parts[1]).is_dir():
        return f"{parts[0]}/{parts[1]}"
    if parts[0] == "compiler":
        return f"compiler/{parts[1] if len(parts) > 1 else '__init__'}.py"
    return f"{parts[0]}/{TOP}"


def adapters_order_breaches(root: Path, order: list[tuple[str, ...]]) -> list[str]:
    """Every import that goes against ``order`` (an import of a package on the importer's own level or a
    higher one, an import of ``adapters/`` by ``compiler/``), and every package that has no level."""
    level = {name: i for i, names in enumerate(order) for name in names}
    folders = sorted(p.name for p in (root / "adapters").iterdir() if (p / "__init__.py").is_file())
    wrong = [f"adapters/{f}/ has no level in the order" for f in folders if f not in level]
    for imp in imports(root):
        source, target = place(root, module_of(root, root / imp.source)), place(root, imp.target)
        if source.startswith("compiler") and target.startswith("adapters"):
            wrong.append(f"{imp} (compiler/ imports adapters/)")
        elif source.startswith("adapters") and target.startswith("adapters") and source != target:
            a, b = source.split("/")[1], target.split("/")[1]
            if a in level and b in level and level[a] <= level[b]:
                wrong.append(f"{imp} ({a} may not import {b})")
    return wrong


def compiler_graph(root: Path) -> tuple[nx.DiGraph, dict[tuple[str, str], list[Import]]]:
    """The places of ``compiler/`` (subfolders, top-level modules) and the imports between them."""
    graph, seen = nx.DiGraph(), {}
    for imp in imports(root, ("compiler",)):
        source, target = place(root, module_of(root, root / imp.source)), place(root, imp.target)
        if source != target:
            graph.add_edge(source, target)
            seen.setdefault((source, target), []).append(imp)
    return graph, seen


def compiler_order_breaches(root: Path, order: list[str]) -> list[str]:
    """Every import on a loop between places of ``compiler/``, and every chain of imports from a subfolder
    to one after it in ``order``; each named ``file:line -> module``."""
    graph, seen = compiler_graph(root)
    folders = sorted(p.name for p in (root / "compiler").iterdir() if (p / "__init__.py").is_file())
    wrong = [f"compiler/{f}/ has no place in the order" for f in folders if f not in order]
    for loop in nx.strongly_connected_components(graph):
        if len(loop) > 1:
            inside = [str(i) for (a, b), imps in seen.items() if a in loop and b in loop for i in imps]
            wrong.append(f"a loop between {', '.join(sorted(loop))}: " + "; ".join(sorted(inside)))
    for i, low in enumerate(order):
        for high in order[i + 1:]:
            start, end = f"compiler/{low}", f"compiler/{high}"
            if start in graph and end in graph and nx.has_path(graph, start, end):
                chain = nx.shortest_path(graph, start, end)
                wrong.append(f"{low} reaches {high}: " + "; ".join(str(seen[a, b][0]) for a, b in zip(chain, chain[1:])))
    return wrong


def is_click_command(node: ast.FunctionDef) -> bool:
    """Whether ``node`` is decorated as a click command (its parameters are the command's options)."""
    names = {"command", "group", "option", "argument", "pass_obj", "pass_context"}
    for decorator in node.decorator_list:
        call = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(call, ast.Attribute) and call.attr in names:
            return True
    return False


def long_signatures(root: Path, tops: tuple[str, ...] = ("compiler", "adapters"),
                    limit: int = MAX_PARAMETERS) -> dict[str, int]:
    """Every function (methods and nested ones too) taking more than ``limit`` parameters, ``self`` or ``cls``
    and ``*args``/``**kwargs`` aside, click commands excepted: ``file:function`` -> its count."""
    out = {}
    for path in sorted(p for top in tops for p in (root / top).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not is_click_command(node):
                a = node.args
                named = a.posonlyargs + a.args
                count = len(named) + len(a.kwonlyargs) - (1 if named and named[0].arg in ("self", "cls") else 0)
                if count > limit:
                    out[f"{path.relative_to(root)}:{node.name}"] = count
    return out


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_imports_are_read_relative_absolute_and_inside_functions(tmp_path):
    root = _tree(tmp_path, {
        "compiler/__init__.py": "", "compiler/model.py": "", "compiler/checks/__init__.py": "",
        "compiler/checks/plan.py": "from ..model import X\n",
        "adapters/__init__.py": "", "adapters/cli.py": "", "adapters/run/__init__.py": "",
        "adapters/run/runner.py": "import os\nfrom ...compiler import model\n"
                                  "def f():\n    from .. import cli\n    import ledgerflow.adapters.store.x\n",
        "adapters/store/__init__.py": "", "adapters/store/x.py": "from ledgerflow.adapters.run import runner\n"})
    assert sorted(map(str, imports(root))) == [
        "adapters/run/runner.py:2 -> compiler.model", "adapters/run/runner.py:4 -> adapters.cli",
        "adapters/run/runner.py:5 -> adapters.store.x", "adapters/store/x.py:1 -> adapters.run.runner",
        "compiler/checks/plan.py:1 -> compiler.model"]
    assert adapters_order_breaches(root, [("store",), ("run",), (TOP,)]) == [
        "adapters/run/runner.py:4 -> adapters.cli (run may not import (top))",
        "adapters/store/x.py:1 -> adapters.run.runner (store may not import run)"]
    assert adapters_order_breaches(root, [("run",), (TOP,)]) == [
        "adapters/store/ has no level in the order", "adapters/run/runner.py:4 -> adapters.cli (run may not import (top))"]


def test_a_loop_through_a_top_level_module_of_compiler_is_named(tmp_path):
    root = _tree(tmp_path, {
        "compiler/__init__.py": "", "compiler/plan.py": "from .checks.plan import P\n",
        "compiler/checks/__init__.py": "", "compiler/checks/plan.py": "", "compiler/checks/bridge.py":
        "def f():\n    from ..plan import Plan\n", "compiler/bind/__init__.py": "from ..plan import Plan\n"})
    assert compiler_order_breaches(root, ["checks", "bind"]) == [
        "a loop between compiler/checks, compiler/plan.py: compiler/checks/bridge.py:2 -> compiler.plan; "
        "compiler/plan.py:1 -> compiler.checks.plan"]
    assert compiler_order_breaches(root, ["bind", "checks"]) == [
        "a loop between compiler/checks, compiler/plan.py: compiler/checks/bridge.py:2 -> compiler.plan; "
        "compiler/plan.py:1 -> compiler.checks.plan",
        "bind reaches checks: compiler/bind/__init__.py:1 -> compiler.plan; compiler/plan.py:1 -> compiler.checks.plan"]


def test_long_signatures_count_parameters_but_not_self_nor_click_commands(tmp_path):
    nine = ", ".join(f"a{i}" for i in range(9))
    root = _tree(tmp_path, {"compiler/x.py": f"def long({nine}):\n    pass\ndef short(a, *args, b, **kw):\n    pass\n"
                                             f"class C:\n    def method(self, {', '.join(nine.split(', ')[:8])}):\n"
                                             "        pass\n",
                            "adapters/cli.py": f"@main.command()\n@click.option('--x')\ndef cmd({nine}):\n    pass\n"})
    assert long_signatures(root) == {"compiler/x.py:long": 9}


def test_adapters_packages_import_downwards_only():
    assert adapters_order_breaches(ROOT, ADAPTERS_ORDER) == []


def test_compiler_folders_import_downwards_with_no_loop():
    assert compiler_order_breaches(ROOT, COMPILER_ORDER) == []


def test_no_function_takes_more_than_8_parameters():
    """Group what travels together into a typed value instead (click commands aside: their options)."""
    assert long_signatures(ROOT) == {}

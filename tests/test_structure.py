"""The shape of the code: a package's modules import each other without a circle, and no file grows past
400 lines (issue 28). Each check is a function of the package folder, so every package can use it."""
from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 400


def module_name(folder: Path, path: Path) -> str:
    """The dotted name of ``path`` inside the package ``folder`` (``bind`` for ``bind/__init__.py``)."""
    parts = list(path.relative_to(folder).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([folder.name] + parts)


def imported_modules(folder: Path, path: Path) -> set[str]:
    """Every module of the package ``folder`` that ``path`` imports, at module level or inside a function
    (``from .x import y`` counts ``x``, and ``x.y`` too when ``y`` is itself a module of the package)."""
    name = module_name(folder, path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    known = {module_name(folder, p) for p in folder.rglob("*.py")}
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
                target = target.removeprefix("ledgerflow.")
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in known else target)
        elif isinstance(node, ast.Import):
            found |= {a.name.removeprefix("ledgerflow.") for a in node.names}
    return {m for m in found if m in known and m != name}


def import_graph(folder: Path) -> nx.DiGraph:
    """module -> module it imports, for every module under the package ``folder``."""
    g = nx.DiGraph()
    for path in sorted(folder.rglob("*.py")):
        name = module_name(folder, path)
        g.add_node(name)
        for target in imported_modules(folder, path):
            g.add_edge(name, target)
    return g


def import_cycles(folder: Path) -> list[list[str]]:
    """Every circle of imports among the modules of ``folder`` (empty when the imports form a DAG)."""
    return sorted(sorted(c) for c in nx.simple_cycles(import_graph(folder)))


def long_files(folder: Path, limit: int = MAX_LINES) -> dict[str, int]:
    """Every ``.py`` file under ``folder`` longer than ``limit`` lines, with its length."""
    out = {}
    for path in sorted(folder.rglob("*.py")):
        lines = len(path.read_text().splitlines())
        if lines > limit:
            out[str(path.relative_to(folder.parent))] = lines
    return out


def test_import_graph_sees_function_level_and_package_imports(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .b import thing\n")
    (pkg / "b.py").write_text("def f():\n    from .sub import c\n    return c\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "c.py").write_text("def g():\n    from ..a import x\n    import pkg.b\n")
    assert set(import_graph(pkg).edges) == {("pkg.a", "pkg.b"), ("pkg.b", "pkg.sub.c"), ("pkg.sub.c", "pkg.a"),
                                            ("pkg.sub.c", "pkg.b")}
    assert import_cycles(pkg) == [["pkg.a", "pkg.b", "pkg.sub.c"], ["pkg.b", "pkg.sub.c"]]
    (pkg / "big.py").write_text("x = 1\n" * (MAX_LINES + 1))
    assert list(long_files(pkg).values()) == [MAX_LINES + 1]


def test_compiler_has_no_import_cycles():
    assert import_cycles(ROOT / "compiler") == []


def test_compiler_files_stay_under_400_lines():
    assert long_files(ROOT / "compiler") == {}

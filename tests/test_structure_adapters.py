"""The shape of adapters/ (issue 28): no circle of imports, no file over 400 lines, no class over 250
(adapters/ and compiler/), and the layers: the run store at the bottom imports only compiler/, the
standard library and itself; the commit journal never imports the run. The import graph is that of
tests/test_structure.py (module-level and function-level imports alike)."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

from test_structure import ROOT, import_cycles, import_graph, long_files, module_name

MAX_CLASS_LINES = 250


def long_classes(folder: Path, limit: int = MAX_CLASS_LINES) -> dict[str, int]:
    """Every class under the package ``folder`` longer than ``limit`` lines (decorators included), with its length."""
    out = {}
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                if node.end_lineno - first + 1 > limit:
                    out[f"{path.relative_to(folder.parent)}:{node.name}"] = node.end_lineno - first + 1
    return out


def imported_names(folder: Path, path: Path) -> set[str]:
    """Every module ``path`` imports, relative imports resolved inside the package ``folder``'s parent
    (``ledgerflow.`` dropped): ``compiler.errors``, ``adapters.store.schema``, ``sqlite3``..."""
    name = module_name(folder, path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                found.add(".".join(base + ([node.module] if node.module else [])))
            else:
                found.add((node.module or "").removeprefix("ledgerflow."))
        elif isinstance(node, ast.Import):
            found |= {a.name.removeprefix("ledgerflow.") for a in node.names}
    return found


def test_long_classes_and_imported_names_see_what_they_should(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "big.py").write_text("@decorated\nclass Big:\n" + "    x = 1\n" * MAX_CLASS_LINES
                                + "class Small:\n    y = 2\n")
    assert long_classes(pkg) == {"pkg/big.py:Big": MAX_CLASS_LINES + 2}
    (pkg / "sub" / "m.py").write_text("import os\nfrom ..big import Big\nfrom ...compiler.errors import E\n"
                                      "def f():\n    import ledgerflow.adapters.run.runner\n")
    assert imported_names(pkg, pkg / "sub" / "m.py") == {"os", "pkg.big", "compiler.errors", "adapters.run.runner"}


def test_adapters_have_no_import_cycles():
    assert import_cycles(ROOT / "adapters") == []


def test_adapters_files_stay_under_400_lines():
    assert long_files(ROOT / "adapters") == {}


def test_no_class_over_250_lines():
    assert {**long_classes(ROOT / "adapters"), **long_classes(ROOT / "compiler")} == {}


def test_store_imports_nothing_above_it():
    """adapters/store/ knows nothing of the code that uses it: it imports compiler/, the standard library, its own
    modules and one serializer (orjson, json_text.py) only (recovery, which needs writers and leases, is called by
    whoever opens it)."""
    folder = ROOT / "adapters"
    wrong = {}
    for path in sorted((folder / "store").rglob("*.py")):
        bad = sorted(m for m in imported_names(folder, path)
                     if not (m.startswith(("adapters.store", "compiler")) or m.split(".")[0] in sys.stdlib_module_names
                             or m in ("__future__", "orjson")))
        if bad:
            wrong[module_name(folder, path)] = bad
    assert wrong == {}


def test_commit_never_imports_run():
    """The commit journal (adapters/commit/) is used by the run; it never imports adapters/run/ back."""
    graph = import_graph(ROOT / "adapters")
    assert sorted((a, b) for a, b in graph.edges if a.startswith("adapters.commit")
                  and b.startswith("adapters.run")) == []

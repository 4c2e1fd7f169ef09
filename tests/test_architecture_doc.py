"""docs/architecture.md is true of the tree (issue 44 point 6): every package of ``compiler/`` and ``adapters/`` has
its section with its job, every module is named under its package, and every module named there exists. A failure
lists exactly the module paths missing from the page and those it names that do not exist."""
from __future__ import annotations

import ast
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "architecture.md")
TOPS = ("compiler", "adapters")
PACKAGE_HEADING = re.compile(r"^### `((?:compiler|adapters)(?:/[\w]+)*)/`\s*$")
MODULE_LINE = re.compile(r"^- `([\w]+\.py)` — \S")


def _has_code(path: str) -> bool:
    """Whether a module holds more than its docstring (an empty ``__init__.py`` is not a module to describe)."""
    with open(path, encoding="utf-8") as fh:
        body = ast.parse(fh.read()).body
    return any(not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)) for node in body)


def tree() -> tuple[set[str], set[str]]:
    """The packages (folders with an ``__init__.py``) and modules of ``compiler/`` and ``adapters/``, as paths
    relative to the repository."""
    packages, modules = set(), set()
    for top in TOPS:
        for folder, dirs, files in os.walk(os.path.join(ROOT, top)):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            if "__init__.py" not in files:
                continue
            package = os.path.relpath(folder, ROOT).replace(os.sep, "/")
            packages.add(package)
            for name in files:
                if name.endswith(".py") and (name != "__init__.py" or _has_code(os.path.join(folder, name))):
                    modules.add(f"{package}/{name}")
    return packages, modules


def documented() -> tuple[dict[str, str], set[str]]:
    """The page's package sections (package -> the paragraph of its job) and the modules named under them."""
    with open(DOC, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    jobs: dict[str, str] = {}
    modules: set[str] = set()
    package = None
    for i, line in enumerate(lines):
        heading = PACKAGE_HEADING.match(line)
        if heading:
            package = heading.group(1)
            following = [text for text in lines[i + 1:i + 4] if text.strip()]
            jobs[package] = following[0] if following and not following[0].startswith(("- ", "#")) else ""
            continue
        if line.startswith("#"):
            package = None
            continue
        module = MODULE_LINE.match(line)
        if module and package:
            modules.add(f"{package}/{module.group(1)}")
    return jobs, modules


def test_every_module_is_named_under_its_package():
    _, modules = tree()
    _, named = documented()
    missing = sorted(modules - named)
    assert not missing, "docs/architecture.md does not name these modules under their package:\n" + "\n".join(missing)


def test_every_module_named_exists():
    _, modules = tree()
    _, named = documented()
    extra = sorted(named - modules)
    assert not extra, "docs/architecture.md names modules that do not exist:\n" + "\n".join(extra)


def test_every_package_has_its_section_with_its_job():
    packages, _ = tree()
    jobs, _ = documented()
    missing = sorted(packages - set(jobs))
    assert not missing, "docs/architecture.md has no section for these packages:\n" + "\n".join(missing)
    extra = sorted(set(jobs) - packages)
    assert not extra, "docs/architecture.md has sections for packages that do not exist:\n" + "\n".join(extra)
    jobless = sorted(p for p in packages if not jobs[p])
    assert not jobless, "these packages' sections do not say their job:\n" + "\n".join(jobless)


def test_the_page_is_parsed_as_it_is_written():
    """The parser reads a module line only under a package heading, in the page's own form."""
    assert MODULE_LINE.match("- `runner.py` — a compiled project executed on Spark")
    assert not MODULE_LINE.match("- `runner.py`")
    assert PACKAGE_HEADING.match("### `adapters/run/`").group(1) == "adapters/run"
    assert PACKAGE_HEADING.match("### `compiler/`").group(1) == "compiler"

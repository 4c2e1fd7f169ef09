"""The non-editable install (what CI and users get) ships every package of the source tree.

``pyproject.toml`` maps ``ledgerflow.<top>`` to the repository's top-level folders and lists the
packages by hand; a new subpackage missing from that list installs nothing (an editable install
hides it). This test compares the list with the folders holding an ``__init__.py``.
"""
from __future__ import annotations

import os
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_every_source_package_is_listed_in_pyproject():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as fh:
        setuptools = tomllib.load(fh)["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    found = set()
    for package, folder in setuptools["package-dir"].items():
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, folder)):
            dirnames[:] = [d for d in dirnames if not d.startswith((".", "__"))]
            if "__init__.py" in filenames:
                rel = os.path.relpath(dirpath, os.path.join(ROOT, folder))
                found.add(package if rel == "." else package + "." + rel.replace(os.sep, "."))
    assert found - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    assert listed - found == set(), "listed packages without an __init__.py"

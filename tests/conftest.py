"""Shared fixtures: one local SparkSession per test session, example workspaces in temp folders."""
from __future__ import annotations

import fnmatch
import os
import shutil
from pathlib import Path

import sys

import pytest

REPO = Path(__file__).resolve().parent.parent
# The CLI processes the tests start write and map no JVM class archive (adapters/spark/class_archive.py):
# each test sees the same cold JVM, and nothing is written into the user's cache folder.
# tests/test_class_archive.py turns it on with a folder of its own.
os.environ["LEDGERFLOW_JVM_ARCHIVE"] = "off"
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # for bench.projectgen


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/golden/*.sql from the current compiler output (review the diff)")
def pytest_collection_modifyitems(config, items):
    """Mark every test that uses the SparkSession (directly or through a fixture) ``spark``, so that
    ``python -m pytest -m "not spark and not cluster"`` runs the fast tests alone."""
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)


PROJECTS = REPO / "projects"


def copy_workspace(name: str, dst: Path) -> Path:
    """Copy projects/<name> to ``dst`` without what running its projects writes (the paths its
    .gitignore lists: outputs, target/, .ledgerflow/), so a test starts from the sample as committed
    even after the README's quickstart ran in this clone."""
    src = PROJECTS / name
    gitignore = src / ".gitignore"
    patterns = [line.strip().rstrip("/") for line in gitignore.read_text().splitlines()
                if line.strip() and not line.startswith("#")] if gitignore.exists() else []

    def ignore(folder: str, names: list[str]) -> set[str]:
        rel = Path(folder).relative_to(src)
        return {n for n in names if any(fnmatch.fnmatch((rel / n).as_posix(), p) for p in patterns)}

    shutil.copytree(src, dst, ignore=ignore)
    return dst


@pytest.fixture(scope="session")
def spark():
    """The one local SparkSession of the test run (startup takes seconds; never create another)."""
    from ledgerflow.adapters.spark.session import local_session
    session = local_session()
    yield session


@pytest.fixture
def finance(tmp_path) -> Path:
    """A fresh copy of projects/finance (tests may write outputs and run records into it)."""
    return copy_workspace("finance", tmp_path / "finance")


@pytest.fixture
def orders(tmp_path) -> Path:
    """A fresh copy of projects/orders."""
    return copy_workspace("orders", tmp_path / "orders")

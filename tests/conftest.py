"""Shared fixtures: one local SparkSession per test session, example workspaces in temp folders."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import sys

import pytest

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # for bench.projectgen


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/golden/*.sql from the current compiler output (review the diff)")
PROJECTS = REPO / "projects"


@pytest.fixture(scope="session")
def spark():
    """The one local SparkSession of the test run (startup takes seconds; never create another)."""
    from ledgerflow.adapters.spark import local_session
    session = local_session()
    yield session


@pytest.fixture
def finance(tmp_path) -> Path:
    """A fresh copy of projects/finance (tests may write outputs and run records into it)."""
    dst = tmp_path / "finance"
    shutil.copytree(PROJECTS / "finance", dst, ignore=shutil.ignore_patterns("target", ".ledgerflow"))
    return dst


@pytest.fixture
def orders(tmp_path) -> Path:
    """A fresh copy of projects/orders."""
    dst = tmp_path / "orders"
    shutil.copytree(PROJECTS / "orders", dst, ignore=shutil.ignore_patterns("target", ".ledgerflow"))
    return dst

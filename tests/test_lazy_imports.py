"""The commands that compute nothing never load the SQL parser (sqlglot), the templates (jinja2) or Spark (issue
46 point 3: a promotion's start-up): loading a workspace reads a kind's YAML keys and loader only, and a kind's
binder, lowering and SQL are imported when first called (compiler/kinds/entry.py, ``Deferred``)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PROBE = """
import runpy, sys
sys.argv = ["ledgerflow", *sys.argv[1:]]
try:
    runpy.run_module("ledgerflow.adapters.cli", run_name="__main__")
except SystemExit as exit:
    code = exit.code
else:
    code = 0
print("LOADED", sorted(m for m in ("sqlglot", "jinja2", "pyspark", "py4j") if m in sys.modules), code, file=sys.stderr)
"""


def _loaded(root: Path, *args: str) -> tuple[list[str], str]:
    done = subprocess.run([sys.executable, "-c", PROBE, "--workspace", str(root), *args], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}, timeout=120)
    line = next(ln for ln in done.stderr.splitlines() if ln.startswith("LOADED"))
    return eval(line.split(" ", 1)[1].rsplit(" ", 1)[0]), done.stdout + done.stderr  # noqa: S307 - our own print


@pytest.fixture
def promoted(tmp_path) -> Path:
    """A workspace of three projects x two months of path outputs, each published in prod and in dev."""
    sys.path.insert(0, str(REPO))
    try:
        from bench.promotion_scale import build, months
    finally:
        sys.path.remove(str(REPO))
    build(tmp_path, 3, months(2))
    return tmp_path


def test_promote_envs_and_dag_load_neither_the_sql_parser_nor_spark(promoted):
    from bench.promotion_scale import months
    period = f"{months(2)[0]}..{months(2)[-1]}"
    for args in (("promote", "p0001", "--from", "dev", "--period", months(2)[0]),  # a project named: found, not bound
                 ("promote", "--all", "--from", "dev", "--period", period), ("envs", "list"), ("dag",)):
        loaded, out = _loaded(promoted, *args)
        assert loaded == [], (args, loaded, out)
    assert "p0000" in out  # the promotion happened: dag lists the projects


def test_a_kinds_functions_are_imported_when_first_called():
    from ledgerflow.compiler.kinds.entry import Deferred
    from ledgerflow.compiler.kinds.registry import OPERATIONS
    from ledgerflow.compiler.model import OperationKind
    binder = OPERATIONS[OperationKind.UPDATE].binder
    assert isinstance(binder, Deferred)
    from ledgerflow.compiler.bind.update import bind_update
    assert binder.module == ".bind.update" and binder.name == "bind_update"
    assert binder._function is None or binder._function is bind_update
    assert Deferred(".render", "pretty")(__import__("sqlglot").exp.column("a", quoted=True)) == "`a`"

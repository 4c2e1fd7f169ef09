"""Shared fixtures: one local SparkSession per test session, example workspaces in temp folders."""
from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import sys

import pytest

REPO = Path(__file__).resolve().parent.parent
# This process (and a CLI command it runs in-process) writes and maps no JVM class archive
# (adapters/spark/class_archive.py). The `ledgerflow` processes the tests start with cli_env() map the
# session's archive, as a user's second command does: see pytest_sessionstart. tests/test_class_archive.py
# tests the archive itself with folders of its own.
os.environ["LEDGERFLOW_JVM_ARCHIVE"] = "off"
# Every compile of the tests (and of the processes they start) also parses each template's fragment with its
# snippets' text, and fails when that prints otherwise than the snippets set as printed text (compiler/render.py
# Grafts): the SQL of every workspace the tests compile, hostile names included, is shown unchanged by it.
os.environ["LEDGERFLOW_CHECK_GRAFTS"] = "1"
# The tests' own cache folder (never the user's): private, as class_archive requires of an archive's folder.
TEST_CACHE = os.path.join(tempfile.gettempdir(), f"ledgerflow-tests-{os.getuid()}")
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # for bench.projectgen


def c1_env(**extra: str) -> dict:
    """The environment of a Spark process a test starts: its JVM compiles with C1 only (``SPARK_SUBMIT_OPTS``,
    which spark-submit adds to the JVM's options), as the driver of ``ledgerflow test`` does and for the same
    reason (adapters/spark/session.py TEST_JAVA_OPTIONS: a few rows, Spark's code run only a few times);
    ``extra`` overrides."""
    from ledgerflow.adapters.spark.session import TEST_JAVA_OPTIONS
    own = os.environ.get("SPARK_SUBMIT_OPTS", "")
    return {**os.environ, "SPARK_SUBMIT_OPTS": f"{own} {TEST_JAVA_OPTIONS}".strip(), **extra}


def cli_env(**extra: str) -> dict:
    """The environment of a ``ledgerflow`` process a test starts (:func:`c1_env`): its driver JVM also maps
    the class archive of :data:`TEST_CACHE` (written once by the session's first process, see
    pytest_sessionstart), so it does not load and verify Spark's classes cold; ``extra`` overrides."""
    return c1_env(LEDGERFLOW_JVM_ARCHIVE="on", LEDGERFLOW_CACHE_DIR=TEST_CACHE, **extra)


_warmup: dict = {}


def pytest_sessionstart(session):
    """In the controlling process, before any test (and any xdist worker) starts: when the tests' cache has
    no class archive of kind ``run`` for this installation yet, start one ``ledgerflow run`` of the sample
    that writes it, and wait until it holds the archive's lock. Meanwhile test processes run without an
    archive (the lock is held: they neither write one nor print the archive's notice); once it is
    published they map it. Not for ``-m "not spark"`` (no test starts Spark)."""
    if os.environ.get("PYTEST_XDIST_WORKER") or session.config.option.collectonly \
            or "not spark" in (session.config.option.markexpr or ""):
        return
    from ledgerflow.adapters.spark import class_archive
    os.makedirs(TEST_CACHE, mode=0o700, exist_ok=True)
    folder = os.path.join(TEST_CACHE, "jvm")
    stem = f"run-{class_archive._key()}"
    if os.path.isdir(folder) and class_archive.usable_archive(folder, stem):
        return
    tmp = tempfile.mkdtemp(prefix="ledgerflow-archive-")
    ws = copy_workspace("finance", Path(tmp) / "finance")
    proc = subprocess.Popen([sys.executable, "-m", "ledgerflow.adapters.cli", "--workspace", str(ws), "run",
                             "ts03_fx_conversion", "--period", "2026-01"], env=cli_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _warmup.update(proc=proc, tmp=tmp)
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        if os.path.exists(os.path.join(folder, stem + ".lock")) or class_archive.usable_archive(folder, stem):
            break
        time.sleep(0.1)


def pytest_sessionfinish(session):
    """Wait for the process that writes the class archive (long done by now) and remove its workspace."""
    if "proc" in _warmup:
        try:
            _warmup["proc"].wait(timeout=300)
        except subprocess.TimeoutExpired:
            _warmup["proc"].kill()
        shutil.rmtree(_warmup.pop("tmp"), ignore_errors=True)
        _warmup.clear()


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/golden/*.sql from the current compiler output (review the diff)")
# The test files that keep an xdist worker longest, longest first (worker seconds in `pytest -n 2`, 2026-12-06:
# 147, 94, 71, 63, 60, 43 and 41 s).
# pyproject's addopts hand whole files to the two workers in collection order (--dist loadfile
# --no-loadscope-reorder); xdist's own order (most tests first) left the files of a few long tests, such as
# test_cluster.py's two runs, to the end, where one worker ran them alone while the other had finished.
LONGEST_FIRST = ("test_fused.py", "test_cluster.py", "test_bench_parity.py", "test_class_archive.py",
                 "test_hardening_commit.py", "test_restate.py", "test_hardening_messages.py")


def pytest_collection_modifyitems(config, items):
    """Mark every test that uses the SparkSession (directly or through a fixture) ``spark``, so that
    ``python -m pytest -m "not spark and not cluster"`` runs the fast tests alone; then order the files
    (:func:`longest_first`)."""
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)
    items[:] = longest_first(items)


def longest_first(items: list) -> list:
    """``items`` file by file (each file's tests in their order): the files of :data:`LONGEST_FIRST`, then the
    other files with tests that start Spark or a browser (most such tests first), then the files without (most
    tests first): many short tests last, so that the worker done first takes them while the other ends its file."""
    def file_of(item) -> str:
        return item.nodeid.split("::")[0]

    count: dict = {}
    heavy: dict = {}
    for item in items:
        name = file_of(item)
        count[name] = count.get(name, 0) + 1
        slow = any(item.get_closest_marker(m) for m in ("spark", "cluster", "browser"))
        heavy[name] = heavy.get(name, 0) + (1 if slow else 0)

    def rank(name: str) -> tuple:
        base = name.rsplit("/", 1)[-1]
        if base in LONGEST_FIRST:
            return (0, LONGEST_FIRST.index(base), 0, name)
        return (1 if heavy[name] else 2, 0, -(heavy[name] or count[name]), name)

    position = {name: i for i, name in enumerate(sorted(count, key=rank))}
    return sorted(items, key=lambda item: position[file_of(item)])


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
    # C2 as well (unlike the short processes of c1_env): over the session's minutes, C1-only code made the
    # heavy tests (500-operation plans, the fused close chain) twice as slow
    session = local_session(conf={**INTERPRETED, "spark.driver.extraJavaOptions": SESSION_JAVA_OPTIONS})
    yield session


# The test session's Spark interprets expressions and operators rather than compiling each new plan shape to
# Java, as `ledgerflow test` does (adapters/scenarios/suite.py, TEST_CONF): the tests' few rows take less time to
# interpret than Janino takes to compile, and the interpreted paths compute the same values and raise the same
# errors (Spark's own tests run both). The whole suite went from 761 s to 679 s (2026-12-06, M4, -n 2). Tests of
# what only compiled code meets (plans of hundreds of operations) ask for it: the `compiled_code` fixture.
INTERPRETED = {"spark.sql.codegen.wholeStage": "false", "spark.sql.codegen.factoryMode": "NO_CODEGEN"}
# The session's JVM: ledgerflow's stack size; the JIT compiles a method after 3 times the calls it would by default
# and one thread collects garbage. A test session runs thousands of small plans, each through code paths of its
# own: the JIT compiler threads took 40% of the JVM's CPU time (72 of 183 s in tests/test_fused.py,
# test_restate.py and test_outputs.py), and 2 cores serve two test workers. With these options the JVM took 158 s
# of CPU for the same tests in the same time (2026-12-06, M4); results do not depend on them.
SESSION_JAVA_OPTIONS = "-Xss16m -XX:CompileThresholdScaling=3 -XX:+UseSerialGC"
COMPILED = {"spark.sql.codegen.wholeStage": "true", "spark.sql.codegen.factoryMode": "FALLBACK"}


@pytest.fixture
def compiled_code(spark):
    """The session compiles plans to Java, as every ledgerflow run's session does, for this test only."""
    for key, value in COMPILED.items():
        spark.conf.set(key, value)
    yield spark
    for key, value in INTERPRETED.items():
        spark.conf.set(key, value)


@pytest.fixture
def finance(tmp_path) -> Path:
    """A fresh copy of projects/finance (tests may write outputs and run records into it)."""
    return copy_workspace("finance", tmp_path / "finance")


@pytest.fixture
def orders(tmp_path) -> Path:
    """A fresh copy of projects/orders."""
    return copy_workspace("orders", tmp_path / "orders")

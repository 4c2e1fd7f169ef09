"""CI minutes: the order in which `pytest -n 2` hands the test files to its two workers (the longest files
first, the files of many short tests last: tests/conftest.py longest_first, pyproject's addopts), so that the
two workers end together instead of one running a long file alone at the end; and .ci/run installs once."""
from __future__ import annotations

import shlex
import tomllib
from types import SimpleNamespace

from conftest import LONGEST_FIRST, REPO, longest_first


def _item(nodeid: str, *markers: str) -> SimpleNamespace:
    return SimpleNamespace(nodeid=nodeid, get_closest_marker=lambda name: name if name in markers else None)


def test_xdist_hands_out_whole_files_in_collection_order():
    with open(REPO / "pyproject.toml", "rb") as fh:
        addopts = shlex.split(tomllib.load(fh)["tool"]["pytest"]["ini_options"]["addopts"])
    assert addopts[addopts.index("--dist") + 1] == "loadfile"
    assert "--no-loadscope-reorder" in addopts  # xdist's own order puts files of few (long) tests last


def test_the_longest_files_exist():
    assert LONGEST_FIRST and all((REPO / "tests" / name).is_file() for name in LONGEST_FIRST)


def test_listed_files_first_then_those_starting_spark_then_the_rest_each_file_in_its_order():
    first, second = LONGEST_FIRST[:2]
    items = [_item("tests/test_a.py::one"), _item("tests/test_a.py::two"), _item("tests/test_a.py::three"),
             _item("tests/test_b.py::one", "spark"), _item(f"tests/{second}::one"),
             _item("tests/test_c.py::one", "spark"), _item("tests/test_c.py::two", "cluster"),
             _item("tests/test_d.py::one"), _item(f"tests/{first}::one", "spark"), _item(f"tests/{first}::two"),
             _item("tests/test_e.py::one", "browser")]
    assert [i.nodeid for i in longest_first(items)] == [
        f"tests/{first}::one", f"tests/{first}::two", f"tests/{second}::one",
        "tests/test_c.py::one", "tests/test_c.py::two", "tests/test_b.py::one", "tests/test_e.py::one",
        "tests/test_a.py::one", "tests/test_a.py::two", "tests/test_a.py::three", "tests/test_d.py::one"]


def test_ci_installs_the_package_once_then_runs_the_readme_test_command():
    """pip builds and reinstalls a local project each time it is named: .ci/run names it once, with the extras
    the README's test command installs, and then runs that command's pytest."""
    script = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()
              if line.strip() and not line.strip().startswith("#")]
    installs = [line for line in script if line.startswith("pip install")]
    assert len(installs) == 1 and installs[0].split("#")[0].split()[-1] == "'.[test]'", installs
    assert "python -m pytest -n 2" in script

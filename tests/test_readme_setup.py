"""The README's quickstart works on a fresh machine: it makes and activates a virtual environment before
`pip install .` (a system Python refuses to install outside one), and the README says how long the whole suite
takes on two cores and gives the command of the fast subset, whose markers and deselected file exist."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()


def _quickstart() -> list[str]:
    section = README[README.index("## Quickstart"):README.index("## A tour of the commands")]
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", section, re.S)]


def test_the_quickstart_is_two_commands_in_a_virtual_environment():
    install, tests = _quickstart()
    assert install.startswith("python3 -m venv .venv && . .venv/bin/activate && pip install . && ledgerflow ")
    assert "\n" not in install and "\n" not in tests
    assert tests == "pip install '.[test]' && python -m pytest -n 2"


def test_the_readme_says_how_long_the_suite_takes_and_gives_the_fast_subset():
    text = " ".join(README.split())
    assert "about 11 minutes on a quiet two-core machine" in text and "nearly 30 on a loaded one" in text
    assert "(`.ci/run`, which also installs from scratch and starts the cluster, about 12)" in text
    fast = '`python -m pytest -m "not spark and not cluster" -n 2 --deselect tests/test_docs_site_browser.py`'
    assert fast in text
    with open(REPO / "pyproject.toml", "rb") as fh:
        markers = tomllib.load(fh)["tool"]["pytest"]["ini_options"]["markers"]
    assert {m.split(":")[0] for m in markers} >= {"spark", "cluster"}
    assert (REPO / "tests" / "test_docs_site_browser.py").is_file()

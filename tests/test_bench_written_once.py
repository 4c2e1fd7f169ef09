"""bench/ says each step once (issue 44 point 8): the hand-written scripts share their steps through
``bench/handwritten_common.py`` and stay plain PySpark (nothing of ledgerflow imported), and the benchmarks of
whole cold processes share their pairing helpers through ``bench/pairing.py``. Each step below is written in
exactly one module of bench/."""
from __future__ import annotations

import ast
import os
import re

import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench")
HANDWRITTEN = ("handwritten_common.py", "handwritten_source.py", "handwritten_range.py", "handwritten_checks.py",
               "handwritten_diff.py")
# a step -> the one module that writes it
WRITTEN_ONCE = {
    r'F\.when\(posted, \(F\.col\("amount_local"\) \* F\.col\("rate"\)\)': "handwritten_common.py",  # to USD
    r'F\.lit\(Decimal\("0\.98"\)\)': "handwritten_common.py",  # the enterprise discount
    r'none\["string"\]\.alias\("journal_id"\)': "handwritten_common.py",  # totals and budgets as written
    r'"--started-at", default=None': "handwritten_common.py",  # the scripts' options
    r"def \w*started_at\(ws": "pairing.py",  # the run start read from a run record
    r'\.config\("spark\.sql\.session\.timeZone", "UTC"\)\.config\("spark\.driver\.memory"': "pairing.py",
    r'"model name"': "pairing.py",  # the machine line
    r'"\\n# raw\\n"': "pairing.py",  # the results file with its table
}


def _sources() -> dict[str, str]:
    out = {}
    for name in sorted(os.listdir(BENCH)):
        if name.endswith(".py"):
            with open(os.path.join(BENCH, name), encoding="utf-8") as fh:
                out[name] = fh.read()
    return out


@pytest.mark.parametrize("step", sorted(WRITTEN_ONCE))
def test_each_step_is_written_in_one_module(step):
    where = sorted(name for name, text in _sources().items() if re.search(step, text))
    assert where == [WRITTEN_ONCE[step]], f"{step!r} is written in {where}, not once in {WRITTEN_ONCE[step]}"


@pytest.mark.parametrize("script", HANDWRITTEN)
def test_the_hand_written_scripts_import_nothing_of_ledgerflow(script):
    with open(os.path.join(BENCH, script), encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    imported += [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert not [name for name in imported if name.split(".")[0] in ("ledgerflow", "bench")], imported

"""Text ledgerflow writes from names a workspace holds, and one-paragraph failures of file-system and
git problems: collision-free file names for projects, escaping in the markdown/HTML/DOT/Mermaid/JUnit
writers, unique graph node ids, `diff` of revisions holding symlinks or many files, `--junit-xml` and
`--out` targets that cannot be written, a damaged run store. No Spark: everything here is offline."""
from __future__ import annotations

import json
import os
import random
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from cli_support import cli, describe
from conftest import copy_workspace
from ledgerflow.adapters.folders import segment

ADVERSARIAL = ["", ".", "..", "...", "a b", "a_b", "a_b-c8687a08", "a/b", "a\\b", "../../escape", "A", "a",
               "Close", "close", "CLOSE", "a.", "a..", ".hidden", "-x", "+", "+2b", "+h", "x\n", "x\r\n", "\x00",
               "con", "é", "e\u0301", "İ", "ß", "SS", "ss", "</details>", "-->", '"q"', "a" * 120, "a" * 121,
               "a" * 500, "A" * 500, "\udcff", "a+20b", "a%20b", "a~20b"]


def clone_project(ws: Path, name: str, source: str = "ts01_output_only", n: int = 1) -> Path:
    """A copy of ``projects/<source>.yml`` as a project of its own called ``name``."""
    text = (ws / "projects" / f"{source}.yml").read_text(encoding="utf-8")
    text = re.sub(r"^id: .*$", f"id: 0e000000-0000-4000-8000-{n:012d}", text, count=1, flags=re.M)
    text = re.sub(r"^name: .*$", "name: " + json.dumps(name), text, count=1, flags=re.M)
    path = ws / "projects" / f"clone_{n}.yml"
    path.write_text(text, encoding="utf-8")
    return path


# ------------------------------------------------------------------------------------ file names
def test_segment_is_injective_for_random_and_adversarial_names_even_when_case_is_folded():
    rng = random.Random(20261128)
    alphabet = "aAbBzZ09_.-+ /\\\n\t\x00é%~:*?<>|\"'"
    names = set(ADVERSARIAL)
    while len(names) < 10_000:
        names.add("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))))
    names = sorted(names)
    segments = [segment(n) for n in names]
    assert len(set(segments)) == len(names)
    assert len({s.casefold() for s in segments}) == len(names)  # macOS / Windows default file systems
    for name, s in zip(names, segments):
        assert s and s not in (".", "..") and re.fullmatch(r"[a-z0-9_.+-]+", s), (name, s)
        assert len(s) <= 120 and not s.endswith(".") and not s.startswith("-"), (name, s)
    assert segment("ts03_fx_conversion") == "ts03_fx_conversion"  # plain names map to themselves


def test_two_projects_never_share_a_compiled_file(finance, tmp_path):
    """`a b` used to be written to `a_b-c8687a08/`, the folder of a project with that very name: one
    project's SQL was lost and `compile --all --check` still said "up to date"."""
    clone_project(finance, "a b", n=1)
    clone_project(finance, "a_b-c8687a08", n=2)
    out = tmp_path / "compiled"
    written = cli(finance, "compile", "--all", "--out", out)
    assert written.exit_code == 0, describe(written)
    files = written.stdout.split("\n")[:-1]
    assert len(files) == len(set(files)) == len(list((finance / "projects").glob("*.yml")))
    first = cli(finance, "compile", "a b").stdout
    second = cli(finance, "compile", "a_b-c8687a08").stdout
    assert first != second
    assert (out / segment("a b") / f"{segment('a b')}.sql").read_text() == first
    assert (out / "a_b-c8687a08" / "a_b-c8687a08.sql").read_text() == second
    (out / segment("a b") / f"{segment('a b')}.sql").unlink()
    check = cli(finance, "compile", "--all", "--check", out)
    assert check.exit_code == 4 and "missing:" in check.stderr, describe(check)

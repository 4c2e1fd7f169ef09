"""The error-code registry (compiler/codes.py) against the source and the README."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from ledgerflow.compiler import codes

REPO = Path(__file__).resolve().parents[1]
SOURCE = [p for folder in ("compiler", "adapters", "templates") for p in sorted((REPO / folder).rglob("*"))
          if p.suffix in (".py", ".j2")]
NOT_CODES = {"SHA-256"}  # code-shaped words that are not error codes
# The spec's own rule ids (``VR-001`` of the runtime-join data model) that codes.py cites as sources.
CITED = {c.source.split()[1] for c in codes.CODES if len(c.source.split()) > 1}


def _found(paths) -> dict[str, set[str]]:
    """code -> the files (relative) whose text names it."""
    out: dict[str, set[str]] = {}
    for path in paths:
        for match in codes.PATTERN.findall(path.read_text(encoding="utf-8")):
            if match not in NOT_CODES and not (path.name == "codes.py" and match in CITED):
                out.setdefault(match, set()).add(str(path.relative_to(REPO)))
    return out


def test_every_code_in_the_source_is_registered():
    found = _found(SOURCE)
    missing = {c: sorted(files) for c, files in found.items() if c not in codes.BY_CODE}
    assert not missing, f"codes used but not in compiler/codes.py: {missing}"


def test_every_registered_code_is_used():
    outside = _found(p for p in SOURCE if p.name != "codes.py")
    chosen = {c for ref in (codes.INPUT_REFERENCE, codes.JOIN_REFERENCE, codes.APPEND_REFERENCE)
              for c in vars(ref).values()} | set(codes.EXPRESSION_DEFAULTS.values())
    unused = [c.code for c in codes.CODES if c.code not in outside and c.code not in chosen]
    assert not unused, f"registered codes no diagnostic uses: {unused}"


def test_the_registry_is_well_formed():
    assert len(codes.BY_CODE) == len(codes.CODES), "a code is registered twice"
    for c in codes.CODES:
        assert codes.PATTERN.fullmatch(c.code), c.code
        assert c.title and c.source, c.code
        spec_file = c.source.split()[0]
        assert spec_file in ("CONTRACT.md", "README.md") or spec_file.startswith("spec/"), c.source
    for chosen in (codes.INPUT_REFERENCE, codes.JOIN_REFERENCE, codes.APPEND_REFERENCE):
        assert set(vars(chosen).values()) <= set(codes.BY_CODE)
    assert set(codes.EXPRESSION_DEFAULTS.values()) <= set(codes.BY_CODE)


def test_the_spec_rule_a_code_cites_exists():
    spec = Path("/work/shared")  # the user's specs, beside the repository on the developers' machine
    if not (spec / "spec").is_dir():
        pytest.skip("the specs are not on this machine")
    for c in codes.CODES:
        parts = c.source.split()
        if not parts[0].startswith("spec/") or len(parts) < 2 or not re.fullmatch(r"[A-Z]+-\d+[a-z]?", parts[1]):
            continue
        path = spec / parts[0]
        assert f"| {parts[1]} |" in path.read_text(encoding="utf-8"), c.source


def test_the_readme_lists_the_registry():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert codes.BEGIN in text and codes.END in text
    assert codes.replace_section(text) == text, (
        "README.md's error codes are stale: run `python -m ledgerflow.compiler.codes --readme README.md`")


def test_readme_command_rewrites_between_the_markers(tmp_path, capsys):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n\n{codes.BEGIN}\nold\n{codes.END}\n\nrest\n", encoding="utf-8")
    assert codes.main(["--readme", str(readme)]) == 0
    assert readme.read_text(encoding="utf-8") == f"intro\n\n{codes.readme_section()}\n\nrest\n"
    assert codes.main(["--readme"]) == 0
    assert capsys.readouterr().out == codes.readme_section() + "\n"
    (tmp_path / "plain.md").write_text("no markers\n", encoding="utf-8")
    assert codes.main(["--readme", str(tmp_path / "plain.md")]) == 1
    assert codes.main([]) == 2

"""The error-code registry (compiler/codes.py) against the source and docs/error-codes.md."""
from __future__ import annotations

from pathlib import Path

from ledgerflow.compiler import codes

REPO = Path(__file__).resolve().parents[1]
SOURCE = [p for folder in ("compiler", "adapters", "templates") for p in sorted((REPO / folder).rglob("*"))
          if p.suffix in (".py", ".j2")]
NOT_CODES = {"SHA-256"}  # code-shaped words that are not error codes


def _found(paths) -> dict[str, set[str]]:
    """code -> the files (relative) whose text names it."""
    out: dict[str, set[str]] = {}
    for path in paths:
        for match in codes.PATTERN.findall(path.read_text(encoding="utf-8")):
            if match not in NOT_CODES:
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
        assert c.source.startswith("docs/") and c.source.endswith(")"), c.source
    for chosen in (codes.INPUT_REFERENCE, codes.JOIN_REFERENCE, codes.APPEND_REFERENCE):
        assert set(vars(chosen).values()) <= set(codes.BY_CODE)
    assert set(codes.EXPRESSION_DEFAULTS.values()) <= set(codes.BY_CODE)


def test_the_section_a_code_cites_exists():
    """Each source names a docs/ file of the repository and one of its headings."""
    for c in codes.CODES:
        path, section = codes.source_parts(c.source)
        doc = REPO / path
        assert doc.is_file(), c.source
        headings = {line.lstrip("#").strip() for line in doc.read_text(encoding="utf-8").splitlines()
                    if line.startswith("#")}
        assert section in headings, f"{c.code}: {path} has no heading {section!r}"


def test_the_docs_list_the_registry():
    text = (REPO / codes.TABLE_FILE).read_text(encoding="utf-8")
    assert codes.BEGIN in text and codes.END in text
    assert codes.replace_section(text) == text, (
        "docs/error-codes.md is stale: run `python -m ledgerflow.compiler.codes --table docs/error-codes.md`")


def test_table_command_rewrites_between_the_markers(tmp_path, capsys):
    table = tmp_path / "error-codes.md"
    table.write_text(f"intro\n\n{codes.BEGIN}\nold\n{codes.END}\n\nrest\n", encoding="utf-8")
    assert codes.main(["--table", str(table)]) == 0
    assert table.read_text(encoding="utf-8") == f"intro\n\n{codes.table_section()}\n\nrest\n"
    assert codes.main(["--table"]) == 0
    assert capsys.readouterr().out == codes.table_section() + "\n"
    (tmp_path / "plain.md").write_text("no markers\n", encoding="utf-8")
    assert codes.main(["--table", str(tmp_path / "plain.md")]) == 1
    assert codes.main(["--readme"]) == 2
    assert codes.main([]) == 2

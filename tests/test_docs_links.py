"""The documentation a clone holds: every link and file citation resolves inside the repository.

The README, docs/, BENCHMARKS.md and its history link to each other and cite files of the repository;
a moved section or a renamed file must not leave a dangling reference. Nothing may cite the authors'
brief (the contract and the spec files), which lives outside the repository.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

from ledgerflow.compiler import codes

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", REPO / "BENCHMARKS.md", REPO / "bench" / "results" / "history.md",
        *sorted((REPO / "docs").glob("*.md"))]

NOT_YET_CHECKED: set[str] = set()  # every file is checked
# Third-party files shipped verbatim (the docs site's JavaScript libraries and their licences, whose legal
# "CONTRACT" is no citation): not ledgerflow's text.
VENDORED = "adapters/docs_site/static/vendor/"

# References to documents outside the repository: the contract (by name or by its section sign), the
# spec folder's files, its REFERENCE.md. (Written in pieces so that this file does not match itself.)
OUTSIDE = re.compile("|".join([r"\bCONTRACT\b", r"(?<![\w./-])spec/[\w.-]+", r"\bREFERENCE\.md\b", "\u00a7"]))
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
# A path of the repository in backquotes: a top-level folder, then a file or folder name.
TOP = ("adapters", "bench", "compiler", "docs", "projects", "scripts", "templates", "tests")
CITED_PATH = re.compile(r"`((?:%s)/[\w./+-]*)(?:::[\w\[\]-]+)?`" % "|".join(TOP))
# A workspace's path in an example, not the repository's: `tests/NAME.yml`, `tests/+43lose.yml`.
PLACEHOLDER = re.compile(r"\b[A-Z]{3,}\b|\+[0-9a-f]{2}")
DOC_PATH = re.compile(r"(?<![\w./-])((?:docs|bench/results)/[\w.-]+\.md)\b")


def _prose(path: Path) -> str:
    """The Markdown text without its fenced code blocks (their brackets are code, not links)."""
    return FENCE.sub("", path.read_text(encoding="utf-8"))


def _anchors(path: Path) -> set[str]:
    return {codes.anchor(line.lstrip("#")) for line in _prose(path).splitlines() if line.startswith("#")}


def _repo_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                         capture_output=True, text=True, check=True).stdout
    return [p for p in out.splitlines() if (REPO / p).is_file()]


def test_every_markdown_link_resolves():
    broken = []
    for doc in DOCS:
        for target in LINK.findall(_prose(doc)):
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            dest = (doc.parent / file_part).resolve() if file_part else doc
            if not dest.exists() or REPO not in (dest, *dest.parents):
                broken.append(f"{doc.relative_to(REPO)}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                broken.append(f"{doc.relative_to(REPO)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_every_cited_repository_path_exists():
    missing = []
    for doc in DOCS:
        for cited in CITED_PATH.findall(doc.read_text(encoding="utf-8")):
            if not (REPO / cited).exists() and not PLACEHOLDER.search(cited):
                missing.append(f"{doc.relative_to(REPO)}: {cited}")
    assert not missing, "\n".join(missing)


def test_every_docs_citation_in_the_repository_exists():
    """``docs/<file>.md`` and ``bench/results/<file>.md`` named anywhere (code, error-code sources, YAML) exist."""
    missing = []
    for name in _repo_files():
        if name in NOT_YET_CHECKED:
            continue
        try:
            text = (REPO / name).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary files
        missing += [f"{name}: {cited}" for cited in DOC_PATH.findall(text) if not (REPO / cited).is_file()]
    missing += [f"compiler/codes.py {c.code}: {c.source}" for c in codes.CODES
                if not (REPO / codes.source_parts(c.source)[0]).is_file()]
    assert not missing, "\n".join(missing)


def test_nothing_cites_documents_outside_the_repository():
    found = []
    for name in _repo_files():
        if name in NOT_YET_CHECKED or name == "tests/test_docs_links.py" or name.startswith(VENDORED):
            continue
        try:
            lines = (REPO / name).read_text(encoding="utf-8").splitlines()
        except (UnicodeDecodeError, OSError):
            continue
        for number, line in enumerate(lines, 1):
            for match in OUTSIDE.finditer(line):
                if "://" not in line[:match.start()].rsplit(" ", 1)[-1]:  # a URL's own path (openlineage.io/spec/)
                    found.append(f"{name}:{number}: {line.strip()[:100]}")
    assert not found, "cited but not in the repository:\n" + "\n".join(found)

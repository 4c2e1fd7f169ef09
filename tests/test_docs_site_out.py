"""``ledgerflow docs`` on bad input (issue 32): a workspace with errors still gets its site, the errors on its
first page, exit 1; an ``--out`` that cannot take the site is one paragraph, exit 1, nothing written; a folder
ledgerflow did not write is never replaced; names holding markup stay text."""
from __future__ import annotations

import os

from docs_site_support import HOSTILE, docs, hostile_copy, page_data, page_of, sample_copy

from ledgerflow.adapters.docs_site import writer
from ledgerflow.adapters.docs_site.target import MARKER


def _paragraph(output: str) -> str:
    """The one error paragraph of the command's output (the error and its diagnostics' lines)."""
    assert output.count("Error:") == 1, output
    return output[output.index("Error:"):]


def test_a_project_with_errors_still_gets_the_site_with_its_errors_first(tmp_path):
    root = sample_copy(tmp_path)
    p = root / "projects" / "ts03_fx_conversion.yml"
    p.write_text(p.read_text().replace("transactions.amount_local * fx.rate", "transactions.amount_locl * fx.rate"))
    result = docs(root)
    assert result.exit_code == 1
    assert "Wrote the docs site to" in result.output and "listed on the site's first page" in result.output
    assert "amount_locl" in _paragraph(result.output)
    site = root / "target" / "docs"
    index = page_data(site, "index.html")
    assert [(e["file"], e["line"]) for e in index["errors"]] == [("projects/ts03_fx_conversion.yml", 18)]
    assert "amount_locl" in index["errors"][0]["rendered"]
    assert len(index["nodes"]) == 19  # the rest of the workspace is still drawn
    assert next(n for n in index["nodes"] if n["id"] == "project:ts03_fx_conversion")["errors"]
    ts03 = page_data(site, page_of(site, "project", "ts03_fx_conversion"))
    assert ts03["errors"][0]["code"] == index["errors"][0]["code"] and ts03["sql"] == "" and ts03["outputs"] == []
    assert page_data(site, page_of(site, "project", "ts01_output_only"))["sql"]


def test_a_workspace_that_cannot_load_gets_a_first_page_with_its_errors(tmp_path):
    root = sample_copy(tmp_path)
    (root / "datasets" / "gl.yml").write_text("id: [unclosed\n")
    result = docs(root)
    assert result.exit_code == 1
    index = page_data(root / "target" / "docs", "index.html")
    assert index["nodes"] == [] and index["errors"][0]["file"] == "datasets/gl.yml"
    assert index["errors"][0]["code"] in _paragraph(result.output)


def test_out_below_a_file_is_one_paragraph_and_nothing_is_written(tmp_path):
    root = sample_copy(tmp_path)
    (tmp_path / "afile").write_text("x")
    result = docs(root, "--out", str(tmp_path / "afile" / "site"))
    assert result.exit_code == 1
    assert "cannot be written" in _paragraph(result.output) and "is a file" in _paragraph(result.output)
    assert sorted(os.listdir(tmp_path)) == ["afile", "ws"]
    result = docs(root, "--out", str(tmp_path / "afile"))
    assert result.exit_code == 1 and "is a file, not a folder" in _paragraph(result.output)
    assert (tmp_path / "afile").read_text() == "x"


def test_a_folder_ledgerflow_did_not_write_is_refused_and_left_alone(tmp_path):
    root = sample_copy(tmp_path)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    result = docs(root, "--out", str(mine))
    assert result.exit_code == 1
    assert MARKER in _paragraph(result.output) and "left as it is" in _paragraph(result.output)
    assert os.listdir(mine) == ["notes.txt"] and (mine / "notes.txt").read_text() == "keep me"
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".ledgerflow-docs")]


def test_an_earlier_site_is_replaced_whole_and_an_empty_folder_is_used(tmp_path):
    root = sample_copy(tmp_path)
    out = tmp_path / "site"
    out.mkdir()
    inode = out.stat().st_ino
    assert docs(root, "--out", str(out)).exit_code == 0
    assert out.stat().st_ino == inode  # the user's empty folder is filled, not replaced
    (out / "stale.html").write_text("from an earlier site")
    assert docs(root, "--out", str(out)).exit_code == 0
    assert not (out / "stale.html").exists() and (out / "index.html").is_file() and (out / MARKER).is_file()
    assert sorted(n for n in os.listdir(tmp_path) if n.startswith(".")) == []  # no temporary folder left


def test_a_failed_write_leaves_the_earlier_site_as_it_was(tmp_path, monkeypatch):
    root = sample_copy(tmp_path)
    out = tmp_path / "site"
    assert docs(root, "--out", str(out)).exit_code == 0
    before = sorted(p.relative_to(out) for p in out.rglob("*"))

    def full_disk(site, folder):
        (open(os.path.join(folder, "index.html"), "w")).close()
        raise OSError(28, "No space left on device", os.path.join(folder, "data"))
    monkeypatch.setattr(writer, "write_site", full_disk)
    result = docs(root, "--out", str(out))
    assert result.exit_code == 1
    assert "No space left on device" in _paragraph(result.output) and "left as it was" in _paragraph(result.output)
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".ledgerflow-docs")]


def test_names_with_markup_never_reach_a_page_as_markup(tmp_path):
    root = hostile_copy(tmp_path)
    result = docs(root)
    assert result.exit_code == 1  # the column name is an error (UPD-VR-002), listed on the first page
    site = root / "target" / "docs"
    index = page_data(site, "index.html")
    assert HOSTILE in [n["name"] for n in index["nodes"]]
    assert any("</script><img src=x onerror=window.PWNED=4>" in e["text"] for e in index["errors"])
    for path in (site / "data").rglob("*.js"):
        assert "<" not in path.read_text() and ">" not in path.read_text(), path  # JSON with \u003c, \u003e
    for path in site.rglob("*.html"):
        assert "<img" not in path.read_text() and "<script>window" not in path.read_text(), path  # shells: no name
    shell = (site / page_of(site, "project", HOSTILE)).read_text()
    assert "<title>x&lt;/script&gt;&lt;img src=x onerror=&quot;window.PWNED=1&quot;&gt;: project</title>" in shell


# Two names the earlier rule (40 characters of a slug and 8 hex digits of the sha256) gave one page file.
TWINS = ("monthly_trial_balance_eur_all_entities_v52312", "monthly_trial_balance_eur_all_entities_v107727")


def test_two_project_names_never_share_a_page(tmp_path):
    root = sample_copy(tmp_path)
    template = (root / "projects" / "ts01_output_only.yml").read_text()
    for n, name in enumerate(TWINS + ("Close", "close")):
        text = template.replace("name: ts01_output_only", f"name: {name}").replace("-000000000001", f"-0000000009{n}0")
        (root / "projects" / f"twin{n}.yml").write_text(text.replace("ts01_transactions", f"twin_table_{n}"))
    assert docs(root).exit_code == 0
    site = root / "target" / "docs"
    pages = {name: page_of(site, "project", name) for name in TWINS + ("Close", "close")}
    assert len(set(pages.values())) == 4 and len({p.lower() for p in pages.values()}) == 4
    for n, name in enumerate(TWINS + ("Close", "close")):
        data = page_data(site, pages[name])
        assert data["name"] == name and f"twin_table_{n}" in data["sql"]
    index = page_data(site, "index.html")
    assert sorted(p["href"] for p in index["projects"] if p["name"] in pages) == sorted(pages.values())

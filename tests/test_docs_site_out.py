"""``ledgerflow docs`` on bad input (issue 32): a workspace with errors still gets its site, the errors on its
first page, exit 1; an ``--out`` that cannot take the site is one paragraph, exit 1, nothing written; a folder
ledgerflow did not write is never replaced; names holding markup stay text."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from docs_site_support import (FIXTURES, HOSTILE, RUN_RECORDS, docs, hostile_copy, page_data, page_of, sample_copy,
                               with_runs)

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


def test_an_earlier_site_is_replaced_and_only_the_files_its_marker_lists_are_deleted(tmp_path):
    root = sample_copy(tmp_path)
    out = tmp_path / "site"
    out.mkdir()
    inode = out.stat().st_ino
    assert docs(root, "--out", str(out)).exit_code == 0
    assert out.stat().st_ino == inode  # the user's empty folder is filled, not replaced
    marker = json.loads((out / MARKER).read_text())
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and p.name != MARKER)
    assert marker["format"] == 2 and marker["files"] == written and "index.html" in written
    ts01 = page_of(out, "project", "ts01_output_only")
    (root / "projects" / "ts01_output_only.yml").unlink()  # its page and data go with the next site
    (out / "stale.html").write_text("a file the site did not write")
    (out / "project" / "notes.txt").write_text("nor this one")
    assert docs(root, "--out", str(out)).exit_code == 0
    assert not (out / ts01).exists() and not (out / "data" / ts01.replace(".html", ".js")).exists()
    assert (out / "stale.html").read_text() == "a file the site did not write"
    assert (out / "project" / "notes.txt").read_text() == "nor this one"
    assert ts01 not in json.loads((out / MARKER).read_text())["files"] and (out / "index.html").is_file()
    assert sorted(n for n in os.listdir(tmp_path) if n.startswith(".")) == []  # no temporary folder left


def test_a_file_the_marker_does_not_list_where_the_site_writes_is_refused_and_kept(tmp_path):
    root = sample_copy(tmp_path)
    out = tmp_path / "site"
    assert docs(root, "--out", str(out)).exit_code == 0
    marker = json.loads((out / MARKER).read_text())
    marker["files"].remove("index.html")  # as if the user had written index.html
    (out / MARKER).write_text(json.dumps(marker))
    (out / "index.html").write_text("the user's page")
    before = {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    result = docs(root, "--out", str(out))
    assert result.exit_code == 1 and "index.html" in _paragraph(result.output)
    assert "nothing was changed" in _paragraph(result.output)
    assert {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".ledgerflow-docs")]


@pytest.mark.parametrize("marker", [
    "This folder was written by `ledgerflow docs`; the next `ledgerflow docs` replaces it whole.\n",  # format 1
    json.dumps({"format": 2, "files": ["index.html", "../victim.txt"]}),
    json.dumps({"format": 2, "files": ["/tmp/victim.txt"]}),
    "{not json"])
def test_a_marker_that_lists_no_files_or_other_places_deletes_nothing(tmp_path, marker):
    root = sample_copy(tmp_path)
    out = tmp_path / "site"
    out.mkdir()
    (out / MARKER).write_text(marker)
    (out / "index.html").write_text("an old site's page, or the user's")
    (out / "data").mkdir()
    (out / "data" / "ledger.parquet").write_text("rows")
    (tmp_path / "victim.txt").write_text("keep")
    result = docs(root, "--out", str(out))
    assert result.exit_code == 1
    assert MARKER in _paragraph(result.output) and "left as it is" in _paragraph(result.output)
    assert (out / "index.html").read_text() == "an old site's page, or the user's"
    assert (out / "data" / "ledger.parquet").read_text() == "rows" and (tmp_path / "victim.txt").read_text() == "keep"
    assert sorted(os.listdir(out)) == [MARKER, "data", "index.html"]


def test_a_listed_file_behind_a_link_is_never_deleted(tmp_path):
    root = sample_copy(tmp_path)
    out = tmp_path / "site"
    assert docs(root, "--out", str(out)).exit_code == 0
    ts01 = page_of(out, "project", "ts01_output_only")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / os.path.basename(ts01)).write_text("not the site's")
    shutil.rmtree(out / "project")
    os.symlink(elsewhere, out / "project")  # the marker still lists project/<ts01>.html
    (root / "projects" / "ts01_output_only.yml").unlink()
    result = docs(root, "--out", str(out))
    assert result.exit_code == 1 and "left as it is" in _paragraph(result.output)
    assert (elsewhere / os.path.basename(ts01)).read_text() == "not the site's"


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


def _files(folder) -> dict:
    return {str(p): p.read_bytes() for p in Path(folder).rglob("*") if p.is_file()}


def test_an_out_on_a_place_ledgerflow_keeps_data_or_records_in_is_refused_and_nothing_is_written(tmp_path):
    root = sample_copy(tmp_path)
    with_runs(root)  # a run store: target/runs and .ledgerflow/state.db
    p = root / "projects" / "ts01_output_only.yml"
    p.write_text(p.read_text().replace("destination: {table: ts01_transactions}",
                                       "destination: {path: ledger, format: parquet}") + "checks:\n"
                 "  - {name: q, on: 1, expect: 'currency <> \"\"', on_violation: quarantine,"
                 " quarantine: {path: qr/q}}\n")
    (root / "ledger" / "_period=2026-01").mkdir(parents=True)
    (root / "ledger" / "_period=2026-01" / "part-0.parquet").write_text("a closed period's rows")
    os.symlink(root / "ledger", tmp_path / "link-to-ledger")
    before = _files(tmp_path)
    cases = {"ledger": "is", "ledger/docs": "lies inside", "target": "holds", "target/runs/site": "lies inside",
             ".ledgerflow": "is", "data": "holds", "data/gl": "is", "qr": "holds", "out": "holds",
             str(tmp_path / "link-to-ledger" / "docs"): "lies inside"}
    for out, relation in cases.items():
        out = out if os.path.isabs(out) else str(root / out)
        result = docs(root, "--out", out)
        assert result.exit_code == 2, (out, result.output)
        paragraph = _paragraph(result.output)
        assert f"--out {out} {relation} " in paragraph and "Nothing was written or deleted" in paragraph, paragraph
        assert _files(tmp_path) == before, out
        assert not (root / "target" / "docs").exists()
    assert "the run store's run records" in _paragraph(docs(root, "--out", str(root / "target")).output)
    assert "the destination of output 1 of project 'ts01_output_only'" in \
        _paragraph(docs(root, "--out", str(root / "ledger")).output)
    # a version a recorded run published stays protected after its project writes elsewhere
    run = json.loads((FIXTURES / RUN_RECORDS[1]).read_text())
    result = docs(root, "--out", os.path.dirname(run["outputs"][0]["location"]))
    assert result.exit_code == 2 and f"output 3 of run {run['run_id']}" in _paragraph(result.output)
    assert docs(root).exit_code == 0  # target/docs is the site's own


def test_a_failure_while_the_site_is_updated_leaves_a_marker_naming_every_file_and_the_next_run_recovers(
        tmp_path, monkeypatch):
    root = sample_copy(tmp_path)
    out = tmp_path / "site"
    assert docs(root, "--out", str(out)).exit_code == 0
    (root / "projects" / "ts01_output_only.yml").unlink()  # a page the next site drops
    ts01 = page_of(out, "project", "ts01_output_only")
    replace, moved = os.replace, []

    def full_disk(src, dst):
        if not os.path.basename(str(src)).startswith(MARKER) and len(moved) == 3:
            raise OSError(28, "No space left on device")
        moved.append(dst)
        return replace(src, dst)
    monkeypatch.setattr(os, "replace", full_disk)
    result = docs(root, "--out", str(out))
    monkeypatch.setattr(os, "replace", replace)
    assert result.exit_code == 1 and "only partly updated" in _paragraph(result.output)
    listed = set(json.loads((out / MARKER).read_text())["files"])
    assert {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and p.name != MARKER} <= listed
    assert ts01 in listed and (out / ts01).is_file()  # the old page is still the site's until a run completes
    assert docs(root, "--out", str(out)).exit_code == 0
    assert not (out / ts01).exists() and ts01 not in json.loads((out / MARKER).read_text())["files"]
    assert sorted(os.listdir(tmp_path)) == ["site", "ws"]

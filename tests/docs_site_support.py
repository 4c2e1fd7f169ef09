"""Helpers of the docs site tests: a copy of the sample workspace (with run records saved through the run
store's own API, from records real runs of the sample wrote), ``ledgerflow docs`` run in-process, and a
page's data read back from its ``data/*.js`` script."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from click.testing import CliRunner, Result

from ledgerflow.adapters.cli import main
from ledgerflow.adapters.store.runstore import RunStore
from ledgerflow.compiler.compile import compile_project
from ledgerflow.compiler.workspace import load_workspace

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "projects" / "finance"
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "docs_site"
# Records of real runs of the sample (`ledgerflow run journal_controls --period 2026-01`, and close_conversion in
# `run --select +close_reporting`), their paths rewritten to /workspace.
RUN_RECORDS = ("run_journal_controls.json", "run_close_conversion.json")
HOSTILE = 'x</script><img src=x onerror="window.PWNED=1">'


def sample_copy(tmp_path: Path, name: str = "ws") -> Path:
    """A copy of the sample workspace without anything a run or an earlier site left."""
    root = tmp_path / name
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns("target", ".ledgerflow", "out"))
    return root


def with_runs(root: Path) -> list[dict]:
    """Save the recorded runs into ``root``'s run store (``RunStore.save_run``, as a run saves its record), close
    journal_controls' 2026-01 (``set_closed``, as ``periods close`` does) and register the version of
    close_converted the close_conversion run wrote (``register``); returns the records."""
    store = RunStore(str(root))
    records = []
    for name in RUN_RECORDS:
        rec = json.loads((FIXTURES / name).read_text())
        store.save_run(rec)
        records.append(rec)
    store.set_closed([("journal_controls", "2026-01")], "close", "ana", "2026-02-03T10:15:00Z", "reported")
    # close_conversion's run registered close_converted v1 (as its commit does), with its output's columns
    ws = load_workspace(str(root))
    [output] = compile_project(ws, ws.find_project("close_conversion")).outputs
    run = records[1]
    store.register("close_converted", 1, run["outputs"][0]["location"], "csv", ["2026-01"], output.columns,
                   run["run_id"], run["finished_at"])
    return records


def hostile_copy(tmp_path: Path) -> Path:
    """The sample with a project whose name and description hold markup and script, and a column name that
    does (an error the first page lists, its text as written)."""
    root = sample_copy(tmp_path, "hostile")
    p = root / "projects" / "ts01_output_only.yml"
    text = re.sub(r"^name: .*$", "name: " + json.dumps(HOSTILE), p.read_text(), count=1, flags=re.M)
    text = re.sub(r"^description: .*$", "description: '<img src=y onerror=\"window.PWNED=2\"><script>window.PWNED=3"
                  "</script>'", text, count=1, flags=re.M)
    p.write_text(text)
    p = root / "projects" / "ts03_fx_conversion.yml"
    p.write_text(p.read_text().replace("- column: amount_reporting",
                                       '- column: "</script><img src=x onerror=window.PWNED=4>"'))
    return root


def docs(root: Path, *args: str) -> Result:
    """``ledgerflow --workspace ROOT docs ARGS...`` in-process."""
    return CliRunner().invoke(main, ["--workspace", str(root), "docs", *args], catch_exceptions=False)


def page_data(site: Path, page: str) -> dict:
    """The data of ``page`` (``index.html``, ``project/x.html``...) read back from its script."""
    script = site / "data" / (str(Path(page).with_suffix("")) + ".js")
    text = script.read_text()
    assert text.startswith("window.LF_DATA = ") and text.endswith(";\n"), text[:80]
    return json.loads(text[len("window.LF_DATA = "):-2])


def page_of(site: Path, kind: str, name: str) -> str:
    """The page (relative to the site) of the project, dataset or lineage ``name``, found in the index's data
    or by the site's own naming (``ledgerflow.adapters.docs_site.ids``)."""
    from ledgerflow.adapters.docs_site import ids
    return {"project": ids.project_page, "dataset": ids.dataset_page, "lineage": ids.lineage_page,
            "run": ids.run_page}[kind](name)

"""Bad input to environments (issue 46 point 4), without Spark: each refusal one clear paragraph, nothing changed.

The workspace is the promotion benchmark's (``bench/promotion_scale.py``: prod and dev versions of each partition
and the run records as runs write them); a catalog table's or URI's record is one of those records pointed at a
table or a URI, as a run writing one records it."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from cli_support import cli, describe

PERIODS = ["2024-01"]


def _workspace(root: Path) -> Path:
    from bench.promotion_scale import build
    root.mkdir()
    build(root, 2, PERIODS)
    return root


def _markers(ws: Path) -> dict:
    return {p: (p / ".lf_version").read_text() for p in sorted((ws / "out").glob("*/_period=*"))}


def _one_paragraph(result, *needles: str) -> None:
    assert result.exit_code == 1, describe(result)
    text = result.stderr.strip()
    assert text.count("\n") == 0 and all(n in text for n in needles), text


def _point_prod_record_at(ws: Path, project: str, location: str) -> None:
    """Make prod's last run of ``project`` one that wrote ``location`` (a table or URI) instead of a folder."""
    with sqlite3.connect(ws / ".ledgerflow" / "state.db") as conn:
        run_id, text = conn.execute("SELECT run_id, record FROM runs WHERE project_name = ? AND env IS NULL AND "
                                    "run_id LIKE '%-new'", (project,)).fetchone()
        rec = json.loads(text)
        rec["outputs"] = [{"operation_seq": 1, "location": location, "rows": 200, "registered_dataset": None,
                           "registered_version": None}]
        rec["commit"] = {"partitions": [], "elsewhere": [location]}
        conn.execute("UPDATE runs SET record = ? WHERE run_id = ?", (json.dumps(rec), run_id))


def test_promoting_a_catalog_table_or_uri_output_is_refused_and_changes_nothing(tmp_path):
    ws = _workspace(tmp_path / "ws")
    _point_prod_record_at(ws, "p0000", "spark_catalog.finance.ledger")
    _point_prod_record_at(ws, "p0001", "s3a://bucket/ledger")
    before = _markers(ws)
    for project, where in (("p0000", "spark_catalog.finance.ledger"), ("p0001", "s3a://bucket/ledger")):
        refused = cli(ws, "promote", project, "--from", "prod", "--to", "dev", "--period", "2024-01")
        _one_paragraph(refused, "ENV-006", where, "no local folder", "nothing changed")
        path = cli(ws, "envs", "path", f"{project}.1", "--env", "uat")  # uat reads prod's
        _one_paragraph(path, "ENV-006", where, "catalog table or URI")
    assert _markers(ws) == before
    assert not (ws / "target" / "promotions").exists()


def test_envs_path_of_a_catalog_table_output_is_refused_in_prod_and_before_a_run(tmp_path):
    ws = _workspace(tmp_path / "ws")
    project = ws / "projects" / "p0000.yml"
    project.write_text(project.read_text().replace("{path: out/p0000}", "{catalog_table: finance.ledger}"))
    path = cli(ws, "envs", "path", "p0000.out", "--env", "prod")
    _one_paragraph(path, "ENV-006", "writes the catalog table finance.ledger, which no folder shows in prod")
    # another environment keeps its rows of the table in a folder, once it has run the project
    path = cli(ws, "envs", "path", "p0000.out", "--env", "dev")
    _one_paragraph(path, "ENV-006", "whose rows 'dev' keeps in a folder once it has run the project")


def test_invalid_environment_names_drop_of_prod_and_promotion_onto_itself(tmp_path):
    ws = _workspace(tmp_path / "ws")
    before = _markers(ws)
    for args in (("promote", "--all", "--from", "Dev", "--period", "2024-01"),
                 ("promote", "--all", "--from", "dev", "--to", "../prod", "--period", "2024-01"),
                 ("runs", "list", "--env", "dev/x"), ("envs", "drop", "DEV")):
        _one_paragraph(cli(ws, *args), "ENV-001")
    _one_paragraph(cli(ws, "promote", "--all", "--from", "dev", "--to", "dev", "--period", "2024-01"), "ENV-006")
    _one_paragraph(cli(ws, "envs", "drop", "prod"), "ENV-006")
    assert _markers(ws) == before


def test_the_docs_site_shows_the_environment_it_was_built_for(tmp_path):
    """`docs --env dev`: the periods as dev publishes them (its own runs), every run with its environment, and the
    environments as `envs list` says them; without --env, prod's."""
    from docs_site_support import page_data
    from test_docs_site import _drawn
    ws = _workspace(tmp_path / "ws")
    for env, out in (("dev", tmp_path / "dev_site"), ("prod", tmp_path / "prod_site")):
        built = cli(ws, "docs", "--out", str(out), *(["--env", env] if env != "prod" else []))
        assert built.exit_code == 0, describe(built)
        runs = page_data(out, "runs.html")
        assert runs["env"] == env and {p["published_in"] for p in runs["periods"]} == {env}
        assert {r["env"] for r in runs["runs"]} == {"prod", "dev"}
        assert runs["environments"][0] == "prod" and "dev" in runs["environments"]
        drawn = _drawn(out, "runs.html")
        assert "environments" in drawn["sections"] and f"Periods as environment {env} publishes them" in drawn["text"]
    bad = cli(ws, "docs", "--out", str(tmp_path / "x"), "--env", "Dev")
    _one_paragraph(bad, "ENV-001")
    assert not (tmp_path / "x").exists()

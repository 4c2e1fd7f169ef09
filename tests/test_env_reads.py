"""Which registered version an environment reads for a period (a review found prod reading the version a promotion
replaced, and dev losing prod's versions of every period once it registered one): the run store's registrations as
each environment reads them, and ``version_read``, which a run, ``status``'s stale check and a promotion's
upstream check all use."""
from __future__ import annotations

import sqlite3

from ledgerflow.adapters.inputs.resolution import choose_version
from ledgerflow.adapters.store.runstore import RunStore
from ledgerflow.compiler.errors import ResolutionError
from ledgerflow.compiler.model import Dataset
from ledgerflow.compiler.periods import parse_period

CONVERTED = Dataset(id="", name="converted", status="active", table_name="converted", temporal_mode="period",
                    columns=[], versions=[], registered=True)


def _store(tmp_path, rows: list[tuple], promotions: list[tuple] = ()) -> str:
    """rows: (version, periods, env, created_at); promotions: (version, env, at). Dataset ``converted``."""
    root = str(tmp_path)
    store = RunStore(root)
    for version, periods, env, created in rows:
        store.register("converted", version, f"{root}/out/v{version}", "parquet", periods, [("amount", "decimal(18,2)")],
                       f"run-{version}", created)
        if env != "prod":
            with sqlite3.connect(store.db_path) as conn:
                conn.execute("UPDATE registered_datasets SET env = ? WHERE version = ?", (env, version))
    with sqlite3.connect(store.db_path) as conn:
        for version, env, at in promotions:
            conn.execute("INSERT INTO registered_promotions (name, version, env, promotion_id, at) VALUES "
                         "(?,?,?,?,?)", ("converted", version, env, f"promotion-{version}", at))
    return root


def _reads(root: str, env: str, period: str):
    """The version a run in ``env`` reads (:func:`choose_version`, through :func:`version_read`); None: none."""
    try:
        return choose_version(CONVERTED, None, parse_period(period), RunStore(root, env))
    except ResolutionError:
        return None


def test_prod_reads_the_version_a_promotion_made_it_publish_even_when_a_higher_one_exists(tmp_path):
    """dev registers v7; prod then runs (v8); v7 is promoted to prod: prod's partition shows v7, so prod's readers
    read v7, not v8. A prod run after that (v9) is read again."""
    root = _store(tmp_path, [(7, ["2026-02"], "dev", "2026-03-01T10:00:00.000"),
                             (8, ["2026-02"], "prod", "2026-03-01T11:00:00.000")],
                  [(7, "prod", "2026-03-01T12:00:00.000")])
    assert _reads(root, "prod", "2026-02") == 7
    RunStore(root).register("converted", 9, f"{root}/out/v9", "parquet", ["2026-02"], [], "run-9",
                            "2026-03-01T13:00:00.000")
    assert _reads(root, "prod", "2026-02") == 9


def test_dev_reads_its_own_version_of_a_period_and_prods_of_the_others(tmp_path):
    root = _store(tmp_path, [(1, ["2026-01"], "prod", "2026-02-01T00:00:00.000"),
                             (2, ["2026-02"], "prod", "2026-03-01T00:00:00.000"),
                             (3, ["2026-01"], "dev", "2026-03-02T00:00:00.000")])
    assert _reads(root, "dev", "2026-01") == 3
    assert _reads(root, "dev", "2026-02") == 2  # dev has not published 2026-02: prod's
    assert _reads(root, "prod", "2026-01") == 1 and _reads(root, "prod", "2026-02") == 2
    shown = {r["version"]: r["shown_in"] for r in RunStore(root, "dev").registrations("converted")}
    assert shown == {1: "prod", 2: "prod", 3: "dev"}  # a read of v2 from dev opens prod's partitions
    assert _reads(root, "dev", "2026-03") is None


def test_runs_list_shows_the_environments_own_history(tmp_path):
    """prod's history holds no dev run (a dev line looked like a prod run); `--env dev` lists dev's, marked."""
    from cli_support import cli, describe
    from test_promotion_review import _workspace
    ws = _workspace(tmp_path / "ws")
    prod, dev = cli(ws, "runs", "list"), cli(ws, "runs", "list", "--env", "dev")
    assert prod.exit_code == 0 and dev.exit_code == 0, describe(prod) + describe(dev)
    assert "-dev " not in prod.stdout and "env=dev" not in prod.stdout and "-new " in prod.stdout
    assert "-dev " in dev.stdout and "env=dev" in dev.stdout and "-new " not in dev.stdout

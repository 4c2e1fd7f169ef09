"""Environments (docs/environments.md): a run in another environment than prod publishes only there, reads prod's
where it has published nothing, and `promote` makes prod publish exactly its versions by re-pointing: no data
copied, one journal, all or nothing."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cli_support import cli, describe, record, run_id_of
from conftest import cli_env
from ledgerflow.adapters.store.runstore import RunStore

TS03 = "ts03_fx_conversion"
OUT = Path("data/ts03_fx_converted/v1/ts03_fx_converted.csv")


def _run(ws, project, period, *extra):
    result = cli(ws, "run", project, "--period", period, *extra)
    assert result.exit_code == 0, describe(result)
    return record(ws, run_id_of(result))


def _inodes(folder: Path) -> dict[str, int]:
    return {p.name: p.stat().st_ino for p in folder.iterdir() if not p.name.startswith(".")}


def _marker(folder: Path) -> str:
    return (folder / ".lf_version").read_text().strip()


def test_a_run_in_dev_publishes_only_to_dev_and_promote_re_points_prod_without_copying(spark, finance):
    prod = _run(finance, TS03, "2026-01")
    prod_part = finance / OUT / "_period=2026-01"
    before = _inodes(prod_part)
    project = finance / "projects" / "ts03_fx_conversion.yml"  # the change tried in dev: amounts doubled
    project.write_text(project.read_text().replace("transactions.amount_local * fx.rate",
                                                   "transactions.amount_local * fx.rate * 2"))
    dev = _run(finance, TS03, "2026-01", "--env", "dev")
    assert dev["env"] == "dev" and prod["env"] == "prod"
    dev_part = finance / OUT / ".lf_envs" / "dev" / "_period=2026-01"
    assert dev["outputs"][0]["location"] == str(dev_part)
    assert _inodes(prod_part) == before  # prod's partition untouched
    assert prod["run_id"] in _marker(prod_part) and dev["run_id"] in _marker(dev_part)
    # readers of the output's own folder see prod only (.lf_envs is hidden)
    assert spark.read.option("header", "true").csv(str(finance / OUT)).count() == 10
    path = cli(finance, "envs", "path", f"{TS03}.2", "--env", "dev")
    assert path.exit_code == 0 and path.stdout.strip() == str(finance / OUT / ".lf_envs" / "dev"), describe(path)
    listed = cli(finance, "envs", "list")
    assert f"{TS03} 2026-01: ahead (run {dev['run_id']})" in listed.stdout, describe(listed)

    replayed = cli(finance, "replay", dev["run_id"])  # a dev run's replay publishes in dev, unasked
    assert replayed.exit_code == 0, describe(replayed)
    again = record(finance, run_id_of(replayed))
    assert again["env"] == "dev" and _inodes(prod_part) == before and again["run_id"] in _marker(dev_part)
    dev = again
    dry = cli(finance, "promote", TS03, "--from", "dev", "--period", "2026-01", "--dry-run")
    assert dry.exit_code == 0 and "Dry run: nothing promoted" in dry.stdout, describe(dry)
    assert "10 -> 10 rows: 0 added, 0 removed, 10 changed" in dry.stdout, dry.stdout  # rows matched by _row_id
    assert _inodes(prod_part) == before  # nothing published
    used = sum(f.stat().st_size for f in (finance / "data").rglob("*") if f.is_file() and f.stat().st_nlink == 1)
    promoted = cli(finance, "promote", TS03, "--from", "dev", "--period", "2026-01")
    assert promoted.exit_code == 0, describe(promoted)
    assert "1 partition re-pointed, no data copied" in promoted.stdout
    assert _inodes(prod_part) == _inodes(dev_part)  # the same files: hard links to dev's version
    assert dev["run_id"] in _marker(prod_part)
    after = sum(f.stat().st_size for f in (finance / "data").rglob("*") if f.is_file() and f.stat().st_nlink == 1)
    assert after <= used  # nothing copied (prod's replaced version was retired)
    promotion_id = promoted.stdout.split("promotion ")[1].split()[0]
    journal = json.loads((finance / "target" / "promotions" / f"{promotion_id}.json").read_text())
    assert journal["status"] == "completed" and journal["from"] == "dev" and journal["to"] == "prod"
    shown_run = cli(finance, "runs", "show", journal["runs"][0], "--json")
    prod_run = json.loads(shown_run.stdout)
    assert prod_run["env"] == "prod" and prod_run["promotion"]["source_run_id"] == dev["run_id"]
    assert prod_run["outputs"][0]["location"] == str(prod_part)
    listed = cli(finance, "envs", "list")
    assert f"{TS03} 2026-01: same (run {dev['run_id']})" in listed.stdout, describe(listed)
    status = cli(finance, "status", "--env", "dev")
    assert status.exit_code == 0, describe(status)


def test_refusals_change_nothing(spark, finance):
    _run(finance, TS03, "2026-01")
    _run(finance, TS03, "2026-01", "--env", "dev")
    shown = _marker(finance / OUT / "_period=2026-01")
    bad = cli(finance, "run", TS03, "--period", "2026-01", "--env", "Dev!")
    assert bad.exit_code == 1 and "ENV-001" in bad.stderr and "'Dev!' is not an environment name" in bad.stderr
    same = cli(finance, "promote", TS03, "--from", "dev", "--to", "dev", "--period", "2026-01")
    assert same.exit_code == 1 and "ENV-006" in same.stderr
    missing = cli(finance, "promote", TS03, "--from", "dev", "--period", "2026-02")
    assert missing.exit_code == 1 and "ENV-004" in missing.stderr and "nothing changed" in missing.stderr
    closed = cli(finance, "periods", "close", "2026-01", "--project", TS03)
    assert closed.exit_code == 0, describe(closed)
    into_closed = cli(finance, "promote", TS03, "--from", "dev", "--period", "2026-01")
    assert into_closed.exit_code == 1 and "ENV-003" in into_closed.stderr and "restate" in into_closed.stderr
    assert _marker(finance / OUT / "_period=2026-01") == shown
    # a closed period of prod does not stop a run in dev (here of a change: amounts doubled)
    project = finance / "projects" / "ts03_fx_conversion.yml"
    project.write_text(project.read_text().replace("transactions.amount_local * fx.rate",
                                                   "transactions.amount_local * fx.rate * 2"))
    again = _run(finance, TS03, "2026-01", "--env", "dev")
    assert again["status"] == "completed"

    # restate --from-env: the closed period made to publish dev's version, as a restatement
    blank = cli(finance, "restate", TS03, "--period", "2026-01", "--reason", " ", "--from-env", "dev")
    assert blank.exit_code == 1 and "RESTATE-001" in blank.stderr, describe(blank)
    in_dev = cli(finance, "restate", TS03, "--period", "2026-01", "--reason", "x", "--env", "dev")
    assert in_dev.exit_code == 1 and "RESTATE-002" in in_dev.stderr and "prod only" in in_dev.stderr, describe(in_dev)
    dry = cli(finance, "restate", TS03, "--period", "2026-01", "--reason", "FX fix", "--from-env", "dev", "--dry-run")
    assert dry.exit_code == 0 and "Dry run" in dry.stdout and "10 changed" in dry.stdout, describe(dry)
    assert _marker(finance / OUT / "_period=2026-01") == shown
    restated = cli(finance, "restate", TS03, "--period", "2026-01", "--reason", "FX fix", "--from-env", "dev")
    assert restated.exit_code == 0 and "promoted from environment 'dev'" in restated.stdout, describe(restated)
    assert _marker(finance / OUT / "_period=2026-01") == again["run_id"]  # re-pointed, not recomputed
    superseded = finance / OUT / ".lf_versions" / "_period=2026-01" / shown
    assert superseded.is_dir() and any(superseded.glob("part-*"))  # the superseded rows stay readable
    from ledgerflow.adapters.store.runstore import RunStore  # a promoted run has no target/runs folder
    rec = RunStore(str(finance)).get_run(re.search(r"run ([0-9a-f-]{36}) supersedes", restated.stdout).group(1))
    block = rec["restatement"]
    assert block["from_env"] == "dev" and block["reason"] == "FX fix" and rec["promotion"]["from"] == "dev"
    assert block["superseded_outputs"][0]["version_folder"] == str(superseded)
    assert block["data_diff"]["outputs"][0]["rows"]["changed"] == 10, block["data_diff"]
    assert "restatement of" in cli(finance, "runs", "list").stdout
    # the run it supersedes says so (the promoted record's text is orjson's spelling: store.published.record_text)
    old_run = cli(finance, "runs", "show", shown)
    assert old_run.exit_code == 0 and f"Superseded by restatement run {rec['run_id']}" in old_run.stdout, \
        describe(old_run)
    shown = again["run_id"]

    no_prod = cli(finance, "envs", "drop", "prod")
    assert no_prod.exit_code == 1 and "ENV-006" in no_prod.stderr
    dev_part = finance / OUT / ".lf_envs" / "dev" / "_period=2026-01"
    version = finance / OUT / ".lf_versions" / "_period=2026-01" / again["run_id"]
    assert dev_part.is_dir() and version.is_dir()
    dropped = cli(finance, "envs", "drop", "dev")
    assert dropped.exit_code == 0 and "1 partition removed, no version deleted" in dropped.stdout, describe(dropped)
    assert not (finance / OUT / ".lf_envs").exists() and version.is_dir()  # pointers gone, the version kept
    assert _marker(finance / OUT / "_period=2026-01") == shown
    assert "dev" not in cli(finance, "envs", "list").stdout.split()
    gone = cli(finance, "promote", TS03, "--from", "dev", "--period", "2026-01")
    assert gone.exit_code == 1 and "ENV-004" in gone.stderr  # dev publishes nothing any more


def test_dev_reads_prods_registered_version_until_it_registers_its_own_and_promotion_needs_the_upstream(spark,
                                                                                                      finance):
    _run(finance, "close_conversion", "2026-01")
    _run(finance, "close_consolidation", "2026-01")
    deferred = _run(finance, "close_consolidation", "2026-01", "--env", "dev")
    read = deferred["resolver_snapshot"]["resolutions"]
    assert {v["dataset_name"]: v["version"] for v in read.values()}["close_converted"] == 1
    conv = _run(finance, "close_conversion", "2026-01", "--env", "dev")
    assert conv["outputs"][0]["registered_version"] == 2
    own = _run(finance, "close_consolidation", "2026-01", "--env", "dev")
    read = own["resolver_snapshot"]["resolutions"]
    assert {v["dataset_name"]: v["version"] for v in read.values()}["close_converted"] == 2
    # prod still reads version 1
    prod_again = _run(finance, "close_consolidation", "2026-01")
    assert {v["dataset_name"]: v["version"] for v in prod_again["resolver_snapshot"]["resolutions"].values()}[
        "close_converted"] == 1
    alone = cli(finance, "promote", "close_consolidation", "--from", "dev", "--period", "2026-01")
    assert alone.exit_code == 1 and "ENV-005" in alone.stderr and "close_conversion" in alone.stderr, describe(alone)
    # dev computed what prod did: the dry run compares with the version prod reads now (under its own version's
    # folder), not with nothing
    dry = cli(finance, "promote", "--select", "+close_consolidation", "--from", "dev", "--period", "2026-01",
              "--dry-run")
    assert dry.exit_code == 0 and dry.stdout.count(": same rows") == 2, describe(dry)
    assert "10 -> 10 rows: 0 added, 0 removed, 0 changed" in dry.stdout, describe(dry)
    both = cli(finance, "promote", "--select", "+close_consolidation", "--from", "dev", "--period", "2026-01")
    assert both.exit_code == 0, describe(both)
    # the promoted record reads close_converted where prod shows it, so dropping dev leaves prod's status alone
    store = RunStore(str(finance))
    promoted = store.get_run(store.last_published("close_consolidation", "2026-01")["run_id"])
    assert promoted.get("promotion") and ".lf_envs" not in json.dumps(promoted["resolver_snapshot"])
    assert cli(finance, "envs", "drop", "dev").exit_code == 0
    status = cli(finance, "status")
    assert "no longer exists" not in status.output and ".lf_envs" not in status.output, describe(status)
    after = _run(finance, "close_consolidation", "2026-01")
    assert {v["dataset_name"]: v["version"] for v in after["resolver_snapshot"]["resolutions"].values()}[
        "close_converted"] == 2


KILL_AT_SWAP = textwrap.dedent("""\
    import os, signal, sys
    from ledgerflow.adapters import cli
    from ledgerflow.adapters.commit import swaps
    real, swapped = swaps._swap, []

    def swap(link, target, *checked):
        swapped.append(link)
        if len(swapped) == int(sys.argv[1]):
            os.kill(os.getpid(), signal.SIGKILL)
        real(link, target, *checked)
    swaps._swap = swap
    cli.main(sys.argv[2:])
""")


def test_a_promotion_killed_at_any_swap_is_rolled_back_by_the_next_command(spark, finance):
    """Killed before the 1st, 2nd and 3rd of 3 swaps (the journal lists all 3 first): the next command that opens
    the run store points every partition back at prod's version, and the promotion then succeeds whole."""
    periods = ["2026-01", "2026-02", "2026-03"]
    for p in periods:
        _run(finance, TS03, p)
    result = cli(finance, "run", TS03, "--period", "2026-01..2026-03", "--env", "dev", "--mode", "each")
    assert result.exit_code == 0, describe(result)
    parts = [finance / OUT / f"_period={p}" for p in periods]
    dev = [_marker(finance / OUT / ".lf_envs" / "dev" / f"_period={p}") for p in periods]
    before = [_marker(p) for p in parts]
    for kill_at in (1, 2, 3):
        proc = subprocess.run([sys.executable, "-c", KILL_AT_SWAP, str(kill_at), "--workspace", str(finance),
                               "promote", TS03, "--from", "dev", "--period", "2026-01..2026-03"],
                              capture_output=True, text=True, env=cli_env(), timeout=120)
        assert proc.returncode == -signal.SIGKILL, proc.stderr
        # the partitions swapped before the kill show dev's version, the rest prod's: a mix, until recovery
        assert [_marker(p) for p in parts] == dev[:kill_at - 1] + before[kill_at - 1:]
        listed = cli(finance, "runs", "list")  # opening the store recovers the promotion
        assert listed.exit_code == 0, describe(listed)
        assert "promotion interrupted before its commit point" in listed.stderr, describe(listed)
        assert [_marker(p) for p in parts] == before  # every partition shows prod's version again
    journals = [json.loads(j.read_text()) for j in (finance / "target" / "promotions").glob("*.json")]
    assert [j["status"] for j in journals] == ["failed"] * 3 and all(len(j["commit"]["partitions"]) == 3
                                                                     for j in journals)
    again = cli(finance, "promote", TS03, "--from", "dev", "--period", "2026-01..2026-03")
    assert again.exit_code == 0 and "3 partitions re-pointed" in again.stdout, describe(again)
    assert [_marker(p) for p in parts] == dev


def test_environment_names():
    from ledgerflow.adapters.layout.env_names import EnvironmentNameError, check_env_name, chosen_env
    for good in ("dev", "jan-close", "a", "x_1", "0" * 40):
        assert check_env_name(good) == good
    for bad in ("", "Dev", "../prod", "a/b", "dev ", "-dev", "d" * 41, "dév", "a\nb", "prod;drop"):
        with pytest.raises(EnvironmentNameError, match="ENV-001"):
            check_env_name(bad)
    os.environ.pop("LEDGERFLOW_ENV", None)
    assert chosen_env(None) == "prod"
    os.environ["LEDGERFLOW_ENV"] = "uat"
    try:
        assert chosen_env(None) == "uat" and chosen_env("dev") == "dev"
        os.environ["LEDGERFLOW_ENV"] = "U A T"
        with pytest.raises(EnvironmentNameError, match=r"\$LEDGERFLOW_ENV"):
            chosen_env(None)
    finally:
        os.environ.pop("LEDGERFLOW_ENV", None)


def test_partition_paths_of_environments():
    from ledgerflow.adapters.layout.partition_paths import link_env, partition_link, root_period
    prod = partition_link("/d/out", "2026-01")
    dev = partition_link("/d/out", "2026-01", "dev")
    assert prod == "/d/out/_period=2026-01" and dev == "/d/out/.lf_envs/dev/_period=2026-01"
    assert root_period(prod) == root_period(dev) == ("/d/out", "2026-01")
    assert (link_env(prod), link_env(dev)) == ("prod", "dev")

"""Promotions a review found wrong: a registered version promoted a second time (after a prod run registered a newer
one) is the one prod reads again, as its run history says, and a downstream project run then reads it; a version file
changed in place is never promoted; a partition another project's close keeps is never replaced."""
from __future__ import annotations

import re
from pathlib import Path

from cli_support import cli, describe, record, run_id_of
from ledgerflow.adapters.inputs.registered_reads import version_read
from ledgerflow.adapters.store.runstore import RunStore

P = "2026-01"


def _ok(ws, *args):
    result = cli(ws, *args)
    assert result.exit_code == 0, describe(result)
    return result


def test_promoting_a_registered_version_again_makes_prod_read_it_again(spark, finance):
    ws = finance
    _ok(ws, "run", "close_conversion", "--period", P)  # prod registers v1
    _ok(ws, "run", "close_conversion", "--period", P, "--env", "dev")  # dev v2
    _ok(ws, "promote", "close_conversion", "--from", "dev", "--period", P)  # prod reads v2
    _ok(ws, "run", "close_conversion", "--period", P)  # prod v3
    _ok(ws, "promote", "close_conversion", "--from", "dev", "--period", P)  # v2 again
    store = RunStore(str(ws))
    published = store.get_run(store.last_completed([P], ["close_conversion"])[0]["run_id"])
    assert published["promotion"] and published["outputs"][0]["registered_version"] == 2
    assert version_read(store.registrations("close_converted"), P) == 2
    downstream = record(ws, run_id_of(_ok(ws, "run", "close_consolidation", "--period", P)))
    assert downstream["resolver_snapshot"]["resolutions"]["ds_close_converted"]["version"] == 2


def test_envs_path_of_a_registered_output_is_the_folder_of_the_environments_latest_version(spark, finance):
    """An output registering a dataset has a folder per version: `envs path` prints the one dev's latest run wrote
    (it printed prod's version folder of another period, which holds no partition of dev's)."""
    ws = finance
    _ok(ws, "run", "close_conversion", "--period", P)  # prod: v1
    _ok(ws, "run", "close_conversion", "--period", "2026-02", "--env", "dev")  # dev: v2
    folder = _ok(ws, "envs", "path", "close_conversion.3", "--env", "dev").stdout.strip()
    assert "/v2/" in folder and sorted(p.name for p in Path(folder).iterdir()) == [
        "_period=2026-02"], folder


def test_a_version_file_changed_in_place_is_never_promoted(spark, finance):
    """A file of dev's version appended to after its run (the same inode: dev's partition shows the extra line too)
    is refused (ENV-007): the run's record holds each file's size and time."""
    from pathlib import Path
    ws = finance
    dev = record(ws, run_id_of(_ok(ws, "run", "ts03_fx_conversion", "--period", P, "--env", "dev")))
    entry = dev["commit"]["partitions"][0]
    assert entry["files"] and all(len(v) == 2 for v in entry["files"].values()), entry
    part = next(p for p in Path(entry["staged"]).iterdir() if p.name.startswith("part-"))
    with open(part, "a", encoding="utf-8") as fh:
        fh.write("JE-999,1,2026-01-31,4100,CC-100,USD,1.00,1.00,planted,ERP\n")
    refused = cli(ws, "promote", "ts03_fx_conversion", "--from", "dev", "--period", P)
    assert refused.exit_code == 1 and "ENV-007" in refused.stderr and "was changed" in refused.stderr, \
        describe(refused)
    assert not (ws / "data" / "ts03_fx_converted" / "v1" / "ts03_fx_converted.csv" / f"_period={P}").exists()


def test_a_promotion_never_replaces_a_partition_another_projects_close_keeps(spark, finance):
    """journal_controls published and closed January; it is removed and a copy of it (another project) writes the
    same folder. The copy's run in dev promoted to prod is refused (PERIOD-001, the refusal its run in prod gets),
    and the closed partition keeps its files and rows."""
    ws = finance
    first = record(ws, run_id_of(_ok(ws, "run", "journal_controls", "--period", P)))
    _ok(ws, "periods", "close", P, "--project", "journal_controls")
    text = (ws / "projects" / "journal_controls.yml").read_text()
    pid = re.search(r"^id: (.*)$", text, re.M).group(1)
    (ws / "projects" / "jc_copy.yml").write_text(text.replace(pid, "0d000000-0000-4000-8000-0000000000fe")
                                                 .replace("name: journal_controls\n", "name: jc_copy\n"))
    (ws / "projects" / "journal_controls.yml").unlink()
    gl = ws / "data" / "gl" / "v1" / "transactions.csv"
    gl.write_text("".join(line for line in gl.read_text().splitlines(keepends=True) if not line.startswith("JE-005")))
    _ok(ws, "run", "jc_copy", "--period", P, "--env", "dev")
    partition = first["outputs"][0]["location"]
    before = sorted(p.name for p in Path(partition).iterdir())
    refused = cli(ws, "promote", "jc_copy", "--from", "dev", "--period", P)
    assert refused.exit_code == 1 and "PERIOD-001" in refused.stderr and "journal_controls" in refused.stderr, \
        describe(refused)
    assert sorted(p.name for p in Path(partition).iterdir()) == before
    assert spark.read.parquet(partition).count() == 10

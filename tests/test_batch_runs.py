"""Many periods in one invocation, period by period (issue 30, `--mode each`; fused batches:
tests/test_fused_batch.py): one batch id shared by the
runs of a `ledgerflow run`, a failed period that does not stop the others and skips its downstream for that
period only, `--fail-fast`, `ledgerflow retry BATCH_ID`, `runs list --batch`, and a run store written before
batches still opening.

The workspace is a copy of projects/finance keeping only the close chain (close_conversion registers
close_converted, close_consolidation reads it and registers close_consolidated, close_reporting reads that),
close_conversion reading the GL by month (data/gl/monthly/2026-0{1,2,3}.csv: 10, 2 and 2 lines).
"""
from __future__ import annotations

import json
import re
import shutil
import sqlite3
from contextlib import closing

import pytest

from cli_support import cli, describe, edit, read_output, record, run_id_of
from ledgerflow.adapters.run import interrupts
from ledgerflow.adapters.run.many import plan_selection, run_periods
from ledgerflow.adapters.store import health
from ledgerflow.adapters.store.runstore import RunStore
from ledgerflow.compiler.errors import ChecksFailed, LedgerflowError
from ledgerflow.compiler.periods import parse_periods

CHAIN = ("close_conversion", "close_consolidation", "close_reporting")
MONTHS = ("2026-01", "2026-02", "2026-03")
TYPES = {"total_reporting": "decimal(38,2)", "report_line": "string", "region": "string", "account_type": "string"}


def _chain_by_month(finance) -> None:
    for f in [*(finance / "projects").glob("ts0*.yml"), finance / "projects" / "journal_controls.yml"]:
        f.unlink()
    edit(finance, "projects/close_1_conversion.yml", "input_dataset_id: gl\n",
         "input_dataset_id: gl\nresolver_overrides: {gl: monthly}\n")


def _summary(stdout: str) -> dict[tuple[str, str], list[str]]:
    """(period, project) -> the cells of its line in the summary of several periods."""
    lines = stdout[stdout.index("Summary for 3 periods"):].splitlines()
    assert lines[1].split()[:4] == ["period", "project", "status", "rows"], lines
    return {(ln.split()[0], ln.split()[1]): ln.split()[2:] for ln in lines[2:] if ln.split()[0].startswith("2026")}


def _by(recs: list[dict]) -> dict[tuple[str, str], list[dict]]:
    out: dict = {}
    for r in recs:
        out.setdefault((r["period"]["identifier"], r["project"]["name"]), []).append(r)
    return out


def test_a_range_runs_each_project_period_in_one_batch_a_failed_period_skips_its_downstream_and_retry_completes_it(
        spark, finance):
    _chain_by_month(finance)
    feb = finance / "data" / "gl" / "monthly" / "2026-02.csv"
    kept = finance / "feb.csv.keep"
    shutil.move(feb, kept)  # February's GL is missing: close_conversion fails for February only

    result = cli(finance, "run", "--select", "close_conversion+", "--period", "2026-01..2026-03", "--mode", "each")
    assert result.exit_code == 3, describe(result)
    out = result.stdout
    assert "running period by period: --mode each" in out
    # period by period, the projects of a period in dependency order; progress names the period
    steps = [f"[{i}/9] {m} {p}" for i, (m, p) in enumerate(((m, p) for m in MONTHS for p in CHAIN), 1)]
    assert all(s in out for s in steps), out
    assert [out.index(s) for s in steps] == sorted(out.index(s) for s in steps)
    assert "  2026-03: [1] update 'Convert to USD'" in out
    table = _summary(out)
    assert {k: v[0] for k, v in table.items()} == {
        **{(m, p): "completed" for m in ("2026-01", "2026-03") for p in CHAIN},
        ("2026-02", "close_conversion"): "failed",
        ("2026-02", "close_consolidation"): "skipped", ("2026-02", "close_reporting"): "skipped"}
    assert [table[(m, "close_conversion")][1] for m in ("2026-01", "2026-03")] == ["10", "2"]
    assert "upstream project 'close_conversion' failed" in " ".join(table[("2026-02", "close_reporting")])
    assert "6 completed, 1 failed, 2 skipped" in out

    store = RunStore(str(finance))
    runs = store.list_runs()
    [batch_id] = {r.get("batch_id") for r in runs}
    assert batch_id and f"Batch {batch_id}: `ledgerflow retry {batch_id}` re-runs the failed and skipped ones" in out
    assert result.stderr.startswith("Error: 1 of 9 project-periods failed (close_conversion 2026-02); 2 skipped. ")
    by = _by(runs)
    assert sorted(by) == sorted([(m, p) for m in ("2026-01", "2026-03") for p in CHAIN]
                                + [("2026-02", "close_conversion")])
    [failed] = by[("2026-02", "close_conversion")]
    assert failed["status"] == "failed" and "2026-02" in failed["error"]
    for m, rows in (("2026-01", 10), ("2026-03", 2)):
        [conv] = by[(m, "close_conversion")]
        assert conv["status"] == "completed" and conv["period"]["identifier"] == m
        assert conv["outputs"][0]["rows"] == rows and read_output(spark, conv, 3, TYPES)[1][0]["_period"] == m
        [cons] = by[(m, "close_consolidation")]
        assert cons["upstream_runs"][0]["run_id"] == conv["run_id"]  # what its upstream registered for m
    assert len({r["run_id"] for r in runs}) == 7

    listed = cli(finance, "runs", "list", "--batch", batch_id[:13])
    assert listed.exit_code == 0, describe(listed)
    lines = listed.stdout.splitlines()
    assert lines[0].startswith(f"Batch {batch_id}  created ") and lines[0].endswith("3 projects x 3 periods, 7 runs")
    assert sorted(ln.split()[0] for ln in lines[1:8]) == sorted(r["run_id"] for r in runs)
    assert lines[8:] == ["not run  close_consolidation  2026-02", "not run  close_reporting  2026-02"]
    assert f"batch     {batch_id}" in cli(finance, "runs", "show", failed["run_id"]).stdout

    shutil.move(kept, feb)
    again = cli(finance, "retry", batch_id)
    assert again.exit_code == 0, describe(again)
    assert again.stdout.startswith(f"Retrying batch {batch_id}: 3 of 9 project-periods (1 failed, 2 skipped or not "
                                   "run)\n"), again.stdout
    assert "Running 3 project-periods, period by period: 3 projects (close_conversion, close_consolidation, " \
           "close_reporting) for 1 period (2026-02)" in again.stdout
    assert "[1/3] 2026-02 close_conversion" in again.stdout and "[3/3] 2026-02 close_reporting" in again.stdout
    by = _by(store.batch_runs(batch_id))
    assert len(store.batch_runs(batch_id)) == 10 and all(r["batch_id"] == batch_id for r in store.batch_runs(batch_id))
    conv = [r for r in by[("2026-02", "close_conversion")] if r["status"] == "completed"]
    assert len(conv) == 1 and conv[0]["outputs"][0]["rows"] == 2
    [cons] = by[("2026-02", "close_consolidation")]
    assert cons["upstream_runs"][0]["run_id"] == conv[0]["run_id"]
    assert all(len(by[(m, p)]) == 1 for m in ("2026-01", "2026-03") for p in CHAIN)  # nothing else ran again

    done = cli(finance, "retry", batch_id)
    assert done.exit_code == 1, describe(done)
    assert done.stderr.startswith(f"Error: batch {batch_id} has nothing to retry: all its 9 project-periods completed "
                                  "(10 runs recorded).")
    unknown = cli(finance, "retry", "0000dead")
    assert unknown.exit_code == 1 and "no batch '0000dead'" in unknown.stderr, describe(unknown)
    listed = cli(finance, "runs", "list", "--batch", batch_id).stdout.splitlines()
    assert listed[0].endswith("10 runs") and len(listed) == 11 and not any(ln.startswith("not run") for ln in listed)


def test_fail_fast_skips_everything_after_the_first_failure_and_one_period_is_a_batch_too(spark, finance):
    _chain_by_month(finance)
    (finance / "data" / "gl" / "monthly" / "2026-02.csv").unlink()
    result = cli(finance, "run", "close_conversion", "--period", "2026-01,2026-02,2026-03", "--fail-fast",
                 "--mode", "each")
    assert result.exit_code == 3, describe(result)
    assert "running period by period: --mode each" in result.stdout
    table = _summary(result.stdout)
    assert [table[(m, "close_conversion")][0] for m in MONTHS] == ["completed", "failed", "skipped"]
    assert " ".join(table[("2026-03", "close_conversion")]).endswith("not run: --fail-fast, after close_conversion "
                                                                     "2026-02 failed")
    recs = RunStore(str(finance)).list_runs()
    assert sorted(r["period"]["identifier"] for r in recs) == ["2026-01", "2026-02"]
    assert len({r["batch_id"] for r in recs}) == 1

    # one project, one period: the run as it always was, in a batch of its own; nothing to retry
    single = cli(finance, "run", "close_conversion", "--period", "2026-01")
    assert single.exit_code == 0, describe(single)
    assert "Summary" not in single.stdout and "running period by period" not in single.stdout
    rec = record(finance, run_id_of(single))
    assert rec["batch_id"] and rec["batch_id"] not in {r["batch_id"] for r in recs}
    listed = cli(finance, "runs", "list", "--batch", rec["batch_id"]).stdout.splitlines()
    assert listed[0].endswith("1 project x 1 period, 1 run") and listed[1].startswith(rec["run_id"])
    refused = cli(finance, "retry", rec["batch_id"])
    assert refused.exit_code == 1 and "has nothing to retry: all its 1 project-period completed" in refused.stderr


def test_ctrl_c_in_a_range_skips_the_remaining_project_periods(finance):
    """Ctrl-C stops a batch as it stops `run --select`: what is left is skipped, exit 3 (no Spark: a runner
    whose second run is interrupted)."""
    _chain_by_month(finance)
    calls: list[tuple[str, str]] = []

    class Interrupted:
        store = RunStore(str(finance))
        stop_requested = False

        def run(self, name, period, *_args, batch_id=None, **_kwargs):
            calls.append((name, period.identifier))
            if len(calls) == 2:
                raise interrupts.RunInterrupted("run 0190 was stopped before its commit point and is recorded failed.")
            return {"run_id": f"run-{len(calls)}", "outputs": [{"rows": 1}]}
    graph, names = plan_selection(str(finance), None, names=["close_conversion"])
    lines: list[str] = []
    with pytest.raises(interrupts.RunInterrupted) as stop:
        run_periods(Interrupted(), graph, names, parse_periods("2026-01..2026-04"), echo=lines.append, batch_id="b1")
    assert calls == [("close_conversion", "2026-01"), ("close_conversion", "2026-02")]
    assert str(stop.value).endswith("Not run: 2 project-periods; completed (committed, they stand): 1. See the summary "
                                    "above.")
    text = "\n".join(lines)
    assert "1 completed, 1 failed, 2 skipped" in text and "2026-04  close_conversion  skipped" in text


def test_a_check_failing_in_one_month_skips_that_months_downstream_and_exits_4(finance):
    """Every failure a failed check: exit 4 as for one period; the downstream of the failed month is skipped
    and the other months run in full (no Spark: a runner whose February conversion fails a check)."""
    _chain_by_month(finance)
    calls: list[tuple[str, str]] = []

    class OneCheckFails:
        store = RunStore(str(finance))
        stop_requested = False

        def run(self, name, period, *_args, upstream=None, batch_id=None, **_kwargs):
            calls.append((name, period.identifier))
            if (name, period.identifier) == ("close_conversion", "2026-02"):
                raise ChecksFailed("check totals_match failed", [{"name": "totals_match", "status": "failed"}])
            return {"run_id": f"run-{len(calls)}", "outputs": [{"rows": 3}]}
    graph, names = plan_selection(str(finance), "close_conversion+")
    lines: list[str] = []
    with pytest.raises(LedgerflowError) as err:
        run_periods(OneCheckFails(), graph, names, parse_periods("2026-01..2026-03"), echo=lines.append)
    assert err.value.exit_code == 4
    assert calls == [(p, m) for m in MONTHS for p in CHAIN if m != "2026-02" or p == "close_conversion"]
    text = "\n".join(lines)
    assert "2026-02  close_conversion     failed" in text and "failed check totals_match: nothing published" in text
    assert "2026-02  close_reporting      skipped" in text
    assert "6 completed, 1 failed, 2 skipped" in text


OLD_SCHEMA = """
CREATE TABLE runs (
  run_id TEXT PRIMARY KEY, parent_run_id TEXT, project_id TEXT, project_name TEXT, period TEXT,
  status TEXT, started_at TEXT, finished_at TEXT, error TEXT, record TEXT);
CREATE TABLE registered_datasets (
  name TEXT, version INTEGER, dataset_id TEXT, location TEXT, format TEXT, periods TEXT, columns TEXT,
  run_id TEXT, created_at TEXT, status TEXT NOT NULL DEFAULT 'committed', pid INTEGER, host TEXT,
  PRIMARY KEY (name, version));
CREATE TABLE leases (resource TEXT PRIMARY KEY, run_id TEXT NOT NULL, pid INTEGER, host TEXT, taken_at TEXT);
"""


def _record(run_id: str, batch_id=None) -> dict:
    return {"run_id": run_id, "parent_run_id": None, "project": {"id": "p", "name": "close_conversion"},
            "period": {"identifier": "2026-01"}, "status": "completed", "started_at": f"2026-02-01T00:00:0{run_id[-1]}",
            "finished_at": None, "error": None, "outputs": [], **({"batch_id": batch_id} if batch_id else {})}


def test_a_run_store_written_before_batches_opens_lists_and_takes_batches(finance):
    db = finance / ".ledgerflow" / "state.db"
    db.parent.mkdir()
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.executescript(OLD_SCHEMA)  # the tables as the store had them before issue 30
        old = _record("old-1")
        conn.execute("INSERT INTO runs VALUES (?,?,?,?,?,?,?,?,?,?)", (
            "old-1", None, "p", "close_conversion", "2026-01", "completed", old["started_at"], None, None,
            json.dumps(old)))
    health.check(str(db))  # not refused as "another version"
    listed = cli(finance, "runs", "list")
    assert listed.exit_code == 0 and listed.stdout.startswith("old-1  "), describe(listed)
    store = RunStore(str(finance))
    store.save_batch("b-1", "2026-02-01T00:00:00.000", {"projects": ["close_conversion"], "periods": ["2026-01"],
                                                         "allow_draft": False})
    store.save_run(_record("new-2", "b-1"))
    assert [r["run_id"] for r in store.list_runs()] == ["new-2", "old-1"]
    assert [r["run_id"] for r in store.batch_runs("b-1")] == ["new-2"]
    assert store.batch_run_ids("b-1", "close_conversion", "2026-01") == {"new-2"}
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("SELECT run_id, batch_id FROM runs ORDER BY run_id").fetchall() == [
            ("new-2", "b-1"), ("old-1", None)]
    assert store.get_batch("b-")["plan"]["projects"] == ["close_conversion"]


def test_retry_fuses_the_periods_a_project_has_left_to_run(spark, finance):
    """A project with two periods to re-run is fused over them, as `run --period RANGE` fuses (docs/fused.md);
    its downstream reads what the retried runs registered for each period."""
    _chain_by_month(finance)
    kept = {m: finance / f"{m}.csv.keep" for m in ("2026-02", "2026-03")}
    for m, keep in kept.items():
        shutil.move(finance / "data" / "gl" / "monthly" / f"{m}.csv", keep)
    result = cli(finance, "run", "--select", "close_conversion+", "--period", "2026-01..2026-03", "--mode", "each")
    assert result.exit_code == 3, describe(result)
    batch_id = re.search(r"Batch (\S+): `ledgerflow retry", result.stdout).group(1)
    for m, keep in kept.items():
        shutil.move(keep, finance / "data" / "gl" / "monthly" / f"{m}.csv")
    again = cli(finance, "retry", batch_id, "--mode", "auto")  # the batch ran --mode each: retry's default
    assert again.exit_code == 0, describe(again)
    assert "close_conversion: 2 periods fused (2026-02, 2026-03)" in again.stdout, again.stdout
    by = _by(RunStore(str(finance)).batch_runs(batch_id))
    for m in ("2026-02", "2026-03"):
        [conv] = [r for r in by[(m, "close_conversion")] if r["status"] == "completed"]
        [cons] = by[(m, "close_consolidation")]
        assert cons["status"] == "completed" and cons["upstream_runs"][0]["run_id"] == conv["run_id"]
        assert conv["outputs"][0]["rows"] > 0 and conv["batch_id"] == batch_id

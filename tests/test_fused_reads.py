"""A run records what it read (issue 43 point 4, docs/fused.md "What each period records"): the input
fingerprints a run records are those of the files its Spark work read, taken before the read and checked
again before its commit point. An input that changes in between fails the run (nothing published for its
period), in a fused range as in a period's own run; ``status`` and ``replay`` then agree with what was
published.

The red team's reproduction: a GL line appended to the last month's file while a fused range runs, after
the first month committed. The fused rows were computed (with the first month's run) before the line was
there, so the last month's rows miss it; its run recorded the fingerprint of the file *with* the line,
exited 0, ``status`` said up to date and ``replay`` gave other rows. The append happens at a real moment of
the run path (after a period's report, a pure function), the Spark part is real."""
from __future__ import annotations

from pathlib import Path

import pytest

from cli_support import add_project, cli, describe, read_output, record
from ledgerflow.adapters.run.runner import Runner

PROJECT = "gl_by_month"
MONTHS = "2026-01..2026-03"
MARCH = "data/gl/monthly/2026-03.csv"
LINE = "JE-103,1,2026-03-20,5100,CC-400,USD,99.00,99.00,Late March line,EXPENSE\n"


def _workspace(root: Path) -> None:
    add_project(root, PROJECT, """
        - {seq: 1, name: Write, type: output, arguments: {destination: {path: out/gl_by_month, format: csv}}}""",
                extra="resolver_overrides: {gl: monthly}\n")


def _append_after(monkeypatch, root: Path, period: str, rel: str = MARCH, line: str = LINE) -> list:
    """Append ``line`` to ``root/rel`` just after ``period``'s run reported its commit (once)."""
    done: list = []
    report = Runner._report

    def appending(self, ctx, rec, outputs, took):
        report(self, ctx, rec, outputs, took)
        if ctx.period.identifier == period and not done:
            with open(root / rel, "a", encoding="utf-8") as fh:
                fh.write(line)
            done.append(ctx.run_id)
    monkeypatch.setattr(Runner, "_report", appending)
    return done


def _runs(root: Path) -> dict:
    """Period identifier -> the run record of PROJECT (the last one of each period)."""
    from ledgerflow.adapters.store.runstore import RunStore
    out = {}
    for r in sorted(RunStore(str(root)).list_runs(), key=lambda r: r["started_at"]):
        if r["project"]["name"] == PROJECT:
            out[r["period"]["identifier"]] = r
    return out


def test_a_line_appended_during_a_fused_range_fails_the_period_it_touches(spark, finance, monkeypatch):
    _workspace(finance)
    appended = _append_after(monkeypatch, finance, "2026-01")
    result = cli(finance, "run", PROJECT, "--period", MONTHS, "--mode", "fused")
    assert appended, describe(result)
    assert "gl_by_month: 3 periods fused" in result.stdout, describe(result)
    assert result.exit_code == 3, describe(result)  # a range with a failed period (never 0 with rows missing the line)
    runs = _runs(finance)
    assert runs["2026-01"]["status"] == "completed" and runs["2026-02"]["status"] == "completed", runs
    march = runs["2026-03"]
    assert march["status"] == "failed", march
    err = " ".join(march["error"].split())
    assert f"INPUT-004 run {march['run_id']} (period 2026-03)" in err and f"{finance / MARCH}: changed 2026-03.csv" \
        in err and "nothing was published for period 2026-03" in err, err
    assert "INPUT-004" in result.stdout, describe(result)
    assert not (finance / "out" / "gl_by_month" / "_period=2026-03").exists()  # nothing published for March
    # what January and February record is what the fused job read, before the line was appended
    for period in ("2026-01", "2026-02"):
        [fp] = runs[period]["resolver_snapshot"]["input_fingerprints"]
        assert fp["location"].endswith(f"monthly/{period}.csv"), fp

    # status: March is not up to date (never completed); January and February, whose files did not change, are
    status = cli(finance, "status", "--period", MONTHS)
    assert status.exit_code == 0 and "none of the 2 published project-periods" in status.stdout, describe(status)
    # March's failed run recorded the file as the range read it: its replay refuses, naming the change
    refused = cli(finance, "replay", march["run_id"])
    assert refused.exit_code == 1 and "changed 2026-03.csv (size 294 -> 366" in " ".join(refused.stderr.split()), \
        describe(refused)

    # a file changed after its period completed: status says so, replay refuses (it would give other rows)
    with open(finance / "data/gl/monthly/2026-02.csv", "a", encoding="utf-8") as fh:
        fh.write(LINE.replace("2026-03-20", "2026-02-20"))
    status = cli(finance, "status", "--period", MONTHS)
    said = " ".join(status.stdout.split())
    assert "Stale: 1 of 2 published" in said and f"2026-02 {PROJECT}" in said and "changed 2026-02.csv" in said, said
    refused = cli(finance, "replay", _runs(finance)["2026-02"]["run_id"])
    assert refused.exit_code == 1 and "changed 2026-02.csv" in " ".join(refused.stderr.split()), describe(refused)

    # a run of March now reads the line and records the file with it
    again = cli(finance, "run", PROJECT, "--period", "2026-03")
    assert again.exit_code == 0, describe(again)
    fixed = _runs(finance)["2026-03"]
    _, rows = read_output(spark, fixed, 1)
    assert "Late March line" in {r["description"] for r in rows}

    # every completed period replays to identical rows: what it recorded is what it read
    for period in ("2026-01", "2026-03"):
        rec = _runs(finance)[period]
        _, want = read_output(spark, rec, 1)
        replay = cli(finance, "replay", rec["run_id"])
        assert replay.exit_code == 0, describe(replay)
        _, got = read_output(spark, _runs(finance)[period], 1)
        assert sorted(map(repr, got)) == sorted(map(repr, want)), period


def test_a_line_appended_before_a_periods_own_read_fails_it(spark, finance, monkeypatch):
    """A period's run fingerprints its inputs when it resolves them; Spark reads them later. A line appended in
    between was read and published while the record listed the file without it (replay then refused, and the
    rows were those of no recorded file)."""
    from ledgerflow.adapters.run import runner
    _workspace(finance)
    lineage = runner.output_lineage
    done: list = []

    def appending(ctx):  # called after the inputs were fingerprinted, before any Spark query
        if not done:
            with open(finance / MARCH, "a", encoding="utf-8") as fh:
                fh.write(LINE)
            done.append(ctx.run_id)
        return lineage(ctx)
    monkeypatch.setattr(runner, "output_lineage", appending)
    result = cli(finance, "run", PROJECT, "--period", "2026-03")
    assert done and result.exit_code == 1, describe(result)
    err = " ".join(result.stderr.split())
    assert f"INPUT-004 run {done[0]} (period 2026-03)" in err and "changed 2026-03.csv (size 294 -> 366" in err, err
    assert _runs(finance)["2026-03"]["status"] == "failed"
    assert not (finance / "out" / "gl_by_month" / "_period=2026-03").exists()

    again = cli(finance, "run", PROJECT, "--period", "2026-03")  # the file as it is now: read and recorded
    assert again.exit_code == 0, describe(again)
    rec = _runs(finance)["2026-03"]
    _, rows = read_output(spark, rec, 1)
    assert len(rows) == 3 and rec["resolver_snapshot"]["input_fingerprints"][0]["total_bytes"] == 366


def test_a_file_every_period_reads_fails_every_period_after_its_change(spark, finance, monkeypatch):
    """One GL file holds every month (its `_period` column): a line appended after January committed fails
    February and March, whose rows came from the range's read of that file; January, committed before, records
    the file as the range read it, which `status` then finds changed."""
    from fused_support import extend_finance
    extend_finance(finance)
    add_project(finance, PROJECT, """
        - {seq: 1, name: Write, type: output, arguments: {destination: {path: out/gl_by_month, format: csv}}}""")
    flat = "data/gl/v1/transactions.csv"
    before = (finance / flat).stat().st_size
    _append_after(monkeypatch, finance, "2026-01", flat, LINE.rstrip("\n") + ",2026-03\n")
    result = cli(finance, "run", PROJECT, "--period", MONTHS, "--mode", "fused")
    assert "gl_by_month: 3 periods fused" in result.stdout and result.exit_code == 3, describe(result)
    runs = _runs(finance)
    assert [runs[p]["status"] for p in ("2026-01", "2026-02", "2026-03")] == ["completed", "failed", "failed"]
    for period in ("2026-02", "2026-03"):
        assert "INPUT-004" in runs[period]["error"] and "changed transactions.csv" in runs[period]["error"]
    [fp] = runs["2026-01"]["resolver_snapshot"]["input_fingerprints"]
    assert fp["total_bytes"] == before  # the file as the range read it, not as it is now
    status = " ".join(cli(finance, "status", "--period", MONTHS).stdout.split())
    assert "Stale: 1 of 1 published" in status and "changed transactions.csv" in status, status


def test_a_range_fingerprints_each_location_once_as_each_period_would(tmp_path, monkeypatch):
    """fingerprint_range gives each period what fingerprint_inputs gives it, a shared location walked once;
    refuse_changed names what changed since and passes what did not (no Spark)."""
    from ledgerflow.adapters.inputs import fingerprint as fp
    from ledgerflow.adapters.inputs.read_check import InputChanged, fingerprint_range, refuse_changed
    from ledgerflow.compiler.resolver import Resolution, ResolvedLocation
    for name in ("rates.csv", "2026-01.csv", "2026-02.csv"):
        (tmp_path / name).write_text("x\n1\n")

    def res(*names):
        return Resolution("id", "gl", 1, "monthly", "dataset_resolver", "files",
                          [ResolvedLocation("path", str(tmp_path / n), "csv") for n in names])
    periods = {p: {"ds_gl": res(f"{p}.csv"), "ds_rates": res("rates.csv")} for p in ("2026-01", "2026-02")}
    walked = []
    real = fp.fingerprint_path
    monkeypatch.setattr(fp, "fingerprint_path", lambda path, budget=None: walked.append(path) or real(path, budget))
    got = fingerprint_range(periods)
    assert sorted(walked) == sorted(str(tmp_path / n) for n in ("rates.csv", "2026-01.csv", "2026-02.csv"))
    assert got == {p: fp.fingerprint_inputs(r) for p, r in periods.items()}
    # a budget that holds one period's files, not the range's: each period's files are hashed, as in its own run
    budget = fp.HashBudget
    monkeypatch.setattr("ledgerflow.adapters.inputs.read_check.HashBudget", lambda: budget(total=8))
    small = fingerprint_range(periods)
    assert all(f["sha256"] for prints in small.values() for p in prints for f in p["files"]), small
    monkeypatch.setattr(fp, "HashBudget", lambda: budget(total=8))
    assert small == {p: fp.fingerprint_inputs(r) for p, r in periods.items()}
    refuse_changed(got["2026-01"], periods["2026-01"], "2026-01", "r1")  # nothing changed
    with open(tmp_path / "2026-02.csv", "a") as fh:
        fh.write("2\n")
    refuse_changed(got["2026-01"], periods["2026-01"], "2026-01", "r1")  # not a file January read
    with pytest.raises(InputChanged, match=r"INPUT-004 run r2 \(period 2026-02\).*changed 2026-02.csv \(size 4 -> 6"):
        refuse_changed(got["2026-02"], periods["2026-02"], "2026-02", "r2")

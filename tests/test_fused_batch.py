"""Fused batches (issue 30, `--mode fused|auto`): `ledgerflow run --select ... --period RANGE` runs each
fused project once for the range, project by project in dependency order, and every project-period is still
its own run with its own outcome; a project that cannot be fused runs period by period with the reason.

The close chain of projects/finance (close_conversion reads the GL by month: data/gl/monthly/2026-0{1,2,3}.csv;
close_consolidation reads what it registers, close_reporting what that registers). The CLI is driven
in-process (tests/cli_support.py), both modes with the same pinned run start, so `_row_id` and `_updated_at`
compare too; the batch logic's failure paths use a runner without Spark."""
from __future__ import annotations

import datetime
import shutil

import pytest

from cli_support import cli, describe, edit, read_csv
from ledgerflow.adapters.run import interrupts
from ledgerflow.adapters.run.fused_batch import run_by_project
from ledgerflow.adapters.run.many import MultiRunFailed, plan_selection
from ledgerflow.adapters.store.runstore import RunStore
from ledgerflow.compiler.errors import ExecutionError
from ledgerflow.compiler.periods import parse_periods

CHAIN = ("close_conversion", "close_consolidation", "close_reporting")
MONTHS = ("2026-01", "2026-02", "2026-03")
PINNED = datetime.datetime(2026, 4, 2, 9, 30, 15, 123000)


def _by_month(finance) -> None:
    edit(finance, "projects/close_1_conversion.yml", "input_dataset_id: gl\n",
         "input_dataset_id: gl\nresolver_overrides: {gl: monthly}\n")


def _outputs(store: RunStore) -> dict:
    """(project, period, output seq) -> the written partition's location, of the store's completed runs."""
    out = {}
    for r in store.list_runs():
        assert r["status"] == "completed", r
        for o in r["outputs"]:
            out[(r["project"]["name"], r["period"]["identifier"], o["operation_seq"])] = (o["location"], o["rows"])
    return out


def test_fused_close_chain_writes_exactly_what_each_writes_and_auto_runs_a_project_with_checks_period_by_period(
        spark, finance, tmp_path, monkeypatch):
    from ledgerflow.adapters.run import fused, runner
    for module in (runner, fused):  # both invocations start every run at the same instant
        monkeypatch.setattr(module, "utcnow", lambda: PINNED)
    _by_month(finance)
    twin = shutil.copytree(finance, tmp_path / "twin")

    result = cli(finance, "run", "--select", "close_conversion+", "--period", "2026-01..2026-03", "--mode", "fused")
    assert result.exit_code == 0, describe(result)
    out = result.stdout
    assert "fused: close_conversion, close_consolidation, close_reporting (3 periods in one Spark job per " \
           "statement)" in out
    assert "Running 9 project-periods, project by project: 3 projects" in out
    steps = [f"[{i}/9] {m} {p} (fused)" for i, (p, m) in enumerate(((p, m) for p in CHAIN for m in MONTHS), 1)]
    assert [out.index(s) for s in steps] == sorted(out.index(s) for s in steps), out  # project by project
    assert out.count("(fused, 3 periods)") >= 3  # each project's statements once for the range
    assert "9 completed, 0 failed, 0 skipped" in out
    fused_store, each_store = RunStore(str(finance)), RunStore(str(twin))
    runs = fused_store.list_runs()
    assert len(runs) == 9 and len({r["run_id"] for r in runs}) == 9 and len({r["batch_id"] for r in runs}) == 1
    cons = {r["period"]["identifier"]: r for r in runs if r["project"]["name"] == "close_consolidation"}
    conv = {r["period"]["identifier"]: r for r in runs if r["project"]["name"] == "close_conversion"}
    assert all(cons[m]["upstream_runs"][0]["run_id"] == conv[m]["run_id"] for m in MONTHS)  # its period's version

    each = cli(twin, "run", "--select", "close_conversion+", "--period", "2026-01..2026-03", "--mode", "each")
    assert each.exit_code == 0, describe(each)
    assert "running period by period: --mode each" in each.stdout and "(fused" not in each.stdout
    got, want = _outputs(fused_store), _outputs(each_store)
    assert sorted(got) == sorted(want) and len(got) == 9
    for key in want:
        a, b = read_csv(spark, got[key][0]), read_csv(spark, want[key][0])
        assert a.columns == b.columns and got[key][1] == want[key][1], key
        if key[0] == "close_conversion":  # an output keeping the system columns: run-start-derived ones compared too
            assert "_row_id" in a.columns and "_updated_at" in a.columns, a.columns
        assert a.exceptAll(b).count() == 0 and b.exceptAll(a).count() == 0, key  # every column, duplicates count
    bridges = {(r["project"]["name"], r["period"]["identifier"]): r.get("bridge") for r in each_store.list_runs()}
    assert all(r.get("bridge") == bridges[(r["project"]["name"], r["period"]["identifier"])] for r in runs)

    # auto: a project with checks runs period by period, the reason printed; the proven one is fused
    auto = cli(finance, "run", "--select", "journal_controls", "--select", "close_conversion", "--period",
                "2026-01,2026-02")
    assert "running period by period: project journal_controls cannot be fused: the project declares checks" \
           in auto.stdout, describe(auto)
    assert "fused: close_conversion (2 periods in one Spark job per statement)" in auto.stdout
    later = [r for r in fused_store.list_runs() if r["batch_id"] != runs[0]["batch_id"]]
    assert sorted((r["project"]["name"], r["period"]["identifier"]) for r in later) == sorted(
        (p, m) for p in ("journal_controls", "close_conversion") for m in MONTHS[:2])
    assert auto.stdout.count("(fused, 2 periods)") == 1


class FakeRunner:
    """A runner without Spark: ``execute`` (what run_range calls per period) records the call and returns a
    record registering one version per output, or raises what ``fail`` says for a (project, period)."""

    def __init__(self, finance, fail: dict):
        self.root = str(finance)
        self.store = RunStore(self.root)
        self.memory = None
        self.stop_requested = False
        self.echo = lambda _line: None
        self.fail = fail
        self.calls: list[tuple] = []

    def execute(self, ctx, strategy, prefix=None):
        key = (ctx.project.name, ctx.period.identifier)
        self.calls.append((*key, {d: e["run_id"] for d, e in ctx.upstream.items()}))
        if key in self.fail:
            raise self.fail[key]
        regs = {"close_conversion": "close_converted", "close_consolidation": "close_consolidated"}
        outputs = [{"rows": 2, "operation_seq": 9}]
        if ctx.project.name in regs:
            outputs[0].update(registered_dataset=regs[ctx.project.name], registered_version=len(self.calls))
        return {"run_id": f"run-{len(self.calls)}", "outputs": outputs}

    def load_workspace(self):
        from ledgerflow.compiler.workspace import load_workspace
        return load_workspace(self.root, extra_datasets=self.store.registered_datasets)

    def run(self, name, period, *_args, **_kwargs):  # one period left: run on its own
        raise AssertionError("not expected here")


def _fused_chain(finance, fail, fail_fast=False):
    graph, names = plan_selection(str(finance), "close_conversion+")
    runner = FakeRunner(finance, fail)
    answers = {n: ("fused", "3 periods") for n in names}
    lines: list[str] = []
    return runner, lines, lambda: run_by_project(runner, graph, names, parse_periods("2026-01..2026-03"), answers,
                                                 echo=lines.append, batch_id="b-1", fail_fast=fail_fast)


def test_a_failed_fused_period_skips_its_downstream_for_that_period_only(finance):
    _by_month(finance)
    runner, lines, go = _fused_chain(finance, {("close_conversion", "2026-02"): ExecutionError("February broke")})
    with pytest.raises(MultiRunFailed) as err:
        go()
    assert err.value.exit_code == 3
    assert [c[:2] for c in runner.calls] == [(p, m) for p in CHAIN for m in MONTHS if m != "2026-02" or
                                             p == "close_conversion"]
    ups = {c[:2]: c[2] for c in runner.calls}
    assert ups[("close_consolidation", "2026-03")] == {"close_converted": "run-3"}  # March's own upstream run
    text = "\n".join(lines)
    assert "2026-02  close_consolidation  skipped" in text and "upstream project 'close_conversion' failed" in text
    assert "6 completed, 1 failed, 2 skipped" in text and "February broke" in text


def test_fail_fast_and_ctrl_c_stop_a_fused_range(finance):
    _by_month(finance)
    runner, lines, go = _fused_chain(finance, {("close_conversion", "2026-02"): ExecutionError("February broke")},
                                     fail_fast=True)
    with pytest.raises(MultiRunFailed):
        go()
    assert [c[:2] for c in runner.calls] == [("close_conversion", "2026-01"), ("close_conversion", "2026-02")]
    assert "not run: --fail-fast, after close_conversion 2026-02 failed" in "\n".join(lines)

    stop = interrupts.RunInterrupted("run 0190 was stopped before its commit point and is recorded failed.")
    runner, lines, go = _fused_chain(finance, {("close_consolidation", "2026-02"): stop})
    with pytest.raises(interrupts.RunInterrupted) as err:
        go()
    assert runner.calls[-1][:2] == ("close_consolidation", "2026-02") and len(runner.calls) == 5
    assert str(err.value).endswith("Not run: 4 project-periods; completed (committed, they stand): 4. See the "
                                   "summary above.")
    assert "4 completed, 1 failed, 4 skipped" in "\n".join(lines)

"""A batch runs its projects upstream first even when only some of their periods are left (``retry``, ``run
--stale``): a review found the downstream project run before its upstream when the upstream's earliest pending
period came later, reading the upstream's old version and exiting 0."""
from __future__ import annotations

from types import SimpleNamespace

from ledgerflow.adapters.run import scheduler
from ledgerflow.adapters.run.batch_state import BatchPlan
from ledgerflow.adapters.run.modes import EACH, FUSED
from ledgerflow.compiler.periods import parse_period

PERIODS = [parse_period(p) for p in ("2026-01", "2026-02", "2026-03")]


def _order(todo: set, modes: dict, monkeypatch) -> list[tuple[str, str]]:
    names = ["conversion", "consolidation", "reporting"]  # run order: upstream first
    plan = BatchPlan(graph=None, names=names, periods=PERIODS, settings=None,
                     answers={n: (modes[n], "") for n in names}, todo=frozenset(todo))
    ran: list[tuple[str, str]] = []
    state = SimpleNamespace(plan=plan, outcomes={(n, p.identifier): None for n, p in plan.keys()},
                            unit=lambda n, p: (n, p.identifier), run_one=lambda unit: ran.append(unit), single=False)
    monkeypatch.setattr(scheduler, "run_fused", lambda st, name, periods: ran.extend((name, p.identifier)
                                                                                     for p in periods))
    for step in scheduler._steps(state, by_period=False):
        step()
    assert "conversion, consolidation, reporting" in scheduler._headline(state, False)
    return ran


def test_an_upstream_with_only_a_later_period_left_still_runs_first(monkeypatch):
    todo = {("consolidation", "2026-01"), ("consolidation", "2026-02"), ("reporting", "2026-01"),
            ("reporting", "2026-02"), ("conversion", "2026-02")}
    for modes in ({"conversion": FUSED, "consolidation": FUSED, "reporting": FUSED},
                  {"conversion": EACH, "consolidation": FUSED, "reporting": EACH}):
        ran = _order(todo, modes, monkeypatch)
        assert ran[0] == ("conversion", "2026-02"), ran
        assert [n for n, _ in ran] == ["conversion", "consolidation", "consolidation", "reporting", "reporting"]

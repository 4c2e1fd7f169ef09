"""Kinds as data (issue 44, point 4): each operation kind and each check kind is one complete registry entry, an
incomplete entry is refused when it is made, and the stages that used to switch on a kind's name (the bridge, the
diff's prints, the fused rewrite, the check reader, the run's judging) ask the registry, with no default standing
in for a kind they do not know."""
from __future__ import annotations

import dataclasses
from enum import Enum
from pathlib import Path
from types import SimpleNamespace
from typing import ClassVar

import pytest
from sqlglot import exp

from conftest import PROJECTS
from ledgerflow.adapters.run import bridge as run_bridge  # noqa: F401  (registers the reconcile judge)
from ledgerflow.adapters.run import check_eval
from ledgerflow.compiler import fused as fz
from ledgerflow.compiler import types as T
from ledgerflow.compiler import bridge
from ledgerflow.compiler.check_loading import load_check
from ledgerflow.compiler.checks.plan import CheckKind
from ledgerflow.compiler.compile import compile_project
from ledgerflow.compiler.diff import prints
from ledgerflow.compiler.errors import DiagnosticCollector, Location
from ledgerflow.compiler.kinds import registry
from ledgerflow.compiler.kinds.entry import BridgeEffect, CheckKindEntry, IncompleteKind, OperationKindEntry, YamlShape
from ledgerflow.compiler.model import Operation, OperationKind
from ledgerflow.compiler.periods import parse_period
from ledgerflow.compiler.plan import Column, OperationPlan, Plan
from ledgerflow.compiler.workspace import load_workspace
from ledgerflow.compiler.yaml_source import load_yaml_text

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


class Fake(str, Enum):
    """A kind no stage knows by name."""

    MERGE = "merge"


@dataclasses.dataclass
class MergeOperation(Operation):
    kind: ClassVar = Fake.MERGE


def _fn(*args, **kwargs):
    return None


def _merge_entry(**changes) -> OperationKindEntry:
    parts = dict(kind=Fake.MERGE, model=MergeOperation, arguments=(("into",), ("into",)), load=_fn, binder=_fn,
                 template="merge", lowering=_fn, fused=_fn, not_fused=None, bridge=BridgeEffect.CREATES_ROWS,
                 fingerprint=lambda plan, shape: [plan.operation.name])
    parts.update(changes)
    return OperationKindEntry(**parts)


def test_every_operation_kind_has_one_complete_entry():
    assert set(registry.OPERATIONS) == set(OperationKind)
    for kind, entry in registry.OPERATIONS.items():
        assert entry.kind == kind and entry.model.kind == kind
        for f in dataclasses.fields(entry):
            value = getattr(entry, f.name)
            if f.name in ("fused", "not_fused"):
                continue
            assert value is not None, (kind, f.name)
            if f.name in OperationKindEntry.FUNCTIONS:
                assert callable(value), (kind, f.name)
        assert (entry.fused is None) != (entry.not_fused is None)
        assert (TEMPLATES / f"{entry.template}.sql.j2").is_file(), kind
        assert isinstance(entry.bridge, BridgeEffect)
        allowed, required = entry.arguments
        assert set(required) <= set(allowed)


@pytest.mark.parametrize("changes, message", [
    ({"binder": None}, "has no binder"),
    ({"fingerprint": None}, "has no fingerprint"),
    ({"lowering": "lower_merge"}, "lowering of the kind merge is not a function"),
    ({"fused": None}, "exactly one of a fused rewrite and the reason"),
    ({"not_fused": "it rewrites rows in place"}, "exactly one of a fused rewrite and the reason"),
    ({"model": Operation}, "of another kind"),
    ({"bridge": "creates_rows"}, "not a BridgeEffect"),
])
def test_an_incomplete_entry_is_refused_when_it_is_made(changes, message):
    with pytest.raises(IncompleteKind, match=message):
        _merge_entry(**changes)


def test_the_registry_refuses_a_missing_kind_and_a_kind_twice():
    entries = [e for k, e in registry.OPERATIONS.items() if k != OperationKind.DELETE]
    with pytest.raises(IncompleteKind, match="no entry for the kind.* delete"):
        registry.register(entries, OperationKind)
    with pytest.raises(IncompleteKind, match="two entries"):
        registry.register([*registry.OPERATIONS.values(), registry.OPERATIONS[OperationKind.UPDATE]], OperationKind)
    with pytest.raises(IncompleteKind, match="no entry for the operation kind merge"):
        registry.operation_kind(Fake.MERGE)


def _merge_plan(name: str = "m") -> OperationPlan:
    op = MergeOperation(seq=2, name=name, id="x")
    return OperationPlan(op, "op_002_merge", {"amount": Column("amount", T.from_sql("decimal(18,2)"),
                                                                exp.column("amount", quoted=True))})


def test_the_bridge_asks_a_new_kinds_entry_whether_it_moves_an_amount(monkeypatch):
    # before the registry, a kind the bridge did not name moved no amount (its switch returned False)
    monkeypatch.setitem(registry.OPERATIONS, Fake.MERGE, _merge_entry())
    assert bridge._changes(_merge_plan(), {"amount"}) is True
    monkeypatch.setitem(registry.OPERATIONS, Fake.MERGE, _merge_entry(bridge=BridgeEffect.NONE))
    assert bridge._changes(_merge_plan(), {"amount"}) is False
    monkeypatch.delitem(registry.OPERATIONS, Fake.MERGE)
    with pytest.raises(IncompleteKind):
        bridge._changes(_merge_plan(), {"amount"})


def test_the_diff_prints_a_new_kinds_own_arguments(monkeypatch):
    # before the registry, a kind the prints did not name had its own arguments left out: a change was invisible
    monkeypatch.setitem(registry.OPERATIONS, Fake.MERGE, _merge_entry())
    plan = Plan(None, None, [], None, [], {}, [])
    walker = prints._Walker(None, plan)
    assert walker.local(_merge_plan("a")) != walker.local(_merge_plan("b"))
    assert walker.local(_merge_plan("a")) == walker.local(_merge_plan("a"))


def test_a_kind_that_cannot_be_fused_is_refused_with_its_reason(monkeypatch):
    ws = load_workspace(str(PROJECTS / "finance"))
    compiled = compile_project(ws, ws.find_project("ts05_aggregate_by_type"))
    months = [parse_period(p) for p in ("2026-01", "2026-02")]
    assert fz.refusal(compiled, months) is None
    entry = registry.OPERATIONS[OperationKind.AGGREGATE]
    monkeypatch.setitem(registry.OPERATIONS, OperationKind.AGGREGATE,
                        dataclasses.replace(entry, fused=None, not_fused="its groups span periods"))
    assert fz.refusal(compiled, months) == ("fused execution does not rewrite operation 2 of kind aggregate "
                                            "(its groups span periods)")


# ------------------------------------------------------------------------------------------------ check kinds
def test_every_check_kind_has_one_complete_entry_and_a_judge_in_the_run():
    assert set(registry.CHECKS) == set(CheckKind)
    assert registry.CHECK_NAMES == tuple(k.value for k in CheckKind)
    for kind, entry in registry.CHECKS.items():
        assert entry.kind == kind and kind.family in ("row", "set", "reconcile")
        for f in dataclasses.fields(entry):
            assert getattr(entry, f.name) is not None, (kind, f.name)
        assert callable(entry.binder) and callable(entry.sql), kind
        assert (entry.yaml == YamlShape.MAPPING) == bool(entry.keys[0])
        assert callable(check_eval.JUDGES.get(entry.judge)), f"no judge {entry.judge!r} for the check kind {kind.value}"


@pytest.mark.parametrize("changes, message", [
    ({"binder": None}, "has no binder"),
    ({"sql": "SELECT 1"}, "sql of the kind unique is not a function"),
    ({"judge": ""}, "names no judge"),
    ({"keys": (("min",), ())}, "keys are for a value written as a mapping"),
    ({"kind": SimpleNamespace(value="unique")}, "has no family"),
])
def test_an_incomplete_check_entry_is_refused_when_it_is_made(changes, message):
    parts = dict(kind=CheckKind.UNIQUE, yaml=YamlShape.COLUMNS, keys=((), ()), binder=_fn, sql=_fn, judge="unique")
    parts.update(changes)
    with pytest.raises(IncompleteKind, match=message):
        CheckKindEntry(**parts)


def test_a_set_check_is_judged_by_the_judge_its_entry_names(monkeypatch):
    # before the registry, set_result switched on the kind's name and read the rows itself
    monkeypatch.setitem(registry.CHECKS, CheckKind.UNIQUE,
                        dataclasses.replace(registry.CHECKS[CheckKind.UNIQUE], judge="by_test"))
    monkeypatch.setitem(check_eval.JUDGES, "by_test", lambda spark, check, frame, rows: ("judged", check.name, rows))
    check = SimpleNamespace(name="keys_unique", kind=CheckKind.UNIQUE)
    assert check_eval.set_result(None, check, None, 7) == ("judged", "keys_unique", 7)


def test_a_check_kinds_yaml_keys_are_its_entrys(monkeypatch):
    # before the registry, the reader had its own table of each kind's keys
    text = "name: enough_rows\nrow_count: {min: 1, exactly: 3}\n"
    errors = DiagnosticCollector()
    load_check(load_yaml_text(text, "checks.yml"), Location("checks.yml", 1, 1), errors)
    assert [d.code for d in errors.diagnostics] == ["YAML-003"]
    entry = registry.CHECKS[CheckKind.ROW_COUNT]
    monkeypatch.setitem(registry.CHECKS, CheckKind.ROW_COUNT, dataclasses.replace(entry, keys=(("min", "max", "exactly"), ())))
    errors = DiagnosticCollector()
    check = load_check(load_yaml_text(text, "checks.yml"), Location("checks.yml", 1, 1), errors)
    assert errors.diagnostics == [] and check.args["exactly"] == 3

"""A batch loads its workspace once and keeps it as a fresh load would give it (adapters/run/batch_workspace.py).

Every run of a batch used to load the whole workspace again (each file parsed, each producing project bound): at
1,000 projects a second per run. The run store is stood in for by a list of the catalog entries
``RunStore.registered_datasets`` returns; after each change the kept workspace is compared with a fresh load, field
by field. No Spark."""
from __future__ import annotations

from cli_support import edit
from ledgerflow.adapters.run import runner as runner_module
from ledgerflow.adapters.run import batch_workspace
from ledgerflow.adapters.run.batch_workspace import STORE_FILE, KeptWorkspace
from ledgerflow.compiler.model import ColumnDef, Dataset, DatasetVersion
from ledgerflow.compiler.registered import registered_id
from ledgerflow.compiler.workspace import load_workspace


def _stored(name: str, versions: list[int], columns: list[tuple[str, str]]) -> Dataset:
    """A registered dataset as the run store lists it (RunStore.registered_datasets)."""
    return Dataset(id=registered_id(name), name=name, status="active", table_name=name, temporal_mode="period",
                   columns=[ColumnDef(c, t) for c, t in columns], versions=[DatasetVersion(v) for v in versions],
                   file=STORE_FILE, registered=True)


def _columns(ws, name: str) -> list[tuple[str, str]]:
    return [(c.name, c.type) for c in ws.find_dataset(name).columns]


def _same_as_fresh(kept, root: str, store: list) -> None:
    fresh = load_workspace(root, extra_datasets=lambda: list(store))
    ws = kept.ws
    assert ws.datasets == fresh.datasets
    assert ws.projects == fresh.projects
    assert (ws.unavailable, ws.inexact_registered) == (fresh.unavailable, fresh.inexact_registered)
    assert sorted(ws.producer_plans) == sorted(fresh.producer_plans)


def test_what_a_batch_registers_updates_the_one_load_and_anything_else_loads_afresh(finance):
    root = str(finance)
    store: list[Dataset] = []
    kept = KeptWorkspace(root, lambda: list(store))
    first = kept.current()
    converted = _columns(first, "close_converted")
    consolidated = _columns(first, "close_consolidated")
    steps = [  # (what the store lists now, a fresh load expected)
        ([_stored("close_converted", [1], converted)], False),  # registered for the first time
        ([_stored("close_converted", [1, 2], converted)], False),  # a second version
        ([_stored("close_converted", [1, 2], converted), _stored("close_consolidated", [1], consolidated)], False),
        ([_stored("close_converted", [1, 2], converted), _stored("close_consolidated", [1], consolidated),
          _stored("left_by_a_removed_project", [1], [("a", "string")])], True),  # the store's own entry
        ([_stored("close_converted", [1, 2], converted)], True),  # a name left the store
    ]
    loads = 1
    for listed, afresh in steps:
        store[:] = listed
        before = kept.ws
        assert kept.current() is (before if not afresh else kept.ws)
        loads += afresh
        assert (kept.loads, kept.ws is before) == (loads, not afresh)
        _same_as_fresh(kept, root, store)
    assert kept.ws.find_dataset("close_converted").versions == [DatasetVersion(1), DatasetVersion(2)]


def test_a_version_some_project_pins_or_a_type_the_store_gives_loads_afresh(finance):
    edit(finance, "projects/close_2_consolidation.yml", "input_dataset_id: close_converted",
         "input_dataset_id: close_converted\ninput_dataset_version: 1")
    root = str(finance)
    store: list[Dataset] = []
    kept = KeptWorkspace(root, lambda: list(store))
    converted = _columns(kept.current(), "close_converted")
    store[:] = [_stored("close_converted", [1], converted)]  # a pinned dataset's versions change how it binds
    kept.current()
    assert kept.loads == 2
    _same_as_fresh(kept, root, store)
    kept.ws.inexact_registered.add("close_consolidated")  # as if a column were a computed number
    store.append(_stored("close_consolidated", [1], _columns(kept.ws, "close_consolidated")))
    kept.current()
    assert kept.loads == 3
    _same_as_fresh(kept, root, store)


def test_a_batch_asks_for_the_workspace_once_per_run_but_loads_it_once(finance, monkeypatch):
    """Through the scheduler (a batch of four projects, each failing at its input before Spark starts): the
    files are read once for the batch (the planning's load aside), not once per run."""
    loads = []
    real = runner_module.load_workspace

    def counted(root, extra_datasets=None):
        loads.append(root)
        return real(root, extra_datasets=extra_datasets)

    monkeypatch.setattr(runner_module, "load_workspace", counted)  # what a run loaded for itself
    monkeypatch.setattr(batch_workspace, "load_workspace", counted)  # the batch's loads
    (finance / "data" / "gl").rename(finance / "data" / "gl_away")  # every project below reads gl
    from cli_support import cli
    result = cli(finance, "run", "--select", "ts01_output_only ts03_fx_conversion ts05_aggregate_by_type "
                                            "ts07_output_columns", "--period", "2026-01")
    assert result.exit_code == 3 and "4 of 4 projects failed" in result.stderr, result.stderr
    assert len(loads) == 1, loads


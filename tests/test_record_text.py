"""A run record's text in the run store (store/published.py ``record_text``): the records a promotion copies are
written by orjson, the same values read back; whatever orjson would not write exactly is written by json."""
from __future__ import annotations

import json
import math

from ledgerflow.adapters.store.published import record_text
from ledgerflow.adapters.store.restatements import superseded_by
from ledgerflow.adapters.store.runstore import RunStore


def _record(run_id: str, **extra) -> dict:
    return {"run_id": run_id, "project": {"id": "p-id", "name": "p"}, "period": {"identifier": "2026-01"},
            "status": "completed", "started_at": "a", "finished_at": "b", **extra}


def test_a_plain_record_is_written_by_orjson_with_the_same_values():
    rec = _record("r1", rows=12, amount=-9282.25, big=2 ** 63 - 1, nested=[{"a": None}],
                  text="é \" \\ / \n \u2028 <x>")
    text = record_text(rec, plain=True)
    assert json.loads(text) == rec and text != json.dumps(rec)  # orjson's spelling: no spaces, UTF-8
    assert '"rows":12' in text
    assert record_text(rec) == json.dumps(rec, default=str)  # not plain: the standard library's text, as before


def test_what_orjson_would_not_write_exactly_is_written_by_json():
    for value in (2 ** 64, -(2 ** 63) - 1, "\ud800 lone", {1: "key no string"}):
        rec = _record("r2", value=value)
        assert record_text(rec, plain=True) == json.dumps(rec, default=str), value
    nan = _record("r3", ratio=float("nan"))  # never called plain (orjson would write null): json writes NaN
    assert math.isnan(json.loads(record_text(nan))["ratio"])


def test_a_record_with_nan_or_infinity_is_not_plain(tmp_path):
    prod = RunStore(str(tmp_path))
    with prod._immediate() as conn:
        for run_id, period, text in (("r1", "2026-01", json.dumps(_record("r1", x=1.5))),
                                     ("r2", "2026-02", json.dumps(_record("r2", x=float("inf")))),
                                     ("r3", "2026-03", json.dumps(_record("r3", s="NaN", x=float("nan"))))):
            conn.execute("INSERT INTO runs (run_id, project_id, project_name, period, status, started_at, "
                         "finished_at, record) VALUES (?,?,?,?,?,?,?,?)",
                         (run_id, "p-id", "p", period, "completed", "a", "b", text))
    own = dict(prod.own_last_records(["2026-01", "2026-02", "2026-03"], ["p"]))
    assert [own[("p", p)][2] for p in ("2026-01", "2026-02", "2026-03")] == [True, False, False]
    assert own[("p", "2026-02")][0]["x"] == float("inf")


def test_a_restatement_written_either_way_is_found(tmp_path):
    store = RunStore(str(tmp_path))
    old = _record("old")
    with store._immediate() as conn:
        for run_id, plain in (("new1", False), ("new2", True)):
            rec = _record(run_id, finished_at=run_id, restatement={"supersedes_run_id": "old", "reason": "fix"})
            conn.execute("INSERT INTO runs (run_id, project_id, project_name, period, status, started_at, "
                         "finished_at, record) VALUES (?,?,?,?,?,?,?,?)",
                         (run_id, "p-id", "p", "2026-01", "completed", "a", run_id, record_text(rec, plain)))
    assert [r["run_id"] for r in superseded_by(store, old)] == ["new1", "new2"]

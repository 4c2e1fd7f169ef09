"""What a promotion writes for each project-period it copies: the source's record under a run id of its own (drawn
with the others at once, each a UUIDv7), its outputs and the source environment's folders its snapshot names where
the target shows them; written as the plan checks each project-period, keeping only what is read after it."""
from __future__ import annotations

import datetime
import json
import uuid

from ledgerflow.adapters.envs import promote
from ledgerflow.adapters.envs.promoted_records import Recording, _names, promoted_run, write_ahead
from ledgerflow.adapters.run.context import new_run_ids
from ledgerflow.adapters.store.published import stored_inputs

FOLDER = "/ws/out/close_converted/.lf_envs/dev"


def _record(snapshot: dict) -> dict:
    return {"run_id": "r1", "project": {"id": "p", "name": "close"}, "period": {"identifier": "2026-01"},
            "status": "completed", "outputs": [{"location": "/ws/out/close/.lf_envs/dev/_period=2026-01"}],
            "commit": {"partitions": []}, "resolver_snapshot": snapshot}


def test_the_promoted_run_names_the_targets_folder_only_where_the_source_named_its_own():
    for snapshot, rewritten in (({"resolutions": {"v": {"locations": [FOLDER]}}}, True),
                                ({"resolutions": {"v": {"locations": [FOLDER + "/_period=2026-01"]}}}, False),
                                ({"resolutions": {"v": {"locations": ["/ws/data/gl.csv"]}}}, False)):
        item = promote.PromotedPeriod("close", "2026-01", _record(snapshot))
        run = promoted_run(item, "dev", "prod", "promo", "me", "2026-02-01T00:00:00.000", "r2")
        locations = run["resolver_snapshot"]["resolutions"]["v"]["locations"]
        assert (locations == ["/ws/out/close_converted"]) is rewritten
        assert run["resolver_snapshot"] == snapshot or rewritten  # a partition inside the folder is not the folder
        assert run["run_id"] == "r2" and run["env"] == "prod" and run["promotion"]["source_run_id"] == "r1"
        assert run["outputs"][0]["location"] == "/ws/out/close/_period=2026-01"


def test_run_ids_drawn_at_once_are_distinct_uuid7s_of_their_moment():
    now = datetime.datetime(2026, 12, 7, 9, 30, 0, 123000)
    ids = new_run_ids(now, 1800)
    assert len(set(ids)) == 1800
    ms = int(now.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000)
    for run_id in ids[:50]:
        value = uuid.UUID(run_id)
        assert value.version == 7 and value.variant == uuid.RFC_4122 and value.int >> 80 == ms


def test_a_snapshot_is_searched_for_the_source_folder_whatever_it_holds():
    needle = "/.lf_envs/dev"
    assert _names({"a": [{"location": "/w/out/.lf_envs/dev"}]}, needle)
    assert not _names({"a": [{"location": "/w/out/_period=2026-01"}], "n": 1.5, "env": "dev"}, needle)
    # what orjson refuses (an integer beyond 64 bits, a lone surrogate) is searched in json's text
    assert _names({"big": 2 ** 70, "where": "/w/.lf_envs/dev/x"}, needle)
    assert not _names({"big": 2 ** 70, "odd": "\ud800"}, needle)


def test_a_record_written_ahead_is_the_promoted_run_and_only_what_is_read_later_is_kept():
    recording = Recording("promo", "2026-02-01T00:00:00.000", "me", datetime.datetime(2026, 2, 1))
    for snapshot in ({"resolutions": {"v": {"locations": [FOLDER]}}}, {"resolutions": {"v": {"version": 3}}}):
        source = {**_record(snapshot), "lineage": [{"column": "a", "from": ["x"] * 3}], "batch_id": "b"}
        item = promote.PromotedPeriod("close", "2026-01", source, stored=("{}", "[]"), plain=True)
        write_ahead(item, "dev", "prod", recording)
        row, text = item.promoted
        written = json.loads(text)
        assert written == promoted_run(promote.PromotedPeriod("close", "2026-01", source), "dev", "prod", "promo",
                                       "me", "2026-02-01T00:00:00.000", row["run_id"])
        assert written["lineage"] == source["lineage"] and "batch_id" not in written and "batch_id" not in row
        assert {k: written[k] for k in row} == row and row["env"] == "prod" and row["status"] == "completed"
        assert sorted(item.record) == ["period", "project", "resolver_snapshot", "run_id"]
        assert item.record["resolver_snapshot"] is source["resolver_snapshot"]  # the source's, for the upstream check
        # the registry texts: the source's while its snapshot is kept, else the promoted record's own
        rewritten = "locations" in str(snapshot)
        assert item.stored == (stored_inputs(written) if rewritten else ("{}", "[]"))
    assert len({recording.run_id() for _ in range(2000)}) == 2000


def test_the_plan_writes_each_record_before_it_reads_the_next(tmp_path, monkeypatch):
    """``promote`` never holds thousands of parsed records: each is read, checked and written ahead in turn, and the
    promotion stores the texts written then (the same records a promotion at the commit point writes)."""
    import sqlite3

    from bench.promotion_scale import build
    from cli_support import cli, describe
    from ledgerflow.adapters.envs import promoted_records
    from ledgerflow.adapters.store.published import PublishedTable
    build(tmp_path, 2, ["2024-01", "2024-02"])
    steps = []
    reading, writing = PublishedTable.own_last_records, promoted_records.write_ahead

    def read(self, *args):
        for key, found in reading(self, *args):
            steps.append(("read", key))
            yield key, found

    def write(item, *args):
        steps.append(("written", (item.project, item.period)))
        writing(item, *args)
    monkeypatch.setattr(PublishedTable, "own_last_records", read)
    monkeypatch.setattr(promote, "write_ahead", write)
    result = cli(tmp_path, "promote", "--all", "--from", "dev", "--period", "2024-01..2024-02")
    assert result.exit_code == 0, describe(result)
    assert len(steps) == 8 and all(steps[k][0] == "read" and steps[k + 1] == ("written", steps[k][1])
                                   for k in range(0, 8, 2)), steps
    with sqlite3.connect(tmp_path / ".ledgerflow" / "state.db") as conn:
        rows = conn.execute("SELECT run_id, record, inputs, input_files FROM runs WHERE env IS NULL AND record LIKE "
                            "'%\"promotion\"%'").fetchall()
    assert len(rows) == 4
    for run_id, text, inputs, files in rows:
        record = json.loads(text)
        assert record["run_id"] == run_id and record["env"] == "prod" and record["promotion"]["from"] == "dev"
        assert (inputs, files) == stored_inputs(record)  # what its own record says it read


def _opened(root):
    from bench.promotion_scale import build
    from ledgerflow.adapters.commit.open_store import open_store
    build(root, 1, ["2024-01"])
    return open_store(str(root), "dev"), open_store(str(root), "prod")


def test_a_run_completed_in_the_target_while_the_promotion_was_planned_stops_it_before_any_change(tmp_path):
    import os

    import pytest

    from ledgerflow.adapters.envs.promote import PromotionRefused, plan
    source, target = _opened(tmp_path)
    recording = Recording.start("me")
    items = plan(source, target, ["p0000"], ["2024-01"], recording=recording)
    partition = tmp_path / "out" / "p0000" / "_period=2024-01"
    before = sorted(os.listdir(partition)), (partition / ".lf_version").read_text()
    with target._immediate() as conn:  # a run of prod completes the project-period meanwhile
        conn.execute("INSERT INTO runs (run_id, project_id, project_name, period, status, started_at, finished_at, "
                     "record) VALUES ('late', 'x', 'p0000', '2024-01', 'completed', ?, ?, '{}')",
                     (recording.at, recording.at))
    with pytest.raises(PromotionRefused, match="RUN-001 run late of p0000 completed 2024-01 in 'prod'"):
        promote.promote(source, target, items, recording.by, recording=recording)
    assert (sorted(os.listdir(partition)), (partition / ".lf_version").read_text()) == before
    assert not target.completed_since(recording.at, ["p0000"], ["2024-02"])
    assert [r for r in target.completed_since(recording.at, ["p0000"], ["2024-01"])] == [("p0000", "2024-01", "late")]


def test_a_restatements_record_and_journal_keep_a_nan_of_its_data_diff(tmp_path):
    import math
    import sqlite3

    from ledgerflow.adapters.envs.promote import plan
    source, target = _opened(tmp_path)
    items = plan(source, target, ["p0000"], ["2024-01"], restating=True)
    assert items[0].plain  # its source's record: JSON's own values only
    block = {"reason": "fix", "by": "me", "supersedes_run_id": "old", "data_diff": {"base": float("nan")}}
    done = promote.promote(source, target, items, "me", restatement=block)
    with sqlite3.connect(tmp_path / ".ledgerflow" / "state.db") as conn:
        [(text,)] = conn.execute("SELECT record FROM runs WHERE run_id = ?", (done["runs"][0],)).fetchall()
    assert "NaN" in text and math.isnan(json.loads(text)["restatement"]["data_diff"]["base"])
    journal = (tmp_path / "target" / "promotions" / f"{done['promotion_id']}.json").read_text()
    assert math.isnan(json.loads(journal)["restatement"]["data_diff"]["base"])


def test_no_read_of_the_store_stays_open_between_batches_of_records(tmp_path, monkeypatch):
    import sqlite3

    from ledgerflow.adapters.store import published
    source, _target = _opened(tmp_path)
    with source._immediate() as conn:  # a second project-period of dev's: two batches of one
        text = conn.execute("SELECT record FROM runs WHERE env = 'dev'").fetchone()[0]
        conn.execute("INSERT INTO runs (run_id, project_id, project_name, period, status, started_at, finished_at, "
                     "record, env) VALUES ('two', 'x', 'p0000', '2024-02', 'completed', 'a', 'b', ?, 'dev')", (text,))
    monkeypatch.setattr(published, "_BATCH", 1)
    records = source.own_last_records(["2024-01", "2024-02"], ["p0000"])
    first = next(records)
    writer = sqlite3.connect(tmp_path / ".ledgerflow" / "state.db", timeout=0.2)
    writer.execute("BEGIN IMMEDIATE")  # a writer is not kept waiting by the read in between
    writer.execute("UPDATE runs SET error = 'x' WHERE run_id = 'two'")
    writer.commit()
    writer.close()
    assert sorted([first[0], next(records)[0]]) == [("p0000", "2024-01"), ("p0000", "2024-02")]


def test_a_period_closed_while_the_promotion_was_planned_is_refused_at_its_commit_point(tmp_path):
    """The commit point asks, in its transaction, whether a promoted project-period of prod was closed since the
    plan: only periods with a close or reopen recorded are asked of run by run, and a reopened one passes."""
    import os

    import pytest

    from bench.promotion_scale import build
    from ledgerflow.adapters.commit.open_store import open_store
    from ledgerflow.adapters.envs.promote import plan
    from ledgerflow.adapters.store.closure_table import CLOSE, REOPEN, PeriodClosed
    build(tmp_path, 2, ["2024-01", "2024-02"])
    source, target = open_store(str(tmp_path), "dev"), open_store(str(tmp_path), "prod")
    partitions = [tmp_path / "out" / p / f"_period={m}" for p in ("p0000", "p0001") for m in ("2024-01", "2024-02")]
    before = [(sorted(os.listdir(p)), (p / ".lf_version").read_text()) for p in partitions]
    # 2024-01 of p0000 was closed and reopened before: recorded, open
    target.set_closed([("p0000", "2024-01")], CLOSE, "me", "2026-01-01T00:00:00Z", None)
    target.set_closed([("p0000", "2024-01")], REOPEN, "me", "2026-01-02T00:00:00Z", None)
    assert target.closures(["p0000", "p0001"], ["2024-01", "2024-02"])
    recording = Recording.start("me")
    items = plan(source, target, ["p0000", "p0001"], ["2024-01", "2024-02"], recording=recording)
    target.set_closed([("p0001", "2024-02")], CLOSE, "auditor", "2026-01-03T00:00:00Z", None)  # meanwhile
    with pytest.raises(PeriodClosed, match="PERIOD-001 period 2024-02 of project 'p0001' is closed"):
        promote.promote(source, target, items, recording.by, recording=recording)
    assert [(sorted(os.listdir(p)), (p / ".lf_version").read_text()) for p in partitions] == before
    target.set_closed([("p0001", "2024-02")], REOPEN, "auditor", "2026-01-04T00:00:00Z", None)
    recording = Recording.start("me")
    items = plan(source, target, ["p0000", "p0001"], ["2024-01", "2024-02"], recording=recording)
    done = promote.promote(source, target, items, recording.by, recording=recording)
    assert len(done["runs"]) == 4
    assert [(p / ".lf_version").read_text().strip() for p in partitions] == \
        [f"{p}-{m}-dev" for p in ("p0000", "p0001") for m in ("2024-01", "2024-02")]

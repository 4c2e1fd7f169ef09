"""What a promotion writes for each project-period it copies: the source's record under a run id of its own (drawn
with the others at once, each a UUIDv7), its outputs and the source environment's folders its snapshot names where
the target shows them."""
from __future__ import annotations

import datetime
import uuid

from ledgerflow.adapters.envs import promote
from ledgerflow.adapters.run.context import new_run_ids

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
        run = promote._promoted_run(item, "dev", "prod", "promo", "me", "2026-02-01T00:00:00.000", "r2")
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
    from ledgerflow.adapters.envs.promote import _names
    needle = "/.lf_envs/dev"
    assert _names({"a": [{"location": "/w/out/.lf_envs/dev"}]}, needle)
    assert not _names({"a": [{"location": "/w/out/_period=2026-01"}], "n": 1.5, "env": "dev"}, needle)
    # what orjson refuses (an integer beyond 64 bits, a lone surrogate) is searched in json's text
    assert _names({"big": 2 ** 70, "where": "/w/.lf_envs/dev/x"}, needle)
    assert not _names({"big": 2 ** 70, "odd": "\ud800"}, needle)

"""A promotion's journal, ``target/promotions/<id>.json`` (written by :mod:`..envs.promote`), and its recovery: a
promotion whose process died before its commit point is rolled back by the next command that opens the run store,
as a run's commit is (:mod:`.recovery` calls :func:`recover_promotions`)."""
from __future__ import annotations

import json
import os

from ..layout.whole_files import write_json_whole
from ..store import liveness
from . import swaps

FOLDER = "promotions"  # target/promotions/<promotion id>.json: each promotion's journal and outcome


def promotions_dir(store) -> str:
    """``target/promotions`` of the store's workspace."""
    return os.path.join(store.root, "target", FOLDER)


def write_json(path: str, data: dict) -> None:
    """Write ``data`` to ``path`` whole (a temporary file, flushed to disk, renamed over it), on one line: a
    journal of thousands of partitions is written by the C encoder, which an indent would turn off."""
    write_json_whole(path, data, durable=True, default=str)


def recover_promotions(store) -> list[tuple[str, str]]:
    """Roll back every promotion whose process died before its commit point (its journal says ``running`` and
    its lock can be taken): each partition it re-pointed shows what it showed before (one that died after its
    commit point is completed instead). Returns (promotion id, what was done) for each."""
    folder = promotions_dir(store)
    if not os.path.isdir(folder):
        return []
    done = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".json"):
            continue
        path = os.path.join(folder, name)
        try:
            with open(path, encoding="utf-8") as fh:
                record = json.load(fh)
        except (OSError, ValueError):
            continue
        if record.get("status") != "running":
            continue
        pid = record["promotion_id"]
        with liveness.probe(store.runs_dir, pid) as lock:
            if lock.state != "abandoned":
                continue
            if store.promotion_committed(pid):  # died after its commit point: it stands
                record["status"] = "completed"
                swaps.retire(record["commit"]["partitions"], keep_replaced=bool(record.get("restatement")))
                detail = "a promotion whose process died after its commit point: completed"
            else:
                rolled, kept, problems = swaps.roll_back(record["commit"]["partitions"])
                record.update(status="failed", error="interrupted: its process died before its commit point",
                              rolled_back=rolled, kept=kept, problems=problems)
                detail = (f"a promotion interrupted before its commit point: rolled back {len(rolled)} partition"
                          f"{'s' if len(rolled) != 1 else ''} it had re-pointed"
                          + (f"; {'; '.join(problems)}" if problems else ""))
            write_json(path, record)
            lock.settled()
        done.append((pid, detail))
    return done

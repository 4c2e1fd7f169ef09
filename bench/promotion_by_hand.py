"""The least work of a promotion, written by hand: the floor ``bench/promotion_scale.py`` times ``ledgerflow promote``
against.

    python bench/promotion_by_hand.py WORKSPACE              # the file-system calls alone
    python bench/promotion_by_hand.py WORKSPACE --recorded   # and the journal and records a promotion must keep

On a workspace :func:`bench.promotion_scale.build` made, it leaves every output as ``promote --all --from dev``
does: each prod partition ``<out>/_period=P`` a real folder of hard links to the files of the version dev shows
(with its marker), exchanged in with one ``renameat2(RENAME_EXCHANGE)``, the folder exchanged out and the version
prod showed before deleted. Nothing else: no check of what a partition holds, no journal, no record, no
recovery; the file-system calls a promotion cannot do without, in one plain loop. Standard library only.

``--recorded`` adds what a promotion that can be undone and audited must also write, as ``ledgerflow promote`` writes
it, and nothing more: before the first swap, one journal file listing every partition (written whole, flushed to
disk, renamed into ``target/promotions``); after the last, in one transaction of the run store, the promotion and one
completed run per project-period (a copy of dev's record under a run id of its own, in prod); then the journal
marked completed. Still no check of what a partition holds, no lease, no recovery.
"""
from __future__ import annotations

import ctypes
import datetime
import json
import os
import shutil
import sqlite3
import sys
import uuid


def _write_whole(path: str, data: dict) -> None:
    """``data`` as JSON at ``path``: a temporary file flushed to disk, renamed over it."""
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(data, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _dev_runs(root: str) -> list[tuple]:
    """(run id, record text) of dev's completed runs, in one query."""
    with sqlite3.connect(os.path.join(root, ".ledgerflow", "state.db")) as conn:
        return conn.execute("SELECT run_id, record FROM runs WHERE env = 'dev' AND status = 'completed'").fetchall()


def _record(root: str, promotion: dict, runs: list[tuple]) -> None:
    """The promotion and one completed prod run per promoted run, in one transaction."""
    with sqlite3.connect(os.path.join(root, ".ledgerflow", "state.db")) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS promotions (promotion_id TEXT PRIMARY KEY, from_env TEXT, to_env "
                     "TEXT, by_name TEXT, at TEXT, items TEXT)")
        conn.execute("INSERT INTO promotions (promotion_id, from_env, to_env, by_name, at, items) VALUES "
                     "(?,?,?,?,?,?)", (promotion["promotion_id"], "dev", "prod", "bench", promotion["at"],
                                       json.dumps(promotion["items"])))
        for k, (run_id, text) in enumerate(runs):
            rec = json.loads(text)
            rec.update(run_id=f"{promotion['promotion_id']}-{k}", env="prod", finished_at=promotion["at"],
                       promotion={"promotion_id": promotion["promotion_id"], "source_run_id": run_id})
            conn.execute("INSERT INTO runs (run_id, project_id, project_name, period, status, started_at, "
                         "finished_at, record, env) VALUES (?,?,?,?,?,?,?,?,NULL)",
                         (rec["run_id"], rec["project"]["id"], rec["project"]["name"], rec["period"]["identifier"],
                          "completed", rec["started_at"], rec["finished_at"], json.dumps(rec)))


def main(root: str, recorded: bool = False) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = libc.renameat2
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    outputs = os.path.join(root, "out")
    planned = []  # (destination, partition, version name, previous version name)
    for project in sorted(os.listdir(outputs)):
        out = os.path.join(outputs, project)
        dev = os.path.join(out, ".lf_envs", "dev")
        for partition in sorted(os.listdir(dev)):
            with open(os.path.join(dev, partition, ".lf_version")) as fh:
                name = fh.read().strip()
            with open(os.path.join(out, partition, ".lf_version")) as fh:
                previous = fh.read().strip()
            planned.append((out, partition, name, previous))
    if recorded:
        runs = _dev_runs(root)
        promotion_id = uuid.uuid4().hex
        at = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")
        folder = os.path.join(root, "target", "promotions")
        os.makedirs(folder, exist_ok=True)
        journal = os.path.join(folder, f"{promotion_id}.json")
        state = {"promotion_id": promotion_id, "at": at, "status": "running",
                 "items": [{"run_id": run_id} for run_id, _text in runs],
                 "commit": {"partitions": [{"link": os.path.join(out, partition),
                                            "staged": os.path.join(out, ".lf_versions", partition, name),
                                            "previous": os.path.join(out, ".lf_versions", partition, previous)}
                                           for out, partition, name, previous in planned]}}
        _write_whole(journal, state)
    for out, partition, name, previous in planned:
        versions = os.path.join(out, ".lf_versions", partition)
        version = os.path.join(versions, name)
        folder = os.path.join(versions, f".show.{name}.byhand")
        os.mkdir(folder)
        for file in os.listdir(version):
            if not file.startswith((".", "_")):
                os.link(os.path.join(version, file), os.path.join(folder, file))
        with open(os.path.join(folder, ".lf_version"), "w") as fh:
            fh.write(name + "\n")
        if renameat2(-100, os.fsencode(folder), -100, os.fsencode(os.path.join(out, partition)), 2) != 0:
            raise OSError(ctypes.get_errno(), "renameat2 failed", folder)
        if not recorded:
            shutil.rmtree(folder)  # now the folder of links prod showed
            if previous != name:
                shutil.rmtree(os.path.join(versions, previous))
    if recorded:  # the commit point, then the folders exchanged out and the versions replaced
        _record(root, state, runs)
        for out, partition, name, previous in planned:
            versions = os.path.join(out, ".lf_versions", partition)
            shutil.rmtree(os.path.join(versions, f".show.{name}.byhand"))
            if previous != name:
                shutil.rmtree(os.path.join(versions, previous))
        state["status"] = "completed"
        _write_whole(journal, state)


if __name__ == "__main__":
    main(sys.argv[1], recorded="--recorded" in sys.argv[2:])

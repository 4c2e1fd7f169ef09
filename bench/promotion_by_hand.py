"""The least work of a promotion, written by hand: the floor ``bench/promotion_scale.py`` times ``ledgerflow promote``
against.

    python bench/promotion_by_hand.py WORKSPACE              # the file-system calls alone
    python bench/promotion_by_hand.py WORKSPACE --recorded   # and the journal and records a promotion must keep

On a workspace :func:`bench.promotion_scale.build` made, it leaves every output as ``promote --all --from dev``
does: each prod partition ``<out>/_period=P`` a real folder of hard links to the files of the version dev shows
(with its marker), exchanged in with one ``renameat2(RENAME_EXCHANGE)``, the folder exchanged out and the version
prod showed before deleted. Nothing else: no check of what a partition holds, no journal, no record, no
recovery; the file-system calls a promotion cannot do without, in one plain loop. Standard library only (but for
``--orjson``); the cyclic garbage collector is off (``ledgerflow promote`` pauses it too: the thousands of records a
promotion reads hold no cycle, and its passes over them are no work a promotion needs).

``--recorded`` adds what a promotion that can be undone and audited must also write, as ``ledgerflow promote`` writes
it, and nothing more: before the first swap, one journal file listing every partition (written whole, flushed to
disk, renamed into ``target/promotions``); after the last, in one transaction of the run store, the promotion and one
completed run per project-period (a copy of dev's record under a run id of its own, in prod); then the journal
marked completed. Still no check of what a partition holds, no lease, no recovery.

``--checked`` adds, to ``--recorded``, the checks a promotion cannot skip without risking to replace or delete
what it did not make, each made once, plainly: before the first swap, each partition (dev's and prod's) must be a
real folder whose marker names a version folder and whose every file is a hard link of that version's files
(same names, same inodes), inside the workspace (the versions' folder's real path); each swap exchanges out only
the folder checked (its inode compared after the exchange); after the commit point, the folder exchanged out is
removed only when it holds nothing but links to the replaced version's files, and the replaced version only when
no partition's marker names it and no file of it has a second name.

``--orjson`` (with ``--recorded`` or ``--checked``): the records' texts written by orjson, as ``ledgerflow
promote`` writes them (the standard library's ``json`` otherwise, as a script written by hand would).
"""
from __future__ import annotations

import ctypes
import datetime
import gc
import json
import os
import shutil
import sqlite3
import stat
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


def _record(root: str, promotion: dict, runs: list[tuple], dumps=json.dumps) -> None:
    """The promotion and one completed prod run per promoted run, in one transaction (each record's text by
    ``dumps``)."""
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
                          "completed", rec["started_at"], rec["finished_at"], dumps(rec)))


def _mirrored(partition: str, versions: str) -> tuple[str, dict, os.stat_result]:
    """(version name, {file name: (device, inode)}, the partition's lstat) of a partition that shows a version
    folder of ``versions``; raises when it is anything else."""
    st = os.lstat(partition)
    if not stat.S_ISDIR(st.st_mode):
        raise SystemExit(f"{partition} is not a folder")
    with open(os.path.join(partition, ".lf_version")) as fh:
        name = fh.read(256).strip()
    version = os.path.join(versions, name)
    files = {}
    with os.scandir(version) as entries:
        for e in entries:
            if not e.name.startswith((".", "_")):
                vst = e.stat(follow_symlinks=False)
                files[e.name] = (vst.st_dev, vst.st_ino)
    shown = {}
    with os.scandir(partition) as entries:
        for e in entries:
            if e.name != ".lf_version":
                pst = e.stat(follow_symlinks=False)
                shown[e.name] = (pst.st_dev, pst.st_ino)
    if shown != files:
        raise SystemExit(f"{partition} does not show {version}")
    return name, files, st


def _remove_if_links(folder: str, inodes: set) -> None:
    """Remove ``folder`` when every file but the marker is a hard link of one of ``inodes``."""
    with os.scandir(folder) as entries:
        for e in entries:
            st = e.stat(follow_symlinks=False)
            if e.name != ".lf_version" and (not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) not in inodes):
                return
    shutil.rmtree(folder)


def _remove_if_unshown(version: str, partitions: list[str]) -> None:
    """Remove the version folder ``version`` when no partition's marker names it and no file of it has a second
    name."""
    name = os.path.basename(version)
    for partition in partitions:
        try:
            with open(os.path.join(partition, ".lf_version")) as fh:
                if fh.read(256).strip() == name:
                    return
        except FileNotFoundError:
            pass
    with os.scandir(version) as entries:
        if any(e.stat(follow_symlinks=False).st_nlink != 1 for e in entries):
            return
    shutil.rmtree(version)


def main(root: str, recorded: bool = False, checked: bool = False, fast_json: bool = False) -> None:
    gc.disable()  # the records read live to the end and hold no cycle: a collector's passes over them are no work
    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = libc.renameat2
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    outputs = os.path.join(root, "out")
    planned = []  # (destination, partition, version name, previous version name)
    checks = {}  # (destination, partition) -> (the inodes of the files prod showed, its lstat)
    recorded = recorded or checked
    for project in sorted(os.listdir(outputs)):
        out = os.path.join(outputs, project)
        dev = os.path.join(out, ".lf_envs", "dev")
        for partition in sorted(os.listdir(dev)):
            if checked:
                versions = os.path.join(out, ".lf_versions", partition)
                if not os.path.realpath(versions).startswith(os.path.realpath(root) + os.sep):
                    raise SystemExit(f"{versions} is outside the workspace")
                name, _files, _st = _mirrored(os.path.join(dev, partition), versions)
                previous, files, st = _mirrored(os.path.join(out, partition), versions)
                checks[(out, partition)] = (set(files.values()), st)
            else:
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
        if checked:
            out_st, before = os.lstat(folder), checks[(out, partition)][1]
            if (out_st.st_dev, out_st.st_ino) != (before.st_dev, before.st_ino):
                raise SystemExit(f"{os.path.join(out, partition)} was replaced meanwhile")
        if not recorded:
            shutil.rmtree(folder)  # now the folder of links prod showed
            if previous != name:
                shutil.rmtree(os.path.join(versions, previous))
    if recorded:  # the commit point, then the folders exchanged out and the versions replaced
        if fast_json:  # the records' texts by orjson, as ledgerflow writes a promotion's
            import orjson
            _record(root, state, runs, lambda rec: orjson.dumps(rec).decode())
        else:
            _record(root, state, runs)
        for out, partition, name, previous in planned:
            versions = os.path.join(out, ".lf_versions", partition)
            if checked:
                _remove_if_links(os.path.join(versions, f".show.{name}.byhand"), checks[(out, partition)][0])
                if previous != name:
                    _remove_if_unshown(os.path.join(versions, previous),
                                       [os.path.join(out, partition), os.path.join(out, ".lf_envs", "dev", partition)])
                continue
            shutil.rmtree(os.path.join(versions, f".show.{name}.byhand"))
            if previous != name:
                shutil.rmtree(os.path.join(versions, previous))
        state["status"] = "completed"
        _write_whole(journal, state)


if __name__ == "__main__":
    main(sys.argv[1], recorded="--recorded" in sys.argv[2:], checked="--checked" in sys.argv[2:],
         fast_json="--orjson" in sys.argv[2:])

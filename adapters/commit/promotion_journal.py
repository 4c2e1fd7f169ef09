"""A promotion's journal, ``target/promotions/<id>.json`` (written by :mod:`..envs.promote`), and its recovery: a
promotion whose process died before its commit point is rolled back by the next command that opens the run store,
as a run's commit is (:mod:`.recovery` calls :func:`recover_promotions`)."""
from __future__ import annotations

import json
import os
import re
from typing import Iterator, Optional

from ..layout.real_path import real_path, within
from ..store.json_text import plain_text
from ..store.whole_files import write_whole
from ..store import liveness
from . import swaps

FOLDER = "promotions"  # target/promotions/<promotion id>.json: each promotion's journal and outcome
_JOURNAL = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.json")  # <promotion id>.json


def promotions_dir(store) -> str:
    """``target/promotions`` of the store's workspace."""
    return os.path.join(store.root, "target", FOLDER)


def journal_folder(store, create: bool = False) -> Optional[str]:
    """``target/promotions`` when it (and ``target``) is a real folder, made when ``create``; None when either is
    a link or a file, or (without ``create``) when it does not exist: a journal is never read or written
    through something ledgerflow did not make."""
    folder = promotions_dir(store)
    for path in (os.path.dirname(folder), folder):
        if os.path.islink(path) or (os.path.lexists(path) and not os.path.isdir(path)):
            return None
        if not os.path.isdir(path):
            if not create:
                return None
            os.mkdir(path)
    return folder


def _journals(store) -> Iterator[tuple[str, dict]]:
    """(path, record) of each journal in ``target/promotions``: a plain file named ``<promotion id>.json`` that
    names that very id (a link, another name or a damaged file is left alone)."""
    folder = journal_folder(store)
    if folder is None:
        return
    for name in sorted(os.listdir(folder)):
        found = _JOURNAL.fullmatch(name)
        path = os.path.join(folder, name)
        if found is None or os.path.islink(path) or not os.path.isfile(path):
            continue
        try:
            with open(path, encoding="utf-8") as fh:
                record = json.load(fh)
        except (OSError, ValueError):
            continue
        if isinstance(record, dict) and record.get("promotion_id") == found.group(1):
            yield path, record


def outside_workspace(store, record: dict, keys: tuple = ("link", "staged", "previous")) -> Optional[str]:
    """The first path the journal of ``record`` (a promotion's or a run's) names outside the store's workspace
    under ``keys`` of its entries (a run's: the version folders it staged, ``("staged",)``, and those of its
    staging list), or None. A copy's records name the original's partitions: recovery never acts on such a
    record (the original's own commands do); a damaged entry of a run of this workspace is left to
    :func:`.swaps.roll_back`, which reports it."""
    workspace = real_path(store.root)
    commit = record.get("commit") if isinstance(record.get("commit"), dict) else {}
    entries = commit.get("partitions") if isinstance(commit.get("partitions"), list) else []
    paths = [e.get(key) for e in entries if isinstance(e, dict) for key in keys]
    staging = record.get("staging") if isinstance(record.get("staging"), list) and keys == ("staged",) else []
    paths += [s.get("versions") for s in staging if isinstance(s, dict)]
    return next((p for p in paths if isinstance(p, str) and os.path.isabs(p) and not within(p, workspace)), None)


def write_json(path: str, data: dict) -> None:
    """Write ``data`` (a promotion's journal) to ``path`` whole (a temporary file, flushed to disk, renamed over it),
    on one line: by orjson (:mod:`..store.json_text`; ``json`` for what orjson refuses), unless it carries a
    restatement, whose data diff may hold a float ``NaN`` (then by ``json``, which writes it as it is)."""
    slow = lambda value: json.dumps(value, default=str)  # noqa: E731
    write_whole(path, slow(data) if "restatement" in data else plain_text(data, slow), durable=True)


def tables_left(record: dict) -> list[str]:
    """What a promotion that died before its commit point left in catalog tables (``envs/spark_copies.py``): a
    partition it copied rows into, or was copying into, keeps them, as this recovery starts no JVM."""
    copies = record.get("copies") if isinstance(record.get("copies"), list) else []
    return [f"{'the catalog table ' if c.get('kind') == 'table' else ''}{c.get('target')} partition "
            f"_period={c.get('period')} may hold the promoted rows; its rows from before are kept in {c.get('before')}: "
            "promote again to complete the promotion"
            for c in copies if isinstance(c, dict) and c.get("state") in ("kept", "copied")]


def recover_promotions(store) -> list[tuple[str, str]]:
    """Roll back every promotion whose process died before its commit point (its journal says ``running`` and
    its lock can be taken): each partition it re-pointed shows what it showed before (one that died after its
    commit point is completed instead). Returns (promotion id, what was done) for each."""
    done = []
    for path, record in _journals(store):
        if record.get("status") != "running":
            continue
        pid = record["promotion_id"]
        commit = record.get("commit")
        if not isinstance(commit, dict) or not isinstance(commit.get("partitions"), list):
            done.append((pid, "left alone: its journal lists no partitions (a damaged file?); nothing was changed"))
            continue
        away = outside_workspace(store, record)
        if away is not None:
            done.append((pid, f"left alone: its journal names {away}, outside this workspace (a copy of another "
                              "workspace's journal?); nothing was changed"))
            continue
        with liveness.probe(store.runs_dir, pid) as lock:
            if lock.state != "abandoned":
                continue
            if store.promotion_committed(pid):  # died after its commit point: it stands
                record["status"] = "completed"
                swaps.retire(record["commit"]["partitions"], keep_replaced=bool(record.get("restatement")))
                detail = "a promotion whose process died after its commit point: completed"
            else:
                rolled, kept, problems = swaps.roll_back(record["commit"]["partitions"])
                problems += tables_left(record)
                record.update(status="failed", error="interrupted: its process died before its commit point",
                              rolled_back=rolled, kept=kept, problems=problems)
                detail = (f"a promotion interrupted before its commit point: rolled back {len(rolled)} partition"
                          f"{'s' if len(rolled) != 1 else ''} it had re-pointed"
                          + (f"; {'; '.join(problems)}" if problems else ""))
            write_json(path, record)
            store.release(pid)  # the leases it held
            lock.settled()
        done.append((pid, detail))
    return done

"""``ledgerflow envs drop NAME``: remove an environment's pointers, never a version.

The drop is recorded first (one transaction: the environment's runs and registrations from before it are no longer
its own, and the registered versions promoted to it are no longer shown there), then each partition the
environment shows (``<output>/.lf_envs/<env>/_period=P``, a folder of hard links) is removed in one step. The
version folders stay: run records point to them, and another environment may show them. A partition that is not a
folder ledgerflow built (someone put something there) is left as it is and named. Prod is never dropped (ENV-006).
A partition a run or promotion under way is writing is never removed: the drop takes the same leases a run takes
(RUN-001 when one is held), and nothing is dropped then.
"""
from __future__ import annotations

import datetime
import json
import os
from contextlib import closing

from ..commit import shown, sweeps
from ..layout.partition_paths import (ENVS, PARTITION, PROD, env_folder, link_env, partition_key, root_period,
                                      versions_dir)
from ..layout.real_path import real_path, within
from ..run import leases
from ..store import liveness
from .promote import PromotionRefused


def _roots(store, env: str) -> tuple[list[str], list[str]]:
    """The local output folders of this workspace where ``env``'s runs published partitions (from their records),
    and those records' folders outside it (a copy's records name the original's: never touched)."""
    with closing(store._connect()) as conn:
        rows = conn.execute("SELECT record FROM runs WHERE env = ?", (env,)).fetchall()
    workspace = real_path(store.root)
    roots, away = set(), set()
    for (text,) in rows:
        rec = json.loads(text)
        for entry in (rec.get("commit") or {}).get("partitions") or []:
            link = entry.get("link") if isinstance(entry, dict) else None
            if isinstance(link, str) and os.path.isabs(link) and link_env(link) == env:
                root = root_period(link)[0]
                (roots if within(root, workspace) else away).add(root)
    return sorted(roots), sorted(away)


def drop(store, env: str, by: str) -> tuple[list[str], list[str]]:
    """Drop environment ``env`` (see the module docstring); returns (partitions removed, what was left and why)."""
    if env == PROD:
        raise PromotionRefused("ENV-006 prod cannot be dropped: it is what every reader sees at an output's own "
                               "folder. Hint: drop another environment, e.g. `ledgerflow envs drop dev`.")
    if not os.path.exists(store.db_path):
        return [], []
    roots, away = _roots(store, env)
    # a run or promotion writing one of the environment's partitions holds its lease: the drop waits for none
    from ..run.context import new_run_id, utcnow
    drop_id = new_run_id(utcnow())
    needed = [partition_key("path", root, name.split("=", 1)[1], env) for root in roots
              if os.path.isdir(env_folder(root, env)) and not os.path.islink(env_folder(root, env))
              for name in sorted(os.listdir(env_folder(root, env))) if name.startswith(f"{PARTITION}=")]
    try:
        leases.take(store, drop_id, liveness.hold(store.runs_dir, drop_id), needed)
    except BaseException:
        liveness.release(drop_id)
        raise
    try:
        return _drop(store, env, by, roots, away)
    finally:
        store.release(drop_id)
        liveness.release(drop_id)


def _drop(store, env: str, by: str, roots: list[str], away: list[str]) -> tuple[list[str], list[str]]:
    at = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None).isoformat(timespec="milliseconds")
    with store._immediate() as conn:
        conn.execute("INSERT INTO environment_drops (env, dropped_at, by_name) VALUES (?,?,?)", (env, at, by))
        conn.execute("DELETE FROM registered_promotions WHERE env = ?", (env,))
    removed, left = [], [f"{root}: outside this workspace (a record of another workspace: this one copied or "
                         "moved?), left as it is" for root in away]
    for root in roots:
        folder = env_folder(root, env)
        if os.path.islink(os.path.join(root, ENVS)) or os.path.islink(folder) or not os.path.isdir(folder):
            continue  # never followed into what ledgerflow did not create
        for name in sorted(os.listdir(folder)):
            link = os.path.join(folder, name)
            if not name.startswith(f"{PARTITION}="):
                left.append(f"{link}: not a partition ledgerflow made, left as it is")
                continue
            versions = versions_dir(*root_period(link))
            if shown.shown_version(link, versions) is None:
                left.append(f"{link}: not a folder of links ledgerflow built (or changed since), left as it is")
                continue
            shown.hide(link, versions, "dropped")
            sweeps.sweep(versions, lambda rest: rest.startswith("dropped."))
            removed.append(link)
        for empty in (folder, os.path.join(root, ENVS)):
            try:
                os.rmdir(empty)
            except OSError:
                break
    return removed, left

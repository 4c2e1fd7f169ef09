"""What ``envs path`` and ``envs list`` show: an environment's folder of an output, and how each environment's
published project-periods compare with prod's."""
from __future__ import annotations

import json
import os
from contextlib import closing

from ...compiler.errors import LedgerflowError
from ...compiler.model import OutputOperation
from ..layout.partition_paths import PROD, env_folder, root_period
from ..run.destinations import env_table_folder
from .promote import PromotionRefused


def output_folder(inv, ref: str) -> str:
    """The folder holding the partitions environment ``inv.env`` shows of output ``ref`` (``PROJECT.OUTPUT``:
    the output operation's seq or name): the output's own folder for prod, ``<folder>/.lf_envs/<env>`` else."""
    project_ref, sep, wanted = ref.rpartition(".")
    if not sep or not project_ref or not wanted:
        raise LedgerflowError(f"ENV-006 '{ref}' names no output. Hint: give PROJECT.OUTPUT, the output operation's "
                              "seq or name, for example ts03_fx_conversion.2.")
    project = inv.project(project_ref)
    outputs = [op for op in project.operations if isinstance(op, OutputOperation)]
    op = next((o for o in outputs if str(o.seq) == wanted or o.name == wanted), None)
    if op is None:
        names = ", ".join(f"{o.seq} ({o.name})" for o in outputs) or "none"
        raise LedgerflowError(f"ENV-006 project {project.name} has no output '{wanted}' (its outputs: {names}).")
    env = inv.env
    if op.destination.kind == "catalog_table":
        table = op.destination.catalog_table
        if env == PROD:
            raise PromotionRefused(f"ENV-006 output {op.seq} of {project.name} writes the catalog table {table}, which "
                                   "no folder shows in prod: prod's readers read the table itself.")
        folder = env_folder(env_table_folder(inv.workspace.root, table), env)
        if os.path.isdir(folder) and not os.path.islink(folder):
            return folder
        raise LedgerflowError(f"ENV-006 output {op.seq} of {project.name} writes the catalog table {table}, whose rows "
                              f"'{env}' keeps in a folder once it has run the project; it has not yet. Hint: run the "
                              f"project with --env {env} first.")
    rows = inv.store.last_completed(projects=[project.name])
    # the environment's own latest run first (an output registering a dataset has a folder per version)
    rows.sort(key=lambda r: ((r.get("env") or PROD) == env, r.get("finished_at") or "", r["run_id"]), reverse=True)
    for row in rows:
        record = inv.store.get_run(row["run_id"])
        for out in record.get("outputs") or []:
            location = out.get("location")
            if out.get("operation_seq") != op.seq or not isinstance(location, str):
                continue
            if not location.startswith("/") and out.get("stands_for") and env != PROD:
                return env_folder(out["stands_for"].rstrip("/"), env)  # a URI's rows kept beside it
            if not location.startswith("/"):
                raise PromotionRefused(f"ENV-006 output {op.seq} of {project.name} writes {location}, a catalog table "
                                       "or URI, which no local folder shows: an environment other than prod "
                                       "publishes local folders only.")
            return env_folder(root_period(location)[0], env)
    raise LedgerflowError(f"ENV-006 output {op.seq} of {project.name} has not been published in '{env}' or prod yet, "
                          "so it has no folder. Hint: run the project first.")


def environments(inv) -> list[str]:
    """Lines: each environment other than prod, with per project-period ``ahead`` (its own run is newer than
    prod's), ``behind`` (prod's is newer), ``same`` (prod publishes what it publishes) or ``only here``. Runs from
    before an environment was last dropped are not its own."""
    store = inv.store
    if not os.path.exists(store.db_path):
        return ["prod (no runs yet)"]
    with closing(store._connect()) as conn:
        rows = conn.execute("SELECT COALESCE(env, 'prod'), project_name, period, run_id, finished_at, record FROM runs "
                            "WHERE status = 'completed' ORDER BY finished_at, run_id").fetchall()
        dropped = dict(conn.execute("SELECT env, MAX(dropped_at) FROM environment_drops GROUP BY env").fetchall())
    last: dict[tuple[str, str, str], tuple[str, str, dict]] = {}
    origins: dict[str, str] = {}  # run id -> the run id of the run whose rows it publishes (a promotion's source)
    for env, project, period, run_id, finished, record in rows:
        rec = json.loads(record)
        origins[run_id] = (rec.get("promotion") or {}).get("source_run_id") or run_id
        if finished > dropped.get(env, ""):  # a dropped environment's runs from before the drop are not its own
            last[(env, project, period)] = (run_id, finished, rec)
    envs = sorted({k[0] for k in last} - {PROD})
    lines = ["prod"]
    for env in envs:
        lines.append(env)
        for (e, project, period), (run_id, finished, _rec) in sorted(last.items()):
            if e != env:
                continue
            prod = last.get((PROD, project, period))
            if prod is None:
                state = "only here"
            elif _origin(origins, prod[0]) == _origin(origins, run_id):
                state = "same"  # both publish the rows of one run (promoted, in either direction, or onwards)
            else:
                state = "ahead" if finished > prod[1] else "behind"
            lines.append(f"  {project} {period}: {state} (run {run_id})")
    return lines


def _origin(origins: dict[str, str], run_id: str) -> str:
    """The run whose rows ``run_id`` publishes: its promotion's source, followed back to a run no promotion made."""
    seen = {run_id}
    while origins.get(run_id, run_id) not in seen:
        run_id = origins[run_id]
        seen.add(run_id)
    return run_id

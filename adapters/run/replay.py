"""A replay's context: a recorded run rebuilt from its snapshots (same versions, locations, TODAY() and
rows), its inputs compared with the fingerprints it recorded (see :mod:`..inputs.fingerprint`)."""
from __future__ import annotations

import datetime
from typing import Callable

from ...compiler import system_columns as sysc
from ...compiler.compile import compile_project
from ...compiler.errors import ResolutionError
from ...compiler.model import Workspace
from ...compiler.periods import parse_period
from ...compiler.resolver import Resolution
from ...compiler.workspace import dataset_from_data, from_snapshot, project_from_data
from ..inputs import fingerprint
from .context import RunContext, new_run_id, utcnow, warm_parser

Echo = Callable[[str], None]


def replay_context(original: dict, root: str, ws_now: Workspace, allow_changed_inputs: bool, session: Callable[[], object],
                   echo: Echo) -> RunContext:
    """The context that re-executes the recorded run ``original`` in the workspace at ``root``, ``ws_now`` (its
    configuration and registered datasets are used; the project and declared datasets come from the run).

    A changed input refuses the replay (ResolutionError naming the dataset, location and files) unless
    ``allow_changed_inputs``; a deleted one always does. ``session`` gives Spark for the catalog tables'
    fingerprints."""
    project = from_snapshot(original["project_snapshot"], f"run {original['run_id']} project snapshot",
                            project_from_data)
    project.file = ""
    datasets = [from_snapshot(raw, f"run {original['run_id']} dataset snapshot", dataset_from_data)
                for raw in original.get("datasets_snapshot") or []]
    names = {d.name for d in datasets}
    datasets += [d for d in ws_now.datasets if d.name not in names and d.registered]
    ws = Workspace(root, ws_now.config, datasets, [project])
    compiled = compile_project(ws, project)
    warm_parser(compiled)
    period = parse_period(original["period"]["identifier"])  # a recorded identifier: parsed once, here
    started = datetime.datetime.fromisoformat(original.get("run_started_at") or original["started_at"])
    now = utcnow()
    ctx = RunContext(ws, project, compiled, period, started, new_run_id(now), original["run_id"], actual_start=now)
    ctx.datasets_snapshot = original.get("datasets_snapshot") or []
    snap = (original.get("resolver_snapshot") or {}).get("resolutions") or {}
    missing = [v.view for v in compiled.inputs if v.view not in snap]
    if missing:
        raise ResolutionError(f"run {original['run_id']} has no recorded resolution for {', '.join(missing)}.")
    ctx.resolutions = {view: Resolution.from_json(data) for view, data in snap.items()}
    check_inputs(original, ctx, allow_changed_inputs, session, echo)
    recorded = sysc.reproducible_row_identity(original.get("row_identity"))
    if recorded is not None:
        ctx.row_identity = recorded
    else:
        echo(f"Warning: run {original['run_id']} was recorded by an earlier ledgerflow, which derived the "
             "_row_id of input rows arriving without one differently: those "
             "rows get new _row_ids in this replay; every other value is reproduced.")
    return ctx


def check_inputs(original: dict, ctx: RunContext, allow_changed: bool, session: Callable[[], object],
                 echo: Echo) -> None:
    """Compare the replayed run's inputs with its recorded fingerprints (see :mod:`..inputs.fingerprint`):
    refuse a deleted or (unless ``allow_changed``) changed input; warn about what cannot be checked;
    record the outcome and the current fingerprints in the replay's context (its record)."""
    recorded = (original.get("resolver_snapshot") or {}).get("input_fingerprints")
    check = fingerprint.check_replay(recorded, ctx.resolutions, session)
    rid = original["run_id"]
    if check.deleted or (check.changed and not allow_changed):
        hint = ("Restore the deleted input; a replay cannot read it." if check.deleted else
                "Restore the inputs, or pass --allow-changed-inputs to replay on the data as it is now "
                "(the new run records what changed).")
        raise ResolutionError(f"run {rid} cannot be replayed as recorded: its inputs changed since it ran: "
                              + "; ".join(fingerprint.describe_change(c) for c in check.changed) + f". {hint}")
    if not check.recorded:
        echo(f"Note: run {rid} was recorded without input fingerprints (by an older ledgerflow): "
             "its inputs cannot be verified; replaying on the data as it is now.")
    elif check.unverified:
        echo(f"Warning: cannot verify that these inputs of run {rid} are unchanged: " + "; ".join(
            f"dataset '{u['dataset']}' v{u['dataset_version']} at {u['location']} ({u['reason']})"
            for u in check.unverified))
    if check.changed:
        echo(f"Warning: replaying run {rid} on changed inputs (--allow-changed-inputs): " + "; ".join(
            fingerprint.describe_change(c) for c in check.changed))
    ctx.fingerprints = check.current
    ctx.input_check = {"allow_changed_inputs": allow_changed, "inputs_changed": check.changed,
                       "inputs_unverified": check.unverified}

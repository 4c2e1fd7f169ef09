"""What one run is about, before Spark: its project, compiled SQL, period, ids and resolved inputs."""
from __future__ import annotations

import datetime
import os
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

from ...compiler.errors import LedgerflowError
from ...compiler.model import Project, Workspace
from ...compiler.periods import Period
from ...compiler.row_identities import ROW_IDENTITY

if TYPE_CHECKING:  # imported where used: a command that only reads what runs published (promote, status)
    from ...compiler.compile import CompiledProject  # never loads the compiler's SQL parser and templates


def new_run_id(now: datetime.datetime) -> str:
    """A UUIDv7 run id (time-ordered)."""
    return _uuid7(_ms(now), uuid.uuid4().int)


def new_run_ids(now: datetime.datetime, n: int) -> list[str]:
    """``n`` UUIDv7 run ids of the moment ``now``, their random bits drawn at once (a promotion names a run per
    project-period, thousands at a time)."""
    ms, drawn = _ms(now), os.urandom(10 * n)
    return [_uuid7(ms, int.from_bytes(drawn[10 * k:10 * k + 10], "big")) for k in range(n)]


def _ms(now: datetime.datetime) -> int:
    return int(now.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000)


def _uuid7(ms: int, random_bits: int) -> str:
    """The UUIDv7 of the millisecond ``ms``, its 74 random bits the low ones of ``random_bits``."""
    rand = random_bits & ((1 << 74) - 1)
    value = (ms << 80) | (0x7 << 76) | ((rand >> 62) << 64) | (0b10 << 62) | (rand & ((1 << 62) - 1))
    return str(uuid.UUID(int=value))


def utcnow() -> datetime.datetime:
    """Now in UTC, naive, millisecond precision (what the run records and binds)."""
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


@dataclass
class RunContext:
    """Everything a run needs besides Spark."""

    workspace: Workspace
    project: Project
    compiled: CompiledProject
    period: Period
    started_at: datetime.datetime  # the value bound to :run_started_at (a replay reuses the original's)
    run_id: str
    parent_run_id: Optional[str] = None
    actual_start: Optional[datetime.datetime] = None  # when this run really started, if not started_at
    resolutions: dict = field(default_factory=dict)  # view -> Resolution
    datasets_snapshot: list = field(default_factory=list)
    fingerprints: Optional[list] = None  # resolver_snapshot.input_fingerprints
    input_check: Optional[dict] = None  # a replay's allow_changed_inputs, inputs_changed, inputs_unverified
    # `run --select/--all`: registered dataset name -> {dataset, version, run_id, project} registered earlier
    # in this invocation; an unpinned read of it takes exactly that version (adapters/run/scheduler.py)
    upstream: dict = field(default_factory=dict)
    upstream_runs: list = field(default_factory=list)  # the entries of `upstream` this run read (its record)
    row_identity: int = ROW_IDENTITY  # how input rows without _row_id get one (a replay: its run's)
    bridge: Optional[object] = None  # the run's bridge observations (run/bridge.py), set by compute
    # False for rows computed for no record (a diff --data side, a restatement's dry run): no bridge observed,
    # whatever the project's checks or the workspace's `bridge: always` say
    observe_bridge: bool = True
    batch_id: Optional[str] = None  # the `ledgerflow run` invocation the run belongs to (adapters/run/batch.py)
    env: str = "prod"  # the environment the run publishes to (adapters/envs): the runner's store's


def warm_parser(compiled: CompiledProject) -> None:
    """Give the statements the run will parse to :mod:`..spark.parser_warmup` (input views first, as the
    run goes)."""
    from ..inputs import loaders
    from ..spark import parser_warmup
    texts = []
    for view in compiled.inputs:
        try:
            texts.append(loaders.warmup_query(view.dataset, view.row_ids))
        except LedgerflowError:  # a dataset the loader will reject anyway: nothing to warm
            continue
    parser_warmup.offer([*texts, *(st.sql for st in compiled.statements)])


def compiled_to_run(ws: Workspace, project_ref: str, allow_draft: bool, verb: str = "run") -> CompiledProject:
    """``project_ref`` (name, id or path) of ``ws`` compiled for a run, its parser warmed; a draft project is
    refused unless ``allow_draft`` (``verb``: what the refusal says it would do, ``run`` or ``restate``)."""
    from ...compiler.compile import compile_project, require_project
    project = require_project(ws, project_ref)
    if project.status == "draft" and not allow_draft:
        raise LedgerflowError(f"project '{project.name}' is a draft; pass --allow-draft to {verb} it anyway.")
    compiled = compile_project(ws, project)
    warm_parser(compiled)
    return compiled


def period_context(ws: Workspace, compiled: CompiledProject, period: Period, started: datetime.datetime,
                   upstream: Optional[dict] = None, batch_id: Optional[str] = None) -> RunContext:
    """The context of ``period``'s run of ``compiled`` started at ``started`` (its own run id): what a period's
    run, one of a fused range's, is about."""
    ctx = RunContext(ws, compiled.project, compiled, period, started, new_run_id(started),
                     upstream=dict(upstream or {}), batch_id=batch_id)
    ctx.datasets_snapshot = [v.dataset.raw for v in compiled.inputs if v.dataset.raw is not None]
    return ctx

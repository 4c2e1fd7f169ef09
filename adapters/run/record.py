"""The run record (docs/run-record.md) as the run builds it: :class:`RunRecord` is the one place the
runner changes it (started, claimed, on Spark, timed, failed); what the commit writes into it (the
journal, completed, rolled back) is the commit's (adapters/commit/journal.py and publish.py, given
:attr:`RunRecord.data`). The run store saves :attr:`RunRecord.data`, the JSON as it always was."""
from __future__ import annotations

import hashlib
import os
from typing import Any, Optional

from ..inputs.resolution import resolver_snapshot
from .context import RunContext, utcnow


def _now() -> str:
    return utcnow().isoformat(timespec="milliseconds")


class RunRecord:
    """One run's record; :attr:`data` is the JSON the run store saves."""

    def __init__(self, data: dict):
        self.data = data

    @classmethod
    def start(cls, ctx: RunContext) -> "RunRecord":
        """The record before execution (status ``running``)."""
        p = ctx.project
        raw_path = os.path.join(ctx.workspace.root, p.file)
        digest = hashlib.sha256(open(raw_path, "rb").read()).hexdigest() if os.path.isfile(raw_path) else \
            hashlib.sha256(repr(p.raw).encode()).hexdigest()
        snapshot = resolver_snapshot(ctx.compiled, ctx.resolutions, ctx.fingerprints) if ctx.resolutions else None
        return cls({"run_id": ctx.run_id, "parent_run_id": ctx.parent_run_id,
                    "project": {"id": p.id, "name": p.name, "version": p.version, "sha256": digest},
                    "project_snapshot": p.raw, "datasets_snapshot": ctx.datasets_snapshot,
                    "period": {"identifier": ctx.period.identifier, "start": ctx.period.start.isoformat(),
                               "end": ctx.period.end.isoformat()},
                    "started_at": (ctx.actual_start or ctx.started_at).isoformat(timespec="milliseconds"),
                    "run_started_at": ctx.started_at.isoformat(timespec="milliseconds"), "finished_at": None,
                    "status": "running", "error": None, "spark": None, "sql_sha256": ctx.compiled.sha256(),
                    "env": ctx.env,
                    "row_identity": ctx.row_identity, "resolver_snapshot": snapshot, "outputs": [],
                    **({"batch_id": ctx.batch_id} if ctx.batch_id else {}),
                    **({"upstream_runs": ctx.upstream_runs} if ctx.upstream_runs else {}),
                    **(ctx.input_check or {})})  # a replay: allow_changed_inputs, inputs_changed, inputs_unverified

    # ---------------------------------------------------------------- reading
    def get(self, key: str, default: Any = None) -> Any:
        """The record's ``key`` (as ``dict.get``)."""
        return self.data.get(key, default)

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    # ---------------------------------------------------------------- the run's steps
    def claimed(self, process: dict, staging: list) -> None:
        """The run holds its lock (``process``) and may leave ``staging`` folders behind (recovery.py)."""
        self.data.update(process=process, staging=staging)

    def on_spark(self, label: str, spark) -> None:
        """The session the run's Spark work uses (``label``: its master or remote)."""
        self.data["spark"] = {"master_or_remote": label, "version": spark.version, "app_id": _app_id(spark)}

    def read(self, fingerprints: Optional[list]) -> None:
        """The input fingerprints the run records: those of what its Spark work read (a period of a fused range:
        taken when the range read every period's files, adapters/run/fused.py)."""
        snapshot = self.data.get("resolver_snapshot")
        if snapshot is not None and fingerprints is not None:
            snapshot["input_fingerprints"] = fingerprints

    def timed(self, timings: Optional[dict]) -> None:
        """The run's ``timings`` (None: it failed before its Spark work began)."""
        self.data["timings"] = timings

    def failed(self, error: str) -> None:
        """The run failed with ``error``."""
        self.data.update(status="failed", error=error, finished_at=_now())


def output_lineage(ctx: RunContext) -> dict[int, dict]:
    """Per output seq, its column lineage as ``ledgerflow lineage --format json`` prints it (docs/lineage.md),
    followed across the workspace's projects through registered datasets."""
    from ...compiler.compile import plan_project
    from ...compiler.lineage import plan_lineage
    from ...compiler.lineage_formats import to_json
    plan = ctx.compiled.plan
    if plan is None:
        return {}
    columns = plan_lineage(plan, ctx.workspace, plan_project)
    return {seq: to_json([c for c in columns if c.output == seq]) for seq in dict.fromkeys(c.output for c in columns)}


def _app_id(spark) -> Optional[str]:
    try:
        return spark.sparkContext.applicationId
    except Exception:  # Spark Connect has no SparkContext
        return None

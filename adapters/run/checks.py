"""Checks before publish, the run's part (docs/checks.md): every check of the project judged on the rows the
run stages, before its commit point.

:class:`RunChecks` is the hook :func:`..commit.publish.write_outputs` calls around each output's write
(:class:`..commit.publish.OutputChecks`):

- ``prepare``: before an output is written. Its row checks are observed on the frame the write computes
  (``DataFrame.observe``, Spark's CollectMetrics: the same pass, never a second read), in the observation of
  its stage's bridge when the output has no selector (one CollectMetrics: ``bridge.observed_checks``); an output with a
  quarantine check is materialised once and split into the kept rows (written as the output) and each
  quarantine check's violating rows (with ``_check`` and ``_run_id``), staged to the check's destination
  and swapped in by the same journal as the outputs.
- ``written``: after it is staged. The observed metrics are read; each set check (``unique``,
  ``balanced``) is one aggregation of the staged files; ``row_count`` uses the rows the write counted.
  An output written elsewhere (a URI, a catalog table) was materialised before: it is judged there.
- the ``on: input`` checks start when the hook is made (the input is loaded, no output is needed): one
  aggregation of the input rows per set check, in a thread of their own beside the writes.
- ``evaluate``: before the journal begins. The input's checks waited for, the run's bridge collected and the reconciles judged on it (:mod:`.bridge`), ``record["checks"]`` in the
  order written, a line per check that warned, and :class:`~ledgerflow.compiler.errors.ChecksFailed`
  (exit 4) when a ``fail`` check found violations: the staged outputs are discarded, nothing is
  published, the run is recorded failed with the results.
"""
from __future__ import annotations

from typing import Callable, Optional

from ...compiler import parameters
from ...compiler import resolver as resolver_engine
from ...compiler.checks.plan import Action, CheckKind, CheckPlan
from ...compiler.checks.sql import input_rows_query
from ...compiler.errors import ChecksFailed
from ...compiler.model import Dataset
from ..commit import staging
from ..commit.destinations import OutputDestination
from ..layout.partition_paths import PARTITION
from ..commit.partitions import check_partition
from . import check_eval, observations
from .context import RunContext
from .input_checks import InputChecks

Echo = Callable[[str], None]
CHECK_COLUMN, RUN_COLUMN = "_check", "_run_id"  # the columns a quarantined row gains


def quarantine_destinations(ctx: RunContext) -> dict[str, OutputDestination]:
    """Where each quarantine check of ``ctx`` writes, by check name: a folder below the workspace, its
    ``{{tokens}}`` filled like an output path's, staged and swapped in like a local output's partition
    (checked absent or ledgerflow's own, as an output's)."""
    out: dict[str, OutputDestination] = {}
    plan = ctx.compiled.plan
    for check in plan.checks if plan is not None else []:
        if check.action != Action.QUARANTINE or check.quarantine is None:
            continue
        path, where = check.quarantine.path, f"the quarantine of check '{check.name}'"
        pseudo = Dataset(id=check.name, name=check.name, status="active", table_name=check.name,
                         temporal_mode="period", columns=[], versions=[])
        text = resolver_engine.substitute(path, pseudo, 1, ctx.period, where) if "{{" in path else path
        dest = OutputDestination("path", resolver_engine.destination_path(ctx.workspace.root, path, text, where),
                                 check.quarantine.format, 1, ctx.workspace.root, ctx.env)
        check_partition(dest.target, ctx.period.identifier, where=where, env=ctx.env)
        out[check.name] = dest
    return out


class RunChecks:
    """The checks of one run (see the module docstring); ``quarantines``: :func:`quarantine_destinations`."""

    def __init__(self, spark, ctx: RunContext, quarantines: dict[str, OutputDestination], echo: Echo = print):
        self.spark, self.ctx, self.quarantines, self.echo = spark, ctx, quarantines, echo
        plan = ctx.compiled.plan
        self.checks: list[CheckPlan] = list(plan.checks) if plan is not None else []
        self.results: dict[str, dict] = {}
        self._observed: dict[int, tuple[object, list]] = {}  # output seq -> (Observation, [(check, prefix)])
        on_input = [c for c in self.checks if c.on_input]
        # judged now, beside the writes (run/input_checks.py); evaluate() waits for them
        self._on_input = InputChecks(spark, ctx.run_id, on_input, self._input_rows()) if on_input else None

    def _on(self, seq: int) -> list[CheckPlan]:
        return [c for c in self.checks if c.on == seq and c.kind != CheckKind.RECONCILE]

    # ---------------------------------------------------------------- the hook
    def prepare(self, out) -> list[tuple[object, OutputDestination]]:
        """Before output ``out`` (a PendingOutput) is written: its frame observed, its quarantined rows split
        off. Returns the quarantined rows to stage, each with its destination."""
        from . import bridge
        seq = out.statement.operation.seq
        row = [c for c in self._on(seq) if c.kind.row_check]
        moved = [c for c in row if c.action == Action.QUARANTINE]
        rest = [c for c in row if c.action != Action.QUARANTINE]
        extra: list[tuple[object, OutputDestination]] = []
        frame = out.frame
        if moved:
            from pyspark.sql import functions as F
            frame = frame.localCheckpoint()  # computed once, then split into the kept and the quarantined rows
            self.results.update(check_eval.judge_rows(frame, moved, quarantined=True))
            # a row violating several quarantine checks goes to the first one's destination (declared order) only:
            # the quarantine partitions then add up to the rows the output lost (the bridge's `quarantined`)
            firsts, earlier = [], None
            for check in moved:
                bad = check_eval.violating(check)
                firsts.append(bad if earlier is None else bad & ~earlier)
                earlier = bad if earlier is None else earlier | bad
            if len(moved) > 1:
                counts = frame.agg(*[F.count_if(c).alias(f"q{i}") for i, c in enumerate(firsts)]).collect()[0]
                for i, check in enumerate(moved):
                    self.results[check.name]["quarantined"] = int(counts[f"q{i}"] or 0)
            for check, first in zip(moved, firsts):
                # written even when empty: the partition says what this run quarantined for the period
                rows = frame.filter(first).withColumn(CHECK_COLUMN, F.lit(check.name)) \
                    .withColumn(RUN_COLUMN, F.lit(self.ctx.run_id))
                extra.append((rows, self.quarantines[check.name]))
            any_violation = check_eval.any_violation(moved)
            bridge.moved(self.ctx, seq, frame.filter(any_violation))  # the bridge's output value: its rows less these
            frame = frame.filter(~any_violation)
            if out.rows is not None:  # materialised before (written elsewhere): the kept rows counted again
                out.rows = frame.count()
        merged = bridge.observed_checks(self.ctx, seq) if rest and not moved else None
        if merged is not None:  # observed with its stage's bridge, in the pass that computes the stage
            self._observed[seq] = merged
        elif rest and out.rows is None:  # computed by its staged write: observed there, in the same pass
            from pyspark.sql import Observation
            columns, named = check_eval.row_metrics(rest, impact=False)  # the impact is read back if needed
            observation = Observation(f"lf_checks_{seq}_{self.ctx.run_id}")
            frame = frame.observe(observation, *columns)
            self._observed[seq] = (observation, named)
        elif rest:  # materialised: one aggregation of the rows in memory
            self.results.update(check_eval.judge_rows(frame, rest))
        out.frame = frame
        return extra

    def written(self, out, staged: Optional[staging.Staged], fmt: Optional[str] = None) -> None:
        """After output ``out`` was staged as ``staged`` (in format ``fmt``; None: an output written elsewhere,
        materialised and not yet written): its observed row checks and its set checks judged."""
        seq = out.statement.operation.seq
        checks = self._on(seq)
        if not checks:
            return
        rows = out.frame if staged is None else staging.read_staged(out.frame, staged.staged, fmt)
        if PARTITION in out.frame.columns and PARTITION not in rows.columns:
            from pyspark.sql import functions as F
            rows = rows.withColumn(PARTITION, F.lit(self.ctx.period.identifier))
        if seq in self._observed:
            observation, named = self._observed.pop(seq)
            got, why = observations.one(observation)  # never Observation.get: it waits forever for a plan never run
            for name, metrics in (check_eval.split_metrics(got, named) if got is not None else {}).items():
                check = next(c for c, _ in named if c.name == name)
                self.results[name] = check_eval.row_result(check, metrics, rows)
            for check, _ in named if got is None else []:
                self.results[check.name] = unjudged(check, f"its row metrics were not measured: {why}")
        for check in checks:
            if check.kind.set_check:
                self.results[check.name] = check_eval.set_result(self.spark, check, rows, out.rows)

    def evaluate(self, record: dict) -> None:
        """Every check judged (input checks and reconciles here), ``record["checks"]`` written in the order the
        checks are written, a line per check that warned; :class:`ChecksFailed` when a ``fail`` check failed."""
        from . import bridge
        bridge.collect(self.ctx, record)  # record["bridge"]: every output is staged or materialised by now
        if self._on_input is not None:
            self.results.update(self._on_input.result())
        reconciles = [c for c in self.checks if c.kind == CheckKind.RECONCILE]
        for entry in bridge.reconcile_results(reconciles, record.get("bridge") or []) if reconciles else []:
            self.results[entry["name"]] = entry
        results = [self.results[c.name] for c in self.checks if c.name in self.results]
        record["checks"] = results
        for r in results:
            if r["status"] == "warned":
                self.echo(f"  check '{r['name']}' warned: " + (f"{r['quarantined']} rows quarantined"
                          if r["quarantined"] else f"{r['violations']} violations"))
        if any(r["status"] == "failed" for r in results):
            judged = check_eval.describe_failures([r for r in results if "error" not in r], self.checks)
            unknown = [f"check '{r['name']}' ({r['kind']} on "
                       f"{'the input' if r['on'] == 'input' else 'output ' + str(r['on'])}) could not be "
                       f"judged: {r['error']}" for r in results if r["status"] == "failed" and "error" in r]
            raise ChecksFailed(check_eval.failure_report(
                f"run {self.ctx.run_id} failed its checks, so nothing was published", judged + unknown,
                f"`ledgerflow runs show {self.ctx.run_id}` lists every check"), results)

    def cancel(self) -> None:
        """The run failed before its checks were judged: the input's checks stop, their Spark jobs cancelled."""
        if self._on_input is not None:
            self._on_input.cancel()

    # ---------------------------------------------------------------- helpers
    def _input_rows(self):
        """The input after the period filter, before operation 1 (the ``input`` rows of the first statement)."""
        first = self.ctx.compiled.statements[0]
        query = input_rows_query(first.sql)
        args = parameters.values(self.ctx.period, self.ctx.started_at)
        return self.spark.sql(query, args=parameters.arguments(query, args))


def unjudged(check: CheckPlan, reason: str) -> dict:
    """The result of a check the run could not judge (its metrics were not measured): failed, whatever its
    action, with ``error`` saying why; a check is never passed on numbers the run did not measure."""
    return {"name": check.name, "kind": check.kind.value, "on": check.target, "severity": check.severity,
            "status": "failed", "violations": 0, "amount_impact": {}, "sample": [], "quarantined": 0, "error": reason}

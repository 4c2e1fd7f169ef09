"""The run's bridge (docs/checks.md, "The bridge"): per output, how its measures moved from the input to the
output, observed in the pass that computes the output; and the ``reconcile`` checks judged on it.

:class:`BridgeObserver` (``ctx.bridge``, made by :func:`..run.compute.compute` for every run unless
``ledgerflow.yml`` says ``bridge: with_checks`` or ``off``) observes each stage an output reads with one
``DataFrame.observe`` (Spark's CollectMetrics) of :func:`~ledgerflow.compiler.bridge.stage_metrics`: the
working rows at the end of a stage carry the bridge's columns, so each operation's change is one aggregate of
them, computed while the stage is materialised or the output written (none at all when no operation before
the output changes a measure). Each output's frame carries one more, under its write, of its own rows: its
value at the end, in plain counts and sums, with its row checks unless one of them quarantines
(:func:`observed_checks`). No second read.
:func:`collect` turns them into ``record["bridge"]`` (once per run); :func:`reconcile_results` judges the
reconciles on it.
"""
from __future__ import annotations

import uuid
from decimal import Decimal, localcontext
from typing import Any, Optional

from ...compiler.bridge import (END, INPUT, BridgeMeasure, BridgePlan, OutputBridge, check_prefix,
                                       grouped_query, input_value, metric_name,
                                       output_metrics, output_check_metrics, stage_metrics)
from ...compiler.bridge_columns import EXACT
from ...compiler.bridge_written import MISTAKEN, Stamps, mistaken, written_creates, written_names
from ...compiler.checks.plan import Action, CheckKind, CheckPlan
from ...compiler.kinds.entry import BridgeEffect
from ...compiler.kinds.registry import operation_kind
from . import observations, written_figures
from .check_eval import SAMPLE, judge


class BridgeObserver:
    """The observations of one run's bridge (see the module docstring)."""

    def __init__(self, plan: BridgePlan, checks: Optional[list[CheckPlan]] = None, stamps: Stamps = Stamps(),
                 parquet: frozenset[int] = frozenset()):
        self.plan = plan
        self.checks = list(checks or [])  # the project's checks: an output's row checks are observed with its stage
        self.stamps = stamps  # the operations whose created rows say so in _operation_seq (bridge_written.stamped)
        self.parquet = parquet  # the outputs staged as Parquet files in a local folder
        self.written: dict[int, tuple[int, ...]] = {}  # output seq -> the operations whose created rows' figures
        # are read from its staged files (:mod:`.written_figures`), not observed on the stage's rows
        self.read: dict[int, dict] = {}  # output seq -> those figures, once read
        self.carried = True  # whether an input row may carry an _operation_seq of its own (compute.compute tells)
        self.checked: dict[int, tuple[Any, list]] = {}  # output seq -> (stage Observation, [(row check, prefix)])
        self.tag = uuid.uuid4().hex[:12]  # observation names are unique in the session
        self.stages: dict[str, Any] = {}  # stage view -> Observation of its rows at the end
        self.stage_of: dict[int, str] = {}  # output seq -> the stage view it reads
        self.outputs: dict[int, Any] = {}  # output seq -> Observation
        self.frames: dict[int, Any] = {}  # output seq -> its frame as computed (before any quarantine)
        self.quarantined: dict[int, Any] = {}  # output seq -> the frame of its rows a quarantine moved out
        self.rows: Optional[list[dict]] = None

    def observe_stage(self, df, stage: str, outputs: list[int]):
        """``df``, the rows of ``stage`` (a view the outputs ``outputs`` read), carrying the observation of
        their bridges' figures (:func:`~ledgerflow.compiler.bridge.stage_metrics`)."""
        metrics = stage_metrics(self.plan, outputs)
        for seq in outputs:
            self.stage_of[seq] = stage
        if not metrics:  # no operation before these outputs changes a measure: nothing to observe here
            return df
        creates = written_creates(self.plan, self.stamps, outputs[0]) if self._readable(outputs) else ()
        if creates:  # read from the few rows that carry their seq once written, not evaluated on every row here
            self.written[outputs[0]] = creates
            metrics = stage_metrics(self.plan, outputs, skip=creates)
            if self.carried or not self._all_stamped():  # else no row but those created can carry their seq
                metrics.append(mistaken(creates, kept=False))
            if not metrics:  # the created rows' figures were all there was to observe
                return df
        from pyspark.sql import Observation
        from pyspark.sql import functions as F
        observation = Observation(f"lf_bridge_{self.tag}_{stage}")
        df = df.observe(observation, *[F.expr(sql).alias(name) for name, sql in metrics])
        self.stages[stage] = observation
        return df

    def observe_output(self, df, seq: int):
        """Output ``seq``'s frame carrying the observation of its measures over its rows (its value at the end)
        and of its row checks (:func:`~ledgerflow.compiler.bridge.output_check_metrics`): one ``CollectMetrics``
        under its write."""
        self.frames[seq] = df
        checked = output_check_metrics(self.plan, seq, self.checks)
        metrics = output_metrics(self.plan, seq) + checked
        if not metrics:
            return df
        from pyspark.sql import Observation
        from pyspark.sql import functions as F
        observation = Observation(f"lf_bridge_{self.tag}_out_{seq}")
        df = df.observe(observation, *[F.expr(sql).alias(name) for name, sql in metrics])
        self.outputs[seq], self.frames[seq] = observation, df
        if checked:
            self.checked[seq] = (observation, [(c, check_prefix(c)) for c in self.checks
                                               if c.on == seq and c.kind.row_check])
        return df

    def _readable(self, outputs: list[int]) -> bool:
        """Whether the stage's one reader is an output whose staged files hold every row it computed: written as
        Parquet to a local folder, no row moved out by a quarantine."""
        return len(outputs) == 1 and outputs[0] in self.parquet and not any(
            c.on == outputs[0] and c.action == Action.QUARANTINE for c in self.checks)

    def _all_stamped(self) -> bool:
        """Whether every operation that creates rows gives them its own seq (none copies a row's)."""
        return all(k in self.stamps.creates for k, kind in self.plan.kinds.items()
                   if operation_kind(kind).bridge == BridgeEffect.CREATES_ROWS)

    def staged(self, seq: int, folder: str) -> None:
        """Output ``seq``'s rows were staged in ``folder``: read the created rows' figures it holds."""
        o = self.plan.output(seq)
        if seq in self.written and o is not None:
            try:
                self.read[seq] = written_figures.created_figures(folder, self.written[seq], o.rows, o.measures)
            except Exception:  # noqa: BLE001 - not read: the figures are taken from the stage's rows (_created)
                self.read.pop(seq, None)


def collect(ctx, record: Optional[dict] = None) -> list[dict]:
    """``record["bridge"]`` of the run ``ctx`` (computed once, when every output was staged or materialised):
    per output, measure and group, ``input``, ``changes`` [{seq, change}], ``quarantined`` and
    ``output_value``; counts as ints, sums as exact decimal strings (the rows a quarantine moved out of an
    output, told by :func:`moved`, are not in its value)."""
    observer: Optional[BridgeObserver] = getattr(ctx, "bridge", None)
    if observer is None:
        return []
    if observer.rows is None:
        with localcontext(EXACT):
            observer.rows = _rows(observer)
    if record is not None:
        record["bridge"] = observer.rows
    return observer.rows


def staged(ctx, seq: int, folder: str) -> None:
    """Output ``seq`` of the run ``ctx`` was staged in ``folder`` (:meth:`BridgeObserver.staged`)."""
    observer: Optional[BridgeObserver] = getattr(ctx, "bridge", None)
    if observer is not None:
        observer.staged(seq, folder)


def observed_checks(ctx, seq: int) -> Optional[tuple[Any, list]]:
    """(the output's Observation, [(row check, its metrics' prefix)]) when output ``seq``'s row checks are
    observed with its value at the end (:func:`~ledgerflow.compiler.bridge.output_check_metrics`), else
    None: its checks observe its own rows."""
    observer: Optional[BridgeObserver] = getattr(ctx, "bridge", None)
    return None if observer is None else observer.checked.get(seq)


def moved(ctx, seq: int, frame) -> None:
    """The rows a quarantine moved out of output ``seq`` (a frame of them): the bridge records them, and the
    output's value is its rows less these."""
    observer: Optional[BridgeObserver] = getattr(ctx, "bridge", None)
    if observer is not None:
        observer.quarantined[seq] = frame


def _zero(m: BridgeMeasure):
    return 0 if m.column is None else Decimal(0).scaleb(-m.scale)


def _num(value, m: BridgeMeasure):
    return _zero(m) if value is None else (int(value) if m.column is None else Decimal(value))


def _text(value, m: BridgeMeasure):
    return int(value) if m.column is None else str(Decimal(value).quantize(Decimal(1).scaleb(-m.scale)))


def _quarantined_totals(plan: BridgePlan, frame, o: OutputBridge) -> dict:
    """The output's measures over the rows a quarantine moved out of it (one aggregation of rows that were
    materialised to be split)."""
    if frame is None:
        return {}
    from pyspark.sql import functions as F
    return frame.agg(*[F.expr(sql).alias(name) for name, sql in output_metrics(plan, o.seq)]).collect()[0].asDict()


def _bridge_row(o: OutputBridge, m: BridgeMeasure, group, figures: dict, out_value, quarantined) -> dict:
    """One row: ``figures`` INPUT -> the value after the period filter, operation seq -> its change (absent:
    none), ``out_value`` the output's rows before a quarantine, ``quarantined`` the moved rows' value."""
    first = prev = _num(figures.get(INPUT), m)
    changes = []
    for seq in o.steps:  # an operation that cannot change the measure has no figure: zero
        change = _num(figures.get(seq), m)
        changes.append({"seq": seq, "change": _text(change, m)})
        prev += change
    before = _num(out_value, m)
    if o.selector:
        changes.append({"seq": o.seq, "change": _text(before - prev, m)})
    q = _num(quarantined, m)
    return {"output": o.seq, "measure": m.name, "group": group, "input": _text(first, m), "changes": changes,
            "quarantined": _text(q, m), "output_value": _text(before - q, m)}


def _rows(observer: BridgeObserver) -> list[dict]:
    rows: list[dict] = []
    plan = observer.plan
    # never Observation.get directly: it waits forever for a plan that never ran (run/observations.py)
    got, missing = observations.read({**{("stage", s): o for s, o in observer.stages.items()},
                                      **{("output", s): o for s, o in observer.outputs.items()}})
    for o in plan.outputs:
        if o.seq not in observer.frames:
            continue  # not computed by this run
        why = _unmeasured(o, observer, missing)
        if why is not None:  # never numbers made up: the output's bridge says it was not measured, and why
            rows.extend({"output": o.seq, "measure": m.name, "group": None, "input": None, "changes": [],
                         "quarantined": None, "output_value": None, "not_measured": why} for m in o.measures)
            continue
        stage = got.get(("stage", observer.stage_of[o.seq]), {})  # none: nothing before it changes a measure
        out = got[("output", o.seq)]
        if o.seq in observer.written:
            stage = {**stage, **_created(observer, o.seq, stage)}
        moved = _quarantined_totals(plan, observer.quarantined.get(o.seq), o)
        for m in o.measures:
            figures = {w: stage.get(metric_name(w, o.rows, m.name)) for w in o.operations}
            # the stage's rows at the end: the output's own, unless its selector left some out
            figures[END] = stage.get(metric_name(END, o.rows, m.name)) if o.selector else out.get(m.name)
            figures[INPUT] = input_value(figures, o.operations)
            rows.append(_bridge_row(o, m, None, figures, out.get(m.name), moved.get(m.name)))
        for by in o.groups:
            rows.extend(_grouped_rows(observer, o, by))
    return rows


def _created(observer: BridgeObserver, seq: int, stage: dict) -> dict:
    """The figures of the rows output ``seq``'s stage created (:attr:`BridgeObserver.written`), as the stage
    names them: read from its staged rows with their ``_operation_seq``, unless a live row the operations did
    not create carried one of their seqs (an input's own ``_operation_seq``) or the rows were not staged; then
    one more job over the stage's rows, as its figures would have been observed on them."""
    if not stage.get(MISTAKEN) and seq in observer.read:
        return observer.read[seq]
    names = set(written_names(observer.plan, seq, observer.written[seq]))
    from pyspark.sql import functions as F
    frame = observer.frames[seq].sparkSession.table(observer.stage_of[seq])
    metrics = [m for m in stage_metrics(observer.plan, [seq]) if m[0] in names]
    return frame.agg(*[F.expr(sql).alias(name) for name, sql in metrics]).collect()[0].asDict()


def _unmeasured(o: OutputBridge, observer: BridgeObserver, missing: dict) -> Optional[str]:
    """Why output ``o``'s bridge cannot be told from the run's observations (None: it can)."""
    stage = observer.stage_of.get(o.seq)
    if stage is None:
        return "the working rows before it were never observed"
    if ("stage", stage) in missing:
        return f"the working rows before it: {missing[('stage', stage)]}"
    if o.seq not in observer.outputs:
        return "the output's rows were never observed"
    if ("output", o.seq) in missing:
        return f"the output's rows: {missing[('output', o.seq)]}"
    return None


def _plain(value):
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value.isoformat() if hasattr(value, "isoformat") else value)


def _grouped(spark, plan: BridgePlan, o: OutputBridge, by: tuple, view: str, stage: bool) -> dict:
    """group key -> the row of :func:`grouped_query` over ``view``."""
    result = spark.sql(grouped_query(plan, o.seq, by, view, stage)).collect()
    return {tuple(_plain(r[c]) for c in by): r.asDict() for r in result}


def _over_frame(spark, plan: BridgePlan, o: OutputBridge, by: tuple, frame) -> dict:
    view = f"lf_bridge_{uuid.uuid4().hex[:12]}"
    frame.createOrReplaceTempView(view)
    try:
        return _grouped(spark, plan, o, by, view, stage=False)
    finally:
        spark.catalog.dropTempView(view)


def _grouped_rows(observer: BridgeObserver, o: OutputBridge, by: tuple) -> list[dict]:
    """The bridge of ``o`` per group ``by``: one aggregation of the stage's rows and one of the output's."""
    frame = observer.frames[o.seq]
    spark = frame.sparkSession
    staged = _grouped(spark, observer.plan, o, by, observer.stage_of[o.seq], stage=True)
    out = _over_frame(spark, observer.plan, o, by, frame)
    moved_frame = observer.quarantined.get(o.seq)
    moved = _over_frame(spark, observer.plan, o, by, moved_frame) if moved_frame is not None else {}
    keys = sorted({k for values in (staged, out, moved) for k in values},
                  key=lambda k: tuple((v is not None, str(v)) for v in k))
    rows = []
    for key in keys:
        group = dict(zip(by, key))
        for m in o.measures:
            figures = {w: staged.get(key, {}).get(f"{w}|{m.name}") for w in (END, *o.operations)}
            figures[INPUT] = input_value(figures, o.operations)
            rows.append(_bridge_row(o, m, group, figures, out.get(key, {}).get(m.name),
                                    moved.get(key, {}).get(m.name)))
    return rows


# ------------------------------------------------------------------------------------------- reconcile
@judge("reconcile")
def reconcile_results(checks: list[CheckPlan], bridge: list[dict]) -> list[dict]:
    """Each ``reconcile`` of ``checks`` judged on ``bridge`` (``record["bridge"]``), as ``record["checks"]``
    entries: per group (``by``, else the overall row) and measure, ``from + changes of explained_by = to``
    within ``tolerance``. ``violations``: the (group, measure) pairs out of tolerance; ``differences``: every
    pair with its unexplained difference; ``amount_impact``: per summed column, the unexplained difference
    over the failing groups; ``sample``: up to 5 failing groups with their figures."""
    with localcontext(EXACT):
        return _reconciled(checks, bridge)


def _reconciled(checks: list[CheckPlan], bridge: list[dict]) -> list[dict]:
    results = []
    for check in checks:
        if check.kind != CheckKind.RECONCILE:
            continue
        by = tuple(check.group_by)
        to_rows = _index(bridge, check.on, by)
        from_rows = to_rows if check.from_output is None else _index(bridge, check.from_output, by)
        if not to_rows:  # nothing measured (a bug, never a pass): cannot be judged, so fails whatever its action
            results.append({"name": check.name, "kind": check.kind.value, "on": check.target,
                            "severity": check.severity, "status": "failed",
                            "violations": 1, "amount_impact": {}, "sample": [], "quarantined": 0, "differences": [],
                            "error": f"the run recorded no bridge for output {check.on}"})
            continue
        unmeasured = [r for r in (*to_rows.values(), *from_rows.values()) if r.get("not_measured")]
        if unmeasured:  # cannot be judged: fails the run whatever its action (never a pass on numbers not measured)
            r = unmeasured[0]
            results.append({"name": check.name, "kind": check.kind.value, "on": check.target,
                            "severity": check.severity, "status": "failed", "violations": 0, "amount_impact": {},
                            "sample": [], "quarantined": 0, "differences": [],
                            "error": f"the bridge of output {r['output']} was not measured: {r['not_measured']}"})
            continue
        keys = sorted({k for k, _ in to_rows} | {k for k, _ in from_rows},
                      key=lambda k: tuple((v is not None, str(v)) for v in k))
        differences, failing = [], []
        impact: dict[str, Decimal] = {}
        for key in keys:
            for m in check.measures:
                to = to_rows.get((key, m.name))
                start = from_rows.get((key, m.name))
                if check.from_output is None:
                    begin = Decimal(start["input"]) if start else Decimal(0)
                else:
                    begin = Decimal(start["output_value"]) if start else Decimal(0)
                explained = sum((Decimal(c["change"]) for c in (to or {}).get("changes", [])
                                 if c["seq"] in check.explained_by), Decimal(0))
                end = Decimal(to["output_value"]) if to else Decimal(0)
                diff = end - begin - explained
                entry = {"group": dict(zip(by, key)) if by else None, "measure": m.name, "from": _out(begin, m),
                         "explained": _out(explained, m), "to": _out(end, m), "difference": _out(diff, m)}
                differences.append(entry)
                if abs(diff) > check.tolerance:
                    failing.append(entry)
                    if m.column is not None:
                        impact[m.column] = impact.get(m.column, Decimal(0)) + diff
        status = "passed" if not failing else ("failed" if check.action == Action.FAIL else "warned")
        results.append({"name": check.name, "kind": check.kind.value, "on": check.target, "severity": check.severity,
                        "status": status, "violations": len(failing),
                        "amount_impact": {c: str(v) for c, v in impact.items()},
                        "sample": [{**(f["group"] or {}), "measure": f["measure"], "difference": f["difference"]}
                                   for f in failing[:SAMPLE]],
                        "quarantined": 0, "differences": differences})
    return results


def _index(bridge: list[dict], seq: int, by: tuple) -> dict:
    out = {}
    for row in bridge:
        if row["output"] != seq:
            continue
        group = row["group"]
        if (not by and group is None) or (by and group is not None and tuple(group) == by):
            out[(tuple(group[c] for c in by) if by else (), row["measure"])] = row
    return out


def _out(value: Decimal, m) -> Any:
    return int(value) if m.column is None else str(value)

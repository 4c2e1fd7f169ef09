"""``ledgerflow diff --data --period P [BASE [HEAD]] [--by COL]... [--key COL]...``: how the numbers move.

The sides are opened, loaded and compared as the compiled diff does (:mod:`.command`); the projects whose
compiled SQL differs are compiled, their inputs resolved once for both sides (:mod:`.data_sides`), every
user error raised before Spark starts; then, in one Spark session, each side's output frames are computed
as a run computes them (:func:`..run.compute.compute`, stopped before any write) and compared
(:func:`.data_diff.data_diff`). Nothing is written: no staging folder, no run record, no version.

Exit codes: 0 nothing differs; 1 a side does not compile, reads a dataset the other lacks, ``--by`` names a
column an output lacks, ``--key`` values repeat on a side, or an input cannot be resolved; 2 ``--key`` names a
column an output lacks; 3 Spark failed; 4 a difference was found.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from ...compiler.compile import gc_paused
from ...compiler.diff.data_match import OutputMatch, output_matches
from ...compiler.diff.result import Category, Status
from ...compiler.errors import ExecutionError, LedgerflowError
from ...compiler.periods import Period
from ..run.compute import spark_error_message
from ..run.context import warm_parser
from ..run.scheduler import Scheduler
from ..spark.scoped_conf import session_settings
from . import data_sides as sides
from .command import EXIT_FOUND, compare_sides
from .data_diff import check_by, data_diff
from .data_keys import check_key
from .data_formats import render_data
from .data_inputs import SharedInputs
from .data_result import ProjectDataDiff, WorkspaceDataDiff, output_labels
from .gitsource import open_side


@dataclass(frozen=True)
class DataDiffAsk:
    """What ``diff --data`` was asked: the workspace being diffed (None: two folders), the BASE and HEAD sides
    (None: HEAD's git revision, the working tree), the projects (empty: every one), the period, ``--by``,
    ``--key`` (column lists) and the format."""

    workspace_root: Optional[str]
    base: Optional[str]
    head: Optional[str]
    projects: tuple = ()
    period: Optional[Period] = None
    by: tuple = ()
    key: tuple = ()
    fmt: str = "text"


def plan_data_diff(ask: DataDiffAsk, store, registered=None):
    """Everything before Spark: (the report to fill, the project pairs to run, the open sides to close).
    Raises :class:`SideError` (a side does not compile) or :class:`.data_sides.DataInputError`."""
    workspace_root, base_spec, head_spec, projects = ask.workspace_root, ask.base, ask.head, ask.projects
    period, by, key = ask.period, ask.by, ask.key
    registered = list(registered() if callable(registered) else registered or [])
    base_side = open_side("base", base_spec if base_spec is not None else "HEAD", workspace_root)
    opened = [base_side]
    try:
        head_side = open_side("head", head_spec, workspace_root)
        opened.append(head_side)
        with gc_paused():
            base, head, compiled_diff = compare_sides(base_side, head_side, registered, projects)
        report = WorkspaceDataDiff(base_side.label, head_side.label, period.identifier, [])
        root = sides.data_root_of(workspace_root, head_side.root)
        base, head = sides.data_workspace(base, root), sides.data_workspace(head, root)
        labels = {"base": base_side.label, "head": head_side.label}
        compiled = []
        for p in compiled_diff.projects:
            if p.status in (Status.ADDED, Status.REMOVED):
                side = "HEAD" if p.status == Status.ADDED else "BASE"
                report.projects.append(ProjectDataDiff(p.name, p.status.value, note=f"only on the {side} side: not run"))
            elif p.status == Status.UNCHANGED or p.category == Category.NO_OP:
                report.projects.append(ProjectDataDiff(p.name, "unchanged",
                                                       note="same compiled SQL on the same inputs: not run"))
            else:
                compiled.append((p.name, sides.compile_side(base, p.name, "base", labels["base"]),
                                 sides.compile_side(head, p.name, "head", labels["head"])))
        sides.check_same_datasets(compiled, base, head, labels)
        if by or key:
            for name, b, h in compiled:
                columns = {role: {st.operation.name: [c for c, _ in st.columns] for st in c.outputs}
                           for role, c in (("base", b), ("head", h))}
                for out in dict.fromkeys([*columns["head"], *columns["base"]]):
                    present = {role: cols[out] for role, cols in columns.items() if out in cols}
                    check_key(out, present, key, project=name)
                    check_by(out, present, by, project=name)
        started = sides.started_now()
        pairs = []
        for name, b, h in compiled:
            pairs.append(sides.ProjectPair(name, sides.side_context(base, b, period, started, "base", labels["base"]),
                                           sides.side_context(head, h, period, started, "head", labels["head"])))
        sides.resolve_shared([s for pair in pairs for s in (pair.base, pair.head)], head, store, period)
        return report, pairs, opened
    except BaseException:
        for side in opened:
            side.close()
        raise


def output_frames(spark, side: sides.SideProject, shared: Optional[SharedInputs] = None) -> tuple[dict, dict]:
    """(output name -> frame, output name -> seq) of one side, computed up to the write and no further;
    ``shared`` loads its inputs (an input another side loaded alike is not read again)."""
    try:  # a dry run of the side (the scheduler's, run/evaluator.py DryRun): its frames, nothing written or recorded
        pending = Scheduler.dry_run(spark, side.ctx, shared.load if shared is not None else None)
    except LedgerflowError:
        raise
    except Exception as exc:  # noqa: BLE001 - Spark/Py4J errors: the diff failed on Spark
        raise _spark_failure(exc, side) from exc
    keys = output_keys([p.statement.operation for p in pending])
    frames = {keys[p.statement.operation.seq]: p.frame for p in pending}
    return frames, {keys[p.statement.operation.seq]: p.statement.operation.seq for p in pending}


def output_keys(operations: list) -> dict[int, str]:
    """Output seq -> the name its rows are compared under: the operation's name, and ``NAME (output SEQ)`` for
    each of several outputs of one name (a project may name two outputs alike; keyed by name alone, one of them
    went uncompared)."""
    return output_labels((op.seq, op.name) for op in operations)


def _spark_failure(exc: Exception, side: sides.SideProject) -> ExecutionError:
    return ExecutionError(f"diff --data: project '{side.ctx.project.name}' on the {side.role} side ({side.label}) "
                          f"failed on Spark for period {side.ctx.period.identifier}: "
                          f"{spark_error_message(exc, side.ctx)}")


# Session settings while a data diff computes (restored after). The comparison's full outer join of the two
# sides by _row_id is a shuffled hash join when every shuffled partition is small enough to hold in memory (AQE
# decides once the sides are shuffled; else a sort-merge join as before): it does not sort both sides
# (pipeline P at 1M rows: about 2 s of CPU less in a warm JVM). Generated classes are named without their
# plan's stage id, so a stage the two sides both run (the same code but for its literals) is compiled once.
COMPARISON_SETTINGS = {"spark.sql.adaptive.maxShuffledHashJoinLocalMapThreshold": "64MB",
                       "spark.sql.codegen.useIdInClassName": "false"}


def pair_matches(pair: sides.ProjectPair) -> dict[str, OutputMatch]:
    """Output name (as compared) -> how its rows are matched and which columns are copied from a join
    (:mod:`...compiler.diff.data_match`): HEAD's plan decides the group-by keys (BASE's for an output HEAD
    lacks); a column copied from a join on either side is not totalled."""
    found: dict[str, OutputMatch] = {}
    for side in (pair.base, pair.head):  # HEAD's last: its group-by keys win
        compiled = side.ctx.compiled
        labels = output_keys([st.operation for st in compiled.outputs])
        for seq, match in output_matches(compiled.plan).items():
            label = labels.get(seq)
            if label is None:
                continue
            copied = match.copied | (found[label].copied if label in found else frozenset())
            found[label] = OutputMatch(match.group_by, copied)
    return found


def compute_data_diff(spark, report: WorkspaceDataDiff, pairs: list[sides.ProjectPair], by: tuple,
                      key: tuple = ()) -> WorkspaceDataDiff:
    """Run each pair's two sides in ``spark`` and compare their outputs into ``report``. An input the sides
    load alike is read once for all of them (:class:`.data_inputs.SharedInputs`)."""
    shared = SharedInputs([side.ctx for pair in pairs for side in (pair.head, pair.base)])
    with session_settings(spark, COMPARISON_SETTINGS):
        try:
            for pair in pairs:
                head_frames, head_seqs = output_frames(spark, pair.head, shared)
                # the base side's views replace the head side's under the same names; the head frames keep the
                # plans they were analysed with (a classic session analyses a frame when it is made)
                base_frames, base_seqs = output_frames(spark, pair.base, shared)
                try:
                    result = data_diff(base_frames, head_frames, by, {**base_seqs, **head_seqs}, pair_matches(pair),
                                       key)
                except LedgerflowError:
                    raise
                except Exception as exc:  # noqa: BLE001
                    raise _spark_failure(exc, pair.head) from exc
                report.projects.append(ProjectDataDiff(pair.name, "compared", result))
        finally:
            shared.release()
    order = {p.name: i for i, p in enumerate(report.projects)}
    report.projects.sort(key=lambda p: (p.status != "compared", order[p.name]))
    return report


def run_data_diff(ask: DataDiffAsk, echo: Callable[[str], None], session: Callable[[], object], store,
                  registered=None) -> int:
    """Print the data diff ``ask`` asks for with ``echo``; returns the exit code (4 when a difference was found).
    ``session``: the SparkSession factory, called only when a project is to be run."""
    report, pairs, opened = plan_data_diff(ask, store, registered)
    by, key = ask.by, ask.key
    try:
        report.by, report.key = list(by), list(key)
        if pairs:
            # the first side's statements parsed while the driver JVM starts, as a run's are: in a cold process
            # the parser met pipeline P's SQL slowly (the first side took 7 s to load and analyse, the second 1 s)
            warm_parser(pairs[0].head.ctx.compiled)
            compute_data_diff(session(), report, pairs, by, key)
    finally:
        for side in opened:
            side.close()
    echo(render_data(report, ask.fmt))
    return EXIT_FOUND if report.found else 0

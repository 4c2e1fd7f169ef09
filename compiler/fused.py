"""Fused execution (issue 30): one statement computes a project for a whole list of periods.

A period's run reads its inputs filtered to the period and binds ``:period_identifier``,
``:period_start`` and ``:period_end`` once for the whole statement. The fused statements give every
row the period it belongs to as three columns (:data:`PERIOD_COLUMNS`) instead:

- every input view holds each row once per period whose filter it passes (a period dataset's row
  usually once, a snapshot's once per period, a bitemporal row once per period whose start it is
  valid on), read once for the range (:func:`location_query`: a pushed filter covering the range,
  then a join to the periods, :func:`periods_query`, with each period's own filter, in
  :mod:`.fused_inputs`);
- every ``:period_*`` marker becomes the period column of the row it is evaluated on, so every
  period filter, as-of filter and created ``_period`` is the row's period's;
- every relation carries the period columns, a join matches the working row's period only
  (its fan-out guard counts join rows per key and period), an aggregate groups by the period too,
  and a global aggregate (no ``group_by``) gives one row per period even when a period has no rows,
  as each period's run does (the periods joined, every aggregate restricted to real rows).

``:run_started_at`` stays a parameter: the runs of a fused range share their run start. Generated
``_row_id``s depend on the run start and the row's identity only (docs/row-identity.md), never on
the run id or the period, so the fused rows carry each period's run's ids. Outputs carry the period
columns; the runner writes each period's rows (:data:`PERIOD_COLUMNS` dropped) as that period's run.

:func:`refusal` says why a project cannot be fused (None when it can): fused only where the rewrite
is proven, every other construct is refused by name.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator, Optional, Sequence

from sqlglot import exp

from .compile import CompiledProject
from .fused_rewrite import (PERIOD_COLUMNS, PERIOD_KEY, PERIODS_VIEW, NotFusable, RewriteContext,  # noqa: F401
                            period_literal, period_markers, rewrite_input)
from .kinds.registry import operation_kind
from .lower import AnyStep, OutputStep, lower
from .periods import Period
from .plan import Role
from .render import comment, pretty
from .stage import STAGE_MAX_CTES, Statement, cut_stages

MAX_PERIODS = 1000


def invariant_views(compiled: CompiledProject, uniform: Iterable[str]) -> frozenset[str]:
    """The input views every period reads identically, which the fused statements therefore read once,
    without the period columns: a snapshot dataset's (no period filter), resolved to the same version and
    locations for every period (``uniform``, the runner's knowledge), read only as runtime joins whose rows
    do not depend on the period (no period parameter in their filter). A join to one is matched on its key
    alone and its fan-out counted once, the same count every period's run makes; where a snapshot of
    100,000 customers would otherwise be joined as 12 copies over a year."""
    plan = compiled.plan
    if plan is None:
        return frozenset()
    views = {v.view for v in compiled.inputs if v.role == Role.JOIN and v.dataset.temporal_mode == "snapshot"}
    views &= set(uniform)
    for op in plan.operations:
        for read in op.reads:
            if read.role != Role.JOIN:
                views.discard(read.view)
        for j in getattr(op, "joins", None) or []:
            if period_markers(j.where):
                views.discard(j.read.view)
    return frozenset(views)


def fused_steps(compiled: CompiledProject, invariant: frozenset[str] = frozenset(),
                broadcast: frozenset[str] = frozenset()) -> Iterator[AnyStep]:
    """The lowered steps of ``compiled``'s plan, rewritten for a range (see the module docstring), the
    views of ``invariant`` (:func:`invariant_views`) read without periods, joins to the views of ``broadcast``
    hinted; raises :class:`NotFusable` naming what it cannot rewrite."""
    plan = compiled.plan
    ops = {op.seq: op for op in plan.operations}
    context = RewriteContext(invariant, broadcast)
    for step in lower(plan):
        if not isinstance(step, OutputStep) and step.seq == 0:
            rewrite_input(step, next(v.dataset.temporal_mode for v in compiled.inputs if v.role == Role.INPUT))
        else:
            op = step.plan if isinstance(step, OutputStep) else ops[step.seq]
            entry = operation_kind(op.kind)
            if entry.fused is None:
                raise NotFusable(f"operation {op.seq} of kind {op.kind.value} ({entry.not_fused})")
            entry.fused(op, step, context)
        if isinstance(step, OutputStep):
            yield step
            continue
        leftover = [p.name for c in step.ctes for p in period_markers(c)]
        if leftover:
            raise NotFusable(f"operation {step.seq}: a period parameter in an unexpected place")
        yield step


# ------------------------------------------------------------------------------- provability
def refusal(compiled: CompiledProject, periods: Sequence[Period]) -> Optional[str]:
    """Why ``compiled`` cannot be fused for ``periods`` (one sentence naming the construct), or None when
    the fused statements are proven to write what each period's run writes."""
    plan = compiled.plan
    if plan is None or plan.input is None:
        return "the project has no typed plan"
    ids = [p.identifier for p in periods]
    if len(ids) < 2:
        return "a single period has nothing to fuse"
    if len(set(ids)) != len(ids):
        return "the list of periods names a period twice"
    if len(ids) > MAX_PERIODS:
        return f"more than {MAX_PERIODS} periods"
    if plan.checks:
        names = ", ".join(c.name for c in plan.checks)
        return (f"the project declares checks ({names}): each period's bridge and checks are observed on its "
                "own run, which fused execution does not do yet")
    taken = [c for c in plan.schema if c in PERIOD_COLUMNS.values()]
    if taken:
        return f"the working dataset has a column named {taken[0]}, which fused execution uses for the period"
    try:
        fuse(compiled, periods)
    except NotFusable as exc:
        return f"fused execution does not rewrite {exc}"
    return None


# ------------------------------------------------------------------------------- the fused SQL
@dataclass
class FusedProject:
    """A project's statements for a list of periods: run :attr:`periods_sql` as the view
    :data:`PERIODS_VIEW`, load every input view with :func:`location_query`, then the statements in order;
    each output's rows of period P are those whose :data:`PERIOD_KEY` is P's identifier."""

    compiled: CompiledProject
    periods: tuple[Period, ...]
    statements: list[Statement] = field(default_factory=list)
    invariant: frozenset[str] = frozenset()  # input views read once, without periods (invariant_views)
    # join views broadcast by hint: the runner found each period's side small enough for Spark to broadcast
    # in that period's run; the fused side's size (behind a join to the periods) Spark cannot estimate
    broadcast: frozenset[str] = frozenset()

    @property
    def periods_sql(self) -> str:
        """The query of the periods view."""
        return periods_query(self.periods)

    def script(self) -> str:
        """The fused statements as one script (review and golden files; the runner runs them one by one)."""
        p = self.compiled.project
        lines = [comment(f"project {p.name} (id {p.id}, version {p.version}) fused over "
                         f"{', '.join(x.identifier for x in self.periods)}"),
                 comment("Parameters: :run_started_at; each row carries its period in "
                         + ", ".join(PERIOD_COLUMNS.values())),
                 "", comment(f"{PERIODS_VIEW}: the periods of the range"), self.periods_sql + ";", ""]
        for st in self.statements:
            lines.append(comment(f"{st.name}: operations {', '.join(map(str, st.operations))}"))
            lines.append(st.sql + ";")
            lines.append("")
        return "\n".join(lines)


def fuse(compiled: CompiledProject, periods: Sequence[Period], stage_max_ctes: int = STAGE_MAX_CTES,
         uniform: Iterable[str] = (), broadcast: Iterable[str] = ()) -> FusedProject:
    """The fused statements of ``compiled`` over ``periods``; ``uniform``: the input views resolved alike
    for every period (see :func:`invariant_views`), ``broadcast``: see :attr:`FusedProject.broadcast`.
    Raises :class:`NotFusable`."""
    invariant = invariant_views(compiled, uniform)
    statements = cut_stages(fused_steps(compiled, invariant, frozenset(broadcast)), stage_max_ctes)
    return FusedProject(compiled, tuple(periods), statements, invariant, frozenset(broadcast))


def periods_query(periods: Sequence[Period]) -> str:
    """``SELECT * FROM VALUES (identifier, start, end), ... AS t(<PERIOD_COLUMNS>)``."""
    rows = [exp.Tuple(expressions=[exp.Literal.string(p.identifier), period_literal(p.start), period_literal(p.end)])
            for p in periods]
    values = exp.Values(expressions=rows, alias=exp.TableAlias(
        this=exp.to_identifier("t"), columns=[exp.to_identifier(c, quoted=True) for c in PERIOD_COLUMNS.values()]))
    return pretty(exp.select(exp.Star()).from_(values))

"""Cut the steps into statements: stages of at most ``budget`` CTEs, and the outputs' queries.

A pure function of the lowered steps: it counts the CTE nodes each step really has (add a CTE to a
template and the cut follows), closes a stage when the next step would overfill it or an output
needs the working rows as they are, and points the first step after a boundary at the stage's
view (``lf_stage_N``, which the runner materialises).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Optional

from sqlglot import exp

from .lower import AnyStep, OutputStep, Step
from .model import Operation
from .render import pretty

STAGE_MAX_CTES = 40  # Spark's analyzer gives up at ~97 dependent CTEs in one statement; stay well below


@dataclass
class Statement:
    """One statement of the compiled script: a stage to materialise, or an output's query."""

    kind: str  # stage | output
    name: str
    sql: str
    operations: list[int]
    reads: list[str]
    operation: Optional[Operation] = None
    columns: list[tuple[str, str]] = field(default_factory=list)  # output: (name, spark type or "")


def _read_from(tree: exp.Expression, old: str, new: str) -> None:
    """Point the table references named ``old`` in ``tree`` at ``new`` (in place)."""
    for table in tree.find_all(exp.Table):
        if table.name == old and not table.args.get("db"):
            table.set("this", exp.to_identifier(new, quoted=True))


def stage_query(steps: list[Step]) -> exp.Expression:
    """``WITH <every CTE of steps> SELECT * FROM <last>``."""
    query = exp.select(exp.Star()).from_(exp.Table(this=exp.to_identifier(steps[-1].last, quoted=True)))
    query.set("with_", exp.With(expressions=[c for s in steps for c in s.ctes]))
    return query


def cut_stages(steps: Iterable[AnyStep], budget: int = STAGE_MAX_CTES) -> list[Statement]:
    """The statements of ``steps`` in execution order (see the module docstring)."""
    statements: list[Statement] = []
    pending: list[Step] = []
    count = 0
    reads: list[str] = []
    stage: Optional[str] = None  # the last stage's view

    def close() -> None:
        nonlocal pending, count, reads, stage
        if not pending:
            return
        stage = f"lf_stage_{sum(1 for s in statements if s.kind == 'stage') + 1}"
        statements.append(Statement("stage", stage, pretty(stage_query(pending)), [s.seq for s in pending], reads))
        pending, count, reads = [], 0, [stage]

    for step in steps:
        if isinstance(step, OutputStep):
            close()
            _read_from(step.query, step.reads_previous, stage)
            statements.append(Statement("output", step.plan.writes, pretty(step.query), [step.plan.seq], [stage],
                                        step.plan.operation, step.columns))
            continue
        if count and count + len(step.ctes) > budget:
            close()
        if not pending and step.reads_previous is not None:
            for cte in step.ctes:
                _read_from(cte, step.reads_previous, stage)
        if step.source is not None:
            reads = [step.source]
        pending.append(step)
        count += len(step.ctes)
    close()
    return statements

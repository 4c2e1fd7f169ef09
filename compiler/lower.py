"""Lower the typed plan into SQL steps: the lowering of each operation kind's registry entry
(:mod:`.kinds.registry`; the steps themselves are in :mod:`.lower_steps`).

Each step fills its statement skeleton, ``templates/<kind>.sql.j2``, with SQL snippets generated
from the plan's sqlglot nodes and identifiers quoted by :func:`~.render.ident`, then parses the
result back into CTE nodes (:func:`~.render.parse_ctes`): a template can never pass broken SQL on,
and the stage cut (:mod:`.stage`) counts the CTEs the template really made.

A step reads the relation before it under the name of the previous step's last CTE
(``Step.reads_previous``); when a stage boundary falls before the step, :mod:`.stage` points that
reference at the stage's view instead.
"""
from __future__ import annotations

from typing import Iterator

from .bridge import bridge_columns
from .kinds.registry import operation_kind
from .lower_steps import AnyStep, OutputStep, Step, lower_input  # noqa: F401  (AnyStep, OutputStep: for importers)
from .plan import Column, Plan


def lower(plan: Plan) -> Iterator[AnyStep]:
    """The steps of a plan, in execution order (none when the input dataset is unknown). A generator:
    the stage cut consumes each step as it comes, so a stage's parse trees are freed once its text is
    generated."""
    if plan.input is None:
        return
    bridge = bridge_columns(plan)
    yield lower_input(plan.input, bridge)
    prev = plan.input.writes
    before: dict[str, Column] = plan.input.columns
    for op in plan.operations:
        entry = operation_kind(op.kind)
        step = entry.lowering(op, prev, bridge, before, entry.template)
        yield step
        if isinstance(step, Step):
            prev, before = step.last, op.columns

"""``ledgerflow restate PROJECT --period P --reason TEXT --from-env ENV``: a closed period of prod made to publish
exactly what environment ``ENV`` published for it, as a restatement (docs/environments.md, "Restating from an
environment").

It is the promotion ``promote`` refuses into a closed period (ENV-003), done on purpose: the same plan and the
same refusals (:func:`..envs.promote.plan`: ENV-004, ENV-005, ENV-006), the same re-pointing under one journal
(:func:`..envs.promote.promote`), no rows recomputed and no data copied. It is also a restatement: a reason
(RESTATE-001), a closed period (RESTATE-002), and the promoted run's record carries ``restatement {reason, by,
supersedes_run_id, superseded_outputs, data_diff, from_env}``. The data diff is the promotion's (``promote
--dry-run``'s: the rows prod shows now against the environment's version, read from the two folders), computed
before anything changes. The versions prod showed are kept, so the superseded rows stay readable at the folders
the record names, as after any restatement.

Also refused (RESTATE-007): an output the superseded run published that the environment's run does not write,
which re-pointing would leave showing the superseded rows (restate by running the project instead).
"""
from __future__ import annotations

import os

from ..commit.open_store import open_store
from ..envs.dry_run import item_diff
from ..envs.promote import plan as plan_promotion, promote
from ..layout.partition_paths import PROD, local_path, root_period
from ..run.context import compiled_to_run
from ..console.invocation import who
from .restate import RestateAsk, Restatement, check_reason, check_closed
from .restate_publish import RestateError, superseded_run


def restate_from_env(root: str, workspace, ask: RestateAsk, from_env: str, spark_factory) -> Restatement:
    """Restate ``ask``'s closed period of prod from environment ``from_env`` (see the module docstring): every
    refusal before Spark starts (``spark_factory()`` gives the session that reads the two sides of the data
    diff). Returns the :class:`.restate.Restatement` (a dry run's publishes and records nothing)."""
    check_reason(ask.reason)
    compiled = compiled_to_run(workspace, ask.project_ref, ask.allow_draft, verb="restate")
    project, period = compiled.project, ask.period.identifier
    target = open_store(root, PROD)
    check_closed(target, project, ask.period, f"Promote it instead (`ledgerflow promote {project.name} --from "
                                              f"{from_env} --period {period}`)")
    source = open_store(root, from_env)
    items = plan_promotion(source, target, [project.name], [period], restating=True)
    superseded = superseded_run(target, project.name, period, {}, project.id)
    repointed = {os.path.realpath(root_period(link)[0]) for link, _version in items[0].swaps}
    left = [o for o in superseded.outputs if not o.registered and o.rows != 0
            and os.path.realpath(root_period(local_path(o.location))[0]) not in repointed]
    if left:
        raise RestateError(
            f"RESTATE-007 environment '{from_env}' did not publish "
            + ", ".join(f"output {o.seq} '{o.name}' ({o.location})" for o in left)
            + f", which run {superseded.run_id} published for period {period} of project '{project.name}': "
            "re-pointing would leave it showing the superseded rows. Nothing was changed. Restate by running the "
            f"project instead (`ledgerflow restate {project.name} --period {period} --reason TEXT`).")
    diff = item_diff(spark_factory(), items[0], target)
    person = who(ask.by)
    if ask.dry_run:
        return Restatement(project.name, period, ask.reason.strip(), person, superseded, diff, dry_run=True,
                           from_env=from_env)
    block = {"reason": ask.reason.strip(), "by": person, "supersedes_run_id": superseded.run_id,
             "superseded_outputs": [o.to_json() for o in superseded.outputs], "data_diff": diff.to_json(),
             "from_env": from_env}
    from ..events.emitter import emit_promotion
    promotion = promote(source, target, items, person, restatement=block,
                        emit=lambda kind, rec: emit_promotion(root, workspace.config, kind, rec))
    record = target.get_run(promotion["runs"][0])
    return Restatement(project.name, period, block["reason"], person, superseded, diff, record, from_env=from_env)

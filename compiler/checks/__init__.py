"""Checks before publish (docs/checks.md): a project's ``checks:`` read from YAML (:mod:`.load`), their
typed plans (:mod:`.plan`, built by :mod:`ledgerflow.compiler.check_binding`) and the SQL the runner
evaluates (:mod:`.sql`). This package file imports nothing, so that :mod:`ledgerflow.compiler.plan` may
import :mod:`.plan` without pulling in the modules that import the plan."""

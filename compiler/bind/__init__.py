"""Bind a project: resolve names and types operation by operation, check every rule, and build the
typed :class:`~ledgerflow.compiler.plan.Plan` (no SQL text: :mod:`..lower` renders it).

The working schema evolves as operations run: a column added by operation 2 is visible to
operation 3; a join alias is visible only inside its own update. Every problem is collected as a
:class:`~ledgerflow.compiler.errors.Diagnostic`; binding continues past errors so one pass reports
them all. One binder per operation kind, named by its registry entry
(:mod:`ledgerflow.compiler.kinds`); :func:`ledgerflow.compiler.binding.bind` binds a whole project.
"""

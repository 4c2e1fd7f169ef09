"""Pure compiler: workspace YAML -> validated model -> typed plan -> Spark SQL. Never imports pyspark.

Passes, in order: :mod:`.yaml_source` (YAML with positions) -> :mod:`.workspace` (strict schemas,
dataclasses of :mod:`.model`) -> :mod:`.bind` (names, types, rules, diagnostics; the DSL through
:mod:`.dsl`) -> :mod:`.plan` (the typed plan) -> :mod:`.lower` (one builder per operation kind,
Jinja templates parsed back into sqlglot CTEs by :mod:`.render`) -> :mod:`.stage` (the CTE budget)
-> :mod:`.emit` (the script). :mod:`.compile` runs them.
"""

"""Pure compiler: workspace YAML -> validated model -> Spark SQL. Never imports pyspark.

Stages, in order: :mod:`.yaml_source` (YAML with positions) -> :mod:`.workspace` (strict schemas,
dataclasses of :mod:`.model`) -> :mod:`.dsl` (expressions -> typed sqlglot nodes) ->
:mod:`.planner` (names, types, rules; one CTE step per operation, stages) -> :mod:`.render`
(Jinja templates, parsed back and pretty-printed by sqlglot).
"""

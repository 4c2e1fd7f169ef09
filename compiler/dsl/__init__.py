"""The expression DSL: text -> AST (:mod:`.parser`) -> typed sqlglot nodes (:mod:`.translate`)."""

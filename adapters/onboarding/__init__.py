"""Starting out: ``ledgerflow init`` (a new workspace that validates, runs and tests as written) and
``ledgerflow datasets infer`` (a dataset's YAML from its data files' schema)."""

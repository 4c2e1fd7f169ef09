"""``ledgerflow manifest``: the workspace as one JSON document an orchestrator parses instead of the YAML."""

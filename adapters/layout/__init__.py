"""Where ledgerflow's files sit on disk: a local destination's partition layout (paths only, no file touched)."""

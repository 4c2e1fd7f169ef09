"""`ledgerflow diff`: the two sides from git, the comparison command, its formats."""

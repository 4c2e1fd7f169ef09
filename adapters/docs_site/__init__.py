"""``ledgerflow docs``: a static site of the workspace that opens from disk with no network.

:mod:`.collect` gathers what the compiler and the run store already know (the workspace graph, each
project's plan, SQL and lineage, each dataset, the runs and periods) into plain dicts, one per page;
:mod:`.writer` writes them as small ``data/*.js`` scripts beside one HTML shell per page and the static
assets (``static/``: the site's own scripts, and the vendored libraries with their licences); :mod:`.target`
puts the site in place atomically. Nothing here imports pyspark: the command is a compile and a store read.
"""

"""``ledgerflow test``: scenario tests in YAML (docs/tests.md), run on a local SparkSession.

Stages, one module each, in the order a test goes through them:

1. :mod:`.spec` — read a ``tests/*.yml`` file strictly into a :class:`~.spec.ScenarioTest` (located errors).
2. :mod:`.values` — convert the values a test writes to exact Python values of a column type.
3. :mod:`.prepare` — bind a test to the workspace: its project compiled, its given data checked and
   converted, its expectations matched to output statements (no Spark).
4. :mod:`.given` — the given data as DataFrames, loaded through the normal loaders (in memory).
5. :mod:`.execute` — run the compiled statements on Spark and collect the outputs (nothing written).
6. :mod:`.compare` — expected rows against actual rows: cells, missing and unexpected rows, order.
7. :mod:`.report` — the text report and JUnit XML.
8. :mod:`.suite` — discovery, selection (NAME, ``-k``), one session for all tests, the exit code.
9. :mod:`.record` — ``--record RUN_ID``: a test written from a recorded run.
"""

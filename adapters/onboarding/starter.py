"""The files ``ledgerflow init`` writes: a workspace of one dataset (a few general-ledger lines of two
months, CSV with a ``_period`` column), one project (an update, an aggregate and an output, with a
check) and a scenario test of it. ``{name}``, ``{dataset_id}`` and ``{project_id}`` are filled in by
:func:`files`; everything else is written as it stands here."""
from __future__ import annotations

LEDGERFLOW_YML = """\
name: {name}
default_resolver: local
resolvers:
  local:
    rules:
      - name: files                # data/<dataset>/v<version>/<table>.csv, any period
        data_level: any
        strategy: {{type: path, path: "data/{{{{dataset}}}}/v{{{{version}}}}/{{{{table_name}}}}.csv", format: csv}}
spark:
  master: "local[*]"
  conf: {{spark.sql.shuffle.partitions: "4"}}
"""

GL_YML = """\
id: {dataset_id}
name: gl
status: active
description: General-ledger journal lines (a sample; `ledgerflow datasets infer` writes one of these from your files).
versions:
  - {{version: 1}}
main_table:
  name: journal_lines
  temporal_mode: period            # each row's _period (a column of the data) says which period it belongs to
  columns:
    - {{name: journal_id, type: string, nullable: false}}
    - {{name: line_number, type: integer, nullable: false}}
    - {{name: posting_date, type: date}}
    - {{name: account_code, type: string}}
    - {{name: amount, type: "decimal(18,2)"}}
    - {{name: description, type: string}}
"""

GL_CSV = """\
journal_id,line_number,posting_date,account_code,amount,description,_period
JE-1001,1,2026-01-05,4000,-1200.00,Sales invoice 1001,2026-01
JE-1001,2,2026-01-05,1100,1200.00,Receivable 1001,2026-01
JE-1002,1,2026-01-12,6100,350.25,Office rent share,2026-01
JE-1002,2,2026-01-12,2000,-350.25,Payable 1002,2026-01
JE-1003,1,2026-02-03,4000,-980.50,Sales invoice 1003,2026-02
JE-1003,2,2026-02-03,1100,980.50,Receivable 1003,2026-02
"""

PROJECT_YML = """\
id: {project_id}
name: journal_summary
version: 1
status: active
description: Each line marked debit or credit, plus one total per side; written for the run's period.
input_dataset_id: gl
operations:
  - seq: 1
    name: Mark debit or credit
    type: update
    arguments:
      assignments:
        - column: side
          expression: 'IF(journal_lines.amount < 0, "credit", "debit")'
  - seq: 2
    name: Totals per side
    type: aggregate
    arguments:
      group_by: [journal_lines.side]
      aggregations:
        - column: total_amount
          expression: SUM(journal_lines.amount)
        - column: line_count
          expression: COUNT(journal_lines.journal_id)
  - seq: 3
    name: Write lines and totals
    type: output
    arguments:
      destination: {{table: journal_summary}}     # data/journal_summary/v1/journal_summary.csv/_period=<P>/
checks:
  - name: journals_balance                        # judged before anything is published
    on: input
    balanced: {{group_by: [journal_id], amount: amount, tolerance: "0.00"}}
"""

TEST_YML = """\
name: journal summary, January 2026
project: journal_summary
period: 2026-01
run_started_at: 2026-01-31T12:00:00
given:
  gl:
    rows:                                 # the period's lines; _period defaults to the test's period
      - {journal_id: JE-1, line_number: 1, posting_date: 2026-01-05, account_code: "4000", amount: "-500.00", description: Sale}
      - {journal_id: JE-1, line_number: 2, posting_date: 2026-01-05, account_code: "1100", amount: "500.00", description: Receivable}
      - {journal_id: JE-2, line_number: 1, posting_date: 2026-01-09, account_code: "6100", amount: "20.10", description: Postage}
      - {journal_id: JE-2, line_number: 2, posting_date: 2026-01-09, account_code: "2000", amount: "-20.10", description: Payable}
expect:
  - output: 3                             # "Write lines and totals": the 4 lines, then one total per side
    rows:
      - {journal_id: JE-1, line_number: 1, side: credit, amount: "-500.00"}
      - {journal_id: JE-1, line_number: 2, side: debit, amount: "500.00"}
      - {journal_id: JE-2, line_number: 1, side: debit, amount: "20.10"}
      - {journal_id: JE-2, line_number: 2, side: credit, amount: "-20.10"}
      - {journal_id: null, side: credit, total_amount: "-520.10", line_count: 2}
      - {journal_id: null, side: debit, total_amount: "520.10", line_count: 2}
"""

GITIGNORE = """\
# written by ledgerflow: compiled SQL, run records and logs; the run registry; the project's output
target/
.ledgerflow/
data/journal_summary/
"""


def files(name: str, dataset_id: str, project_id: str) -> dict[str, str]:
    """The new workspace's files, relative path -> text, in the order they are written."""
    return {
        "ledgerflow.yml": LEDGERFLOW_YML.format(name=name),
        "datasets/gl.yml": GL_YML.format(dataset_id=dataset_id),
        "data/gl/v1/journal_lines.csv": GL_CSV,
        "projects/journal_summary.yml": PROJECT_YML.format(project_id=project_id),
        "tests/journal_summary.yml": TEST_YML,
        ".gitignore": GITIGNORE,
    }

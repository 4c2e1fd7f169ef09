"""The tables of the run store (``.ledgerflow/state.db``): what :mod:`.runstore` creates and
:mod:`.health` checks a found file against.

The file has no version number: a table added later is made when missing (``CREATE TABLE IF NOT
EXISTS``), a column added later to a table of an older file is added on connecting (:data:`ADDED`,
:mod:`.database`), with a value that is right for the rows written before it."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY, parent_run_id TEXT, project_id TEXT, project_name TEXT, period TEXT,
  status TEXT, started_at TEXT, finished_at TEXT, error TEXT, record TEXT, batch_id TEXT);
CREATE TABLE IF NOT EXISTS registered_datasets (
  name TEXT, version INTEGER, dataset_id TEXT, location TEXT, format TEXT, periods TEXT, columns TEXT,
  run_id TEXT, created_at TEXT, status TEXT NOT NULL DEFAULT 'committed', PRIMARY KEY (name, version));
CREATE TABLE IF NOT EXISTS leases (
  resource TEXT PRIMARY KEY, run_id TEXT NOT NULL, pid INTEGER, host TEXT, taken_at TEXT);
CREATE TABLE IF NOT EXISTS batches (
  batch_id TEXT PRIMARY KEY, created_at TEXT, plan TEXT);
CREATE TABLE IF NOT EXISTS promotions (
  promotion_id TEXT PRIMARY KEY, from_env TEXT NOT NULL, to_env TEXT NOT NULL, by_name TEXT, at TEXT, items TEXT);
CREATE TABLE IF NOT EXISTS registered_promotions (
  name TEXT NOT NULL, version INTEGER NOT NULL, env TEXT NOT NULL, promotion_id TEXT, at TEXT,
  PRIMARY KEY (name, version, env));
CREATE TABLE IF NOT EXISTS environment_drops (
  env TEXT NOT NULL, dropped_at TEXT NOT NULL, by_name TEXT);
CREATE TABLE IF NOT EXISTS period_closures (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, project TEXT NOT NULL, period TEXT NOT NULL, action TEXT NOT NULL,
  by_name TEXT, at TEXT, note TEXT);
"""
# columns added to registered_datasets after its first release: (name, declaration)
ADDED_COLUMNS = (("status", "TEXT NOT NULL DEFAULT 'committed'"),  # rows written before reservations: committed
                 ("pid", "INTEGER"), ("host", "TEXT"))  # the process holding a pending reservation
# every table's added columns; runs.batch_id (issue 30): NULL for runs recorded before batches; runs.inputs and
# runs.input_files (issue 31, :mod:`.published`): what a stale check compares, NULL for runs recorded before
# period_closures.project_id (issue 43): the id of the project closed, NULL for a close recorded before (kept by
# name: :mod:`.closure_table` finds its project through the names the project's runs were recorded under)
# runs.env and registered_datasets.env (issue 46): the environment a run published to or a version was registered
# in, NULL for prod (every row written before environments is prod's)
ADDED = {"registered_datasets": ADDED_COLUMNS + (("env", "TEXT"),),
         "runs": (("batch_id", "TEXT"), ("inputs", "TEXT"), ("input_files", "TEXT"), ("env", "TEXT")),
         "period_closures": (("project_id", "TEXT"),)}
# made once the added columns are there (an index on an added column fails on an older file before)
INDEXES = ("CREATE INDEX IF NOT EXISTS runs_by_batch ON runs (batch_id);\n"
           "CREATE INDEX IF NOT EXISTS closures_by_period ON period_closures (project, period, seq);\n"
           # the last completed run of each project-period read from the index alone, without stepping through
           # each row's record (stored before env, so reading env from the row reads the whole record); it
           # replaces runs_published (project_name, period, finished_at), which left env to the row
           "DROP INDEX IF EXISTS runs_published;\n"
           "CREATE INDEX IF NOT EXISTS runs_last ON runs (project_name, period, env, finished_at, run_id) "
           "WHERE status = 'completed';\n"
           # the runs still running (recovery asks at every command's first opening of the store): a few rows
           "CREATE INDEX IF NOT EXISTS runs_running ON runs (run_id) WHERE status = 'running';")

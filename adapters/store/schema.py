"""The tables of the run store (``.ledgerflow/state.db``): what :mod:`.runstore` creates and
:mod:`.health` checks a found file against."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY, parent_run_id TEXT, project_id TEXT, project_name TEXT, period TEXT,
  status TEXT, started_at TEXT, finished_at TEXT, error TEXT, record TEXT);
CREATE TABLE IF NOT EXISTS registered_datasets (
  name TEXT, version INTEGER, dataset_id TEXT, location TEXT, format TEXT, periods TEXT, columns TEXT,
  run_id TEXT, created_at TEXT, status TEXT NOT NULL DEFAULT 'committed', PRIMARY KEY (name, version));
CREATE TABLE IF NOT EXISTS leases (
  resource TEXT PRIMARY KEY, run_id TEXT NOT NULL, pid INTEGER, host TEXT, taken_at TEXT);
"""
# columns added to registered_datasets after its first release: (name, declaration)
ADDED_COLUMNS = (("status", "TEXT NOT NULL DEFAULT 'committed'"),  # rows written before reservations: committed
                 ("pid", "INTEGER"), ("host", "TEXT"))  # the process holding a pending reservation

"""The run store (SQLite), process liveness, its health, run summaries."""

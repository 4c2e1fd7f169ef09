"""The outside world: command line, SparkSession, loaders, writers and the run store."""

"""What `compile` writes: all projects' SQL, the `--resolved` script, output folders and paths."""

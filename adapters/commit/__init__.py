"""The staged outputs, the commit journal, partition swaps, URI and catalog writes, recovery."""

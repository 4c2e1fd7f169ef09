"""Inputs: resolve versions and locations, read them exactly (loaders, file checks), fingerprints."""

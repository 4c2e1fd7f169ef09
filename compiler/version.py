"""The ledgerflow version. Its one source is ``pyproject.toml``; a running ledgerflow reads it from the
installed distribution's metadata (the ``METADATA`` file that installing writes from pyproject.toml).

:func:`version` gives what ``importlib.metadata.version("ledgerflow")`` gives (``tests/test_cli.py``
checks it) without importing ``importlib.metadata``, which pulls in ``email``, ``zipfile`` and
``socket``: about 30 ms of CPU, a third of ``ledgerflow --version``. It looks where importlib.metadata
looks first, a ``ledgerflow-<version>.dist-info`` folder on ``sys.path``, and falls back to
importlib.metadata for anything else (eggs, zip imports).
"""
from __future__ import annotations

import functools
import os
import sys

DISTRIBUTION = "ledgerflow"


@functools.lru_cache(maxsize=1)
def version() -> str:
    """The installed distribution's version (``0+unknown`` when ledgerflow runs uninstalled from a source tree)."""
    for folder in sys.path:
        try:
            names = os.listdir(folder or ".")
        except OSError:  # a missing folder or a zip file on sys.path
            continue
        for name in names:
            if name.endswith(".dist-info") and name.split("-", 1)[0].lower() == DISTRIBUTION:
                found = _metadata_version(os.path.join(folder or ".", name, "METADATA"))
                if found:
                    return found
    from importlib.metadata import PackageNotFoundError, version as distribution_version
    try:
        return distribution_version(DISTRIBUTION)
    except PackageNotFoundError:
        return "0+unknown"


def _metadata_version(path: str) -> str | None:
    """The ``Version:`` header of a METADATA file (headers end at the first empty line)."""
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    break
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None

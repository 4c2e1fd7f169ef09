"""What a published partition shows, for tests: a partition ``<dest>/_period=P`` is a real folder of hard links
to one version folder's files (adapters/commit/shown.py), or a symbolic link to it (published by an earlier
release)."""
from __future__ import annotations

import os

from ledgerflow.adapters.commit.shown import shown_version
from ledgerflow.adapters.layout.partition_paths import PARTITION, root_period, versions_dir


def shown(path) -> str:
    """The version folder (a real path) the partition ``path`` shows; the real path of ``path`` when it is not a
    partition ledgerflow shows (a version folder, a destination, a dangling partition)."""
    path = str(path)
    if os.path.basename(path).startswith(f"{PARTITION}="):
        version = shown_version(path, versions_dir(*root_period(path)))
        if version is not None:
            return version
    return os.path.realpath(path)

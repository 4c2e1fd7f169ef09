"""A local destination's partition layout, as paths: ``<dest>/_period=P`` shows period ``P``, a real folder of
hard links to the files of one version folder in ``<dest>/.lf_versions/_period=P/`` (``commit/shown.py``; a
symbolic link to it when published by an earlier release).

The writer (:mod:`..commit`) and the readers of a registered dataset (:mod:`..inputs`) both name these paths;
the rule deciding what may be replaced or deleted there stays with the writer (``commit/partitions.py``)."""
from __future__ import annotations

import os

PARTITION = "_period"
VERSIONS = ".lf_versions"


def local_path(target: str) -> str:
    """The file-system path of a local target (``file:`` prefix dropped)."""
    return target[len("file:"):] if target.startswith("file:") else target


def is_local(target: str) -> bool:
    """Whether ``target`` is a local folder (written by staging and an atomic swap)."""
    return target.startswith("/") or target.startswith("file:")


def versions_dir(root: str, period: str) -> str:
    """``<root>/.lf_versions/_period=P``: where the versions of one partition are written."""
    return os.path.join(root, VERSIONS, f"{PARTITION}={period}")


def partition_link(root: str, period: str) -> str:
    """``<root>/_period=P``: the visible partition (showing one version folder)."""
    return os.path.join(root, f"{PARTITION}={period}")


def root_period(link: str) -> tuple[str, str]:
    """The destination folder and the period of a partition ``<root>/_period=P``."""
    return os.path.dirname(link), os.path.basename(link).split("=", 1)[1]

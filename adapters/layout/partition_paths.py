"""A local destination's partition layout, as paths: ``<dest>/_period=P`` shows period ``P``, a real folder of
hard links to the files of one version folder in ``<dest>/.lf_versions/_period=P/`` (``commit/shown.py``; a
symbolic link to it when published by an earlier release).

The writer (:mod:`..commit`) and the readers of a registered dataset (:mod:`..inputs`) both name these paths;
the rule deciding what may be replaced or deleted there stays with the writer (``commit/partitions.py``)."""
from __future__ import annotations

import functools
import os
import stat
from typing import Optional

from ...compiler.table_names import split_parts
from .real_path import real_path

PARTITION = "_period"
VERSIONS = ".lf_versions"
ENVS = ".lf_envs"  # <dest>/.lf_envs/<env>/_period=P: the partitions an environment other than prod shows
PROD = "prod"


def local_path(target: str) -> str:
    """The file-system path of a local target (``file:`` prefix dropped)."""
    return target[len("file:"):] if target.startswith("file:") else target


def is_local(target: str) -> bool:
    """Whether ``target`` is a local folder (written by staging and an atomic swap)."""
    return target.startswith("/") or target.startswith("file:")


@functools.lru_cache(maxsize=16384)  # text only; a promotion asks it about each partition seven times
def versions_dir(root: str, period: str) -> str:
    """``<root>/.lf_versions/_period=P``: where the versions of one partition are written."""
    return os.path.join(root, VERSIONS, f"{PARTITION}={period}")


@functools.lru_cache(maxsize=16384)  # text only; a promotion asks it about each partition five times
def partition_link(root: str, period: str, env: str = PROD) -> str:
    """``<root>/_period=P``: the partition prod shows (one version folder); for another environment
    ``<root>/.lf_envs/<env>/_period=P``, hidden from every reader of ``<root>``."""
    if env == PROD:
        return os.path.join(root, f"{PARTITION}={period}")
    return os.path.join(root, ENVS, env, f"{PARTITION}={period}")


def env_folder(root: str, env: str) -> str:
    """The folder holding the partitions environment ``env`` shows: ``<root>`` for prod, else
    ``<root>/.lf_envs/<env>``."""
    return root if env == PROD else os.path.join(root, ENVS, env)


@functools.lru_cache(maxsize=16384)  # text only; a promotion asks it about each partition ten times
def root_period(link: str) -> tuple[str, str]:
    """The destination folder and the period of a partition ``<root>/_period=P`` or
    ``<root>/.lf_envs/<env>/_period=P``."""
    folder = os.path.dirname(link)
    if os.path.basename(os.path.dirname(folder)) == ENVS:
        folder = os.path.dirname(os.path.dirname(folder))
    return folder, os.path.basename(link).split("=", 1)[1]


@functools.lru_cache(maxsize=16384)  # text only; a promotion asks it about each partition twice
def link_env(link: str) -> str:
    """The environment whose partition ``link`` is (:func:`partition_link`)."""
    folder = os.path.dirname(link)
    return os.path.basename(folder) if os.path.basename(os.path.dirname(folder)) == ENVS else PROD


def envs_shown_in(root: str) -> list[str]:
    """The environments other than prod that have a folder of partitions in the destination ``root`` (a name
    that is a real folder, not a link)."""
    folder = os.path.join(root, ENVS)
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            return []  # a link or a file
    except FileNotFoundError:
        return []
    with os.scandir(folder) as entries:  # an entry's type costs no system call; unreadable: raised, as before
        return sorted(e.name for e in entries if e.is_dir(follow_symlinks=False))


def shown_links(root: str, period: str, envs: Optional[list[str]] = None) -> list[str]:
    """Every partition of ``period`` some environment may show in ``root``: prod's, then each other's (``envs``:
    :func:`envs_shown_in`'s answer, when the caller has it)."""
    return [partition_link(root, period)] + [partition_link(root, period, env)
                                             for env in (envs_shown_in(root) if envs is None else envs)]


def partition_key(kind: str, target: str, period: str, env: str = PROD) -> str:
    """The one name of the partition ``period`` of a destination (``kind`` "table" or "path", ``target`` its
    table, folder or URI) in environment ``env``, as leases and closed partitions compare it (``run/leases.py``,
    ``run/closed_partitions.py``): a table's name, a local folder's real path, a URI's text; another environment's
    partition (``.lf_envs/<env>``) is its own, so prod's writers do not hold it."""
    partition = f"{PARTITION}={period}"
    if kind == "table":
        key = f"table {_table_name(target)} {partition}"
    elif kind == "path" and is_local(target):
        key = f"path {os.path.join(real_path(local_path(target)), partition)}"
    else:
        key = f"uri {target.rstrip('/')}/{partition}"
    return key if env == PROD else f"{key} in environment {env}"


def _table_name(table: str) -> str:
    """The last part of a catalog table's name, unquoted, in lower case (Spark compares names so); the
    whole name for one the table-name rule cannot split (Spark itself will say what is wrong with it)."""
    parts = split_parts(table)
    return (parts[-1][0] if parts else table).lower()

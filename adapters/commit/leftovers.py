"""The staging folders a run may leave in its destinations, and their removal once the run is dead.

A run records, before it writes anything, the staging folders it may create (``staging: [{link,
versions}]``, one per local destination partition: the partition ``<dest>/_period=P`` and the
folder ``<dest>/.lf_versions/_period=P`` where its ``<run_id>[.n]`` versions are written).

Removal is deliberately narrow: only a real folder (not a symlink) named ``<run_id>`` or
``<run_id>.<n>`` directly inside the real ``.lf_versions/_period=P`` folder of a recorded
destination, and never the folder the partition shows (it is kept, as live); and a folder of hard links
the run built to show a version there (``.show.<run_id>...``, :mod:`.shown`) when each of its files has
another name (a version folder's): nothing is lost.
"""
from __future__ import annotations

import os
import re
import stat
from typing import TYPE_CHECKING

from ..layout.partition_paths import PARTITION, VERSIONS, local_path, partition_link, versions_dir
from . import shown, sweeps
from .partitions import remove_version

if TYPE_CHECKING:
    from .destinations import OutputDestination


def staging_entries(destinations: dict[int, OutputDestination], period: str) -> list[dict]:
    """The staging folders a run may create, from its destinations (op seq -> where the output
    writes, as the runner resolves them before writing): one ``{link, versions}`` per local
    destination partition. Matches the layout of :func:`.staging.stage_partition`."""
    out: list[dict] = []
    for dest in destinations.values():
        if not dest.local:
            continue  # URIs and catalog tables are staged by Spark itself
        root = local_path(dest.target)
        entry = {"link": partition_link(root, period, dest.env), "versions": versions_dir(root, period)}
        if entry not in out:
            out.append(entry)
    return out


def own_name(name: str, run_id: str) -> bool:
    """Whether ``name`` is one of the version folder names run ``run_id`` stages (``<run_id>[.n]``)."""
    return name == run_id or re.fullmatch(re.escape(run_id) + r"\.[0-9]+", name) is not None


def remove_staging(entry: dict, run_id: str) -> tuple[list[str], list[str], list[str]]:
    """Remove what run ``run_id`` staged for one ``{link, versions}`` entry and did not swap in.
    Returns (removed, kept as live, problems)."""
    removed: list[str] = []
    kept: list[str] = []
    problems: list[str] = []
    link, versions = entry.get("link") or "", entry.get("versions") or ""
    part = os.path.basename(link)
    if not (os.path.isabs(link) and part.startswith(f"{PARTITION}=") and
            os.path.normpath(versions) == os.path.normpath(os.path.join(os.path.dirname(link), VERSIONS, part))):
        return removed, kept, [f"unexpected staging entry {entry!r}: left alone"]
    dest = os.path.realpath(os.path.dirname(link))
    folder = os.path.join(dest, VERSIONS, part)
    # neither .lf_versions nor _period=P may be a symlink leading elsewhere
    if os.path.realpath(folder) != folder or not os.path.isdir(folder):
        if os.path.lexists(folder) and os.path.realpath(folder) != folder:
            problems.append(f"{folder} is (or passes through) a symbolic link: left alone")
        names = []
    else:
        names = sorted(n for n in os.listdir(folder) if own_name(n, run_id))
    live = shown.shown_version(os.path.join(dest, part), folder)
    if os.path.realpath(folder) == folder and os.path.isdir(folder):  # never followed through a link
        removed_shown, problems_shown = _remove_shown(folder, run_id)
        removed.extend(removed_shown)
        problems.extend(problems_shown)
    for name in names:
        path = os.path.join(folder, name)
        try:
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                problems.append(f"{path} is not a folder: left alone")
            elif live == path:
                kept.append(path)
            elif remove_version(path, dest, part.split("=", 1)[1]):  # the one deletion rule
                removed.append(path)
            else:
                problems.append(f"could not remove {path} (or it is not a version folder ledgerflow created): left alone")
        except OSError as exc:
            problems.append(f"could not remove {path}: {exc.strerror or exc}")
    # the temporary link of an interrupted swap (shown.temporary_link): `<dest>/._period=P.<name>.tmp`, or
    # `<dest>/_period=P.<name>.tmp` as an earlier release named it
    try:
        tmp_links = [n for n in os.listdir(dest) for head in (f".{part}.", f"{part}.")
                     if n.startswith(head) and n.endswith(".tmp") and own_name(n[len(head):-len(".tmp")], run_id)]
    except OSError:
        tmp_links = []
    for name in tmp_links:
        path = os.path.join(dest, name)
        if os.path.islink(path):
            try:
                os.remove(path)  # the link only, never what it points at
                removed.append(path)
            except OSError as exc:
                problems.append(f"could not remove {path}: {exc.strerror or exc}")
    return removed, kept, problems


def _remove_shown(folder: str, run_id: str) -> tuple[list[str], list[str]]:
    """Remove the folders of links run ``run_id`` built in ``folder`` (``.lf_versions/_period=P``) to show a version
    and left there when it died, each only when removing it loses no data (:func:`.sweeps.only_links`)."""
    def its(rest: str) -> bool:
        return own_name(rest.rsplit(".", 1)[0], run_id)
    removed = sweeps.sweep(folder, its)
    try:
        left = [n for n in os.listdir(folder) if n.startswith(shown.SHOWING) and its(n[len(shown.SHOWING):])]
    except OSError:
        left = []
    return removed, [f"{os.path.join(folder, n)} holds files that have no other name: left alone" for n in left]


def remove_fused_roots(entries: list[dict], run_ids: set[str]) -> tuple[list[str], list[str]]:
    """Remove the folders where a fused range wrote every period's rows at once (:mod:`.prestage`:
    ``<dest>/.lf_versions/.fused-<run_id>``) that one of the runs ``run_ids`` named, in the destinations of
    the staging ``entries``. Call it only once the process that ran those runs is gone: a live range still
    adopts its periods' folders from there. Returns (removed, problems)."""
    from .prestage import PREFIX, discard_prestaged
    removed: list[str] = []
    problems: list[str] = []
    dests: list[str] = []
    for entry in entries:
        link = entry.get("link") or ""
        if os.path.isabs(link) and os.path.basename(link).startswith(f"{PARTITION}="):
            dest = os.path.realpath(os.path.dirname(link))
            if dest not in dests:
                dests.append(dest)
    for dest in dests:
        versions = os.path.join(dest, VERSIONS)
        if os.path.islink(versions) or not os.path.isdir(versions):
            continue
        for name in sorted(os.listdir(versions)):
            if not (name.startswith(PREFIX) and name[len(PREFIX):] in run_ids):
                continue
            path = os.path.join(versions, name)
            discard_prestaged(path, dest)  # only a real folder ledgerflow made there; links are never followed
            (problems if os.path.lexists(path) else removed).append(
                f"could not remove {path} (or it is not a folder ledgerflow created): left alone"
                if os.path.lexists(path) else path)
    return removed, problems

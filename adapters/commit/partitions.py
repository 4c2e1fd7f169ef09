"""A local destination's period partitions: their layout and the one deletion rule.

A local destination folder ``<dest>`` shows period ``P`` as ``<dest>/_period=P``, a real folder of hard links
to the files of one version folder in ``<dest>/.lf_versions/_period=P/`` (written by :mod:`.staging`, swapped
in by :mod:`.swaps` through :mod:`.shown`; the paths: :mod:`..layout.partition_paths`); a partition published
by an earlier release is a symbolic link to its version folder. Every reader's discovery ignores the hidden
``.lf_versions``.

Deletion rule (month-end closes must never lose a folder): ledgerflow deletes only what it created
itself, decided on resolved real paths. A partition ``<dest>/_period=P`` is ours only when it shows a
folder directly inside ``<dest>/.lf_versions/_period=P/`` (both sides resolved, and neither
``.lf_versions`` nor ``.lf_versions/_period=P`` a link): a folder holding exactly that version's files as
hard links and the marker naming it (:func:`.shown.shown_version`), or a symbolic link to it. Anything else
there (another folder, a file, a link elsewhere) is refused before anything runs (:class:`UnsafeDestination`)
and again at the swap; nothing is deleted. Removal of a version folder re-checks the same rule and
leaves the folder alone when it fails.
"""
from __future__ import annotations

import os
from typing import Optional

from ...compiler.errors import ResolutionError
from ...compiler.realpaths import outside
from ..layout.partition_paths import ENVS, PROD, VERSIONS, env_folder, local_path, partition_link, shown_links, versions_dir
from ..layout.real_path import real_path
from . import folder_stats
from .folder_stats import sole_names
from .shown import marker, may_show, shown_version


KEPT = ".lf_kept"  # in a version folder a restatement superseded: never deleted (its run id inside)


def keep_version(folder: str, by: str) -> None:
    """Mark the version folder ``folder`` kept for good (:data:`KEPT`, naming ``by``, the restating run or
    promotion): :func:`remove_version` never deletes it, whichever later commit replaces a partition showing it.
    A hidden file, which no reader of a partition reads and no shown folder links. A folder already kept keeps its
    first mark (that restatement's)."""
    path = os.path.join(folder, KEPT)
    if os.path.isdir(folder) and not os.path.islink(folder) and not os.path.lexists(path):
        with open(path, "x", encoding="utf-8") as fh:
            fh.write(by + "\n")


def unkeep_version(folder: str, by: str) -> None:
    """Undo :func:`keep_version` of ``by`` (its restatement was rolled back: the version is an ordinary one again);
    a mark another restatement made stays."""
    path = os.path.join(folder, KEPT)
    if not os.path.isfile(path) or os.path.islink(path) or os.path.islink(folder):
        return
    with open(path, encoding="utf-8") as fh:
        mine = fh.read(256).strip() == by
    if mine:
        os.remove(path)


class UnsafeDestination(ResolutionError):
    """A destination holds something ledgerflow did not create where it would replace or delete."""


def check_inside(root: str, within: Optional[str], staged: bool = False) -> None:
    """Raise :class:`UnsafeDestination` when the destination folder ``root`` is not strictly inside the
    folder ``within`` as text and as a real path (:func:`..compiler.realpaths.outside`: a folder on the
    way became a symbolic link out of the workspace, or one that loops); nothing to check when ``within``
    is None (an absolute path of a resolver rule). ``staged``: checked at the swap, after rows were
    written (the message then says they may have been)."""
    if within is None:
        return
    problem = outside(within, root)
    if problem is not None:
        done = ("Nothing was swapped in and nothing was deleted; rows this run staged may be left in a "
                f"{VERSIONS} folder there (a folder was redirected while the run wrote)." if staged else
                "Nothing was written there and nothing was deleted.")
        raise UnsafeDestination(f"the destination {root} {problem} (the workspace: {within}; OUT-VR-002). "
                                f"{done} Remove the link (or point the output elsewhere) and run again.")


def check_partition(target: str, period: str, create_only: bool = False, where: str = "",
                    env: str = PROD) -> Optional[str]:
    """The version folder partition ``_period=period`` of the local destination ``target`` shows now in
    environment ``env`` (None when there is none); raises :class:`UnsafeDestination` when replacing it could delete or
    write anything ledgerflow did not create (see the module's deletion rule), or, with
    ``create_only``, when the partition exists at all."""
    return checked_partition(target, period, create_only, where, env)[0]


def checked_partition(target: str, period: str, create_only: bool = False, where: str = "",
                      env: str = PROD) -> tuple[Optional[str], Optional[os.stat_result]]:
    """:func:`check_partition`'s answer and the ``lstat`` of the partition it judged (None when absent): a swap
    exchanges out that very folder or nothing."""
    root = local_path(target)
    prefix = f"{where}: " if where else ""
    advice = ("Nothing was written there and nothing was deleted. Move it out of the destination (or point the output "
              "elsewhere) and run again.")
    if not os.path.isdir(root) and os.path.lexists(root):
        raise UnsafeDestination(f"the destination {root} is {what(root)}, not a folder. {advice}")
    envs = [] if env == PROD else [os.path.join(root, ENVS), env_folder(root, env)]
    for own in (os.path.join(root, VERSIONS), versions_dir(root, period), *envs):
        st = folder_stats.lstat(own)
        if st is not None and not folder_stats.is_folder(st):  # a link, a file
            raise UnsafeDestination(f"{prefix}{own} is {what(own)}, which ledgerflow did not create (it writes and "
                                    f"deletes version folders only in a real folder there). {advice}")
    link = partition_link(root, period, env)
    st = folder_stats.lstat(link)
    if st is None:
        return None, None
    if create_only:
        raise UnsafeDestination(f"{prefix}{link} already exists, and an output registering a dataset version writes "
                                "a new location and never replaces a partition (a registered version is immutable). "
                                "Give the destination path a {{version}} of its own, or move the folder away.")
    shown = shown_version(link, versions_dir(root, period), st)
    if shown is not None:
        return shown, st
    if folder_stats.is_link(st) and os.path.dirname(real_path(link)) == real_path(versions_dir(root, period)):
        return None, st  # ours, dangling: it shows nothing
    raise UnsafeDestination(f"{prefix}the partition {link} is {what(link)}, which ledgerflow did not create: it "
                            f"replaces only a partition it wrote (a folder of links to the files of a version in "
                            f"{versions_dir(root, period)}). {advice}")


def shows(root: str, period: str, folder: str, envs: Optional[list[str]] = None) -> bool:
    """Whether a partition of ``period`` in ``root`` (prod's ``<root>/_period=P`` or another environment's) may show
    the version folder ``folder`` (real paths compared; leniently, :func:`.shown.may_show`: a version a partition
    may still show is never deleted). ``envs``: the environments with a folder of partitions in ``root``
    (:func:`..layout.partition_paths.envs_shown_in`) when the caller listed them in this pass."""
    links = shown_links(root, period, envs)
    versions = versions_dir(root, period)
    kinds = [folder_stats.lstat(link) for link in links]
    if not any(folder_stats.is_link(st) for st in kinds):
        # Every partition is a real folder. One whose marker names the folder shows it; otherwise none shows it
        # when no file of the folder has a second name (a shown folder holds hard links to its version's files).
        # Only when some file has one are the partitions' files compared (may_show), as they always could be.
        name = os.path.basename(folder)
        if any(marker(link) == name for link, st in zip(links, kinds) if folder_stats.is_folder(st)):
            return True
        if sole_names(folder):
            return False
    return any(may_show(link, versions, folder) for link in links)


def what(path: str) -> str:
    """What ``path`` is, for a message: a symbolic link (and where to), a folder or a file."""
    if os.path.islink(path):
        return f"a symbolic link to {os.readlink(path)}"
    return "a folder" if os.path.isdir(path) else "a file"


def remove_version(folder: str, root: str, period: str, envs: Optional[list[str]] = None) -> bool:
    """Delete one version folder, only if it is ours and not shown: a real folder (not a link) directly
    inside ``<root>/.lf_versions/_period=P``, real paths compared, neither level above it a link, and
    not the folder the partition ``<root>/_period=P`` points at. Anything else is left where it is.
    Returns whether it is gone. The one deletion rule: staging cleanup, commit, rollback and ``runs
    clean`` (:mod:`.leftovers`) all delete version folders through this function. ``envs``: as :func:`shows`'s."""
    versions = versions_dir(root, period)
    if any(folder_stats.is_link(folder_stats.lstat(p)) for p in (os.path.join(root, VERSIONS), versions)):
        return False
    if not folder_stats.is_folder(folder_stats.lstat(folder)):
        return False  # a link, a file, nothing
    # a real folder named directly inside versions (not a link) is there; any other spelling is resolved
    if not (os.path.dirname(folder) == versions and os.path.basename(folder) not in ("", ".", "..")) and \
            os.path.dirname(real_path(folder)) != real_path(versions):
        return False
    if shows(root, period, folder, envs):
        return False  # the version the partition shows: never deleted, whoever asks
    if folder_stats.lstat(os.path.join(folder, KEPT)) is not None:
        return False  # a restatement superseded it: its rows stay readable where its record says
    folder_stats.remove_flat(folder)  # unlinks the links inside the folder, never follows them
    return folder_stats.lstat(folder) is None

"""A published partition as a real folder every reader opens, swapped atomically and copying no data.

A local destination keeps each version of a partition in its own folder, ``<dest>/.lf_versions/_period=P/
<version>`` (never changed once written). The partition a reader opens, ``<dest>/_period=P``, is a real folder
of **hard links** to one version's data files (not Spark's ``_SUCCESS`` and checksum files, which every reader
of a partition skips), with a hidden marker (``.lf_version``) naming that version: no link
for a reader to follow (pandas, pyarrow, DuckDB, Polars, copy and sync tools see plain files), no byte of data
copied. To show another version, :func:`show` builds the new folder of hard links beside the versions
(``.lf_versions/_period=P/.show.<version>.<tag>``) and exchanges it with ``<dest>/_period=P`` in one
``renameat2(RENAME_EXCHANGE)`` (Linux 3.15+): a reader listing the partition sees the old files or the new
ones, never a mix and never an empty folder. The folder exchanged out holds only links to the old version's
files, which stay in their version folder; it is removed (:func:`.sweeps.sweep`) when the commit ends, as the replaced
version is, so a reader that opened the partition just before the exchange still reads it whole.

Earlier releases showed a partition as a symbolic link to its version folder. :func:`shown_version` reads
both; :func:`show` replaces a link by a real folder in the same exchange, and :func:`convert` turns one such
partition into a folder without changing the rows it shows. Where the file system cannot make hard
links or exchange two names (some network and FUSE file systems), :func:`show` keeps the symbolic link, which
is atomic everywhere (``docs/guarantees.md``).
"""
from __future__ import annotations

import errno
import os
import shutil
import stat
import uuid
from typing import Optional

from ..layout.real_path import real_path
from . import folder_stats
from .renames import UNSUPPORTED, Unsupported, exchange, place  # noqa: F401  (Unsupported: for callers)

MARKER = ".lf_version"  # in a shown folder: the name of the version folder it shows
SHOWING = ".show."  # a shown folder being built, or exchanged out, inside .lf_versions/_period=P
def _shown_stats(version: str, listed: Optional[dict] = None) -> dict[str, os.stat_result]:
    """What a shown folder of ``version`` holds, each with its ``lstat``: its data, not the files every reader of a
    partition skips and some readers of a whole destination do not (names starting with ``.`` or ``_``: Spark's
    ``_SUCCESS``, checksum files), no empty file (pyarrow refuses an empty JSON file) and no link. ``listed``:
    ``folder_stats.stats_by_name(version)`` when the caller has just taken it."""
    out = {}
    for rel, st in (folder_stats.stats_by_name(version) if listed is None else listed).items():
        if rel.startswith((".", "_")) or stat.S_ISLNK(st.st_mode) or \
                (os.sep in rel and any(part.startswith((".", "_")) for part in rel.split(os.sep))):
            continue
        if stat.S_ISDIR(st.st_mode) or st.st_size > 0:  # an empty JSON or CSV file holds no row, and some readers refuse it
            out[rel] = st
    return out


def _shown_files(version: str):
    """(relative path, is a folder) of what a shown folder of ``version`` holds (:func:`_shown_stats`)."""
    for rel, st in _shown_stats(version).items():
        yield rel, stat.S_ISDIR(st.st_mode)


def build(version: str, shown_by: Optional[str] = None, files: Optional[dict] = None) -> str:
    """A new folder beside ``version`` (a version folder in ``.lf_versions/_period=P``) holding a hard link to
    each of its files and the marker; raises :class:`Unsupported` where hard links cannot be made. ``shown_by``:
    a partition showing ``version`` already (a promotion's source), whose marker, when it names ``version``, is
    linked rather than written anew (a new file costs the file system ten times a link). ``files``: what the
    folder holds, as a check of ``shown_by`` listed it (:func:`shown_listing`), else listed here. A name is linked
    as it is, never through a link (one put there since the listing is linked itself, and the folder then shows
    nothing: :func:`mirrors` refuses a link)."""
    parent, name = os.path.split(version)
    folder = os.path.join(parent, f"{SHOWING}{name}.{uuid.uuid4().hex[:8]}")
    os.mkdir(folder)
    listed = ((rel, stat.S_ISDIR(st.st_mode)) for rel, st in files.items()) if files is not None \
        else _shown_files(version)
    try:
        for rel, is_dir in listed:
            if is_dir:
                os.mkdir(os.path.join(folder, rel))
            else:
                os.link(os.path.join(version, rel), os.path.join(folder, rel), follow_symlinks=False)
        _mark(folder, name, shown_by)
    except OSError as exc:
        shutil.rmtree(folder, ignore_errors=True)  # only links to the version's files: nothing lost
        if exc.errno in UNSUPPORTED:
            raise Unsupported(exc.errno, f"cannot make hard links here ({exc.strerror})", version) from exc
        raise
    return folder


def _mark(folder: str, name: str, shown_by: Optional[str]) -> None:
    """Write the marker naming version ``name`` into the new ``folder``: a link to ``shown_by``'s marker when that
    is a plain file saying exactly so, else a file of its own."""
    text = (name + "\n").encode()
    mine = os.path.join(folder, MARKER)
    if shown_by is not None:
        try:
            os.link(os.path.join(shown_by, MARKER), mine, follow_symlinks=False)
        except OSError:
            pass  # gone, or no links here: a marker of its own
        else:
            if folder_stats.read_small(mine) == text:  # the file linked, read through its new name (never a link)
                return
            os.remove(mine)  # anything else (another name, a link, not a plain file): never kept
    folder_stats.write_small(mine, text)


def marker(folder: str) -> Optional[str]:
    """The version name a shown ``folder``'s marker holds (None without a readable, plain name)."""
    data = folder_stats.read_small(os.path.join(folder, MARKER))
    if data is None:
        return None
    try:
        name = data.decode().strip()
    except UnicodeDecodeError:
        return None
    return name if name and "/" not in name and "\0" not in name and name not in (".", "..") else None


def mirrors(folder: str, version: str) -> bool:
    """Whether ``folder`` holds exactly ``version``'s data files as hard links (same inodes, same names) plus the
    marker: a folder :func:`build` made, which removing loses no data."""
    return _mirrored(folder, version) is not None


def _mirrored(folder: str, version: str, listed: Optional[dict] = None) -> Optional[dict]:
    """:func:`mirrors`: ``version``'s shown files with their ``lstat`` when it does, else None. ``listed``: what
    ``version`` holds (:func:`.folder_stats.stats_by_name`), when the caller listed it after finding it a real
    folder."""
    if listed is None and not folder_stats.is_folder(folder_stats.lstat(version)):
        return None
    try:
        ours = _shown_stats(version, listed)
        theirs = folder_stats.stats_by_name(folder)
    except OSError:
        return None
    theirs.pop(MARKER, None)
    if ours.keys() != theirs.keys():
        return None
    for rel, st in theirs.items():
        mine = ours[rel]
        if stat.S_ISLNK(st.st_mode) or stat.S_ISDIR(st.st_mode) != stat.S_ISDIR(mine.st_mode):
            return None
        if not stat.S_ISDIR(st.st_mode) and (st.st_dev, st.st_ino) != (mine.st_dev, mine.st_ino):
            return None
    return ours


def shown_version(partition: str, versions: str, st: Optional[os.stat_result] = None) -> Optional[str]:
    """The version folder (directly inside ``versions``, real paths) the partition ``partition`` shows: through
    a symbolic link (earlier releases) or as a real folder built by :func:`build`; None when it shows none of
    them (absent, dangling, or something ledgerflow did not create). ``st``: the partition's ``lstat`` when the
    caller has just taken it."""
    return shown_listing(partition, versions, st)[0]


def shown_listing(partition: str, versions: str, st: Optional[os.stat_result] = None,
                  listed: Optional[tuple[str, dict]] = None) -> tuple[Optional[str], Optional[dict]]:
    """:func:`shown_version`'s answer and, for a partition that is a real folder, the files it shows as they were
    compared (relative name -> ``lstat``; a :func:`build` of the version links them without listing it again).
    ``listed``: (the real path of a version folder, what it holds by :func:`.folder_stats.stats_by_name`) when the
    caller has just listed it, a real folder: used when the marker names that very folder (one listing, not two)."""
    st = folder_stats.lstat(partition) if st is None else st
    if folder_stats.is_link(st):
        real = real_path(partition)
        return (real if os.path.dirname(real) == real_path(versions) and os.path.isdir(real) else None), None
    if not folder_stats.is_folder(st):
        return None, None
    name = marker(partition)
    if name is None:
        return None, None
    version = os.path.join(real_path(versions), name)
    files = _mirrored(partition, version, listed[1] if listed is not None and listed[0] == version else None)
    return (version, files) if files is not None else (None, None)


def may_show(partition: str, versions: str, version: str) -> bool:
    """Whether ``partition`` may be showing ``version`` (a folder in ``versions``), judged leniently, for deciding
    what is never deleted: :func:`shown_version` says so, or the partition's marker names it, or a file of the
    partition is one of its files (the same inode) even when something was added to the folder since."""
    real = real_path(version)
    if os.path.islink(partition):
        return shown_version(partition, versions) == real
    if not os.path.isdir(partition):
        return False
    # a shown folder's marker names its version, so the marker alone answers whenever shown_version would
    if marker(partition) == os.path.basename(real) and os.path.dirname(real) == real_path(versions):
        return True
    try:
        return bool(folder_stats.inodes(real) & folder_stats.inodes(partition))
    except OSError:
        return True  # unsure: never deleted


def marker_names(partition: str, version: str) -> bool:
    """Whether ``partition`` is a real folder whose marker names ``version`` (whatever else it holds now)."""
    return (not os.path.islink(partition) and os.path.isdir(partition)
            and marker(partition) == os.path.basename(real_path(version)))


def discard(folder: str) -> None:
    """Remove a shown folder (or a link) no partition shows any more: it holds only links, never data."""
    st = folder_stats.lstat(folder)
    if not folder_stats.is_folder(st):
        if st is not None:
            os.remove(folder)
        return
    folder_stats.remove_flat(folder)


def exchange_supported(versions: str) -> bool:
    """Whether the file system of ``versions`` can exchange two names (two scratch folders tried there)."""
    a = os.path.join(versions, f"{SHOWING}probe-a.{uuid.uuid4().hex[:8]}")
    b = os.path.join(versions, f"{SHOWING}probe-b.{uuid.uuid4().hex[:8]}")
    os.mkdir(a)
    os.mkdir(b)
    try:
        exchange(a, b)
        return True
    except Unsupported:
        return False
    finally:
        for folder in (a, b):
            if os.path.isdir(folder) and not os.path.islink(folder):
                os.rmdir(folder)


class CannotShow(OSError):
    """A partition that is a real folder cannot be shown anew here (no hard links or exchange any more)."""


def show(partition: str, version: str, expect: Optional[os.stat_result] = None,
         shown_by: Optional[str] = None, files: Optional[dict] = None) -> Optional[str]:
    """Make ``partition`` show ``version`` atomically (see the module docstring); the caller checked that what
    ``partition`` is now is ledgerflow's. The folder (or link) exchanged out is left beside the versions for
    :func:`.sweeps.sweep`; should it not be what was there when this began (replaced meanwhile), it is exchanged back
    and nothing changes. ``shown_by``, ``files``: as :func:`build`'s. ``expect``: the ``lstat`` of the partition
    the caller checked; anything else there now is left alone (:class:`CannotShow`). Where the file system cannot exchange names or make hard links, a
    partition that is absent or a link becomes (stays) a symbolic link; a real folder raises :class:`CannotShow`.
    Returns where the folder (or link) exchanged out now is, for :func:`.sweeps.sweep_exchanged` (None when nothing was)."""
    versions = os.path.dirname(version)
    before = expect if expect is not None else os.lstat(partition) if os.path.lexists(partition) else None
    if expect is not None and not _same(expect, partition):
        raise CannotShow(errno.EBUSY, f"the partition {partition} was replaced since ledgerflow checked it; "
                                      "nothing was changed")
    folder_now = before is not None and stat.S_ISDIR(before.st_mode)
    try:
        if before is None and not exchange_supported(versions):
            raise Unsupported(errno.EINVAL, "no RENAME_EXCHANGE here", versions)
        built = build(version, shown_by, files)
    except Unsupported as exc:
        if folder_now:
            raise CannotShow(exc.errno, f"the partition {partition} is a folder of hard links, and this file system "
                                        f"no longer makes hard links or exchanges names ({exc.strerror})") from exc
        return _link(partition, version)
    try:
        if before is not None:
            exchange(built, partition)
        else:
            place(built, partition)
    except Unsupported as exc:
        discard(built)
        if folder_now:
            raise CannotShow(exc.errno, f"the partition {partition} is a folder of hard links, and this file system "
                                        f"no longer exchanges names ({exc.strerror})") from exc
        return _link(partition, version)
    except BaseException:
        discard(built)
        raise
    if before is not None:
        out = os.lstat(built)
        if (out.st_dev, out.st_ino) != (before.st_dev, before.st_ino):
            exchange(built, partition)  # something else was put there meanwhile: it goes back, untouched
            discard(built)  # the folder of links this call built
            raise CannotShow(errno.EBUSY, f"the partition {partition} was replaced while ledgerflow showed a new "
                                          "version in it; nothing was changed")
        return built
    return None


def _same(st: os.stat_result, path: str) -> bool:
    """Whether ``path`` is still the very file or folder ``st`` was read from (device and inode)."""
    try:
        now = os.lstat(path)
    except OSError:
        return False
    return (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino)


def hide(partition: str, versions: str, name: str = "hidden") -> None:
    """Remove the partition (a rolled-back first publish) in one step: renamed away beside the versions as
    ``.show.<name>.<tag>`` (a link is removed), for :func:`.sweeps.sweep`."""
    if os.path.islink(partition):
        os.remove(partition)  # a link: removing it touches no files
        return
    os.rename(partition, os.path.join(versions, f"{SHOWING}{name}.{uuid.uuid4().hex[:8]}"))


def convert(partition: str, versions: str) -> bool:
    """Turn a partition shown by a symbolic link into a real shown folder of the same version (the rows a reader
    sees do not change); returns whether it did."""
    if not os.path.islink(partition):
        return False
    version = shown_version(partition, versions)
    if version is None:
        return False
    show(partition, version)
    return not os.path.islink(partition)


def temporary_link(partition: str, version: str) -> str:
    """The name a symbolic link to ``version`` is made under before it replaces ``partition`` (where names cannot
    be exchanged): beside the partition, hidden (a leading dot), so that no reader of the destination takes it for
    a partition of its own for the moment it exists."""
    return os.path.join(os.path.dirname(partition), f".{os.path.basename(partition)}.{os.path.basename(version)}.tmp")


def _link(partition: str, version: str) -> None:
    tmp = temporary_link(partition, version)
    if os.path.islink(tmp):
        os.remove(tmp)  # a link left by an interrupted swap: removing it touches no files
    # relative between real paths: the kernel resolves a relative link from the folder it really is in
    os.symlink(os.path.relpath(real_path(version), real_path(os.path.dirname(partition))), tmp)
    os.replace(tmp, partition)

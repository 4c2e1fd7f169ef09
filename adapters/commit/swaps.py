"""Swap staged partitions in, roll the swaps back, retire the versions they replaced.

A partition ``<dest>/_period=P`` is a real folder of hard links to one version folder's files, exchanged
for a folder showing the new version in one atomic step (:mod:`.shown`), so a reader sees the old partition
or the new one, never a mix, and no data is copied. A run swaps all its
staged local outputs in together (:func:`swap_in`), recording each swap in its journal first
(:class:`.journal.CommitJournal`); the versions they replace are kept until the run's record says it
completed (:func:`retire`), so a run that fails, or whose process dies, before then is rolled back
(:func:`roll_back`) and leaves every local output as it was. Nothing here deletes anything but
through :func:`.partitions.remove_version` (the deletion rule).
"""
from __future__ import annotations

import os
import stat
from typing import Callable, Optional

from ..layout.partition_paths import PARTITION, PROD, envs_shown_in, link_env, root_period, versions_dir
from ..layout.real_path import real_path, remembered
from . import folder_stats, shown, sweeps
from .partitions import (UnsafeDestination, check_partition, checked_partition, keep_version, remove_version,
                         unkeep_version, what)
from .staging import Staged, check_staged_in_place, discard


def swap_in(staged: list[Staged], journal: list[dict],
            before_swap: Callable[[list[dict]], None] = lambda journal: None, keep: Optional[str] = None) -> None:
    """Swap every staged partition in, appending one ``{link, staged, previous}`` per partition to
    ``journal`` first (``previous``: the version folder it replaces, None when there is none) and calling
    ``before_swap(journal)``, so that a process that dies in the middle has recorded what to roll back
    (:mod:`.recovery`). Nothing is deleted here: the replaced versions stay until :func:`retire`.

    When a swap (or ``before_swap``) fails, the error is raised and the caller rolls ``journal`` back
    (:func:`roll_back`) and drops the staged files (:func:`.staging.discard`). Each partition is checked
    again just before its swap (the run may have taken a while): a partition someone replaced by anything
    ledgerflow did not create fails the commit. ``keep`` (a restatement's run id): each version replaced is
    marked kept for good before its swap (:func:`.partitions.keep_version`; the entry says ``keep``)."""
    ours = {real_path(s.staged) for s in staged}
    for s in staged:
        root, period = root_period(s.link)
        check_staged_in_place(s)
        env = link_env(s.link)
        previous = check_partition(root, period, env=env)
        if s.create_only and os.path.lexists(s.link) and previous not in ours:
            check_partition(root, period, create_only=True, env=env)  # raises: appeared while the run ran
        journal.append({"link": s.link, "staged": s.staged, "previous": previous, "files": file_stats(s.staged),
                        **({"keep": keep} if keep else {})})
        before_swap(journal)
        if keep and previous:
            keep_version(previous, keep)
        _swap(s.link, s.staged)


def file_stats(version: str, listed: Optional[dict] = None) -> dict[str, list[int]]:
    """``{relative name: [size, mtime in ns]}`` of every file of the version folder ``version`` but the hidden
    ones (a checksum, a restatement's mark): what its journal entry records when it is swapped in, so that a file
    changed in place later (same inode, so every partition showing it changes too) is told apart
    (:func:`..envs.promote.plan` refuses to promote it, ENV-007). ``listed``: what ``version`` holds, by
    :func:`.folder_stats.stats_by_name`, when the caller has just listed it."""
    def hidden(rel: str) -> bool:
        return any(part.startswith(".") for part in rel.split(os.sep))

    # without a listing, only the files recorded are asked for their lstat (not a checksum beside each part file)
    files = ((rel, st) for rel, st in listed.items() if not stat.S_ISDIR(st.st_mode) and not hidden(rel)) \
        if listed is not None else ((rel, os.lstat(os.path.join(version, rel)))
                                    for rel, is_dir in folder_stats.names(version) if not is_dir and not hidden(rel))
    return {rel: [st.st_size, st.st_mtime_ns] for rel, st in files}


def swap_planned(staged: list[Staged], journal: list[dict], written: Callable[[list[dict]], None],
                 keep: Optional[str] = None) -> None:
    """Swap every staged partition in after recording all of them: each partition is checked and its
    ``{link, staged, previous}`` appended to ``journal``, ``written(journal)`` keeps the journal once, and only
    then are the swaps made (one write for any number of partitions, where :func:`swap_in` writes before each).
    A partition that already shows its staged version is left out. Each swap exchanges out only the very folder
    (or link) checked here, the same inode, or fails. :func:`roll_back` undoes a journal whose later entries were
    never swapped (they still show ``previous``), as it undoes one of :func:`swap_in`. ``keep``: as
    :func:`swap_in`'s."""
    planned = []
    with remembered():  # the checks change nothing: each folder resolved once (the partitions of a destination
        for s in staged:  # share their folders), before any swap
            root, period = root_period(s.link)
            check_staged_in_place(s)
            previous, st = checked_partition(root, period, env=link_env(s.link))
            real = s.real or real_path(s.staged)  # check_staged_in_place: s.real is its real path now
            if previous is not None and previous == real:
                continue
            entry = {"link": s.link, "staged": s.staged, "previous": previous, **({"keep": keep} if keep else {})}
            journal.append(entry)
            planned.append((s, st if previous is not None else None, previous, entry))
    written(journal)
    for s, checked, previous, entry in planned:
        if keep and previous:
            keep_version(previous, keep)
        out = _swap(s.link, s.staged, checked, s.shown_by, s.files)
        if out is not None:
            entry["out"] = out  # where what the partition showed went: retire removes that very folder


def roll_back(journal: list[dict]) -> tuple[list[str], list[str], list[str]]:
    """Undo the swaps of ``journal`` (:func:`swap_in`), last first: a partition that still shows its
    ``staged`` version is pointed back at ``previous``, or its link removed when there was none. A
    partition another run has swapped its own version into since is that run's (its commit stands; the
    version this journal replaced is shown by no partition any more and is deleted). Staged folders
    no partition shows are deleted. When ``previous`` is gone, the partition keeps the staged rows
    rather than show nothing. Entries that do not describe a partition and version folders of one
    destination are left alone (a journal may come from a damaged record). Safe to repeat. Returns
    (partitions rolled back, partitions that keep the staged version, problems)."""
    rolled: list[str] = []
    kept: list[str] = []
    problems: list[str] = []
    for entry in reversed(journal):
        fields = entry_fields(entry)
        if fields is None:
            problems.append(f"unexpected commit entry {entry!r}: left alone")
            continue
        link, staged, previous = fields
        root, period = root_period(link)
        ours = sweeps.made_for(staged, previous)  # the folders of links this journal's swaps built
        now = shown.shown_version(link, versions_dir(root, period))
        if now != real_path(staged) and shown.marker_names(link, staged):
            kept.append(link)  # its marker says it shows the staged rows, but its files were changed since
            problems.append(f"{link} shows the rows of {staged}, with files added or replaced since: left as it "
                            "is (nothing deleted); remove what was added to it, then run the period again")
            continue
        if now != real_path(staged):
            sweeps.sweep(versions_dir(root, period), ours)
            if previous is not None and now is not None and real_path(previous) != now:
                if entry.get("keep"):
                    unkeep_version(previous, str(entry["keep"]))
                remove_version(previous, root, period)
            remove_version(staged, root, period)
            continue
        try:
            if previous is None:
                shown.hide(link, versions_dir(root, period), os.path.basename(staged))  # this commit created it
            elif os.path.isdir(previous) and not os.path.islink(previous):
                _point(link, previous)
            else:
                kept.append(link)
                problems.append(f"{link}: the version it replaced ({previous}) is gone, so the partition keeps "
                                f"the rows of {staged}")
                continue
        except (OSError, UnsafeDestination) as exc:
            kept.append(link)
            problems.append(f"could not roll back {link}: {getattr(exc, 'strerror', None) or exc}")
            continue
        rolled.append(link)
        if entry.get("keep") and previous is not None:  # shown again: ordinary, unless another kept it
            unkeep_version(previous, str(entry["keep"]))
        sweeps.sweep(versions_dir(root, period), ours)  # before the staged files lose their other name
        remove_version(staged, root, period)
    return rolled, kept, problems


def entry_fields(entry) -> Optional[tuple[str, str, Optional[str]]]:
    """A journal entry's (link, staged, previous) when it names a partition ``<root>/_period=P`` and
    version folders directly inside ``<root>/.lf_versions/_period=P``; None for anything else."""
    if not isinstance(entry, dict):
        return None
    link, staged, previous = entry.get("link"), entry.get("staged"), entry.get("previous")
    if not (isinstance(link, str) and isinstance(staged, str) and os.path.isabs(link)
            and os.path.basename(link).startswith(f"{PARTITION}=")):
        return None
    folders = [staged] + ([previous] if previous is not None else [])
    try:
        versions = real_path(versions_dir(*root_period(link)))
        ok = all(isinstance(f, str) and os.path.dirname(real_path(f)) == versions for f in folders)
    except ValueError:  # a NUL byte in a damaged record's path
        return None
    return (link, staged, previous) if ok else None


def retire(journal: list[dict], keep_replaced: bool = False, checked: bool = False) -> list[str]:
    """Delete the versions a completed commit replaced, when they are ours and no longer shown (the deletion
    rule, :func:`.partitions.remove_version`, asks every environment's partition of the period); returns the
    folders deleted (entries that do not describe a partition's version folders are skipped). ``keep_replaced``
    (a restatement's: the superseded rows stay readable): only the folders of links exchanged out are removed.
    ``checked``: the journal is this process's own, each entry made by :func:`swap_planned` or :func:`swap_in`
    from a partition and versions it checked (not read back from a file), so its names are not checked again, and
    the folder a swap of :func:`swap_planned` exchanged out (its entry's ``out``) is removed by its name. The
    environments with partitions in a destination are listed once per retirement, not once per period."""
    removed = []
    entries = ((e["link"], e["staged"], e["previous"], e.get("out")) for e in journal) if checked else \
        ((*fields, None) for fields in filter(None, map(entry_fields, journal)))
    envs: dict[str, list[str]] = {}  # destination -> the environments showing partitions there, listed once
    for link, staged, previous, out in entries:
        root, period = root_period(link)
        # the folders of links this commit exchanged out (no version's data); never another run's
        if out is None or not sweeps.sweep_exchanged(out, previous):
            sweeps.sweep(versions_dir(root, period), sweeps.made_for(staged, previous))
        if keep_replaced or not previous:
            continue
        if root not in envs:
            envs[root] = envs_shown_in(root)
        if remove_version(previous, root, period, envs[root]):
            removed.append(previous)
    return removed


def commit(staged: list[Staged]) -> list[dict]:
    """:func:`swap_in`, rolled back on failure, then :func:`retire`: for a caller with nothing to record
    in between. Returns the journal."""
    journal: list[dict] = []
    try:
        swap_in(staged, journal)
    except BaseException:
        roll_back(journal)
        discard(staged)
        raise
    retire(journal)
    return journal


def _swap(link: str, new_target: str, checked: Optional[os.stat_result] = None,
          shown_by: Optional[str] = None, files: Optional[dict] = None) -> Optional[str]:
    """Point ``link`` at ``new_target`` atomically (the previous version's files are kept: see :func:`retire`);
    returns where what it showed went (:func:`.shown.show`)."""
    return _point(link, new_target, checked, shown_by, files)


def _point(link: str, new_target: str, checked: Optional[os.stat_result] = None,
           shown_by: Optional[str] = None, files: Optional[dict] = None) -> Optional[str]:
    """Show version ``new_target`` at the partition ``link`` (:func:`.shown.show`), after checking that what is
    there now is ledgerflow's: never deleted, never exchanged out, otherwise. ``checked``: the partition's
    ``lstat`` when the caller checked it (:func:`..partitions.check_partition`); the very same inode is exchanged
    out or nothing is. ``shown_by``, ``files``: a partition showing ``new_target`` already and the files it shows
    (:func:`.shown.build`)."""
    tmp = shown.temporary_link(link, new_target)
    if os.path.lexists(tmp) and not os.path.islink(tmp):
        raise UnsafeDestination(f"{tmp} is {what(tmp)}, which ledgerflow did not create; move it away and run again.")
    root, period = root_period(link)
    if checked is None and os.path.lexists(link) and not os.path.islink(link) and \
            shown.shown_version(link, versions_dir(root, period)) is None:
        raise UnsafeDestination(f"the partition {link} is {what(link)}, which ledgerflow did not create; move it "
                                "away and run again.")
    if link_env(link) != PROD and not os.path.isdir(os.path.dirname(link)):
        os.makedirs(os.path.dirname(link))  # <root>/.lf_envs/<env>: checked to be no link (check_partition)
    return shown.show(link, new_target, expect=checked, shown_by=shown_by, files=files)

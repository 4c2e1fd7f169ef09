"""A run's commit journal: the one owner of what a run's record says about its local partitions.

The sequence, and where each step is recorded:

- **stage**: before anything runs, ``record["staging"]`` lists the staging folders the run may create
  (:meth:`CommitJournal.staging_entries`); each local output is then written to its hidden version
  folder (:func:`.staging.stage_partition`), invisible to readers.
- **journal**: ``record["commit"] = {"partitions": [], "elsewhere": [...]}`` (:meth:`CommitJournal.begin`,
  saved by :meth:`CommitJournal.save`): ``elsewhere`` names the URIs and catalog tables Spark writes in
  place, which no rollback can undo.
- **swap**: each partition's ``{link, staged, previous}`` is appended and saved before its swap
  (:meth:`CommitJournal.swap_in`), so a process that dies in the middle has said what to undo.
- **confirm**: the completed record, journal included, is the run store's commit transaction
  (:func:`.publish.commit_point`).
- **retire**: the versions the swaps replaced are deleted (:meth:`CommitJournal.retire`), except a
  restatement's (a record carrying ``restatement``, ``ledgerflow restate``): the versions it superseded
  stay readable;
- **or roll back**: every swap undone, last first (:meth:`CommitJournal.roll_back`), by the run itself or,
  for a run whose process died, by recovery from its record (:meth:`CommitJournal.from_record`).
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Callable, Optional

from . import leftovers, swaps
from .staging import Staged

if TYPE_CHECKING:
    from .destinations import OutputDestination


class CommitJournal:
    """The journal of run ``run_id``: ``entries`` (one per partition swapped in, or about to be),
    ``elsewhere`` (destinations Spark writes in place), ``staging`` (the staging folders the run may have
    created) and ``foreign`` (entries of a damaged record that are not the run's: never followed)."""

    def __init__(self, run_id: str, entries: Optional[list] = None, elsewhere: Optional[list[str]] = None,
                 staging: Optional[list] = None, foreign: Optional[list] = None):
        self.run_id = run_id
        self.entries: list = entries if entries is not None else []
        self.elsewhere: list[str] = elsewhere or []
        self.staging: list = staging or []
        self.foreign: list = foreign or []
        self._record: Optional[dict] = None
        self.keeps_replaced = False  # a restatement's journal: the versions it replaced are never retired
        self._save_run: Callable[[dict], None] = lambda record: None

    # ---------------------------------------------------------------- writing (the run)
    @staticmethod
    def staging_entries(destinations: dict[int, OutputDestination], period: str) -> list[dict]:
        """``record["staging"]``: the staging folders a run writing ``destinations`` may create
        (:func:`.leftovers.staging_entries`)."""
        return leftovers.staging_entries(destinations, period)

    @classmethod
    def begin(cls, record: dict, elsewhere: list[str], save_run: Callable[[dict], None]) -> CommitJournal:
        """Start the journal of the run ``record`` describes, still empty, in ``record["commit"]``;
        :meth:`save` writes it with ``save_run(record)``."""
        record["commit"] = {"partitions": [], "elsewhere": elsewhere}
        journal = cls(record["run_id"], elsewhere=elsewhere, staging=record.get("staging"))
        journal._record, journal._save_run = record, save_run
        return journal

    def save(self) -> None:
        """Write the journal as it is now into its record, and save the record."""
        self._record["commit"]["partitions"] = self.entries
        self._save_run(self._record)

    def swap_in(self, staged: list[Staged]) -> None:
        """Swap ``staged`` in, each swap journalled and saved first (:func:`.swaps.swap_in`); a restatement's
        replaced versions are marked kept for good first (they hold the superseded run's rows)."""
        keep = self.run_id if (self.keeps_replaced or (self._record or {}).get("restatement")) else None
        swaps.swap_in(staged, self.entries, before_swap=lambda _entries: self.save(), keep=keep)

    # ---------------------------------------------------------------- reading (a run's record)
    @staticmethod
    def begun(record: dict) -> bool:
        """Whether the run ``record`` describes got to its swaps (its journal was begun)."""
        return isinstance(record.get("commit"), dict)

    @classmethod
    def from_record(cls, rec: dict) -> CommitJournal:
        """The journal a run record holds, as recovery finds it: only entries whose staged folder is named
        after the run are followed (the others are ``foreign``); whatever has the wrong shape counts as
        a foreign entry, and a record without a journal gives an empty one."""
        run_id = str(rec.get("run_id"))
        commit = rec.get("commit")
        commit = commit if isinstance(commit, dict) else {}
        entries = commit.get("partitions") if isinstance(commit.get("partitions"), list) else []
        own = [e for e in entries if isinstance(e, dict) and isinstance(e.get("staged"), str)
               and leftovers.own_name(os.path.basename(e["staged"]), run_id)]
        elsewhere = commit.get("elsewhere") if isinstance(commit.get("elsewhere"), list) else []
        journal = cls(run_id, own, [str(d) for d in elsewhere], rec.get("staging") or [],
                      [e for e in entries if e not in own])
        journal.keeps_replaced = bool(rec.get("restatement"))
        return journal

    # ---------------------------------------------------------------- ending
    def retire(self) -> list[str]:
        """After the commit point: delete the versions the swaps replaced (:func:`.swaps.retire`); a
        restatement's are kept (they hold the superseded run's rows, which stay readable by its run id)."""
        keep = self.keeps_replaced or bool((self._record or {}).get("restatement"))
        return swaps.retire(self.entries, keep_replaced=keep)  # the folders of links it exchanged out go, always

    def roll_back(self) -> tuple[list[str], list[str], list[str]]:
        """Point every partition the run swapped in back at the version before it (:func:`.swaps.roll_back`).
        Returns (partitions rolled back, partitions that keep the run's rows, problems)."""
        rolled, kept, problems = swaps.roll_back(self.entries)
        return rolled, kept, problems + [f"unexpected commit entry {e!r}: left alone" for e in self.foreign]

    def remove_staging(self) -> tuple[list[str], list[str], list[str]]:
        """Remove what the run staged and did not swap in (:func:`.leftovers.remove_staging`, per entry of
        its ``staging``). Returns (removed, kept as live, problems)."""
        removed: list[str] = []
        kept: list[str] = []
        problems: list[str] = []
        for entry in self.staging:
            r, k, p = leftovers.remove_staging(entry, self.run_id)
            removed, kept, problems = removed + r, kept + k, problems + p
        return removed, kept, problems

"""Promotions in the run store (:mod:`..envs.promote`): the commit point that records one (the records a
promotion copies are read with the last completed runs, :meth:`.published.PublishedTable.last_completed`)."""
from __future__ import annotations

import json
import os
from contextlib import closing
from typing import Optional

from .closure_table import ClosureTable
from .database import StateDatabase
from .published import upsert_run


class PromotionTable(StateDatabase):
    """The ``promotions`` and ``registered_promotions`` tables."""

    def record_promotion(self, promotion: dict, runs: list[dict], stored: Optional[list] = None,
                         plain: Optional[list[bool]] = None, texts: Optional[list[Optional[str]]] = None) -> None:
        """A promotion's commit point (:mod:`..envs.promote`), in one transaction: the promotion, one completed run
        per project-period in its target environment (``runs``), and the registered versions the target reads
        now. A promoted run has no ``target/runs`` folder of its own (``runs show`` reads the store): the
        promotion's journal, ``target/promotions/<id>.json``, lists them, so a promotion of 1,800 project-periods
        writes two files, not 1,800. ``stored``: per run, its (``runs.inputs``, ``runs.input_files``) texts when
        the caller has them (a promoted run's are its source's), else None (computed from the record). ``plain``: per
        run, whether its record holds no float ``NaN`` or ``Infinity`` (:func:`.published.record_text`). ``texts``:
        per run, its record's text when written already (``runs`` then holds the row's columns only), else None."""
        items = json.dumps(promotion["items"], sort_keys=True)
        with self._immediate() as conn:
            conn.execute("INSERT INTO promotions (promotion_id, from_env, to_env, by_name, at, items) VALUES "
                         "(?,?,?,?,?,?)", (promotion["promotion_id"], promotion["from"], promotion["to"],
                                           promotion["by"], promotion["at"], items))
            # this transaction holds the write lock: a period closed since the plan refuses it here (only a period
            # with a close or reopen recorded is asked of, run by run)
            closures = ClosureTable.periods_with_closures(conn, (rec["period"]["identifier"] for rec in runs))
            for k, rec in enumerate(runs):
                upsert_run(conn, rec, stored[k] if stored else None, bool(plain and plain[k]),
                           texts[k] if texts else None)
                if rec["period"]["identifier"] in closures:
                    ClosureTable.refuse_closed(conn, rec)
            conn.execute("DELETE FROM leases WHERE run_id = ?", (promotion["promotion_id"],))  # its partitions
            for item in promotion["items"]:
                for reg in item["registered"]:
                    # a version promoted again is read again: its time is this promotion's
                    conn.execute("INSERT OR REPLACE INTO registered_promotions (name, version, env, promotion_id, at) "
                                 "VALUES (?,?,?,?,?)", (reg["name"], reg["version"], promotion["to"],
                                                        promotion["promotion_id"], promotion["at"]))

    def promotion_committed(self, promotion_id: str) -> bool:
        """Whether the promotion ``promotion_id`` passed its commit point (:meth:`record_promotion`)."""
        if not os.path.exists(self.db_path):
            return False
        with closing(self._connect()) as conn:
            return conn.execute("SELECT 1 FROM promotions WHERE promotion_id = ?", (promotion_id,)).fetchone() is not None

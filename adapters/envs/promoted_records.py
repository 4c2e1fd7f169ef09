"""The records of the runs a promotion publishes (:mod:`.promote`): each the source run's record under a run id of
its own, in the target environment, saying which promotion and run it copies.

A promotion of thousands of project-periods reads thousands of source records, each parsed into many small
objects (a real run's column lineage alone is about a thousand): held all at once, until the commit point, they
took 230 MB for 1,800 real-shaped records, and the pages of memory they needed were a fair part of the promotion's
time. So ``ledgerflow promote`` fixes the promotion's id, time and author before its plan (:class:`Recording`),
and the plan writes each promoted record's text as soon as its project-period is checked (:func:`write_ahead`),
keeping of the source record only what is read after the plan (:data:`_KEPT`). A restatement
(``restate --from-env``), whose record carries a block computed after the plan, and a project-period whose rows
are copied into a catalog table or a URI, whose record says where the copy wrote, are written at the commit point
from the whole source record (:func:`promoted_run`).
"""
from __future__ import annotations

import datetime
import json
import os
from dataclasses import dataclass, field
from typing import Iterator, Optional

from ..layout.partition_paths import ENVS, PROD, env_folder, link_env, partition_link, root_period
from ..store.json_text import plain_text
from ..store.published import ROW_KEYS, record_text, stored_inputs

# what is read of a source record once its promoted record is written: its run id (the journal, the command's
# output), its project and period (a closed period's refusal), its resolver snapshot (the upstream check)
_KEPT = ("run_id", "project", "period", "resolver_snapshot")


@dataclass
class Recording:
    """What the promoted runs' records say of their promotion, fixed before its plan: its id, its time (``at``, each
    promoted run's ``finished_at``), who promotes, and the moment the promoted runs' ids are drawn for."""

    promotion_id: str
    at: str
    by: str
    now: datetime.datetime
    _ids: Iterator[str] = field(default_factory=lambda: iter(()), repr=False)

    @classmethod
    def start(cls, by: str) -> "Recording":
        """A promotion's recording, from now."""
        from ..run.context import new_run_id, utcnow
        now = utcnow()
        return cls(new_run_id(now), now.isoformat(timespec="milliseconds"), by, now)

    def run_id(self) -> str:
        """A new run id (UUIDv7) for a promoted run; drawn 1,024 at a time."""
        found = next(self._ids, None)
        if found is None:
            from ..run.context import new_run_ids
            self._ids = iter(new_run_ids(self.now, 1024))
            found = next(self._ids)
        return found


def write_ahead(item, from_env: str, to_env: str, recording: Recording) -> None:
    """Write ``item``'s promoted record now (:mod:`.promote`'s ``PromotedPeriod``, checked, with no copy into a
    catalog table or URI): ``item.promoted`` its run store row and text, ``item.stored`` the registry texts the row
    keeps (its source's, unless its snapshot was rewritten or its source's row has none: then its own, computed
    here from the whole record); then keep of ``item.record`` only :data:`_KEPT`."""
    run = promoted_run(item, from_env, to_env, recording.promotion_id, recording.by, recording.at,
                       recording.run_id())
    item.stored = source_stored(item, run) or stored_inputs(run)
    item.promoted = ({k: run[k] for k in ROW_KEYS if k in run}, record_text(run, item.plain))
    item.record = {k: item.record[k] for k in _KEPT if k in item.record}


def source_stored(item, run: dict) -> Optional[tuple]:
    """The registry texts (``runs.inputs``, ``runs.input_files``) of ``item``'s source run, when its promoted
    ``run`` read what the source read (its resolver snapshot not rewritten); else None (then computed from the
    promoted record, as for a source row recorded before those columns)."""
    return item.stored if run.get("resolver_snapshot") is item.record.get("resolver_snapshot") else None


def promoted_run(item, from_env: str, to_env: str, promotion_id: str, by: str, at: str, run_id: str,
                 copied: Optional[dict] = None) -> dict:
    """The record of the completed run ``to_env`` publishes by the promotion: the source run's, under a run id of
    its own, in ``to_env``, its outputs at ``to_env``'s partitions (rows copied into a catalog table or a URI:
    ``copied``, the source record's output location -> where the copy wrote, as a run there records it), saying
    which promotion and run it copies."""
    rec = dict(item.record)  # the parts changed below are copied; the rest is shared, read only
    rec["outputs"] = [dict(o) for o in rec.get("outputs") or []]
    commit = rec.get("commit") or {}  # its entries are changed below: copied, with what they hold read only
    rec["commit"] = dict(commit)
    if isinstance(commit.get("partitions"), list):
        rec["commit"]["partitions"] = [dict(e) if isinstance(e, dict) else e for e in commit["partitions"]]
    if item.copies:  # written in place, as a run there writes it: no partition of a folder
        moved_to = {}
        for out in rec["outputs"]:
            if out.get("location") in (copied or {}):
                moved_to[out["location"]] = out["location"] = copied[out["location"]]
                if to_env == PROD:  # prod's rows are the table's or the URI's own
                    out.pop("stands_for", None)
                    out.pop("format", None)
        rec["commit"]["partitions"] = [e for e in rec["commit"].get("partitions") or []
                                       if not (isinstance(e, dict) and e.get("link") in moved_to)]
        rec["commit"]["elsewhere"] = [c.target for c in item.copies]  # as a run there records it
    moved = {version: link for link, version in item.swaps}  # versions as the record names them
    for entry in rec["commit"].get("partitions") or []:
        if isinstance(entry, dict) and entry.get("staged") in moved:
            entry["link"] = moved[entry["staged"]]
    for out in rec.get("outputs") or []:
        location = out.get("location")
        if isinstance(location, str) and location.startswith("/") and link_env(location) == from_env:
            root, period = root_period(location)
            out["location"] = partition_link(root, period, to_env)
    # the registered versions it read, where the target shows them (a dropped source environment's folders go);
    # a snapshot naming no such folder (its text, with no character escaped, holds no "/.lf_envs/<env>") is kept
    snapshot = rec.get("resolver_snapshot")
    if _names(snapshot, f"/{ENVS}/{from_env}"):
        rec["resolver_snapshot"] = _shown_in(snapshot, from_env, to_env)
    rec.pop("batch_id", None)  # the promotion is no run of the source's batch
    rec.update(run_id=run_id, env=to_env, finished_at=at,
               promotion={"promotion_id": promotion_id, "from": from_env, "to": to_env, "by": by, "at": at,
                          "source_run_id": item.record["run_id"]})
    return rec


def _shown_in(value, from_env: str, to_env: str):
    """``value`` (a run record's resolver snapshot, or part of it) with every folder of the partitions ``from_env``
    shows (``<root>/.lf_envs/<from_env>``) replaced by the folder ``to_env`` shows them in; a copy."""
    if isinstance(value, dict):
        return {k: _shown_in(v, from_env, to_env) for k, v in value.items()}
    if isinstance(value, list):
        return [_shown_in(v, from_env, to_env) for v in value]
    if isinstance(value, str) and os.path.isabs(value) and os.path.basename(value) == from_env \
            and os.path.basename(os.path.dirname(value)) == ENVS:
        return env_folder(os.path.dirname(os.path.dirname(value)), to_env)
    return value


def _names(value, text: str) -> bool:
    """Whether a string in ``value`` (a parsed record's part, with no float ``NaN`` or ``Infinity`` worth telling
    apart here) may hold ``text`` (ASCII, no character JSON escapes): its JSON text does (orjson's, a quarter of
    json's time, :mod:`..store.json_text`)."""
    return text in plain_text(value, lambda v: json.dumps(v, ensure_ascii=False, default=str))

"""A closed project-period protects the partitions it published, whichever project would replace them
(docs/commands.md "Closed periods").

A close is of a project (by id), and ``validate`` refuses two writers of one destination in a workspace
(OUT-VR-003). A partition can still be reached from another project: the closed project removed from the
workspace (or its destination moved) and another project written to the place it published. So before a
run takes its leases, the partitions it would replace are compared with those the last completed run of
each closed project-period of its period published (the names ``layout.partition_paths.partition_key`` gives): one
in common is PERIOD-001, naming the close. The run's own project is left to the close of its id
(:meth:`.closure_table.ClosureTable.refuse_if_closed`), which a restatement of it passes.
"""
from __future__ import annotations

import os
import re
from typing import Optional

from ..layout.partition_paths import partition_key, root_period
from ..store.closure_table import PeriodClosed

_TABLE = re.compile(r"^(.*) \(_period=[^)]*\)$")  # how a catalog table's written partition is recorded


def published_partitions(record: dict) -> set[str]:
    """The names of the partitions the run ``record`` published: its outputs' recorded locations, and every
    partition its commit journal swapped in (its quarantine destinations' too)."""
    period = record["period"]["identifier"]
    out = set()
    commit = record.get("commit") if isinstance(record.get("commit"), dict) else {}
    for entry in commit.get("partitions") or []:
        link = entry.get("link") if isinstance(entry, dict) else None
        if isinstance(link, str) and os.path.isabs(link):
            root, linked = root_period(link)
            out.add(partition_key("path", root, linked))
    for o in record.get("outputs") or []:
        location = str(o.get("location") or "")
        table = _TABLE.match(location)
        if table:
            out.add(partition_key("table", table.group(1), period))
        elif location:
            folder, _, _ = location.rstrip("/").rpartition("/")  # the destination holding <folder>/_period=P
            out.add(partition_key("path", folder, period))
    return out


def refuse_closed_partitions(store, record: dict, needed: list[str], publications: Optional[list] = None) -> list[str]:
    """Raise :class:`PeriodClosed` when one of the partitions ``needed`` (:func:`.leases.resources` of the run
    ``record`` describes) was published by a closed project-period of another project; else ``needed``, the
    leases the run takes next. ``publications``: ``store.closed_publications`` of the record's period, when the
    caller read it already (a promotion checks many project-periods of one period)."""
    me = record["project"]
    wanted = set(needed)
    if publications is None:
        publications = store.closed_publications(record["period"]["identifier"])
    for closure, published in publications:
        pid = closure.get("project_id")
        if (pid == me.get("id")) if pid else closure["project"] == me["name"]:
            continue  # its own close: refused by id, unless a restatement
        shared = sorted(wanted & published_partitions(published))
        if shared:
            raise PeriodClosed(closure, through=(me["name"], shared[0].split(" ", 1)[1], published["run_id"]))
    return needed

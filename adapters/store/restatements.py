"""Restatements in the run store: which completed runs superseded a run (``ledgerflow restate``), and the
lines ``runs show`` prints about a restatement (docs/commands.md "Restating a closed period")."""
from __future__ import annotations

import json
import os
from contextlib import closing
from decimal import Decimal

from ...compiler.diff.data_match import match_words
from ...compiler.visible_text import visible


def superseded_by(store, rec: dict) -> list[dict]:
    """The completed restatements whose record says they supersede run ``rec`` (its project-period's runs
    only; oldest first): ``{run_id, finished_at, reason, by}``."""
    if not os.path.exists(store.db_path):
        return []
    # as the record's text spells it: json.dumps's spacing, or orjson's (store.published.record_text)
    spaced = json.dumps({"supersedes_run_id": rec["run_id"]})[1:-1]
    tight = json.dumps({"supersedes_run_id": rec["run_id"]}, separators=(",", ":"), ensure_ascii=False)[1:-1]
    with closing(store._connect()) as conn:
        rows = conn.execute("SELECT record FROM runs WHERE project_name = ? AND period = ? AND status = 'completed' "
                            "AND (instr(record, ?) > 0 OR instr(record, ?) > 0) ORDER BY finished_at", (
                                rec["project"]["name"], rec["period"]["identifier"], spaced, tight)).fetchall()
    out = []
    for (text,) in rows:
        other = json.loads(text)
        block = other.get("restatement") or {}
        if block.get("supersedes_run_id") == rec["run_id"]:
            out.append({"run_id": other["run_id"], "finished_at": other.get("finished_at"),
                        "reason": block.get("reason"), "by": block.get("by")})
    return out


def superseding_ids(records: list[dict]) -> dict[str, list[str]]:
    """Run id -> the ids of the completed restatements among ``records`` that superseded it (oldest first)."""
    out: dict[str, list[str]] = {}
    for rec in sorted(records, key=lambda r: r.get("finished_at") or ""):
        block = rec.get("restatement")
        if isinstance(block, dict) and rec.get("status") == "completed" and block.get("supersedes_run_id"):
            out.setdefault(block["supersedes_run_id"], []).append(rec["run_id"])
    return out


def restatement_mark(rec: dict) -> str:
    """What ``runs list`` adds to a restatement's line: the run it restates, who and why (hidden characters
    shown as escapes, a long reason cut); empty for any other run."""
    block = rec.get("restatement")
    if not isinstance(block, dict):
        return ""
    reason = visible(str(block.get("reason") or ""))
    reason = reason if len(reason) <= 80 else reason[:79] + "…"
    sup = block.get("supersedes_run_id")
    return (f"  restatement of {sup if sup else 'nothing published'} by {visible(str(block.get('by') or '-'))}: "
            f"'{reason}'")


def emptied_line(seq, name: str, location: str, would: bool = False) -> str:
    """The line naming an output a restatement publishes empty (``would``: a dry run's; ``seq`` None: a quarantine
    partition the restating run quarantines nothing into)."""
    what = (f"output {seq} '{name}' is not written by the project any more" if seq is not None else
            "the restated run quarantines no row here")
    return f"  {what}: its partition {location} " + ("would be published empty" if would else "is published empty")


def restatement_lines(rec: dict, superseding: list[dict]) -> list[str]:
    """``runs show``'s lines for a restatement (its reason, who, the run it superseded, where that run's rows
    stay readable, the data diff's counts) and for a run a restatement superseded (``superseding``)."""
    lines = []
    block = rec.get("restatement")
    if block:
        sup = block.get("supersedes_run_id")
        published = rec.get("status") == "completed"
        if published:
            lines.append(f"Restatement (reason: {block.get('reason')!r}, by {block.get('by')}) superseding "
                         + (f"run {sup}" if sup else "nothing published"))
            for o in block.get("superseded_outputs") or []:
                lines.append(f"  superseded output {o['operation_seq']} '{o['name']}' ({o.get('rows')} rows) stays "
                             f"readable at {o['version_folder']}")
        else:  # it published nothing: what it was to do
            lines.append(f"Restatement {rec.get('status')} (reason: {block.get('reason')!r}, by {block.get('by')}): "
                         + (f"run {sup} stays published" if sup else "nothing is published"))
        lines += [emptied_line(o["operation_seq"], o["name"], o["location"], would=not published)
                  for o in block.get("emptied_outputs") or []]
        for o in (block.get("data_diff") or {}).get("outputs") or []:  # computed before the commit, published or not
            r = o["rows"]
            totals = "; ".join(_total(t) for t in o.get("totals") or [] if t["base"] != t["head"] or _moved(t))
            lines.append(f"  data diff, output '{o['name']}': {r['base']} -> {r['head']} rows: {r['added']} added, "
                         f"{r['removed']} removed, {r['changed']} changed" + (f"; {totals}" if totals else "")
                         + (f"; rows matched {match_words(o['match'], o.get('key') or ())}" if o.get("match") else ""))
    for s in superseding:
        lines.append(f"Superseded by restatement run {s['run_id']} at {s['finished_at']} (reason: {s['reason']!r}, "
                     f"by {s['by']}); this run's rows stay readable:")
        lines += [f"  {e['link']} as published by this run: {e['staged']}"
                  for e in (rec.get("commit") or {}).get("partitions") or [] if isinstance(e, dict) and e.get("staged")]
    return lines


def _moved(total: dict) -> bool:
    """Whether a decimal column's rows moved although its total may not (a +68 and a -68): its gross change."""
    return total.get("gross") not in (None, "") and Decimal(total["gross"]) != 0


def _total(total: dict) -> str:
    """A decimal column's total in ``runs show``: base -> head, and the gross change when the record has it."""
    gross = f" (gross {total['gross']})" if total.get("gross") not in (None, "") else ""
    return f"{total['column']} {total['base']} -> {total['head']}{gross}"

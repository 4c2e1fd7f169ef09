"""Restatements on the site, read from the run records' ``restatement`` block (docs/run-record.md): on a
restatement's run page its reason, who, the run it superseded (linked), the superseded and emptied outputs and
the data diff; on a superseded run's page the restatements that superseded it; on the runs page each
project-period's restatements; and entries for the first page's search.

The data diff goes to the page as the record holds it, whatever fields it has: the page draws every count, list
and table it finds (``run.js``), so a field a later version adds to the diff is shown without a change here."""
from __future__ import annotations

from typing import Optional

from ..store.restatements import superseding_ids
from . import ids


def _block(rec: dict) -> Optional[dict]:
    block = rec.get("restatement")
    return block if isinstance(block, dict) else None


def restatement_brief(rec: dict) -> Optional[dict]:
    """A restatement's reason, who, the run it supersedes (with its page) and whether it was published; None
    for a run that is no restatement."""
    block = _block(rec)
    if block is None:
        return None
    sup = block.get("supersedes_run_id")
    return {"reason": block.get("reason"), "by": block.get("by"), "supersedes_run_id": sup,
            "supersedes_href": ids.run_page(sup) if sup else None, "published": rec.get("status") == "completed"}


def restatement_detail(rec: dict) -> Optional[dict]:
    """A restatement run page's block: :func:`restatement_brief`, the superseded outputs (where their rows stay
    readable), the outputs published empty and the data diff, as the record holds them."""
    brief = restatement_brief(rec)
    if brief is None:
        return None
    block = _block(rec) or {}
    return {**brief, "superseded_outputs": list(block.get("superseded_outputs") or []),
            "emptied_outputs": list(block.get("emptied_outputs") or []), "data_diff": block.get("data_diff")}


def superseding_index(records: list[dict]) -> dict[str, list[dict]]:
    """Run id -> the completed restatements that superseded it (oldest first: :func:`..store.restatements.
    superseding_ids`): run id, page, when, reason, who."""
    by_id = {rec["run_id"]: rec for rec in records}
    out: dict[str, list[dict]] = {}
    for superseded, restating in superseding_ids(records).items():
        out[superseded] = [{"run_id": r, "href": ids.run_page(r), "finished_at": by_id[r].get("finished_at"),
                            "reason": by_id[r]["restatement"].get("reason"), "by": by_id[r]["restatement"].get("by")}
                           for r in restating]
    return out


def period_restatements(records: list[dict], project: str, period: str) -> list[dict]:
    """The restatements of one project-period, newest first: run, page, status, when, reason, who, superseded
    run (with its page)."""
    out = []
    for rec in records:
        brief = restatement_brief(rec)
        if brief is None or rec["project"]["name"] != project or rec["period"]["identifier"] != period:
            continue
        out.append({"run_id": rec["run_id"], "href": ids.run_page(rec["run_id"]), "status": rec.get("status"),
                    "finished_at": rec.get("finished_at"), **brief})
    return out


def search_entries(records: list[dict]) -> list[dict]:
    """The first page's search entries of restatements: a label, the page and the text the search matches."""
    out = []
    for rec in records:
        brief = restatement_brief(rec)
        if brief is None:
            continue
        project, period = rec["project"]["name"], rec["period"]["identifier"]
        label = f"restatement of {project} {period} ({rec.get('status')})"
        words = ["restatement", "restated", project, period, str(brief["reason"] or ""), str(brief["by"] or ""),
                 rec["run_id"], f"supersedes {brief['supersedes_run_id'] or 'nothing published'}"]
        out.append({"kind": "restatement", "label": label, "href": ids.run_page(rec["run_id"]),
                    "text": " ".join(words).lower()})
    return out

"""The data of the runs page and of each run's page, read from the run store as ``runs list``, ``runs show``,
``periods list`` and ``status`` read it: per run its status, timings per statement, rows, check results and
bridge; per project-period its state (open or closed, by whom), the published run and whether it is stale."""
from __future__ import annotations

from typing import Optional

from ..store.closure_table import CLOSE
from ..store.summaries import timing_rows
from . import ids
from .restatement_data import period_restatements, restatement_brief, restatement_detail, superseding_index


def _rows(rec: dict) -> int:
    return sum(o.get("rows") or 0 for o in rec.get("outputs") or [])


def run_summary(rec: dict, superseding: Optional[dict[str, list[dict]]] = None) -> dict:
    """A run's line on the runs page and on its project's page (``superseding``: :func:`.restatement_data.
    superseding_index` of every record, to mark the runs a restatement superseded)."""
    timings = rec.get("timings") or {}
    return {"run_id": rec["run_id"], "href": ids.run_page(rec["run_id"]), "project": rec["project"]["name"],
            "project_href": ids.project_page(rec["project"]["name"]), "period": rec["period"]["identifier"],
            "status": rec["status"], "started_at": rec.get("started_at"), "finished_at": rec.get("finished_at"),
            "seconds": timings.get("total_s"), "rows": _rows(rec), "outputs": len(rec.get("outputs") or []),
            "batch_id": rec.get("batch_id"), "parent_run_id": rec.get("parent_run_id"), "env": rec.get("env") or "prod",
            "promotion": rec.get("promotion"),
            "error": (rec.get("error") or "").splitlines()[0][:300] if rec.get("error") else None,
            "checks_failed": sum(1 for c in rec.get("checks") or [] if c.get("status") not in ("passed", None)),
            "restatement": restatement_brief(rec), "superseded_by": (superseding or {}).get(rec["run_id"], [])}


def _timings(timings: dict) -> list[dict]:
    """Per statement and write: name, kind, operations, seconds, jobs, stages, tasks and the note, as the
    timing table of ``runs show`` (:func:`..store.summaries.timing_rows`) has them."""
    out = []
    for name, kind, ops, seconds, jobs, stages, tasks, note in timing_rows(timings):
        out.append({"name": name, "kind": kind, "operations": ops,
                    "seconds": None if seconds == "-" else float(seconds),
                    "jobs": jobs, "stages": stages, "tasks": tasks, "note": note})
    return out


def run_data(rec: dict, superseding: Optional[dict[str, list[dict]]] = None) -> dict:
    """A run page's data: the summary, inputs, outputs, checks, bridge and timings of one run record; for a
    restatement why, by whom, what it superseded and its data diff (``superseding``: as :func:`run_summary`)."""
    snap = rec.get("resolver_snapshot") or {}
    names = {d.get("id"): d.get("name") for d in rec.get("datasets_snapshot") or [] if isinstance(d, dict)}
    inputs = []
    if snap.get("input_dataset_id"):
        inputs.append({"role": "input", "dataset": names.get(snap["input_dataset_id"]) or snap["input_dataset_id"],
                       "version": snap.get("input_dataset_version"), "resolver": snap.get("input_resolver"),
                       "locations": list(snap.get("input_locations") or [])})
    for found in inputs:
        found["href"] = ids.dataset_page(found["dataset"]) if found["dataset"] else None
    for role, key in (("join", "join_datasets"), ("append", "append_datasets")):
        for j in snap.get(key) or []:
            inputs.append({"role": f"{role} [{j.get('operation_seq')}]" + (f" {j['alias']}" if j.get("alias") else ""),
                           "dataset": j.get("dataset_name") or j.get("dataset_id"), "version": j.get("dataset_version"),
                           "resolver": j.get("resolver_id"), "locations": list(j.get("locations") or []),
                           "href": ids.dataset_page(j["dataset_name"]) if j.get("dataset_name") else None})
    timings = rec.get("timings") or {}
    spark = rec.get("spark") or {}
    return {
        **run_summary(rec, superseding),
        "restatement": restatement_detail(rec),
        "project_version": rec["project"].get("version"),
        "period_start": rec["period"].get("start"), "period_end": rec["period"].get("end"),
        "error_text": rec.get("error"),
        "spark": f"{spark.get('master_or_remote') or ''} {spark.get('version') or ''}".strip(),
        "inputs": inputs,
        "output_list": [{"seq": o.get("operation_seq"), "rows": o.get("rows"), "location": o.get("location"),
                         "registered": o.get("registered_dataset"), "version": o.get("registered_version"),
                         "registered_href": ids.dataset_page(o["registered_dataset"])
                         if o.get("registered_dataset") else None} for o in rec.get("outputs") or []],
        "checks": [{k: c.get(k) for k in ("name", "kind", "on", "severity", "status", "violations", "quarantined",
                                          "amount_impact", "sample")} for c in rec.get("checks") or []],
        "bridge": list(rec.get("bridge") or []),
        "timings": _timings(timings),
        "total_s": timings.get("total_s"), "setup_s": timings.get("setup_s"),
        "spark_jobs": timings.get("spark_jobs"),
    }


def periods_data(store, ws, records: list[dict]) -> list[dict]:
    """Per project-period that was closed or has a completed run: open or closed (by whom, when, the note), its
    published run (the last completed one) and, when stale, why (as ``periods list`` and ``status``)."""
    from ..periods.stale import current_names, published_runs, stale_report
    current = current_names(ws)
    closures = store.closures(current=current)  # closes are kept by project id
    # a renamed project's runs under its name now, as `periods list` shows them
    published = {(r["project"], r["period"]): r for r in published_runs(store, ws)}
    report = stale_report(store, ws, published=list(published.values()))
    stale = {(e.project, e.period): e.reasons for e in report.entries}
    counts: dict[tuple[str, str], int] = {}
    for rec in records:
        key = (current.get(rec["project"].get("id"), rec["project"]["name"]), rec["period"]["identifier"])
        counts[key] = counts.get(key, 0) + 1
    out = []
    for key in sorted(set(closures) | set(published) | set(counts), key=lambda k: (k[1], k[0])):
        closure, run = closures.get(key), published.get(key)
        out.append({"project": key[0], "project_href": ids.project_page(key[0]), "period": key[1],
                    "state": "closed" if closure and closure["action"] == CLOSE else "open",
                    "closure": closure, "runs": counts.get(key, 0),
                    "published_run": run["run_id"] if run else None,
                    "published_in": (run.get("env") or "prod") if run else None,
                    "published_href": ids.run_page(run["run_id"]) if run else None,
                    "stale": None if run is None else key in stale, "stale_reasons": stale.get(key, []),
                    "restatements": period_restatements(records, key[0], key[1])})
    return out


def runs_page_data(store, ws, environments: Optional[list[str]] = None) -> tuple[dict, list[dict]]:
    """(the runs page's data, every run record newest first): runs grouped by project and period (each saying
    its environment), and the periods as the store's environment publishes them (where it has published nothing,
    prod's; ``published_in`` says which); ``environments``: the lines of ``envs list``. With no run store,
    empty."""
    if store is None:
        return {"runs": [], "periods": [], "store": False, "env": "prod", "environments": []}, []
    records = store.list_runs()
    superseding = superseding_index(records)
    return {"runs": [run_summary(r, superseding) for r in records], "periods": periods_data(store, ws, records),
            "store": True, "env": store.env, "environments": list(environments or [])}, records


def runs_of(records: list[dict], project: str, limit: Optional[int] = 50,
            superseding: Optional[dict[str, list[dict]]] = None) -> list[dict]:
    """The newest runs of ``project`` (at most ``limit``) as run summaries."""
    found = [run_summary(r, superseding) for r in records if r["project"]["name"] == project]
    return found[:limit] if limit else found

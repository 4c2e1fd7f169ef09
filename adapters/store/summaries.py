"""What ``ledgerflow runs`` and ``ledgerflow datasets`` print: ``runs show RUN_ID``, a run record as a
readable summary with its timing table; a run's line of ``runs list``; ``datasets list`` and ``show``.

The raw record (``target/runs/<id>/run.json``) is printed by ``runs show --json``.
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence

from .restatements import restatement_lines, restatement_mark


def _seconds(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.2f}"


def _count(value) -> str:
    return "-" if value is None else str(value)


def _ops(seqs: list) -> str:
    if not seqs:
        return "-"
    if seqs == [0]:
        return "input"
    seqs = [s for s in seqs if s]
    if len(seqs) > 3 and seqs == list(range(seqs[0], seqs[-1] + 1)):
        return f"{seqs[0]}-{seqs[-1]}"
    return ",".join(str(s) for s in seqs)


def _aligned(rows: list[tuple[str, ...]], right: set, free_last: bool = True) -> list[str]:
    """``rows`` (the header first) as indented text lines, each column padded to its widest cell (those in
    ``right`` right-aligned); ``free_last``: the last column is not padded, and left out when empty."""
    padded = len(rows[0]) - (1 if free_last else 0)
    widths = [max(len(r[i]) for r in rows) for i in range(padded)]
    lines = []
    for r in rows:
        cells = "  ".join(r[i].rjust(widths[i]) if i in right else r[i].ljust(widths[i]) for i in range(padded))
        lines.append(("  " + cells + ("  " + r[-1] if free_last and r[-1] else "")).rstrip())
    return lines


def timing_rows(timings: dict) -> list[tuple[str, ...]]:
    """The timing table's rows: statement, kind, operations, seconds, jobs, stages, tasks, note."""
    rows = []
    for s in timings.get("statements") or []:
        note = "skipped (no output reads it)" if s.get("skipped") else ""
        if s.get("failed"):
            note = "failed"
        elif s["kind"] == "output" and s.get("materialised") is False:
            note = "query only; computed by its write"
        elif s["kind"] == "stage" and s.get("materialised") is False:
            note = "not materialised; computed by its output"
        rows.append((s["name"], s["kind"], _ops(s.get("operations") or []), _seconds(s.get("seconds")),
                     _count(s.get("spark_jobs")), _count(s.get("spark_stages")), _count(s.get("spark_tasks")), note))
    for o in timings.get("outputs") or []:
        rows.append((f"write output {o['operation_seq']}", "write", str(o["operation_seq"]), _seconds(o.get("seconds")),
                     _count(o.get("spark_jobs")), _count(o.get("spark_stages")), _count(o.get("spark_tasks")),
                     "failed" if o.get("failed") else ""))
    return rows


def timing_table(timings: dict) -> list[str]:
    """The timing table as text lines."""
    head = ("statement", "kind", "operations", "seconds", "jobs", "stages", "tasks", "")
    lines = _aligned([head, *timing_rows(timings)], right={3, 4, 5, 6})
    total = timings.get("total_s")
    tail = f"  total {_seconds(total)} s (setup: resolving and starting Spark {_seconds(timings.get('setup_s'))} s)"
    if timings.get("spark_jobs") is not None:
        tail += f"; {timings['spark_jobs']} Spark jobs"
    elif timings.get("job_counts", "").startswith("unavailable"):
        tail += "; Spark job counts unavailable on Spark Connect"
    lines.append(tail)
    return lines


def check_table(checks: list[dict]) -> list[str]:
    """The checks of a run record as text lines: name, kind, on, severity, status, violations, quarantined,
    amount impact and the first violating keys."""
    head = ("check", "kind", "on", "severity", "status", "violations", "quarantined", "amount impact / sample")
    rows = [head]
    for c in checks:
        impact = ", ".join(f"{k} {v}" for k, v in (c.get("amount_impact") or {}).items())
        sample = "; ".join(", ".join(f"{k}={v}" for k, v in s.items()) for s in (c.get("sample") or [])[:5])
        rows.append((str(c["name"]), str(c["kind"]), str(c["on"]), str(c["severity"]), str(c["status"]),
                     _count(c.get("violations")), _count(c.get("quarantined")),
                     " | ".join(t for t in (impact, sample) if t)))
    return _aligned(rows, right={5, 6})


def bridge_table(bridge: list[dict]) -> list[str]:
    """The bridge of a run record as text lines: per output, group and measure, the value after the period
    filter, each operation's change (``[seq] change``), the rows quarantined and the output's value."""
    head = ("output", "group", "measure", "input", "changes", "quarantined", "output value")
    rows = [head]
    for b in bridge:
        group = ", ".join(f"{k}={v}" for k, v in b["group"].items()) if b.get("group") else "all"
        changes = ", ".join(f"[{c['seq']}] {c['change']}" for c in b.get("changes") or []) or "-"
        if b.get("not_measured"):  # never numbers the run did not measure (run/bridge.py)
            rows.append((str(b["output"]), group, str(b["measure"]), "-", "not measured: " + b["not_measured"], "-", "-"))
            continue
        rows.append((str(b["output"]), group, str(b["measure"]), str(b["input"]), changes, str(b["quarantined"]),
                     str(b["output_value"])))
    return _aligned(rows, right={0, 3, 5, 6}, free_last=False)


def render_run(rec: dict, superseding: tuple = ()) -> str:
    """A run record as a readable summary; ``superseding``: the restatements that superseded it
    (:func:`.restatements.superseded_by`)."""
    p, period = rec["project"], rec["period"]
    lines = [f"Run {rec['run_id']}  {rec['status']}"]
    lines.append(f"  project   {p['name']} v{p['version']} ({p['id']})")
    lines.append(f"  period    {period['identifier']} ({period['start']} .. {period['end']})")
    lines.append(f"  started   {rec['started_at']}   finished {rec.get('finished_at') or '-'}")
    if rec.get("parent_run_id"):
        lines.append(f"  replay of {rec['parent_run_id']}")
    if rec.get("batch_id"):
        lines.append(f"  batch     {rec['batch_id']}   (ledgerflow runs list --batch {rec['batch_id']})")
    spark = rec.get("spark") or {}
    if spark:
        lines.append(f"  spark     {spark.get('master_or_remote')} {spark.get('version')}"
                     + (f" app {spark['app_id']}" if spark.get("app_id") else ""))
    if rec.get("error"):
        lines.append(f"  error     {rec['error']}")
    snap = rec.get("resolver_snapshot") or {}
    if snap.get("input_dataset_id"):
        lines.append("Inputs")
        lines.append(f"  input  {snap.get('input_dataset_id')} v{snap.get('input_dataset_version')} "
                     f"(resolver {snap.get('input_resolver')}): {', '.join(snap.get('input_locations') or [])}")
        for j in snap.get("join_datasets") or []:
            lines.append(f"  join {j['alias']} [{j['operation_seq']}]  {j.get('dataset_name') or j['dataset_id']} "
                         f"v{j['dataset_version']} (resolver {j['resolver_id']}): {', '.join(j['locations'])}")
        for a in snap.get("append_datasets") or []:
            lines.append(f"  append [{a['operation_seq']}]  {a.get('dataset_name') or a['dataset_id']} "
                         f"v{a['dataset_version']} (resolver {a['resolver_id']}): {', '.join(a['locations'])}")
    if rec.get("outputs"):
        lines.append("Outputs")
        for o in rec["outputs"]:
            reg = f" (registered {o['registered_dataset']} v{o['registered_version']})" \
                if o.get("registered_dataset") else ""
            lines.append(f"  [{o['operation_seq']}] {o['rows']} rows -> {o['location']}{reg}")
    if rec.get("checks"):
        lines.append("Checks (judged on the staged rows before the commit point)")
        lines += check_table(rec["checks"])
    if rec.get("bridge"):
        lines.append("Bridge (per output: after the period filter, each operation's change, quarantined, written)")
        lines += bridge_table(rec["bridge"])
    lines += restatement_lines(rec, list(superseding))
    timings = rec.get("timings")
    if timings:
        lines.append("Timings (wall seconds; Spark jobs, stages and tasks each statement started)")
        lines += timing_table(timings)
    lines.append(f"Raw record: ledgerflow runs show {rec['run_id']} --json")
    return "\n".join(lines)


def run_line(rec: dict, superseded_by: Sequence[str] = ()) -> str:
    """A run's line in ``ledgerflow runs list``: id, start, status, project, period, outputs and rows
    (a replay's parent, a restatement's mark, the restatements that superseded the run (``superseded_by``:
    :func:`.restatements.superseding_ids`), a failed run's first error line)."""
    rows = sum(o.get("rows") or 0 for o in rec.get("outputs") or [])
    return (f"{rec['run_id']}  {rec['started_at']}  {rec['status']:<9}  {rec['project']['name']}  "
            f"{rec['period']['identifier']}  outputs={len(rec.get('outputs') or [])} rows={rows}"
            + (f"  env={rec['env']}" if rec.get("env") not in (None, "prod") else "")
            + (f"  replay of {rec['parent_run_id']}" if rec.get("parent_run_id") else "")
            + restatement_mark(rec)
            + (f"  superseded by restatement {', '.join(superseded_by)}" if superseded_by else "")
            + (f"  error: {rec['error'].splitlines()[0].split(';')[0][:160]}"
               if rec["status"] == "failed" and rec.get("error") else ""))


def batch_lines(batch: dict, runs: list[dict]) -> list[str]:
    """``ledgerflow runs list --batch BATCH_ID``: the batch (``{batch_id, created_at, plan}``), each of its runs
    (``runs``: oldest first) as :func:`run_line` prints it, then each project-period of its plan that has no
    run in it (skipped: after a failed upstream, ``--fail-fast`` or Ctrl-C)."""
    plan = batch["plan"]
    lines = [f"Batch {batch['batch_id']}  created {batch['created_at']}: {len(plan['projects'])} project"
             f"{'s' if len(plan['projects']) != 1 else ''} x {len(plan['periods'])} period"
             f"{'s' if len(plan['periods']) != 1 else ''}, {len(runs)} run{'s' if len(runs) != 1 else ''}"]
    lines += [run_line(r) for r in runs]
    ran = {(r["project"]["name"], r["period"]["identifier"]) for r in runs}
    lines += [f"not run  {name}  {period}" for period in plan["periods"] for name in plan["projects"]
              if (name, period) not in ran]
    return lines


def dataset_line(ds) -> str:
    """A dataset's line in ``ledgerflow datasets list`` (``ds``: a catalog entry, declared or registered)."""
    versions = ",".join(f"{v.version}{'' if v.status == 'active' else '(disabled)'}" for v in ds.versions)
    return (f"{ds.name:<24} {'registered' if ds.registered else 'declared':<10} {ds.temporal_mode:<10} "
            f"{ds.status:<8} versions {versions or 'none yet'}")


def dataset_lines(ds, registrations: Callable[[str], list[dict]],
                  superseding: Callable[[str], list[dict]] = lambda run_id: []) -> list[str]:
    """``ledgerflow datasets show NAME``: the dataset, its versions (a registered one's periods, location and
    run, from ``registrations(name)``: :meth:`.runstore.RunStore.registrations`; the restatements that
    superseded the run, from ``superseding(run_id)``: :func:`.restatements.superseded_by`) and its columns."""
    lines = [f"{ds.name}  id={ds.id}  status={ds.status}  table={ds.table_name}  "
             f"temporal_mode={ds.temporal_mode}  {'registered' if ds.registered else 'declared in ' + ds.file}"]
    for v in ds.versions:
        extra = ""
        if ds.registered:
            reg = next(r for r in registrations(ds.name) if r["version"] == v.version)
            extra = f"  periods={','.join(reg['periods'])}  location={reg['location']}  run={reg['run_id']}"
            extra += "".join(f"  (superseded by restatement run {r['run_id']}: stays readable)"
                             for r in superseding(reg["run_id"]))
        lines.append(f"  version {v.version}  {v.status}{extra}")
    lines += [f"  column {c.name}: {c.type}" for c in ds.columns]
    return lines

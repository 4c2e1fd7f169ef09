"""ledgerflow's workspace as Dagster assets: ``ledgerflow.dagster.definitions(WORKSPACE_DIR)`` (docs/dagster.md).

One asset per output (key ``[project, output]``, grouped by project), the registered datasets an output writes and
another project reads as the dependencies between them, every asset partitioned by month (or the level asked for)
with partition keys that are ledgerflow's periods (``2026-01``), and each check of a project an asset check of the
output it reads. Draft projects (which ``ledgerflow run`` refuses) and projects with errors get no asset. A
project's assets are one multi-asset: materialising a partition runs ``ledgerflow run PROJECT --period P --results
FILE`` in its own process, and a backfill of consecutive partitions is one run of the range (one batch, fused where
ledgerflow fuses), as Dagster's single-run backfill policy asks. Each partition's materialisation carries its own
run id, rows and bridge (the figures of its output) as metadata; each check's result is its outcome over the
periods it judged (a ``warn`` check's violations a WARN result), with the status and violations per period, and a
check nothing judged (a refused run, a Spark failure) has no result. When some months of a range fail, those that
completed (published) are recorded as materialised and the step fails for the others. Names Dagster does not accept
(``-``, spaces) are made valid by :func:`dagster_name`. The workspace is read with the compiler (``ledgerflow
manifest``'s document); Dagster is imported only here (``pip install 'ledgerflow[dagster]'``).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from typing import Optional, Sequence

import dagster as dg

_LEVELS = {"month": ("0 0 1 * *", "%Y-%m"), "day": ("0 0 * * *", "%Y-%m-%d"), "year": ("0 0 1 1 *", "%Y")}
_VALID = re.compile(r"[A-Za-z0-9_]+")  # Dagster's names: groups, ops, the output names it derives from keys


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9_]+", "_", str(text).lower()).strip("_")


def dagster_name(text: str) -> str:
    """``text`` as a name Dagster accepts (``[A-Za-z0-9_]+``): itself when it is one, else its other characters
    replaced by ``_`` and 8 hex digits of its SHA-256 added, so two names (``a-b``, ``a b``) stay apart and a
    name is the same at every load."""
    text = str(text)
    if _VALID.fullmatch(text):
        return text
    return f"{re.sub(r'[^A-Za-z0-9_]', '_', text)}_{hashlib.sha256(text.encode('utf-8')).hexdigest()[:8]}"


def _keys(manifest: dict, names: dict[str, str]) -> dict[tuple[str, int], dg.AssetKey]:
    """(project, output seq) -> its asset key ``[project's Dagster name, output name]`` (the seq where names repeat
    or are empty)."""
    keys = {}
    for name, project in manifest["projects"].items():
        slugs = [_slug(o["name"]) for o in project["outputs"]]
        for o, slug in zip(project["outputs"], slugs):
            unique = slug and slugs.count(slug) == 1
            keys[(name, o["seq"])] = dg.AssetKey([names[name], slug if unique else f"output_{o['seq']}"])
    return keys


def _deps(manifest: dict, keys: dict, assets: set[str]) -> dict[str, list[dg.AssetKey]]:
    """Per project, the assets whose registered dataset it reads (a producer without an asset, a draft, is read as
    it stands, as ``run`` reads it)."""
    producers = {o["registers"]: keys[(p, o["seq"])] for p, project in manifest["projects"].items() if p in assets
                 for o in project["outputs"] if o["registers"]}
    return {name: sorted({producers[r["dataset"]] for r in project["reads"]
                          if r["registered"] and r["dataset"] in producers}, key=lambda k: k.to_string())
            for name, project in manifest["projects"].items()}


def _partitions(start: str, level: str) -> dg.PartitionsDefinition:
    if level not in _LEVELS:
        raise ValueError(f"period_level must be one of {', '.join(_LEVELS)} (ledgerflow's quarters have no Dagster "
                         f"partition keys of their form), not {level!r}")
    cron, fmt = _LEVELS[level]
    return dg.TimeWindowPartitionsDefinition(cron_schedule=cron, fmt=fmt, start=start)


def run_ledgerflow(root: str, project: str, first: str, last: str, command: Sequence[str]) -> tuple[int, dict, str]:
    """``ledgerflow run PROJECT --period FIRST[..LAST] --results FILE``: (exit code, the results document, the
    process's output)."""
    period = first if first == last else f"{first}..{last}"
    with tempfile.TemporaryDirectory(prefix="ledgerflow-dagster-") as tmp:
        path = os.path.join(tmp, "results.json")
        done = subprocess.run([*command, "--workspace", root, "run", project, "--period", period, "--results", path],
                              capture_output=True, text=True)
        try:
            with open(path, encoding="utf-8") as fh:
                results = json.load(fh)
        except (OSError, ValueError):
            results = {"results": [], "error": None}
    return done.returncode, results, (done.stdout + done.stderr)[-4000:]


def partition_metadata(entry: dict, seq: int) -> dict:
    """The metadata of output ``seq``'s materialisation of one period, from that period's results entry: its run id,
    rows, location and bridge figures (those of this output; the whole output's, ``group`` None, as its totals).
    The ``ledgerflow/...s`` maps are keyed by the period, so a consumer of the range's former maps reads them as
    before."""
    period = entry["period"]
    out = next((o for o in entry.get("outputs") or [] if o.get("seq") == seq), {})
    figures = [b for b in entry.get("bridge") or [] if b.get("output") == seq]
    totals = {b.get("measure"): {k: b.get(k) for k in ("input_value", "output_value", "not_measured") if k in b}
              for b in figures if b.get("group") is None}
    return {"rows": int(out.get("rows") or 0), "ledgerflow/period": period,
            "ledgerflow/run_id": entry.get("run_id") or "", "ledgerflow/batch_id": entry.get("batch_id") or "",
            "ledgerflow/run_ids": json.dumps({period: entry.get("run_id")}),
            "ledgerflow/rows": json.dumps({period: out.get("rows")}),
            "ledgerflow/locations": json.dumps({period: out.get("location")}),
            "ledgerflow/bridge": json.dumps({period: figures}),
            "ledgerflow/bridge_totals": json.dumps(totals)}


def check_result(check: str, spec: dg.AssetCheckSpec, warns: bool, entries: dict, periods: Sequence[str],
                 required: bool) -> Optional[dg.AssetCheckResult]:
    """The result of ledgerflow check ``check`` (``warns``: its action is warn or quarantine) over ``periods`` (their
    results ``entries`` by period): passed when every period it was judged in passed; else ERROR when one failed,
    WARN when it only warned. A check judged in no period gets no result (None), unless the step succeeds
    (``required``: Dagster wants one), then a WARN result saying it was not evaluated."""
    found = {p: next((c for c in (entries.get(p) or {}).get("checks") or [] if c.get("name") == check), None)
             for p in periods}
    judged = {p: c for p, c in found.items() if c is not None}
    metadata = {"status": json.dumps({p: (c or {}).get("status") or "not evaluated" for p, c in found.items()}),
                "violations": json.dumps({p: c.get("violations") for p, c in judged.items()})}
    if not judged:
        if not required:
            return None
        return dg.AssetCheckResult(asset_key=spec.asset_key, check_name=spec.name, passed=False,
                                   severity=dg.AssetCheckSeverity.WARN, metadata=metadata,
                                   description=f"ledgerflow check '{check}' was not evaluated")
    statuses = {c.get("status") for c in judged.values()}
    if statuses == {"passed"}:
        severity = dg.AssetCheckSeverity.WARN if warns else dg.AssetCheckSeverity.ERROR
    else:  # "failed" (or a status not known here) in any period is an error; only "warned" a warning
        severity = dg.AssetCheckSeverity.ERROR if statuses - {"passed", "warned"} else dg.AssetCheckSeverity.WARN
    return dg.AssetCheckResult(asset_key=spec.asset_key, check_name=spec.name, passed=statuses == {"passed"},
                               severity=severity, metadata=metadata)


def _project_assets(root: str, manifest: dict, keys: dict, deps: list, name: str, group: str, partitions,
                    command) -> dg.AssetsDefinition:
    project = manifest["projects"][name]
    outputs = {o["seq"]: o for o in project["outputs"]}
    first_output = min(outputs) if outputs else None
    checks: dict[str, tuple[dg.AssetCheckSpec, bool]] = {}
    for c in project["checks"]:
        # the output the compiler bound the check to; a check of the input is shown on the first output
        seq = c["output_seq"] if c["output_seq"] in outputs else first_output
        if seq is not None:  # a project without outputs has no asset to hang a check on
            warns = c.get("severity") == "warn" or c.get("on_violation") in ("warn", "quarantine")
            spec = dg.AssetCheckSpec(c["name"], asset=keys[(name, seq)],  # a name already (CHK-006)
                                     description=f"ledgerflow check '{c['name']}'" + (" (warn)" if warns else ""))
            checks[c["name"]] = (spec, warns)
    specs = [dg.AssetSpec(keys[(name, seq)], deps=deps, group_name=group,
                          description=f"{name}: output {seq} '{o['name']}'", kinds={"spark"},
                          metadata={"ledgerflow/project": name,
                                    "ledgerflow/destination": json.dumps(o["destination"]),
                                    "ledgerflow/registers": o["registers"] or ""})
             for seq, o in sorted(outputs.items())]

    @dg.multi_asset(name=f"ledgerflow_{group}", specs=specs, check_specs=[s for s, _ in checks.values()],
                    partitions_def=partitions, backfill_policy=dg.BackfillPolicy.single_run(), can_subset=False,
                    group_name=group)
    def materialise(context):  # an AssetExecutionContext (not annotated: annotations are strings here)
        window = context.partition_key_range
        periods = list(context.partition_keys)
        asked = window.start if window.start == window.end else f"{window.start}..{window.end}"
        code, results, output = run_ledgerflow(root, name, window.start, window.end, command)
        context.log.info(output)
        entries = {e.get("period"): e for e in results.get("results") or [] if e.get("project") == name}
        done = [p for p in periods if (entries.get(p) or {}).get("status") == "completed"]
        succeeded = code == 0 and len(done) == len(periods)
        if succeeded:  # each partition's own metadata on the events Dagster makes of one result per asset
            for seq in sorted(outputs):
                for period in periods:
                    context.add_asset_metadata(partition_metadata(entries[period], seq), asset_key=keys[(name, seq)],
                                               partition_key=period)
                yield dg.MaterializeResult(asset_key=keys[(name, seq)])
        else:  # a result would mark every partition of the range: only the completed ones are recorded
            for period in done:
                for seq in sorted(outputs):
                    yield dg.AssetMaterialization(asset_key=keys[(name, seq)], partition=period,
                                                  metadata=partition_metadata(entries[period], seq))
        for check, (spec, warns) in checks.items():
            result = check_result(check, spec, warns, entries, periods, required=succeeded)
            if result is not None:
                yield result
        if not succeeded:
            failed = {p: (entries.get(p) or {}).get("status") or "not run" for p in periods if p not in done}
            raise dg.Failure(description=f"ledgerflow run {name} --period {asked} exited {code} (completed: "
                                         f"{', '.join(done) or 'none'}; not completed: "
                                         f"{', '.join(f'{p} {s}' for p, s in failed.items()) or 'none'}): "
                                         f"{results.get('error') or output[-1000:]}",
                             metadata={"exit_code": code, "completed": json.dumps(done),
                                       "not_completed": json.dumps(failed)})

    return materialise


def definitions(workspace_dir: str, start: str = "2024-01", period_level: str = "month",
                command: Optional[Sequence[str]] = None) -> dg.Definitions:
    """The workspace at ``workspace_dir`` as a ``dagster.Definitions`` (see the module docstring): partitions from
    ``start`` (a period of ``period_level``: month, day or year); ``command``: how ledgerflow is started (default
    this Python's ``-m ledgerflow.adapters.cli``)."""
    from ledgerflow.adapters.compile_out.script_cache import ScriptCache
    from ledgerflow.adapters.manifest.build import build_manifest
    from ledgerflow.compiler.workspace import load_workspace
    root = os.path.abspath(workspace_dir)
    scripts = ScriptCache(root, fork=False)  # the compiled scripts `ledgerflow manifest` and `docs` keep, kept too
    manifest, _errors = build_manifest(load_workspace(root), scripts)
    scripts.save()
    names = {name: dagster_name(name) for name in manifest["projects"]}
    clash = sorted(n for n in set(names.values()) if list(names.values()).count(n) > 1)
    if clash:  # only a name that happens to be another's sanitised form, hash included
        raise ValueError(f"projects {sorted(p for p, n in names.items() if n in clash)} share the Dagster name "
                         f"{clash[0]!r}: rename one")
    keys = _keys(manifest, names)
    partitions = _partitions(start, period_level)
    command = list(command or [sys.executable, "-m", "ledgerflow.adapters.cli"])
    with_assets = {name for name, project in manifest["projects"].items()
                   if project["outputs"] and not project["errors"] and project.get("status") != "draft"}
    deps = _deps(manifest, keys, with_assets)
    assets = [_project_assets(root, manifest, keys, deps[name], name, names[name], partitions, command)
              for name in sorted(with_assets)]
    return dg.Definitions(assets=assets)

"""ledgerflow's workspace as Dagster assets: ``ledgerflow.dagster.definitions(WORKSPACE_DIR)`` (docs/dagster.md).

One asset per output (key ``[project, output]``, grouped by project), the registered datasets an output writes and
another project reads as the dependencies between them, every asset partitioned by month (or the level asked for)
with partition keys that are ledgerflow's periods (``2026-01``), and each check of a project an asset check of the
output it reads. A project's assets are one multi-asset: materialising a partition runs ``ledgerflow run PROJECT
--period P --results FILE`` in its own process, and a backfill of consecutive partitions is one run of the range
(one batch, fused where ledgerflow fuses), as Dagster's single-run backfill policy asks. Each materialisation
carries the run ids, the rows and the bridge per period as metadata; each check's result is its outcome, with the
violations per period. A failed check publishes nothing (exit 4): the check results are reported and the step
fails. The workspace is read with the compiler (``ledgerflow manifest``'s document); Dagster is imported only here
(``pip install 'ledgerflow[dagster]'``).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from typing import Optional, Sequence

import dagster as dg

_LEVELS = {"month": ("0 0 1 * *", "%Y-%m"), "day": ("0 0 * * *", "%Y-%m-%d"), "year": ("0 0 1 1 *", "%Y")}


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9_]+", "_", str(text).lower()).strip("_")


def _keys(manifest: dict) -> dict[tuple[str, int], dg.AssetKey]:
    """(project, output seq) -> its asset key ``[project, output name]`` (the seq where names repeat or are empty)."""
    keys = {}
    for name, project in manifest["projects"].items():
        slugs = [_slug(o["name"]) for o in project["outputs"]]
        for o, slug in zip(project["outputs"], slugs):
            unique = slug and slugs.count(slug) == 1
            keys[(name, o["seq"])] = dg.AssetKey([name, slug if unique else f"output_{o['seq']}"])
    return keys


def _deps(manifest: dict, keys: dict) -> dict[str, list[dg.AssetKey]]:
    """Per project, the assets whose registered dataset it reads."""
    producers = {o["registers"]: keys[(p, o["seq"])] for p, project in manifest["projects"].items()
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


def _project_assets(root: str, manifest: dict, keys: dict, deps: list, name: str, partitions,
                    command) -> dg.AssetsDefinition:
    project = manifest["projects"][name]
    outputs = {o["seq"]: o for o in project["outputs"]}
    first_output = min(outputs) if outputs else None
    checks = {}
    for c in project["checks"]:
        # the output the compiler bound the check to; a check of the input is shown on the first output
        seq = c["output_seq"] if c["output_seq"] in outputs else first_output
        if seq is not None:  # a project without outputs has no asset to hang a check on
            checks[c["name"]] = keys[(name, seq)]
    specs = [dg.AssetSpec(keys[(name, seq)], deps=deps, group_name=name,
                          description=f"{name}: output {seq} '{o['name']}'", kinds={"spark"},
                          metadata={"ledgerflow/destination": json.dumps(o["destination"]),
                                    "ledgerflow/registers": o["registers"] or ""})
             for seq, o in sorted(outputs.items())]
    check_specs = [dg.AssetCheckSpec(check, asset=key, description=f"ledgerflow check '{check}'")
                   for check, key in checks.items()]

    @dg.multi_asset(name=f"ledgerflow_{_slug(name)}", specs=specs, check_specs=check_specs, partitions_def=partitions,
                    backfill_policy=dg.BackfillPolicy.single_run(), can_subset=False, group_name=name)
    def materialise(context):  # an AssetExecutionContext (not annotated: annotations are strings here)
        window = context.partition_key_range
        code, results, output = run_ledgerflow(root, name, window.start, window.end, command)
        entries = [e for e in results.get("results") or [] if e.get("project") == name]
        context.log.info(output)
        for check, key in checks.items():
            outcome = {e["period"]: next((c for c in e.get("checks") or [] if c.get("name") == check), None)
                       for e in entries}
            passed = bool(entries) and all(c is not None and c.get("status") == "passed" for c in outcome.values())
            yield dg.AssetCheckResult(asset_key=key, check_name=check, passed=passed,
                                      metadata={"violations": json.dumps({p: (c or {}).get("violations")
                                                                          for p, c in outcome.items()}),
                                                "status": json.dumps({p: (c or {}).get("status")
                                                                      for p, c in outcome.items()})})
        if code != 0:
            raise dg.Failure(description=f"ledgerflow run {name} --period {window.start}..{window.end} exited {code}: "
                                         f"{results.get('error') or output[-1000:]}",
                             metadata={"exit_code": code})
        for seq in sorted(outputs):
            per = {e["period"]: next((o for o in e.get("outputs") or [] if o.get("seq") == seq), {}) for e in entries}
            yield dg.MaterializeResult(asset_key=keys[(name, seq)], metadata={
                "ledgerflow/run_ids": json.dumps({e["period"]: e["run_id"] for e in entries}),
                "rows": sum(int(o.get("rows") or 0) for o in per.values()),
                "ledgerflow/rows": json.dumps({p: o.get("rows") for p, o in per.items()}),
                "ledgerflow/bridge": json.dumps({e["period"]: e.get("bridge") for e in entries}),
                "ledgerflow/locations": json.dumps({p: o.get("location") for p, o in per.items()})})

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
    keys = _keys(manifest)
    partitions = _partitions(start, period_level)
    command = list(command or [sys.executable, "-m", "ledgerflow.adapters.cli"])
    deps = _deps(manifest, keys)
    assets = [_project_assets(root, manifest, keys, deps[name], name, partitions, command)
              for name, project in sorted(manifest["projects"].items()) if project["outputs"] and not project["errors"]]
    return dg.Definitions(assets=assets)

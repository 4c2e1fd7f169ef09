"""What ``ledgerflow status`` costs at scale (issue 31 point 5): 500 projects x 36 periods, target under 2 s.

    python -m bench.status_scale                          # 500 projects x 36 periods, 3 timed repeats
    python -m bench.status_scale --projects 50 --periods 6 --repeats 1   # a quick look

A synthetic workspace in a temporary folder: one declared dataset ``gl`` (CSV, one file per month in
``data/gl/monthly/``), ``rates`` (one file), and N output-only projects reading ``gl`` joined with ``rates``.
The run store gets one completed run per project-period (records as runs write them: resolutions, pins,
input fingerprints of the month's file and the rates file, the declarations read, and a padded bridge and
lineage so each record weighs about what a real one does), plus an older completed run of each (not
published), written straight into ``state.db`` (no Spark). Then:

- ``status`` in a fresh process (``python -m ledgerflow.adapters.cli status``: imports, workspace load,
  the run store's one query, the comparisons), nothing stale;
- the same after one month's file changed (N project-periods stale, reasons rendered);
- in-process, the run store's query alone (:meth:`PublishedTable.last_completed`).

Raw output: ``bench/results/status_scale_<projects>x<periods>_<date>.txt``. Times are printed, never asserted.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.common import dated_result  # noqa: E402  (after the path the script is run with)


def months(n: int) -> list[str]:
    """``n`` month identifiers from 2024-01 on."""
    return [f"{2024 + k // 12}-{k % 12 + 1:02d}" for k in range(n)]


def build(root: Path, n_projects: int, periods: list[str]) -> None:
    """The workspace and its run store (see the module docstring)."""
    from ledgerflow.adapters.inputs.fingerprint import fingerprint_path
    from ledgerflow.adapters.store.published import stored_inputs
    from ledgerflow.adapters.store.runstore import RunStore
    from ledgerflow.compiler.workspace import load_workspace
    (root / "ledgerflow.yml").write_text(
        "name: scale\nresolvers:\n  monthly:\n    rules:\n      - name: m\n        data_level: month\n"
        "        strategy: {type: path, path: \"data/{{dataset}}/monthly/{{YYYY}}-{{MM}}.csv\", format: csv}\n")
    (root / "datasets").mkdir()
    (root / "projects").mkdir()
    for name, uid in (("gl", 1), ("rates", 2)):
        (root / "datasets" / f"{name}.yml").write_text(
            f"id: 0a000000-0000-4000-8000-00000000000{uid}\nname: {name}\nstatus: active\n"
            f"{'resolver_id: monthly' + chr(10) if name == 'gl' else ''}versions:\n  - {{version: 1}}\nmain_table:\n"
            f"  name: {name}\n  temporal_mode: period\n  columns:\n    - {{name: code, type: string}}\n"
            "    - {name: amount, type: \"decimal(18,2)\"}\n")
    gl = root / "data" / "gl" / "monthly"
    gl.mkdir(parents=True)
    for p in periods:
        (gl / f"{p}.csv").write_text("code,amount,_period\n" + "".join(f"A{k},1.00,{p}\n" for k in range(200)))
    rates = root / "data" / "rates" / "v1"
    rates.mkdir(parents=True)
    (rates / "rates.csv").write_text("code,amount,_period\nA1,1.00,2024-01\n")
    for k in range(n_projects):
        (root / "projects" / f"p{k:04d}.yml").write_text(
            f"id: 0d000000-0000-4000-8000-{k:012d}\nname: p{k:04d}\nversion: 1\nstatus: active\n"
            "input_dataset_id: gl\noperations:\n  - seq: 1\n    name: out\n    type: output\n"
            f"    arguments:\n      destination: {{path: out/p{k:04d}}}\n")
    ws = load_workspace(str(root))
    raws = [d.raw for d in ws.datasets]
    store = RunStore(str(root))
    store.list_runs()  # the tables made
    rate_print = fingerprint_path(str(rates))
    pad = "x" * 20_000  # the bridge, the lineage and the project snapshot of a real record
    rows = []
    for p in ws.projects:
        sha = hashlib.sha256((root / p.file).read_bytes()).hexdigest()
        for t in periods:
            month_print = fingerprint_path(str(gl / f"{t}.csv"))
            for age, finished in (("old", "2026-01-01T00:00:00.000"), ("new", "2026-02-01T00:00:00.000")):
                run_id = f"{p.name}-{t}-{age}"
                rec = {"run_id": run_id, "project": {"id": p.id, "name": p.name, "version": 1, "sha256": sha},
                       "period": {"identifier": t}, "status": "completed", "started_at": finished,
                       "finished_at": finished, "datasets_snapshot": raws, "outputs": [], "padding": pad,
                       "resolver_snapshot": {
                           "resolutions": {v: {"dataset_id": d.id, "dataset_name": d.name, "version": 1,
                                               "resolver_source": "dataset_resolver"}
                                           for v, d in (("ds_gl", ws.datasets[0]), ("ds_rates", ws.datasets[1]))},
                           "pinned_views": [],
                           "input_fingerprints": [
                               {"view": "ds_gl", "dataset": "gl", "dataset_version": 1, "kind": "path",
                                "checked": True, "location": str(gl / f"{t}.csv"), **month_print},
                               {"view": "ds_rates", "dataset": "rates", "dataset_version": 1, "kind": "path",
                                "checked": True, "location": str(rates), **rate_print}]}}
                rows.append((run_id, p.id, p.name, t, "completed", finished, finished, json.dumps(rec),
                             *stored_inputs(rec)))
    with sqlite3.connect(store.db_path) as conn:
        conn.executemany("INSERT INTO runs (run_id, project_id, project_name, period, status, started_at, "
                         "finished_at, record, inputs, input_files) VALUES (?,?,?,?,?,?,?,?,?,?)", rows)


def status_process(root: Path) -> tuple[float, str]:
    """Seconds and stdout of ``ledgerflow status`` in a fresh process."""
    clock = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "ledgerflow.adapters.cli", "--workspace", str(root), "status"],
                          capture_output=True, text=True, check=True)
    return time.perf_counter() - clock, proc.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--projects", type=int, default=500)
    ap.add_argument("--periods", type=int, default=36)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    periods = months(args.periods)
    lines = [f"status over {args.projects} projects x {args.periods} periods "
             f"({args.projects * args.periods} published project-periods, twice as many completed runs)"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        clock = time.perf_counter()
        build(root, args.projects, periods)
        size = os.path.getsize(root / ".ledgerflow" / "state.db")
        lines.append(f"built in {time.perf_counter() - clock:.1f} s; state.db {size / 1e6:.0f} MB")
        from ledgerflow.adapters.store.runstore import RunStore
        store = RunStore(str(root))
        query = []
        for _ in range(args.repeats):
            clock = time.perf_counter()
            found = store.last_completed()
            query.append(time.perf_counter() - clock)
        assert len(found) == args.projects * args.periods
        lines.append(f"run store query (last completed run of each, with its inputs): "
                     f"{', '.join(f'{s:.2f}' for s in query)} s")
        for label, change in (("nothing stale", None), ("one month's file edited", periods[0])):
            if change is not None:
                with open(root / "data" / "gl" / "monthly" / f"{change}.csv", "a") as fh:
                    fh.write("A9,2.00," + change + "\n")
            times, out = [], ""
            for _ in range(args.repeats):
                seconds, out = status_process(root)
                times.append(seconds)
            lines.append(f"ledgerflow status ({label}), fresh process: {', '.join(f'{s:.2f}' for s in times)} s "
                         f"(median {statistics.median(times):.2f} s); first line: {out.splitlines()[0][:110]}")
    text = "\n".join(lines)
    print(text)
    out = Path(dated_result(f"status_scale_{args.projects}x{args.periods}"))
    out.write_text(text + "\n")


if __name__ == "__main__":
    main()

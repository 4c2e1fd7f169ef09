"""What checks cost a user (issue 29): the whole cold ``ledgerflow run`` of pipeline P with six checks
against the same run without them, on source-shaped data, alternating pairs.

    python -m bench.checks_cost                        # 1M rows, flat layout, 5 pairs after 1 warm-up pair
    python -m bench.checks_cost --rows 20000 --pairs 1 --warmup 0   # a smoke run

The data is the cold-process benchmark's (``bench/cold_process.py``: ``src-<layout>-<rows>`` under
``$LEDGERFLOW_BENCH_DATA``, generated there on first use). Two workspaces are made beside it, each with
the same ``data/`` (hard links: ledgerflow refuses inputs through a symbolic link out of the workspace):
``plain`` runs pipeline P as it is, ``checked`` runs it with the six checks of :data:`CHECKS`: two
``expect``, ``unique`` on the line key (on the input), ``balanced`` (``severity: warn``: the generated
ledger does not balance, so it reports its groups and commits), ``not_null`` and a ``reconcile`` of the
input to the output explained by the delete, the aggregate and the append. Only the checked run observes and
records its bridge (a project without checks runs as before issue 29: docs/checks.md), so the ratio is what
declaring the checks costs, bridge included. A pair runs both (who goes first alternates); the ratio is
checked / plain; the headline is the median of the pairs. After the timed pairs, each side's ``run.json`` is
read: the checked run must have passed or warned every check, both outputs must hold the same rows (count
and decimal sums read back from the written files, equal to the checked run's bridge).
Output: ``bench/results/checks_cost_<rows>_<date>.txt``. Times are printed, never asserted.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

from bench.common import Report, cache_root, dated_result, ensure_source, loadavg, rounds_parser
from bench.pairing import pair_summary

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
PERIOD = "2026-02"
TARGET = 1.10

CHECKS = """
checks:
  - name: currency_known
    on: 6
    expect: 'NOT(ISNULL(transactions.currency))'
  - name: counts_not_negative
    on: 6
    expect: 'ISNULL(transactions.line_count) OR transactions.line_count >= 0'
  - name: one_row_per_line
    on: input
    unique: [journal_id, line_number]
  - name: regions_balance
    on: 6
    balanced: {group_by: [customer_region, currency], amount: amount_local, tolerance: "0.00"}
    severity: warn
  - name: amounts_present
    on: 6
    not_null: [amount_local, currency]
  - name: control_totals
    reconcile:
      from: input
      to: 6
      measures: [count, "SUM(amount_local)"]
      explained_by: [3, 4, 5]
      tolerance: "0.00"
"""


def make_workspace(src: str, dest: str, checks: bool) -> str:
    """A copy of ``src``'s YAML with ``data/`` hard-linked; pipeline P gains :data:`CHECKS` when ``checks``."""
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    for name in ("ledgerflow.yml",):
        shutil.copy(os.path.join(src, name), dest)
    for folder in ("datasets", "projects"):
        shutil.copytree(os.path.join(src, folder), os.path.join(dest, folder))
    shutil.copytree(os.path.join(src, "data"), os.path.join(dest, "data"), copy_function=os.link)
    if checks:
        with open(os.path.join(dest, "projects", "pipeline_p.yml"), "a") as fh:
            fh.write(CHECKS)
    return dest


def _tree_cpu(root: int, seen: dict) -> None:
    """Note in ``seen`` (pid -> CPU seconds) the user + system time of ``root`` and every process below it
    (the CLI's Python and the JVM it starts, which it does not wait for: its time is in no rusage)."""
    children: dict[int, list[int]] = {}
    ticks = os.sysconf("SC_CLK_TCK")
    stats = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid, ppid = int(name), int(fields[1])
        children.setdefault(ppid, []).append(pid)
        stats[pid] = (int(fields[11]) + int(fields[12])) / ticks
    todo = [root]
    while todo:
        pid = todo.pop()
        if pid in stats:
            seen[pid] = max(seen.get(pid, 0.0), stats[pid])
        todo.extend(children.get(pid, []))


def run_once(ws: str, log_path: str) -> tuple[float, float]:
    """One cold ``ledgerflow run`` process in ``ws``: (its wall seconds, the CPU seconds of its process tree,
    sampled every 0.1 s: the last tenth of a second of each process may be missed). A failure stops the
    benchmark. The CPU seconds hardly depend on what else the machine runs; the wall seconds do."""
    cmd = [sys.executable, "-m", "ledgerflow.adapters.cli", "--workspace", ws, "run", "pipeline_p",
           "--period", PERIOD]
    seen: dict = {}
    start = time.perf_counter()
    with open(log_path, "a") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ws)
        while proc.poll() is None:
            _tree_cpu(proc.pid, seen)
            time.sleep(0.1)
    took = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}; see {log_path}")
    return took, sum(seen.values())


def last_record(ws: str) -> dict:
    """The run record of the latest run in ``ws``."""
    runs = os.path.join(ws, "target", "runs")
    newest = max(os.listdir(runs))  # UUIDv7 run ids sort by time
    with open(os.path.join(runs, newest, "run.json")) as fh:
        return json.load(fh)


def written_totals(rec: dict) -> dict:
    """count and SUM of every decimal column of the rows the run's outputs wrote, read back from the Parquet
    files (a run without checks records no bridge: docs/checks.md)."""
    import pyarrow.compute as pc
    import pyarrow.dataset as pads
    totals: dict = {}
    for output in rec.get("outputs") or []:
        table = pads.dataset(output["location"], format="parquet").to_table()
        totals["count"] = totals.get("count", 0) + table.num_rows
        for field in table.schema:
            if str(field.type).startswith("decimal") and not field.name.startswith("_"):
                value = pc.sum(table[field.name]).as_py()
                totals[f"SUM({field.name})"] = (totals.get(f"SUM({field.name})") or 0) + (value or 0)
    return {k: str(v) for k, v in totals.items()}


def main(argv=None) -> int:
    parser = rounds_parser(__doc__.splitlines()[0], pairs=5)
    args = parser.parse_args(argv)
    src = ensure_source(args.rows, args.layout)
    base = os.path.join(cache_root(), f"checks-{args.layout}-{args.rows}")
    plain = make_workspace(src, os.path.join(base, "plain"), checks=False)
    checked = make_workspace(src, os.path.join(base, "checked"), checks=True)
    out = Report()
    out(f"# checks cost: pipeline P ({args.rows:,} GL rows, {args.layout}), period {PERIOD}, "
        f"{args.pairs} pairs after {args.warmup} warm-up; whole cold processes; ratio = checked / plain")
    out(f"# target (issue 29): <= {TARGET:.2f}")
    ratios, cpu_ratios = [], []
    for n in range(args.warmup + args.pairs):
        order = [("checked", checked), ("plain", plain)] if n % 2 == 0 else [("plain", plain), ("checked", checked)]
        times, cpu = {}, {}
        for name, ws in order:
            times[name], cpu[name] = run_once(ws, os.path.join(base, f"{name}.log"))
        ratio = times["checked"] / times["plain"]
        warm = n < args.warmup
        if not warm:
            ratios.append(ratio)
            cpu_ratios.append(cpu["checked"] / cpu["plain"])
        out(f"{'warm-up' if warm else f'pair {n - args.warmup + 1}'}: checked {times['checked']:.2f} s, "
            f"plain {times['plain']:.2f} s, ratio {ratio:.3f}; CPU {cpu['checked']:.1f} s / {cpu['plain']:.1f} s "
            f"= {cpu['checked'] / cpu['plain']:.3f} (first: {order[0][0]}; load {loadavg()})")
    rec_checked, rec_plain = last_record(checked), last_record(plain)
    out()
    out("checks of the last checked run:")
    for c in rec_checked.get("checks") or []:
        out(f"  {c['name']:<22} {c['kind']:<16} {c['status']:<8} violations {c['violations']}")
    bad = [c["name"] for c in rec_checked.get("checks") or [] if c["status"] == "failed"]
    if bad:
        raise SystemExit(f"checks failed: {bad}")

    written = {name: written_totals(rec) for name, rec in (("checked", rec_checked), ("plain", rec_plain))}
    if written["checked"] != written["plain"] or not written["plain"]:
        raise SystemExit(f"the two runs wrote different rows: {written['checked']} vs {written['plain']}")
    bridged = {b["measure"]: b["output_value"] for b in rec_checked.get("bridge") or [] if b["group"] is None}
    if {m: str(bridged.get(m)) for m in written["plain"]} != written["plain"]:
        raise SystemExit(f"the checked run's bridge {bridged} is not what it wrote: {written['checked']}")
    out(f"both runs wrote the same rows (read back), as the checked run's bridge says: "
        f"{', '.join(f'{m} {v}' for m, v in sorted(written['plain'].items()))}")
    out()
    for line in pair_summary("checked / plain", ratios, cpu_ratios, TARGET):
        out(line)
    out.write(args.out or dated_result(f"checks_cost_{args.rows}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Where a checked run's extra time goes (issue 29): pipeline P with the checks of :mod:`bench.checks_cost`
added one kind at a time, whole cold processes, wall and CPU seconds (process tree, JVM included).

    python -m bench.checks_cost_attribution --rounds 2     # 1M rows, flat; output to stdout

Sides: ``plain`` (no checks: no bridge observed), ``bridge`` (the reconcile only: the bridge is observed),
``bridge+rows`` (+ the two ``expect`` and ``not_null``), ``bridge+rows+unique`` (+ ``unique`` on the input),
``all`` (+ ``balanced``: the six checks of the benchmark). A round runs every side once; the order reverses
from round to round. Times are printed, never asserted; the load average beside each run.
"""
from __future__ import annotations

import argparse
import os
import statistics

from bench import checks_cost as cc

SIDES = {
    "plain": [],
    "bridge": ["control_totals"],
    "bridge+rows": ["control_totals", "currency_known", "counts_not_negative", "amounts_present"],
    "bridge+rows+unique": ["control_totals", "currency_known", "counts_not_negative", "amounts_present",
                           "one_row_per_line"],
    "all": ["currency_known", "counts_not_negative", "one_row_per_line", "regions_balance", "amounts_present",
            "control_totals"],
}


def checks_text(names: list[str]) -> str:
    """The ``checks:`` block of :data:`bench.checks_cost.CHECKS` holding only the checks ``names``."""
    head, *items = cc.CHECKS.split("\n  - ")
    by = {item.split("\n")[0].replace("name: ", "").strip(): item for item in items}
    return head + "".join("\n  - " + by[n] for n in names) + "\n"


def main(argv=None) -> int:
    """Run the sides (see the module docstring) and print each run and the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    src = cc.ensure_source(args.rows, "flat")
    base = os.path.join(cc.cache_root(), f"checks-variants-{args.rows}")
    spaces = {}
    for side, names in SIDES.items():
        ws = cc.make_workspace(src, os.path.join(base, side.replace("+", "_")), checks=False)
        if names:
            with open(os.path.join(ws, "projects", "pipeline_p.yml"), "a") as fh:
                fh.write(checks_text(names))
        spaces[side] = ws
    results: dict[str, list] = {side: [] for side in SIDES}
    for r in range(args.rounds):
        for side in (list(SIDES) if r % 2 == 0 else list(SIDES)[::-1]):
            wall, cpu = cc.run_once(spaces[side], os.path.join(base, "runs.log"))
            results[side].append((wall, cpu))
            print(f"round {r + 1} {side:<20} wall {wall:.2f} s, CPU {cpu:.2f} s (load {cc.loadavg()})", flush=True)
    for side, runs in results.items():
        print(f"{side:<20} median wall {statistics.median(w for w, _ in runs):.2f} s, "
              f"CPU {statistics.median(c for _, c in runs):.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

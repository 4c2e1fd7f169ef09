"""The least the six checks of issue 29 can cost: pipeline P with them hand-written in PySpark
(``bench/handwritten_checks.py``) against pipeline P hand-written without them
(``bench/handwritten_source.py``), whole cold processes on source-shaped data, alternating pairs.

    python -m bench.checks_floor                        # 1M rows, flat layout, 5 pairs after 1 warm-up pair
    python -m bench.checks_floor --rows 20000 --pairs 1 --warmup 0   # a smoke run

``bench.checks_cost`` measures what declaring the checks costs a ledgerflow run (its target, issue 29 point
6: <= 1.10). This one measures the same checks written by hand, each as cheaply as the DataFrame API
allows (row rules and the output's totals observed while the rows are written, one aggregation of the
input for ``unique`` and the input's totals beside the write, one aggregation of the staged rows for
``balanced``): whatever ledgerflow does, its checked run cannot cost less than this ratio, short of work
the checks need. A fourth side, ``ledgerflow``, is ledgerflow's checked run itself (``bench.checks_cost``'s
checked workspace: pipeline P with the same six checks), so ``ledgerflow / checked`` is the target of a
checked run against the hand-written checked job (<= 1.10), measured in the same rounds. A third script, ``bridged``, also records the rest of the run's bridge as the contract
has it (the SUM of every decimal column at each point: here ``amount_reporting`` before and after each
update, removed, added and written), which a ledgerflow run with checks records. The data is the cold-process benchmark's (``src-<layout>-<rows>`` under
``$LEDGERFLOW_BENCH_DATA``); CPU time of each process and its Spark JVM is counted (subreaper, as
``bench.diff_data_cost``). After the pairs both outputs are read back: the same rows.
Output: ``bench/results/checks_floor_<rows>_<date>.txt``. Times are printed, never asserted.
"""
from __future__ import annotations

import os
import sys

from bench.common import alternating_rounds, dated_result, finish_rounds, rounds_setup
from bench.pairing import rounds_report

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
PERIOD = "2026-02"
TARGET = 1.10
STARTED_AT = "2026-11-26T08:00:00"


VARIANTS = {"plain": ("handwritten_source.py",), "checked": ("handwritten_checks.py",),
            "bridged": ("handwritten_checks.py", "--bridge")}


def command(variant: str, data: str, layout: str, out: str) -> list[str]:
    """One hand-written script's command line."""
    script, *flags = VARIANTS[variant]
    return [sys.executable, os.path.join(HERE, script), "--data", data, "--layout", layout, "--out", out,
            "--period", PERIOD, "--started-at", STARTED_AT, *flags]


def same_rows(folders: list[str]) -> str:
    """The outputs' row counts and decimal sums, read back; a difference stops the benchmark."""
    import pyarrow.compute as pc
    import pyarrow.dataset as pads
    figures = []
    for folder in folders:
        table = pads.dataset(os.path.join(folder, f"_period={PERIOD}"), format="parquet").to_table()
        figures.append((table.num_rows, *[str(pc.sum(table[c]).as_py()) for c in ("amount_local", "amount_reporting")]))
    if len(set(figures)) != 1:
        raise SystemExit(f"the two scripts wrote different rows: {figures}")
    return f"{figures[0][0]:,} rows, SUM(amount_local) {figures[0][1]}, SUM(amount_reporting) {figures[0][2]}"


def ledgerflow_command(data: str, root: str) -> list[str]:
    """ledgerflow's checked run of pipeline P, in its own copy of the checked workspace beside ``data``."""
    from bench.checks_cost import make_workspace
    ws = make_workspace(os.path.dirname(data), os.path.join(root, "ledgerflow-ws"), checks=True)
    return [sys.executable, "-m", "ledgerflow.adapters.cli", "--workspace", ws, "run", "pipeline_p", "--period", PERIOD]


def main(argv=None) -> int:
    import statistics
    args, data, root = rounds_setup(argv, __doc__.splitlines()[0], "checks-floor")
    outs = {name: os.path.join(root, name) for name in VARIANTS}
    cmds = {name: command(name, data, args.layout, outs[name]) for name in VARIANTS}
    cmds["ledgerflow"] = ledgerflow_command(data, root)
    out = rounds_report([f"# checks floor: pipeline P hand-written ({args.rows:,} GL rows, {args.layout}), period "
                         f"{PERIOD}, {args.pairs} rounds after {args.warmup} warm-up; whole cold processes; ratio = "
                         "with the six checks (checked; bridged: and the whole bridge) / without (plain)"],
                        f"# issue 29 point 6 asks <= {TARGET:.2f} of ledgerflow's checked run")
    result = alternating_rounds({name: (cmd, 0) for name, cmd in cmds.items()}, "plain", args.pairs, args.warmup,
                                root, out)
    out()
    out(f"the three scripts wrote the same rows: {same_rows(list(outs.values()))}")
    mine = [a / b for a, b in zip(result["took"]["ledgerflow"], result["took"]["checked"])]
    out(f"ledgerflow's checked run / the hand-written checked job, per round {', '.join(f'{r:.3f}' for r in mine)}; "
        f"median {statistics.median(mine):.3f} (target <= {TARGET:.2f})")
    return finish_rounds(out, result, "plain", args.out or dated_result(f"checks_floor_{args.rows}"))


if __name__ == "__main__":
    sys.exit(main())

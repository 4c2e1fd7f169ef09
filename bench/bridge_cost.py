"""What the run's bridge costs, design by design: whole cold ``ledgerflow run pipeline_p --period 2026-02``
processes on source-shaped data (the cold-process benchmark's), alternating, round by round.

    python -m bench.bridge_cost --rows 10000000 --layout flat --pairs 1           # every design, one round
    python -m bench.bridge_cost --rows 1000000 --layout folders --only per_point --pairs 5   # the shipped one

The designs (``--only`` picks some; ``off`` is always timed, the base of every ratio):

- ``off``: ``bridge: off`` in ledgerflow.yml, no metrics at all;
- ``per_point``: the shipped design, ``bridge: always`` (the default): one observation of the rows at the end of
  the stage an output reads, every figure of the bridge (the value at the end and each operation's change)
  an aggregate of the bookkeeping columns those rows carry;
- ``under_write``, ``limbs``, ``write_scan``, ``counts_only``, ``one_count``: the variants of
  ``bench/bridge_variants.py`` (its docstring says what each observes), run through that module;
- ``before`` (with ``--before DIR``): the ledgerflow package in ``DIR`` (a folder holding ``ledgerflow/``, put
  first on ``PYTHONPATH``), ``bridge: always``: an earlier design of the bridge against the shipped one;
- with ``--floor``, two hand-written PySpark scripts (no ledgerflow): ``hand`` (``bench/handwritten_source.py``,
  no bridge) and ``hand_bridge`` (``bench/handwritten_bridge.py``, the whole bridge observed where each figure
  is cheapest): ``hand_bridge / hand`` is the least the bridge can cost, printed beside ``per_point / off``,
  and the hand-written bridge's figures are compared with ledgerflow's record.

Each design runs in its own copy of the workspace (``<cache>/bridge-<layout>-<rows>/<design>``; the data
folder shared, read only), so no two share a run store or outputs. After the rounds, the last run of each
design says what its record holds: the bridge complete (every operation's change), or what it lacks.
Raw output: ``bench/results/bridge_cost_<rows>_<layout>_<date>.txt`` (or ``--out``). Times are printed,
never asserted.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from bench.common import alternating_rounds, cache_root, dated_result, ensure_source, finish_rounds, rounds_parser
from bench.pairing import machine, rounds_report

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PERIOD = "2026-02"
DESIGNS = ("off", "per_point", "under_write", "limbs", "write_scan", "counts_only", "one_count")


def _workspace(src: str, root: str, design: str) -> str:
    """A copy of the source-shaped workspace ``src`` for ``design`` (its own run store and outputs)."""
    ws = os.path.join(root, design)
    os.makedirs(ws, exist_ok=True)
    for name in ("datasets", "projects"):
        if not os.path.exists(os.path.join(ws, name)):
            subprocess.run(["cp", "-r", os.path.join(src, name), ws], check=True)
    if not os.path.exists(os.path.join(ws, "data")):
        os.symlink(os.path.join(src, "data"), os.path.join(ws, "data"))
    with open(os.path.join(src, "ledgerflow.yml")) as fh:
        text = re.sub(r"(?m)^bridge:.*\n?", "", fh.read())
    with open(os.path.join(ws, "ledgerflow.yml"), "w") as fh:
        fh.write(text.rstrip("\n") + "\n" + ("bridge: \"off\"\n" if design == "off" else "bridge: always\n"))
    return ws


HAND = {"hand": "handwritten_source.py", "hand_bridge": "handwritten_bridge.py"}
STARTED_AT = "2026-11-26T08:00:00"


def _command(design: str, ws: str, before: str = "", layout: str = "flat") -> list[str]:
    if design in HAND:
        return [sys.executable, os.path.join(HERE, HAND[design]), "--data", os.path.join(ws, "data"), "--layout",
                layout, "--out", os.path.join(ws, "out"),
                "--period", PERIOD, "--started-at", STARTED_AT]
    args = ["--workspace", ws, "run", "pipeline_p", "--period", PERIOD]
    if design == "before":
        return ["env", f"PYTHONPATH={before}", sys.executable, "-m", "ledgerflow.adapters.cli", *args]
    if design in ("off", "per_point"):
        return [sys.executable, "-m", "ledgerflow.adapters.cli", *args]
    return [sys.executable, os.path.join(HERE, "bridge_variants.py"), design, *args]


def _bridge(ws: str, stdout: str):
    """The bridge recorded by the run whose output is ``stdout`` (None: no run id in it)."""
    found = re.search(r"Completed run (\S+)", stdout)
    if not found:
        return None
    with open(os.path.join(ws, "target", "runs", found.group(1), "run.json")) as fh:
        return json.load(fh).get("bridge") or []


def _holds(bridge, shipped) -> str:
    """What ``bridge`` holds, against the shipped design's ``shipped``."""
    if bridge is None:
        return "no run id in its output"
    if not bridge:
        return "no bridge"
    lacking = [r for r in bridge if r.get("not_measured")]
    if lacking:
        return f"{len(lacking)} of {len(bridge)} measures not measured (the value at the end only, not recorded)"
    same = shipped is not None and [{k: v for k, v in r.items()} for r in bridge] == shipped
    return (f"{len(bridge)} measures, every operation's change" +
            ("" if same else ": figures differ from the shipped design's (cost only)"))


def _hand_same(stdout: str, shipped) -> str:
    """Whether the hand-written bridge printed in ``stdout`` has the figures of ledgerflow's ``shipped`` record."""
    found = re.search(r"^bridge (.*)$", stdout, re.M)
    if not found or not shipped:
        return "hand_bridge: nothing to compare (no bridge printed, or no ledgerflow record)"
    hand = json.loads(found.group(1))
    ours = {r["measure"]: {"input": str(r["input"]), **{str(c["seq"]): str(c["change"]) for c in r["changes"]},
                           "output": str(r["output_value"])} for r in shipped if r.get("group") is None}
    from decimal import Decimal
    differ = [(m, k) for m, figures in hand.items() for k, v in figures.items()
              if m not in ours or Decimal(ours[m].get(k, "NaN")) != Decimal(v)]
    return ("hand_bridge: every figure the same as ledgerflow's record" if not differ
            else f"hand_bridge: figures differ from ledgerflow's record at {differ}")


def _floor_lines(result: dict) -> list[str]:
    """The rounds' ratios hand_bridge / hand beside per_point / off, and their medians."""
    import statistics
    took = result["took"]
    hand = [b / a for a, b in zip(took["hand"], took["hand_bridge"])]
    ours = [b / a for a, b in zip(took["off"], took["per_point"])] if "per_point" in took else []
    lines = [f"floor: hand_bridge / hand per round {', '.join(f'{r:.3f}' for r in hand)}; median "
             f"{statistics.median(hand):.3f}"]
    if ours:
        lines.append(f"ledgerflow: per_point / off per round {', '.join(f'{r:.3f}' for r in ours)}; median "
                     f"{statistics.median(ours):.3f}; per_point / hand_bridge median "
                     f"{statistics.median([b / a for a, b in zip(took['hand_bridge'], took['per_point'])]):.3f}")
    return lines


def main(argv=None) -> int:
    parser = rounds_parser(__doc__.splitlines()[0], pairs=1)
    parser.add_argument("--only", action="append", choices=DESIGNS[1:], help="the designs to time beside off")
    parser.add_argument("--before", default="", help="time this ledgerflow package too, as the design 'before'")
    parser.add_argument("--floor", action="store_true", help="time the hand-written scripts too (hand, hand_bridge)")
    args = parser.parse_args(argv)
    src = ensure_source(args.rows, args.layout)
    root = os.path.join(cache_root(), f"bridge-{args.layout}-{args.rows}")
    designs = ["off", *(args.only or DESIGNS[1:]), *(["before"] if args.before else []),
               *(HAND if args.floor else [])]
    cmds = {d: (_command(d, _workspace(src, root, d), args.before, args.layout), 0) for d in designs}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    out = rounds_report([f"# the bridge's cost by design (bench/bridge_cost.py), {args.rows:,} GL rows, layout "
                         f"{args.layout}, pipeline_p --period {PERIOD}; commit {commit}",
                         f"# {machine('each process local[2]')}"],
                        f"# {args.pairs} rounds after {args.warmup} warm-up, base off")
    result = alternating_rounds(cmds, "off", args.pairs, args.warmup, root, out)
    bridges = {d: _bridge(os.path.join(root, d), result["stdout"][d]) for d in designs if d not in HAND}
    for design in bridges:
        out(f"{design}: {_holds(bridges[design], bridges.get('per_point'))}")
    if args.floor:
        out(_hand_same(result["stdout"]["hand_bridge"], bridges.get("per_point")))
        for line in _floor_lines(result):
            out(line)
    return finish_rounds(out, result, "off", args.out or dated_result(f"bridge_cost_{args.rows}_{args.layout}"))


if __name__ == "__main__":
    sys.exit(main())

"""What OpenLineage events cost a run (issue 47): the whole cold ``ledgerflow run pipeline_p`` process with events
configured (the client's ``file`` transport) against the same process without, alternating, on the cold-run
benchmark's source-shaped data (``bench/cold_process.py``). Target: within 3%.

    python -m bench.events_cost                      # 1M rows, flat, 3 pairs after 1 warm-up pair
    python -m bench.events_cost --rows 20000 --pairs 1 --warmup 0   # a quick look

Both sides run in the one workspace; ``openlineage:`` is added to its ``ledgerflow.yml`` before each run with
events and taken out before each run without. After the pairs, the event file must hold a START and a COMPLETE
per run with events. Raw output: ``bench/results/events_cost_<rows>_<date>.txt``. Times are printed, never
asserted.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile

from bench.common import dated_result, loadavg
from bench.cold_process import ensure_data, ledgerflow_cmd, source_root, timed
from bench.pairing import ledgerflow_base, started_report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--layout", default="flat")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--driver-memory", default=os.environ.get("LEDGERFLOW_BENCH_DRIVER_MEMORY", "4g"))
    args = parser.parse_args(argv)
    log = started_report("OpenLineage events' cost", False, args.driver_memory)
    ensure_data(args.rows, [args.layout], log)
    ws = source_root(args.rows, args.layout)
    config = os.path.join(ws, "ledgerflow.yml")
    plain = open(config).read()
    events = os.path.join(tempfile.mkdtemp(prefix="ledgerflow-events-"), "events.jsonl")
    with_events = plain + f"openlineage:\n  transport: {{type: file, log_file_path: {events}, append: true}}\n"
    cmd = ledgerflow_cmd(ledgerflow_base(None), ws, args.driver_memory)
    log_path = os.path.join(os.path.dirname(events), "stderr.txt")
    ratios, rows = [], []
    try:
        for k in range(args.warmup + args.pairs):
            took = {}
            for side in (["events", "none"] if k % 2 == 0 else ["none", "events"]):
                with open(config, "w") as fh:
                    fh.write(with_events if side == "events" else plain)
                took[side] = timed(cmd, log_path, ws)[0]
            if k < args.warmup:
                log(f"warm-up pair {k + 1}: events {took['events']:.2f} s, none {took['none']:.2f} s")
                continue
            ratios.append(took["events"] / took["none"])
            rows.append(took)
            log(f"pair {k - args.warmup + 1}: events {took['events']:.2f} s, none {took['none']:.2f} s, "
                f"ratio {ratios[-1]:.3f} (load {loadavg()})")
    finally:
        with open(config, "w") as fh:
            fh.write(plain)
    kinds = [json.loads(line)["eventType"] for line in open(events)]
    runs = args.warmup + args.pairs
    log(f"events written: {len(kinds)} ({kinds.count('START')} START, {kinds.count('COMPLETE')} COMPLETE) for {runs} "
        "runs with events")
    log(f"median ratio events / none: {statistics.median(ratios):.3f} over {len(ratios)} pairs (target: within 3%, "
        "at most 1.03)")
    path = dated_result(f"events_cost_{args.rows}")
    with open(path, "w") as fh:
        fh.write("\n".join(log.lines) + "\n")
    print(f"written to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

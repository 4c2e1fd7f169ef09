"""What ``ledgerflow promote`` costs at scale (issue 46 point 3): 50 projects x 36 periods of path outputs promoted
from ``dev`` to prod as one whole process, 0 bytes of data copied; timed against the least work such a promotion
takes, written by hand (``bench/promotion_by_hand.py``), alternating.

    python -m bench.promotion_scale                       # 50 projects x 36 periods, 3 pairs
    python -m bench.promotion_scale --projects 5 --periods 3 --repeats 1   # a quick look
    TMPDIR=/dev/shm python -m bench.promotion_scale                 # on tmpfs: each side's own work, steadily
    python -m bench.promotion_scale --shape padded        # dev's records mostly one string (see below)

The target (decided 2026-12-07, BENCHMARKS.md "Promotion"): on records shaped as a real run's (the data a user
promotes) and on the disk the workspace lives on, under 1 s where the least work leaves room for it, else at most
1.10 x the checked floor (on this machine's disk that floor alone takes 2 to 3 s). tmpfs and padded records are
views of the processor's work alone, reported beside.

The workspaces are made in the temporary folder (``TMPDIR``). On a disk, making a folder or a file costs what the
disk costs at that minute (on an ext4 disk mounted with ``discard``, up to ten times a link, varying from run to
run), the same for every side; on tmpfs that cost is taken out and what is left, each side's own work, is steady
from run to run.

The workspace is :func:`bench.status_scale.build`'s (N output-only projects, one completed prod run per
project-period), plus, per project-period, a prod version and a dev version of the output partition (one CSV
file of 200 rows each, shown by real folders of hard links as runs show them) and a completed dev run whose record
holds its commit journal and output, as a run writes them (no Spark). A record weighs about what a real one does
(22 KB); by default (``--shape lineage``) dev's records are shaped as a real run's, most of their weight an
output's column lineage of about a thousand small objects (25 columns, 9 inputs each, as the sample project's runs
record), which is what reading and writing a record costs most in a real promotion (both sides read and write
every record); with ``--shape padded`` most of it is one string (a padding, :mod:`bench.status_scale`'s), which
JSON reads and writes at the speed of copying it, leaving the file-system calls and the checks to compare. Each repeat builds five such workspaces
afresh, then times, in fresh processes and in alternating order, ``python -m ledgerflow.adapters.cli promote --all
--from dev --period FIRST..LAST`` on one, ``python bench/promotion_by_hand.py`` on another and the same with
``--recorded`` (the journal and records too) on a third, and compares the
output folders before and after: the bytes of distinct files (by inode) and whether every prod partition now
holds the very files (same inodes) of dev's version. A fourth side, ``--checked``, adds to the recorded one the
checks a promotion cannot skip without risking to replace or delete what it did not make (the floor the target is
measured against); a fifth, ``--checked --orjson``, writes its records' texts with orjson, as ``ledgerflow promote``
does (the same floor with the same JSON library: reported beside). Before each side is timed, every file written so far is flushed to disk (``os.sync``), so
that no side pays for writing back the workspaces just built or another side's writes. ledgerflow's modules are
compiled to byte code first, as an installed package's are (an editable install under ``PYTHONDONTWRITEBYTECODE``
would compile every edited module at each start).

Raw output: ``bench/results/promotion_scale_<projects>x<periods>_<date>.txt``. Times are printed, never asserted.
"""
from __future__ import annotations

import argparse
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
from bench.status_scale import build as build_workspace, months  # noqa: E402


def _version(root: Path, period: str, run_id: str) -> str:
    """A version folder of ``root``'s partition ``period`` written by ``run_id``: one CSV part file."""
    folder = root / ".lf_versions" / f"_period={period}" / run_id
    folder.mkdir(parents=True)
    (folder / f"part-00000-{run_id}.csv").write_text(
        "code,amount\n" + "".join(f"A{k},{k}.00\n" for k in range(200)))
    return str(folder)


def lineage(columns: int = 25) -> dict:
    """An output's column lineage shaped as a real run records it: per column, the input columns it is computed
    from, joined on and filtered by (nine per column here)."""
    filters = (("rates", "_period_from"), ("rates", "_period_to"), ("gl", "_deleted"), ("gl", "_period"))
    reads = ([("rates", c, "join") for c in ("from_currency", "rate_type", "to_currency")]
             + [("gl", "currency", "join")] + [(d, c, "filter") for d, c in filters])
    return {"columns": [{"output": 1, "column": f"column_{k:02d}",
                         "inputs": [{"dataset": "gl", "column": f"column_{k:02d}", "kind": "identity"}]
                         + [{"dataset": d, "column": c, "kind": kind} for d, c, kind in reads]}
                        for k in range(columns)]}


def build(root: Path, n_projects: int, periods: list[str], shape: str = "padded") -> None:
    """The workspace, prod's and dev's partitions, and dev's run records (see the module docstring; ``shape``:
    "padded" or "lineage")."""
    from ledgerflow.adapters.commit import shown
    from ledgerflow.adapters.layout.partition_paths import partition_link
    from ledgerflow.adapters.store.published import stored_inputs
    build_workspace(root, n_projects, periods)
    rows = []
    with sqlite3.connect(root / ".ledgerflow" / "state.db") as conn:
        prod_runs = {(r[0], r[1]): (r[2], json.loads(r[3])) for r in conn.execute(
            "SELECT project_name, period, run_id, record FROM runs WHERE run_id LIKE '%-new'")}
    for (project, period), (prod_id, rec) in sorted(prod_runs.items()):
        out = root / "out" / project
        shown.show(partition_link(str(out), period), _version(out, period, prod_id))
        dev_id = f"{project}-{period}-dev"
        version = _version(out, period, dev_id)
        link = partition_link(str(out), period, "dev")
        os.makedirs(os.path.dirname(link), exist_ok=True)
        shown.show(link, version)
        dev = {**rec, "run_id": dev_id, "env": "dev", "finished_at": "2026-03-01T00:00:00.000",
               "outputs": [{"operation_seq": 1, "location": link, "rows": 200, "registered_dataset": None,
                            "registered_version": None}],
               "commit": {"partitions": [{"link": link, "staged": version, "previous": None}], "elsewhere": []}}
        if shape == "lineage":
            dev.pop("padding", None)
            dev["outputs"][0]["lineage"] = lineage()
        rows.append((dev_id, rec["project"]["id"], project, period, "completed", dev["finished_at"],
                     dev["finished_at"], json.dumps(dev), *stored_inputs(dev), "dev"))
    with sqlite3.connect(root / ".ledgerflow" / "state.db") as conn:
        conn.executemany("INSERT INTO runs (run_id, project_id, project_name, period, status, started_at, "
                         "finished_at, record, inputs, input_files, env) VALUES (?,?,?,?,?,?,?,?,?,?,?)", rows)


def footprint(folder: Path) -> tuple[int, int]:
    """(bytes, files) of the distinct files under ``folder`` (hard links counted once)."""
    seen: dict[tuple[int, int], int] = {}
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            st = os.lstat(os.path.join(dirpath, name))
            seen[(st.st_dev, st.st_ino)] = st.st_size
    return sum(seen.values()), len(seen)


def same_files(out: Path, periods: list[str]) -> bool:
    """Whether every prod partition under ``out`` holds exactly the files (inodes) of dev's partition."""
    for project in sorted(os.listdir(out)):
        for p in periods:
            prod, dev = out / project / f"_period={p}", out / project / ".lf_envs" / "dev" / f"_period={p}"
            inodes = [{f.name: f.stat().st_ino for f in d.iterdir() if f.name.startswith("part-")} for d in (prod, dev)]
            if inodes[0] != inodes[1] or not inodes[0]:
                return False
    return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--projects", type=int, default=50)
    ap.add_argument("--periods", type=int, default=36)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--shape", choices=("padded", "lineage"), default="lineage",
                    help="dev's records: shaped as a real run's (column lineage), or mostly one padding string")
    args = ap.parse_args()
    periods = months(args.periods)
    n = args.projects * args.periods
    import datetime
    from bench.common import loadavg
    from bench.pairing import machine
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                            text=True).stdout.strip()
    lines = [f"# {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, commit {commit}; "
             f"{machine('no Spark: promote starts no JVM')}; load average {loadavg()}",
             f"promote --all --from dev over {args.projects} projects x {args.periods} periods ({n} partitions), "
             f"each a fresh process on a freshly built workspace; dev's records {args.shape}"]
    import compileall
    for package in ("adapters", "compiler", "templates"):
        compileall.compile_dir(str(REPO / package), quiet=1)
    times, floors, recorded, checked, fast = [], [], [], [], []
    sides = ["ledgerflow", "by hand", "recorded", "checked", "checked orjson"]
    for k in range(args.repeats):
        with tempfile.TemporaryDirectory() as tmp:
            roots = {"ledgerflow": Path(tmp) / "ws", "by hand": Path(tmp) / "hand", "recorded": Path(tmp) / "rec",
                     "checked": Path(tmp) / "chk", "checked orjson": Path(tmp) / "chko"}
            for root in roots.values():
                root.mkdir()
                build(root, args.projects, periods, args.shape)
            before = footprint(roots["ledgerflow"] / "out")
            took = {}
            for who in sides[k % len(sides):] + sides[:k % len(sides)]:  # each side first in turn
                root = roots[who]
                command = ([sys.executable, "-m", "ledgerflow.adapters.cli", "--workspace", str(root), "promote",
                            "--all", "--from", "dev", "--period", f"{periods[0]}..{periods[-1]}"]
                           if who == "ledgerflow" else [sys.executable, str(REPO / "bench" / "promotion_by_hand.py"),
                                                        str(root)] + {"recorded": ["--recorded"],
                                                                      "checked": ["--checked"],
                                                                      "checked orjson": ["--checked", "--orjson"]}
                           .get(who, []))
                os.sync()  # the writes of building the workspaces (and of the side before) are not timed here
                clock = time.perf_counter()
                proc = subprocess.run(command, capture_output=True, text=True)
                took[who] = time.perf_counter() - clock
                if proc.returncode != 0:
                    raise SystemExit(proc.stdout + proc.stderr)
                if who == "ledgerflow":
                    stdout = proc.stdout.splitlines()[0]
            times.append(took["ledgerflow"])
            floors.append(took["by hand"])
            recorded.append(took["recorded"])
            checked.append(took["checked"])
            fast.append(took["checked orjson"])
            after = footprint(roots["ledgerflow"] / "out")
            journal = next((roots["ledgerflow"] / "target" / "promotions").glob("*.json"))
            state = json.loads(journal.read_text())
            lines.append(f"pair {k + 1}: ledgerflow {took['ledgerflow']:.2f} s, by hand {took['by hand']:.2f} s "
                         f"(ratio {took['ledgerflow'] / took['by hand']:.2f}), by hand with the journal and records "
                         f"{took['recorded']:.2f} s (ratio {took['ledgerflow'] / took['recorded']:.2f}), and with the checks "
                         f"{took['checked']:.2f} s (ratio {took['ledgerflow'] / took['checked']:.2f}), and its records "
                         f"written by orjson {took['checked orjson']:.2f} s (ratio "
                         f"{took['ledgerflow'] / took['checked orjson']:.2f}); output files before "
                         f"{before[1]} ({before[0]:,} bytes), after {after[1]} ({after[0]:,} bytes): "
                         f"{after[0] - before[0]:+,} bytes; every prod partition holds dev's files (same inodes): "
                         f"{same_files(roots['ledgerflow'] / 'out', periods)} (by hand: "
                         f"{same_files(roots['by hand'] / 'out', periods)}, recorded: "
                         f"{same_files(roots['recorded'] / 'out', periods)}, checked: "
                         f"{same_files(roots['checked'] / 'out', periods)}, checked orjson: "
                         f"{same_files(roots['checked orjson'] / 'out', periods)}); journal {state['status']}, "
                         f"{len(state['commit']['partitions'])} entries, {len(state['retired'])} versions retired; "
                         f"stdout: {stdout}")
    ratios = [t / f for t, f in zip(times, floors)]
    ratios_recorded = [t / f for t, f in zip(times, recorded)]
    ratios_checked = [t / f for t, f in zip(times, checked)]
    ratios_fast = [t / f for t, f in zip(times, fast)]
    lines.append(f"ledgerflow median {statistics.median(times):.2f} s, min {min(times):.2f} s (target: under 1 s, or at most "
                 f"1.10 x the checked floor where the floor itself takes 1 s or more); "
                 f"by hand median {statistics.median(floors):.2f} s; ratio median {statistics.median(ratios):.2f} "
                 f"(floor target: at most 1.10); by hand with the journal and records median "
                 f"{statistics.median(recorded):.2f} s, ratio median {statistics.median(ratios_recorded):.2f}; "
                 f"with the checks too median {statistics.median(checked):.2f} s, ratio median "
                 f"{statistics.median(ratios_checked):.2f} (restated target: at most 1.10); and its records written by "
                 f"orjson median {statistics.median(fast):.2f} s, ratio median {statistics.median(ratios_fast):.2f}")
    text = "\n".join(lines)
    print(text)
    path = dated_result(f"promotion_scale_{args.projects}x{args.periods}"
                        + ("" if args.shape == "padded" else f"_{args.shape}"))
    Path(path).write_text(text + "\n")
    print(f"written to {path}")


if __name__ == "__main__":
    main()

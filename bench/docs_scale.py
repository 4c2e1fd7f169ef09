"""What the docs site costs at scale (issue 32 point 3): the 500-operation generated project plus 50 runs.
Targets: the site written in under 5 s, its first page interactive in headless Chromium in under 1.5 s.

    python -m bench.docs_scale                 # 3 timed repeats of each
    python -m bench.docs_scale --repeats 1     # a quick look

The workspace is :func:`bench.projectgen.write_chain_workspace`'s ``chain_500`` (500 dependent updates and an
output; the one compile_speed times) in a temporary folder. Its 50 runs (one per month, 2022-03 .. 2026-04, and
two of them closed) are saved through the run store's own API (``RunStore.save_run``, ``set_closed``): running
them would need Spark and the data, and the site reads only what the store holds. Each record is a real run
record of the sample (tests/fixtures/docs_site/run_journal_controls.json) made this project's and period's: its
statements and their operations from the project's compiled statements, seconds per statement, the output's
rows, the project's YAML as its snapshot and the output's column lineage as ``ledgerflow lineage`` gives it.

Measured:

- writing the site: the whole cold ``ledgerflow docs`` process (imports, workspace load, compile, lineage, the
  store read, writing every file), wall time;
- the first page interactive: in Debian's Chromium under Playwright (launched once, not timed), from the start
  of the navigation to ``index.html`` until the graph is laid out and drawn (``LF_READY_AT``, read in the page:
  ms since its navigation started), and until a click on the project's node was handled (its page's navigation
  committed; wall time from before ``goto``, so it includes Playwright's round trips);
- for information: the 500-operation project's page until drawn (its SQL highlighted), and the sizes of the
  data scripts (each page loads only its own).

Raw output: ``bench/results/docs_scale_<date>.txt``. Times are printed, never asserted.
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

RECORD = REPO / "tests" / "fixtures" / "docs_site" / "run_journal_controls.json"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]  # a container's small /dev/shm


def months(n: int, start: int = 2022 * 12 + 2) -> list[tuple[str, str, str]]:
    """``n`` months (identifier, first day, last day) from 2022-03 on."""
    import calendar
    out = []
    for k in range(start, start + n):
        y, m = divmod(k, 12)
        out.append((f"{y}-{m + 1:02d}", f"{y}-{m + 1:02d}-01", f"{y}-{m + 1:02d}-{calendar.monthrange(y, m + 1)[1]}"))
    return out


def build(root: Path, runs: int) -> str:
    """The workspace and its run store; returns the project's name."""
    from bench.projectgen import write_chain_workspace
    from ledgerflow.adapters.store.runstore import RunStore
    from ledgerflow.compiler.compile import compile_project
    from ledgerflow.compiler.lineage import plan_lineage
    from ledgerflow.compiler.lineage_formats import to_json
    from ledgerflow.compiler.workspace import load_workspace
    [name] = write_chain_workspace(str(root), [500])
    ws = load_workspace(str(root))
    project = ws.find_project(name)
    compiled = compile_project(ws, project)
    lineage = to_json(plan_lineage(compiled.plan))
    base = json.loads(RECORD.read_text())
    store = RunStore(str(root))
    for k, (period, start, end) in enumerate(months(runs)):
        rec = copy.deepcopy(base)
        run_id = str(uuid.UUID(int=(0x01A2 << 112) + k))
        statements = [{"name": "load_inputs", "kind": "load", "operations": [], "seconds": 2.1 + k % 3 * 0.1,
                       "spark_jobs": 0, "spark_stages": 0, "spark_tasks": 0}]
        for i, s in enumerate(compiled.statements):
            statements.append({"name": s.name, "kind": s.kind, "operations": list(getattr(s, "operations", []) or []),
                               "seconds": round(0.4 + (i % 5) * 0.15 + k * 0.01, 3), "spark_jobs": 1,
                               "spark_stages": 1, "spark_tasks": 2, "materialised": s.kind == "stage"})
        rows = 1000 + 10 * k
        rec.update({
            "run_id": run_id, "batch_id": None, "status": "completed" if k % 10 != 7 else "failed",
            "error": None if k % 10 != 7 else "SPARK-001 the executor was lost; nothing was published",
            "project": {"id": project.id, "name": name, "version": 1},
            "project_snapshot": project.raw, "datasets_snapshot": [d.raw for d in ws.datasets if d.raw],
            "period": {"identifier": period, "start": start, "end": end},
            "started_at": f"{start}T02:00:00.000", "run_started_at": f"{start}T02:00:00.000",
            "finished_at": f"{start}T02:01:10.000", "sql_sha256": compiled.sha256(),
            "outputs": [{"operation_seq": 501, "location": f"{root}/target/out/chain_500/_period={period}",
                         "rows": rows, "registered_dataset": None, "registered_version": None, "lineage": lineage}],
            "checks": [], "bridge": [],
            "timings": {"total_s": 70.0, "setup_s": 20.0, "load_inputs_s": 2.1, "statements": statements,
                        "outputs": [{"operation_seq": 501, "name": "write", "seconds": 5.5, "spark_jobs": 2,
                                     "spark_stages": 2, "spark_tasks": 4}], "spark_jobs": len(statements) + 1,
                        "job_counts": "spark_status_tracker"}})
        rec["resolver_snapshot"]["join_datasets"] = []
        rec["resolver_snapshot"]["input_locations"] = [f"{root}/data/gl/v1"]
        store.save_run(rec)
    store.set_closed([(name, p) for p, _, _ in months(2)], "close", "bench", "2026-05-01T09:00:00Z", "reported")
    return name


def write_site(root: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system) of one cold ``ledgerflow docs`` process. The CPU time says what
    the wall time would be on an idle machine; on a loaded one the wall time waits for a core."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "ledgerflow.adapters.cli", "--workspace", str(root), "docs"],
                          capture_output=True, text=True)
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"ledgerflow docs failed: {done.stdout}{done.stderr}")
    return took, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def wait_ready(page) -> None:
    """Poll ``window.LF_READY`` every 5 ms (the site's Content-Security-Policy forbids the eval that
    ``wait_for_function`` needs)."""
    while page.evaluate("window.LF_READY === true") is not True:
        time.sleep(0.005)


def interactive(browser, site: Path, project: str) -> tuple[float, float, float]:
    """(ms until the graph is drawn, ms until a click on the project's node was handled, ms until the project's
    page is drawn) in a fresh page."""
    from ledgerflow.adapters.docs_site import ids
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    problems = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("requestfailed", lambda r: problems.append(r.url))
    start = time.perf_counter()
    page.goto((site / "index.html").as_uri(), wait_until="commit")
    wait_ready(page)
    drawn = page.evaluate("window.LF_READY_AT")
    box = page.locator("#graph").bounding_box()
    x, y = page.evaluate(f"(() => {{ const p = LF_CY.getElementById({json.dumps('project:' + project)})"
                         ".renderedPosition(); return [p.x, p.y]; })()")
    page.mouse.click(box["x"] + x, box["y"] + y)
    page.wait_for_url("**/" + ids.project_page(project), wait_until="commit")
    clicked = (time.perf_counter() - start) * 1000
    wait_ready(page)
    project_drawn = page.evaluate("performance.now()")
    page.close()
    if problems:
        raise SystemExit(f"the page reported problems: {problems}")
    return drawn, clicked, project_drawn


def sizes(site: Path) -> tuple[int, int, str, int]:
    """(bytes of the index's data, bytes of the largest data script, its name, bytes of the whole site)."""
    data = sorted((p.stat().st_size, str(p.relative_to(site))) for p in (site / "data").rglob("*.js"))
    total = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
    return (site / "data" / "index.js").stat().st_size, data[-1][0], data[-1][1], total


def main() -> None:
    """Build, time, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright
    with tempfile.TemporaryDirectory(prefix="lf-docs-scale-") as tmp:
        root = Path(tmp)
        t = time.perf_counter()
        project = build(root, args.runs)
        print(f"workspace: 1 project of 500 operations (+1 output), {args.runs} runs in the run store "
              f"(built in {time.perf_counter() - t:.1f} s, not timed below); {os.cpu_count()} cores, "
              f"load average {os.getloadavg()[0]:.2f}")
        timed = [write_site(root) for _ in range(args.repeats)]
        writes, cpu = [t[0] for t in timed], [t[1] for t in timed]
        site = root / "target" / "docs"
        pages = len(list(site.rglob("*.html")))
        print(f"ledgerflow docs, whole cold process: median {statistics.median(writes):.2f} s, max {max(writes):.2f} s "
              f"(target < 5 s; {pages} pages) [{', '.join(f'{w:.2f}' for w in writes)}]; CPU (user + system) "
              f"median {statistics.median(cpu):.2f} s; load average now {os.getloadavg()[0]:.2f}")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            interactive(browser, site, project)  # the browser's own first page (its caches), not counted
            found = [interactive(browser, site, project) for _ in range(args.repeats)]
            browser.close()
        drawn = [f[0] for f in found]
        clicked = [f[1] for f in found]
        print(f"first page, navigation -> graph drawn (in page): median {statistics.median(drawn):.0f} ms, "
              f"max {max(drawn):.0f} ms [{', '.join(f'{d:.0f}' for d in drawn)}]")
        print(f"first page, navigation -> graph drawn -> click on the project handled (wall, with Playwright's round "
              f"trips): median {statistics.median(clicked):.0f} ms, max {max(clicked):.0f} ms (target < 1500 ms) "
              f"[{', '.join(f'{c:.0f}' for c in clicked)}]")
        print(f"the 500-operation project's page, navigation -> drawn (SQL highlighted): median "
              f"{statistics.median(f[2] for f in found):.0f} ms")
        index, biggest, name, total = sizes(site)
        print(f"data scripts: the first page's {index / 1024:.1f} kB; the largest {biggest / 1024:.0f} kB ({name}); "
              f"the whole site {total / 1024 / 1024:.1f} MB")


if __name__ == "__main__":
    main()

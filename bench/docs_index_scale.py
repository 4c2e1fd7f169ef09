"""The docs site's first page at 1,000 projects (issue 48 point 2): interactive in Chromium in under 2 s.

    python -m bench.docs_index_scale                  # both shapes of bench.workspace_scale, N = 1000, 3 repeats
    python -m bench.docs_index_scale --sizes 300 --repeats 1

For each shape (``chain``: 1,000 projects one after the other; ``wide``: 50 entities x 20 steps plus 20
consolidations, see :mod:`bench.workspace_scale`), the site is written once by a cold ``ledgerflow docs`` (timed,
for information), then in Debian's Chromium under Playwright (launched once, its first page not counted), each
repeat in a fresh page:

- navigation -> graph drawn: from the start of the navigation to ``index.html`` until every node is drawn at the
  positions the site carries (``LF_READY_AT``, read in the page);
- -> a search handled: the last project's name typed in the search box until it is listed (wall,
  with Playwright's round trips);
- -> Enter opens it: until the project's page is drawn (wall).

Raw output: ``bench/results/docs_index_scale_<date>.txt``. Times are printed, never asserted.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench.docs_scale import CHROMIUM_ARGS, wait_ready, write_site
from bench.workspace_scale import chain, wide

REPO = Path(__file__).resolve().parent.parent


def first_page(browser, site: Path, last: str) -> tuple[float, float, float, int]:
    """(ms until drawn, ms until the search listed ``last``, ms until its page was drawn, nodes drawn)."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    start = time.perf_counter()
    page.goto((site / "index.html").as_uri(), wait_until="commit")
    wait_ready(page)
    drawn = page.evaluate("window.LF_READY_AT")
    nodes = int(page.locator("#graph").get_attribute("data-nodes"))
    mark = time.perf_counter()
    page.fill("#search", last)
    deadline = time.monotonic() + 60
    while last not in page.locator("#search-results a").all_inner_texts():
        if time.monotonic() > deadline:
            raise SystemExit(f"the search never listed {last}")
        time.sleep(0.005)
    searched = (time.perf_counter() - mark) * 1000
    mark = time.perf_counter()
    page.press("#search", "Enter")
    page.wait_for_url(f"**/project/{last}*", wait_until="commit")
    wait_ready(page)
    opened = (time.perf_counter() - mark) * 1000
    page.close()
    if problems:
        raise SystemExit(f"the page reported problems: {problems}")
    return drawn, searched, opened, nodes


def main() -> None:
    """Build, time, print, keep."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    lines = [f"# {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, commit {commit}; {platform.system()} "
             f"{platform.machine()}, {os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f}",
             "shape  N  nodes  docs_s  drawn_ms  search_ms  open_ms  (medians of the repeats)"]
    print(lines[0])
    with tempfile.TemporaryDirectory(prefix="lf-docs-index-") as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        for n in args.sizes:
            for shape, build in (("chain", chain), ("wide", wide)):
                root = Path(tmp) / f"{shape}{n}"
                last = build(root, n)
                took, _cpu = write_site(root)
                site = root / "target" / "docs"
                first_page(browser, site, last)  # the browser's caches: not counted
                found = [first_page(browser, site, last) for _ in range(args.repeats)]
                line = (f"{shape}  {n}  {found[0][3]}  {took:.2f}  {statistics.median(f[0] for f in found):.0f}  "
                        f"{statistics.median(f[1] for f in found):.0f}  {statistics.median(f[2] for f in found):.0f}")
                lines.append(line)
                print(line, flush=True)
        browser.close()
    out = REPO / "bench" / "results" / f"docs_index_scale_{datetime.date.today():%Y-%m-%d}.txt"
    out.write_text("\n".join(lines) + "\n")
    print(f"written to {out}")


if __name__ == "__main__":
    main()

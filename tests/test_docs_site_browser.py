"""The docs site in a real browser (issue 32 point 2): Debian's Chromium driven by Playwright for Python, the
site opened from ``file://`` with no server. The sample's graph draws its 19 nodes, a click on a project opens
its page, a column's lineage graph shows its inputs, the run page draws its timings, a search finds nodes,
names holding markup stay text; no console error and no failed request on any page.

Select these tests with ``-m browser``. They need ``chromium`` (``apt-get install -y chromium``; .ci/run installs
it) and never download a browser (no ``playwright install``). Screenshots go to the test's folder; with
``LEDGERFLOW_SCREENSHOTS=docs/images`` they are written there (the README shows them)."""
from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from docs_site_support import HOSTILE, REPO, docs, hostile_copy, page_of, sample_copy, with_runs

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]  # a container's small /dev/shm


def launch(playwright):
    """Debian's Chromium under Playwright, or a failure saying how to install what is missing."""
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"the browser tests need Debian's Chromium at {CHROMIUM}: install it with "
                    "`apt-get install -y chromium` (as root; .ci/run does). Do not run `playwright install`.")
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


@pytest.fixture(scope="module")
def browser():
    """One Chromium for the module's tests."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the browser tests need Playwright for Python: pip install '.[test]'")
    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site of a copy of the sample with two recorded runs, a closed period and a registered version."""
    root = sample_copy(tmp_path_factory.mktemp("browser"))
    with_runs(root)
    assert docs(root).exit_code == 0
    return root / "target" / "docs"


def wait_ready(page, timeout: float = 15.0) -> None:
    """Poll ``window.LF_READY`` (``wait_for_function`` would evaluate a string in the page, which the site's
    Content-Security-Policy forbids: no eval)."""
    deadline = time.monotonic() + timeout
    while page.evaluate("window.LF_READY === true") is not True:
        assert time.monotonic() < deadline, f"{page.url} was not drawn within {timeout} s"
        time.sleep(0.02)


class Watched:
    """A page with every console message, page error and request recorded."""

    def __init__(self, browser):
        self.page = browser.new_page(viewport={"width": 1400, "height": 900})
        self.problems: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.problems.append(f"console {m.type}: {m.text}")
                     if m.type in ("error", "warning") else None)
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        self.page.on("requestfailed", lambda r: self.problems.append(f"failed request: {r.url}"))
        self.page.on("request", lambda r: self.requests.append(r.url))

    def open(self, url: str):
        """Open ``url`` and wait until it is drawn."""
        self.page.goto(url)
        self.ready()
        return self.page

    def ready(self):
        """Wait until the page's script says it is drawn (``LF_READY``)."""
        wait_ready(self.page)

    def clean(self):
        """No console error or warning, no page error, no failed request, nothing but the site's own files."""
        assert self.problems == []
        assert self.requests and all(u.startswith("file://") for u in self.requests), self.requests
        self.page.close()


def _shot(locator, tmp: Path, name: str) -> Path:
    path = tmp / name
    locator.screenshot(path=str(path))
    assert path.stat().st_size > 10_000  # a drawn graph, not an empty box
    wanted = os.environ.get("LEDGERFLOW_SCREENSHOTS")
    if wanted:
        target = REPO / wanted
        target.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target / name)
    return path


def test_graph_draws_every_node_and_a_click_opens_the_project(browser, site, tmp_path):
    w = Watched(browser)
    page = w.open((site / "index.html").as_uri())
    assert page.evaluate("LF_CY.nodes().length") == 19
    assert page.locator("#graph").get_attribute("data-nodes") == "19"
    assert page.locator("#graph canvas").count() >= 1
    _shot(page.locator("#graph"), tmp_path, "docs-graph.png")
    # click where the node is drawn: the click handler opens the project's page
    box = page.locator("#graph").bounding_box()
    pos = page.evaluate("(() => { const p = LF_CY.getElementById('project:ts03_fx_conversion').renderedPosition();"
                        " return [p.x, p.y]; })()")
    page.mouse.click(box["x"] + pos[0], box["y"] + pos[1])
    page.wait_for_url("**/" + page_of(site, "project", "ts03_fx_conversion"))
    w.ready()
    assert page.locator("h1").inner_text() == "ts03_fx_conversion"
    assert page.locator("#operations tbody tr").count() == 2
    assert "fx__rate" in page.locator("#sql code").inner_text()
    assert page.locator("#sql code .hljs-keyword").count() > 10  # highlighted
    heights = page.evaluate("['.gutter', '.code code'].map(s => getComputedStyle(document.querySelector('#source ' + s))"
                            ".lineHeight)")
    assert heights[0] == heights[1]  # each line number level with its line
    w.clean()


def test_a_column_lineage_graph_shows_its_inputs(browser, site, tmp_path):
    w = Watched(browser)
    page = w.open((site / page_of(site, "project", "ts03_fx_conversion")).as_uri())
    page.get_by_text("lineage of amount_reporting").click()
    page.wait_for_url("**/" + page_of(site, "lineage", "ts03_fx_conversion") + "#c=*")
    w.ready()
    labels = set(page.evaluate("LF_CY.nodes().map(n => n.data('label'))"))
    assert {"gl.amount_local", "exchange_rates.rate", "gl.currency", "exchange_rates.from_currency",
            "ts03_fx_converted.amount_reporting"} <= labels
    kinds = page.evaluate("LF_CY.edges().map(e => e.data('kind'))")
    assert {"transformation", "join", "filter"} <= set(kinds)
    assert page.locator("#column-title").inner_text() == "Output 2 (ts03_fx_converted), column amount_reporting"
    assert page.locator("#lineage-inputs tbody tr").count() == len(page.evaluate("LF_DATA.columns[+location.hash.slice(3)].inputs"))
    _shot(page.locator("#lineage-graph"), tmp_path, "docs-lineage.png")
    w.clean()


def test_lineage_across_registered_datasets_and_search(browser, site):
    w = Watched(browser)
    page = w.open((site / page_of(site, "lineage", "close_reporting")).as_uri())
    labels = page.evaluate("LF_CY.nodes().map(n => n.data('label'))")
    assert "close_converted\n(registered by close_conversion.3)" in labels
    page.goto((site / "index.html").as_uri())
    w.ready()
    page.fill("#search", "close_")
    found = page.locator("#search-results a").all_inner_texts()
    assert sorted(found) == ["close_consolidated", "close_consolidation", "close_conversion", "close_converted",
                             "close_reporting"]
    w.clean()


def test_a_dataset_node_opens_its_page_and_an_operation_shows_its_yaml(browser, site):
    w = Watched(browser)
    page = w.open((site / "index.html").as_uri())
    page.fill("#search", "exchange_rates")
    page.press("#search", "Enter")  # the first match's page
    page.wait_for_url("**/" + page_of(site, "dataset", "exchange_rates"))
    w.ready()
    assert page.locator("h1").inner_text() == "exchange_rates"
    assert "bitemporal" in page.locator(".subtitle").inner_text()
    page.locator("#readers a", has_text="ts03_fx_conversion").click()
    w.ready()
    page.locator("#operations summary", has_text="lines 8-18").click()
    block = page.locator("#operations .source")
    assert block.locator(".gutter").inner_text().split() == [str(n) for n in range(8, 19)]
    assert block.locator("code").inner_text().splitlines()[0] == "  - seq: 1"
    w.clean()


def test_runs_page_and_a_run_with_its_timing_chart(browser, site):
    w = Watched(browser)
    page = w.open((site / "runs.html").as_uri())
    assert page.locator("#periods tbody tr").count() == 2
    assert "close by ana" in page.locator("#periods").inner_text()
    page.locator("#runs a", has_text="01a222f0").click()
    w.ready()
    assert page.locator("h1").inner_text() == "Run 01a222f0-c08e-777e-8e36-cc15474d8f11"
    assert page.locator("svg.timings rect").count() == 4 + 4  # four bars, four legend swatches
    assert page.locator("#checks tbody tr").count() == 7
    assert page.locator("#inputs a").all_inner_texts() == ["gl", "accounts"]
    assert page.locator("#bridge").inner_text().count("5074000.00") == 2
    page.goto((site / page_of(site, "dataset", "gl")).as_uri())
    w.ready()
    assert "amount_local" in page.locator("#columns").inner_text()
    assert page.locator("#readers tbody tr").count() == 9
    w.clean()


def test_names_with_markup_are_shown_as_text(browser, tmp_path):
    root = hostile_copy(tmp_path)
    assert docs(root).exit_code == 1
    site = root / "target" / "docs"
    w = Watched(browser)
    page = w.open((site / "index.html").as_uri())
    assert page.evaluate("typeof window.PWNED") == "undefined"
    assert page.locator("img").count() == 0
    assert HOSTILE in page.locator("table").first.inner_text()
    assert "</script><img src=x onerror=window.PWNED=4>" in page.locator("#errors").inner_text()
    page.goto((site / page_of(site, "project", HOSTILE)).as_uri())
    w.ready()
    assert page.locator("h1").inner_text() == HOSTILE
    assert page.evaluate("typeof window.PWNED") == "undefined" and page.locator("img").count() == 0
    w.clean()
    # and were markup to get in, the pages' Content-Security-Policy would not run its handler
    page = browser.new_page()
    page.goto((site / "index.html").as_uri())
    wait_ready(page)
    page.evaluate("document.body.insertAdjacentHTML('beforeend', '<img id=probe src=nothing-here onerror=\"window.PWNED=5\">')")
    page.wait_for_timeout(300)
    assert page.locator("#probe").count() == 1 and page.evaluate("typeof window.PWNED") == "undefined"
    page.close()


def test_a_large_graph_is_drawn_where_ledgerflow_placed_it_searchable_and_collapsible(browser, tmp_path):
    """A workspace past ``layout.LARGE`` nodes (a chain of 200 projects: 401 nodes with their datasets and ``gl``) is drawn at the positions the
    site carries, without a layout in the browser; search finds the last project and Enter opens it; "Collapse
    datasets" leaves the projects joined project to project, and again shows every node."""
    from bench.workspace_scale import chain
    root = tmp_path / "large"
    chain(root, 200)
    assert docs(root).exit_code == 0
    site = root / "target" / "docs"
    w = Watched(browser)
    page = w.open((site / "index.html").as_uri())
    assert page.locator("#graph").get_attribute("data-nodes") == "401"
    placed = page.evaluate("LF_CY.nodes().map(n => [n.id(), n.position('x'), n.position('y')])")
    positions = page.evaluate("LF_DATA.positions")
    assert all(positions[node] == [x, y] for node, x, y in placed)
    page.fill("#search", "p0199")
    assert page.locator("#search-results a").all_inner_texts() == ["p0199"]
    page.locator("#collapse").click()
    assert page.locator("#graph").get_attribute("data-shown") == "200"
    assert page.evaluate("LF_CY.edges('.direct').filter(e => e.visible()).length") == 199
    page.locator("#collapse").click()
    assert page.locator("#graph").get_attribute("data-shown") == "401"
    page.press("#search", "Enter")
    page.wait_for_url("**/" + page_of(site, "project", "p0199"))
    w.ready()
    assert page.locator("h1").inner_text() == "p0199"
    # its lineage: the path through 199 registered datasets drawn with its ends and how many between
    page.goto((site / page_of(site, "lineage", "p0199")).as_uri() + "#c=0")
    w.ready()
    labels = page.evaluate("LF_CY.nodes().map(n => n.data('label'))")
    assert "\u2026 189 more registered datasets \u2026" in labels and len(labels) < 40, labels  # not 200
    w.clean()

"""Writing the site's files: one HTML shell per page (the page's title escaped, its scripts listed), the
page's data as its own small script (``data/<page>.js`` assigning ``window.LF_DATA``: a page opened from
``file://`` cannot fetch JSON, and each page loads only its own data), and the static assets.

Every name in the data came from a YAML file and may hold markup: the data is JSON with ``<``, ``>`` and
``&`` escaped as ``\\u003c``..., never interpolated into HTML, and the pages' scripts put it in the page as
text (``textContent``), never as markup."""
from __future__ import annotations

import html
import json
import os
import shutil

from .collect import Page, Site

STATIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
_GRAPH = ["vendor/cytoscape.min.js", "vendor/cytoscape-dagre.min.js"]
SCRIPTS = {"index": _GRAPH + ["index.js"], "lineage": _GRAPH + ["lineage.js"],
           "project": ["vendor/highlight.min.js", "project.js"], "dataset": ["vendor/highlight.min.js", "dataset.js"],
           "runs": ["runs.js"], "run": ["run.js"]}
STYLES = {"project": ["vendor/highlight-github.min.css"], "dataset": ["vendor/highlight-github.min.css"]}
# Scripts only from the site's own files (never inline, never an event handler attribute: even markup that got in
# could not run), nothing fetched, no plugins.
CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'none'; object-src 'none'; base-uri 'none'"
_JS_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def js_data(data: dict) -> str:
    """``window.LF_DATA = {...};``: the data as JSON that no ``</script>``, ``<!--`` or line separator in a
    name can end early."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"), default=str)
    for char, escape in _JS_ESCAPES.items():
        text = text.replace(char, escape)
    return f"window.LF_DATA = {text};\n"


def data_path(page: Page) -> str:
    """The page's data script, relative to the site's root (``project/x.html`` -> ``data/project/x.js``)."""
    return "data/" + os.path.splitext(page.path)[0] + ".js"


def shell(page: Page) -> str:
    """The page's HTML: its title (escaped), the styles and scripts it needs, its data script last before
    its own. Every path is the site's own (no name is ever part of one unescaped: :mod:`.ids`)."""
    root = "../" * page.path.count("/")
    styles = [f"assets/{s}" for s in STYLES.get(page.kind, [])] + ["assets/app.css"]
    scripts = ["assets/common.js"] + [f"assets/{s}" for s in SCRIPTS[page.kind][:-1]] + [data_path(page)] + \
        [f"assets/{SCRIPTS[page.kind][-1]}"]
    head = "".join(f'<link rel="stylesheet" href="{html.escape(root + s)}">' for s in styles)
    body = "".join(f'<script src="{html.escape(root + s)}"></script>' for s in scripts)
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">"
            f"<title>{html.escape(page.title)}</title>{head}</head>\n"
            f"<body data-page=\"{html.escape(page.kind)}\" data-root=\"{html.escape(root)}\">"
            "<noscript>This page is drawn by its scripts: allow JavaScript for files opened from disk.</noscript>"
            f"<div id=\"app\"></div>\n{body}\n</body></html>\n")


def _write(folder: str, relative: str, text: str) -> None:
    path = os.path.join(folder, *relative.split("/"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def write_site(site: Site, folder: str) -> int:
    """Write every page of ``site`` and the static assets into ``folder``; returns the number of files."""
    shutil.copytree(STATIC, os.path.join(folder, "assets"),
                    ignore=shutil.ignore_patterns("__pycache__", "*.py", "*.pyc"))
    count = sum(len(files) for _, _, files in os.walk(os.path.join(folder, "assets")))
    for page in site.pages:
        _write(folder, page.path, shell(page))
        _write(folder, data_path(page), js_data(page.data))
        count += 2
    return count

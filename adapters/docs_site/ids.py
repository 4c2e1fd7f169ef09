"""File names of the site's pages and data scripts, made from names a YAML file chose: never the name
itself (it may hold ``/``, ``..``, quotes or markup), but a readable slug of it and a digest, so two names
never share a file and every file name is plain ``[a-z0-9_-]``."""
from __future__ import annotations

import hashlib
import re

_UNSAFE = re.compile(r"[^a-z0-9_]+")


def file_id(name: str) -> str:
    """``ts03_fx_conversion-1a2b3c4d``: at most 40 characters of the name's slug, then 8 hex digits of its
    sha256 (the slug alone could merge ``A`` and ``a``)."""
    slug = _UNSAFE.sub("-", str(name).lower()).strip("-")[:40] or "x"
    return f"{slug}-{hashlib.sha256(str(name).encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


def project_page(name: str) -> str:
    """The project's page, relative to the site's root."""
    return f"project/{file_id(name)}.html"


def lineage_page(name: str) -> str:
    """The project's column lineage page, relative to the site's root."""
    return f"lineage/{file_id(name)}.html"


def dataset_page(name: str) -> str:
    """The dataset's page, relative to the site's root."""
    return f"dataset/{file_id(name)}.html"


def run_page(run_id: str) -> str:
    """The run's page, relative to the site's root."""
    return f"run/{file_id(run_id)}.html"


def node_page(node: str) -> str:
    """The page of a workspace graph node (``project:NAME`` or ``dataset:NAME``)."""
    kind, _, name = node.partition(":")
    return project_page(name) if kind == "project" else dataset_page(name)

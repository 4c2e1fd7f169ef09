"""File names of the site's pages and data scripts, made from names a YAML file chose (a name may hold
``/``, ``..``, quotes or markup) by the one rule that makes project folder names in ``target/`` and
``compile --out`` (:func:`..compile_out.folders.segment`): a plain lower-case name is its own file name,
any other is escaped, so two names never share a file (the rule is injective, even on a case-insensitive
file system) and every file name is lower-case ASCII that never climbs out of its folder."""
from __future__ import annotations

from ..compile_out.folders import segment


def file_id(name: str) -> str:
    """The file name (without its extension) of the page of ``name``: ``ts03_fx_conversion`` as it is,
    ``Close`` escaped (:func:`..compile_out.folders.segment`)."""
    return segment(str(name))


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

"""The Python API: compile a project, or run it with some datasets taken from memory.

>>> from ledgerflow.adapters import api
>>> record = api.run("projects/finance", "ts01_output_only", "2026-01", data={"gl": gl_dataframe})
>>> record["outputs"][0]["rows"]

``run`` behaves like ``ledgerflow run`` (same checks, outputs, run record) except that every dataset
named in ``data`` is read from the given DataFrame instead of being resolved; the run record shows
such a dataset with resolver ``memory`` and resolver_source ``in_memory``. Errors are raised as
:class:`ledgerflow.compiler.errors.LedgerflowError` subclasses.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from ..compiler.compile import compile_project, require_project
from ..compiler.errors import LedgerflowError
from ..compiler.workspace import find_workspace, load_workspace
from .inputs import loaders
from .run.open_store import open_store

__all__ = ["compile", "run"]


def _workspace(root: str):
    """The workspace at ``root`` with the datasets earlier runs registered."""
    return load_workspace(root, extra_datasets=open_store(root).registered_datasets)


def compile(workspace: str, project: str) -> str:  # noqa: A001 - the API's verb
    """The compiled Spark SQL script of ``project`` (name, id or YAML path) in ``workspace``,
    exactly what ``ledgerflow compile PROJECT`` prints."""
    ws = _workspace(find_workspace(explicit=workspace))
    return compile_project(ws, require_project(ws, project)).script()


def run(workspace: str, project: str, period: str, data: Optional[dict[str, Any]] = None, spark=None,
        echo: Callable[[str], None] = print, allow_draft: bool = False) -> dict:
    """Run ``project`` for ``period`` like ``ledgerflow run`` and return the completed run record.

    ``data`` maps a dataset name or id to a pyspark DataFrame read instead of the dataset's resolved
    locations (its declared schema is enforced and system columns are filled as for files; a missing
    ``_period`` is the run's period). ``spark`` is the SparkSession to use (default: a local session
    with the workspace's ``spark`` settings). ``echo`` receives the progress lines.

    Ctrl-C (called on the main thread) is handled as by ``ledgerflow run``, also when the default
    session is created during the run (PySpark's own SIGINT handler is replaced again): before the run's
    commit point it is rolled back, recorded failed and :class:`~.interrupts.RunInterrupted` (a
    ``KeyboardInterrupt``) is raised; after it, the completed record is returned.
    """
    from ..compiler.periods import parse_period
    from .run.runner import Runner

    parsed = parse_period(period)  # the one parse (the front door): the Period travels from here
    root = find_workspace(explicit=workspace)
    ws = _workspace(root)
    # refused before Spark, as `ledgerflow run` refuses it
    chosen = require_project(ws, project)
    open_store(root).refuse_if_closed(chosen.name, parsed.identifier, chosen.id)
    data = dict(data or {})
    if data:
        require_project(ws, project)
        unknown = [k for k in data if ws.find_dataset(k) is None]
        if unknown:
            raise LedgerflowError(f"data names unknown dataset(s) {', '.join(sorted(unknown))}; datasets: "
                                  f"{', '.join(sorted(d.name for d in ws.datasets)) or 'none'}.")
    if spark is not None:
        factory, label = (lambda: spark), _master(spark)
    else:
        from .spark.session import session_factory
        factory, label = session_factory(ws.config)  # its spark settings; started when the run needs it
    before = set(loaders.MEMORY)
    try:
        return Runner(root, echo=echo, session_factory=factory, spark_label=label, memory=data).run(
            project, parsed, allow_draft, workspace=ws)
    finally:
        for key in set(loaders.MEMORY) - before:
            loaders.MEMORY.pop(key, None)


def _master(spark) -> str:
    try:
        return spark.sparkContext.master
    except Exception:  # Spark Connect
        return "remote"

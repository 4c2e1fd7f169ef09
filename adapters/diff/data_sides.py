"""The two sides of ``ledgerflow diff --data``: each changed project compiled on both sides, its inputs
resolved once for both, and each side's output DataFrames computed in one Spark session, nothing written.

The sides are opened and compared as ``ledgerflow diff`` does (:mod:`.command`, :mod:`.gitsource`); a
project whose compiled SQL is the same on both sides (``unchanged`` or ``no_op``) reads the same inputs and
so computes the same rows: it is not run. The rest are run as a ``ledgerflow run`` computes its outputs
(:func:`..run.compute.compute`), stopped at the point where the output frames exist and before any write:
no staging, no run record, no registered version.

Same inputs: every dataset a side reads must be declared on the other side too, and is resolved once per
version (:func:`resolve_shared`): both sides read the same locations, from the data folder of the workspace
being diffed (a revision exported from git holds no data). A version change between the sides (a new
version declared, a pin moved) is part of the change under review, so each version read is resolved and
loaded; which locations a version has comes from the HEAD side's declarations.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional

from ...compiler import resolver as resolver_engine
from ...compiler.compile import CompiledProject, compile_project
from ...compiler.diff import SideError
from ...compiler.errors import CompileError, LedgerflowError
from ...compiler.model import Workspace
from ...compiler.periods import Period
from ..inputs import loaders
from ..inputs.registered_reads import pin_source, registered_resolution
from ..inputs.resolution import choose_version
from ..run.context import RunContext, new_run_id, utcnow


class DataInputError(LedgerflowError):
    """The two sides of ``diff --data`` cannot run on the same inputs (exit 1, nothing run)."""

    exit_code = 1


@dataclass
class SideProject:
    """One project compiled on one side, ready to compute: its run context (inputs resolved)."""

    role: str  # base | head
    label: str
    ctx: RunContext

    @property
    def outputs(self) -> list:
        """The output statements, in order."""
        return self.ctx.compiled.outputs


@dataclass
class ProjectPair:
    """A project present and changed on both sides."""

    name: str
    base: SideProject
    head: SideProject


class NoRegistrations:
    """A run store stand-in for a workspace where nothing ever ran: no registered dataset has a version."""

    def registrations(self, name: str) -> list:
        """No registration of ``name``."""
        return []


def compile_side(ws: Workspace, name: str, role: str, label: str) -> CompiledProject:
    """``name`` compiled on one side; a :class:`SideError` naming the side when it does not compile."""
    project = ws.find_project(name)
    try:
        return compile_project(ws, project)
    except CompileError as err:
        raise SideError(role, label, err.render()) from None


def check_same_datasets(pairs: list[tuple[str, CompiledProject, CompiledProject]], base_ws: Workspace,
                        head_ws: Workspace, labels: dict[str, str]) -> None:
    """Refuse a side that reads a dataset the other side does not declare (the sides would not read the
    same inputs): one paragraph naming the side, project and dataset."""
    for name, base, head in pairs:
        for role, compiled, other_role, other in (("head", head, "base", base_ws), ("base", base, "head", head_ws)):
            for view in compiled.inputs:
                ds = view.dataset
                if other.find_dataset(ds.id) is None and other.find_dataset(ds.name) is None:
                    raise DataInputError(
                        f"diff --data: project '{name}' on the {role} side ({labels[role]}) reads dataset "
                        f"'{ds.name}', which the {other_role} side ({labels[other_role]}) does not have, so the two "
                        f"sides cannot run on the same inputs. Declare '{ds.name}' on both sides (a commit of its "
                        "own), or review this change with `ledgerflow diff` (the compiled SQL) alone.")


def data_workspace(ws: Workspace, data_root: str) -> Workspace:
    """``ws`` with its locations resolved under ``data_root`` (the folder that holds the data)."""
    return dataclasses.replace(ws, root=data_root)


def resolve_shared(sides: list[SideProject], head_ws: Workspace, store, period: Period) -> None:
    """Fill each side's ``ctx.resolutions``, each (dataset, version) resolved once for all sides: HEAD's
    declarations (dataset, resolver, the project's overrides) give the locations of a version both read."""
    shared: dict[tuple, object] = {}
    ordered = sorted(sides, key=lambda s: s.role != "head")  # the head side resolves first
    for side in ordered:
        ctx = side.ctx
        for view in ctx.compiled.inputs:
            ds = view.dataset
            version = choose_version(ds, view.pinned_version, period, store)
            key = (ds.id, version)
            if key not in shared:
                head_ds = head_ws.find_dataset(ds.id) or ds
                rooted = ctx.workspace if side.role == "head" else head_ws
                if ds.registered:
                    res = registered_resolution(ds, version, store.registrations(ds.name), period,
                                                pin=pin_source(ctx.project, view))
                else:
                    project = rooted.find_project(ctx.project.name) or ctx.project
                    res = resolver_engine.resolve(rooted, project, head_ds if version in _versions(head_ds) else ds,
                                                  version, period)
                for loc in res.locations:
                    loaders.check_exists(loc, ds)
                shared[key] = res
            ctx.resolutions[view.view] = shared[key]


def _versions(ds) -> set:
    return {v.version for v in ds.versions}


def side_context(ws: Workspace, compiled: CompiledProject, period: Period, started, role: str,
                 label: str) -> SideProject:
    """One side's run context for ``compiled`` (never recorded: its run id only names Spark job groups)."""
    return SideProject(role, label, unrecorded_context(ws, compiled, period, started))


def unrecorded_context(ws: Workspace, compiled: CompiledProject, period: Period, started) -> RunContext:
    """A run context that computes ``compiled``'s rows for no run record (a ``diff --data`` side, a
    restatement's dry run): no check judged, no bridge observed; its run id only names Spark job groups."""
    return RunContext(ws, compiled.project, without_checks(compiled), period, started, new_run_id(started),
                      observe_bridge=False)


def without_checks(compiled: CompiledProject) -> CompiledProject:
    """``compiled`` without its checks: a diff judges no check, and the two sides' observations of the
    run's bridge would carry the same names in the one plan that compares them (Spark refuses that)."""
    plan = compiled.plan
    if plan is None or not plan.checks:
        return compiled
    return dataclasses.replace(compiled, plan=dataclasses.replace(plan, checks=type(plan.checks)()))


def started_now():
    """The one ``:run_started_at`` both sides bind: rows an update or aggregate creates or touches get the
    same ``_row_id`` and ``_updated_at`` on both sides when they are the same rows."""
    return utcnow()


def data_root_of(workspace_root: Optional[str], head_root: str) -> str:
    """Where both sides read data: the workspace being diffed, else (two folders) the HEAD folder."""
    return workspace_root or head_root

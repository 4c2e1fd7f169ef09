"""Typed model of a workspace: the dataclasses every later stage reads.

Built by :mod:`ledgerflow.compiler.workspace` from YAML; nothing here knows about YAML or SQL.
Values that came from YAML strings keep their :class:`YStr` so later stages can locate errors.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar, Optional, Union

from .errors import Location

TEMPORAL_MODES = ("period", "bitemporal", "snapshot")


class OperationKind(str, Enum):
    """The kind of an operation (the YAML ``type``); one :class:`Operation` subclass per kind."""

    UPDATE = "update"
    AGGREGATE = "aggregate"
    APPEND = "append"
    DELETE = "delete"
    OUTPUT = "output"

    def __str__(self) -> str:
        return self.value


OPERATION_TYPES = tuple(k.value for k in OperationKind)


@dataclass(frozen=True)
class ColumnDef:
    """A declared column of a dataset table."""

    name: str
    type: str  # a normalised Spark SQL type, e.g. "decimal(18,2)", "string", "int"
    nullable: bool = True
    location: Optional[Location] = None


@dataclass(frozen=True)
class DatasetVersion:
    """One version of a dataset; only active versions are picked as 'latest'."""

    version: int
    status: str = "active"


@dataclass
class Dataset:
    """A versioned, declared dataset with one main table."""

    id: str
    name: str
    status: str
    table_name: str
    temporal_mode: str
    columns: list[ColumnDef]
    versions: list[DatasetVersion]
    resolver_id: Optional[str] = None
    description: str = ""
    file: str = ""
    location: Optional[Location] = None
    registered: bool = False  # created by an output's register_as_dataset
    raw: Any = None  # the parsed YAML, kept verbatim for a run's snapshot
    text_sha256: str = ""  # of the text its file held when it was parsed ("" when not read from a file)

    def column(self, name: str) -> Optional[ColumnDef]:
        """The declared column called ``name``, if any."""
        for col in self.columns:
            if col.name == name:
                return col
        return None

    def version(self, number: int) -> Optional[DatasetVersion]:
        """The version ``number``, if declared."""
        for v in self.versions:
            if v.version == number:
                return v
        return None

    def latest_active_version(self) -> Optional[int]:
        """The highest active version, or None when every version is disabled."""
        active = [v.version for v in self.versions if v.status == "active"]
        return max(active) if active else None


@dataclass(frozen=True)
class Strategy:
    """How a resolver rule turns a dataset + period into locations."""

    type: str  # path | table
    path: Optional[str] = None
    format: str = "parquet"
    table: Optional[str] = None
    options: tuple = ()


@dataclass(frozen=True)
class ResolverRule:
    """One ordered rule of a resolver."""

    name: str
    data_level: str
    strategy: Strategy
    when: Optional[str] = None
    location: Optional[Location] = None


@dataclass
class Resolver:
    """A named, ordered list of rules."""

    name: str
    rules: list[ResolverRule]
    location: Optional[Location] = None


@dataclass
class WorkspaceConfig:
    """The contents of ``ledgerflow.yml``."""

    name: str
    default_resolver: Optional[str]
    resolvers: dict[str, Resolver]
    spark_master: Optional[str] = None
    spark_conf: dict[str, str] = field(default_factory=dict)
    file: str = ""
    bridge: str = "always"  # which runs observe and record their bridge: always | with_checks | off (docs/checks.md)
    openlineage: Optional[dict] = None  # {namespace, transport, disabled} (docs/openlineage.md); None: not set
    text_sha256: str = ""  # of the text ledgerflow.yml held when it was parsed


@dataclass
class DatasetRef:
    """A reference to a dataset by UUID or name, optionally pinned to a version."""

    dataset_id: str
    dataset_version: Optional[int]
    location: Location
    version_location: Optional[Location] = None


@dataclass
class Assignment:
    """``column = expression`` of an update."""

    column: str
    expression: str
    location: Location


@dataclass
class RuntimeJoin:
    """A left join to another dataset inside one update operation."""

    alias: str
    dataset: DatasetRef
    on: str
    location: Location


@dataclass
class Aggregation:
    """``column = aggregate expression`` of an aggregate or an append's aggregation."""

    column: str
    expression: str
    location: Location


@dataclass
class Destination:
    """Where an output writes: a resolved table, an inline path, or a catalog table."""

    kind: str  # table | path | catalog_table
    table: Optional[str] = None
    resolver: Optional[str] = None
    path: Optional[str] = None
    format: str = "parquet"
    catalog_table: Optional[str] = None
    location: Optional[Location] = None


@dataclass
class Operation:
    """What every operation has. An operation whose ``type`` could not be read (already reported) is
    a bare :class:`Operation` (``kind`` None), which later stages skip; every valid one is an instance
    of the subclass of its kind."""

    kind: ClassVar[Optional[OperationKind]] = None

    seq: int
    name: str
    id: str
    selector: Optional[str] = None
    description: str = ""
    location: Optional[Location] = None


@dataclass
class UpdateOperation(Operation):
    """``update``: assignments computed from the row as it was, with optional runtime left joins."""

    kind: ClassVar[Optional[OperationKind]] = OperationKind.UPDATE
    joins: list[RuntimeJoin] = field(default_factory=list)
    assignments: list[Assignment] = field(default_factory=list)


@dataclass
class AggregateOperation(Operation):
    """``aggregate``: summary rows of the selected rows, appended to the working dataset."""

    kind: ClassVar[Optional[OperationKind]] = OperationKind.AGGREGATE
    group_by: list[str] = field(default_factory=list)
    aggregations: list[Aggregation] = field(default_factory=list)


@dataclass
class AppendOperation(Operation):
    """``append``: rows of another dataset (optionally aggregated), aligned to the working columns."""

    kind: ClassVar[Optional[OperationKind]] = OperationKind.APPEND
    source: Optional[DatasetRef] = None
    source_selector: Optional[str] = None
    has_aggregation: bool = False
    group_by: list[str] = field(default_factory=list)
    aggregations: list[Aggregation] = field(default_factory=list)


@dataclass
class DeleteOperation(Operation):
    """``delete``: a soft delete of the rows the selector matches."""

    kind: ClassVar[Optional[OperationKind]] = OperationKind.DELETE


@dataclass
class OutputOperation(Operation):
    """``output``: writes a projection of the working dataset; never changes it."""

    kind: ClassVar[Optional[OperationKind]] = OperationKind.OUTPUT
    destination: Optional[Destination] = None
    columns: Optional[list[str]] = None
    include_deleted: bool = False
    register_as_dataset: Optional[str] = None


AnyOperation = Union[UpdateOperation, AggregateOperation, AppendOperation, DeleteOperation, OutputOperation]


@dataclass
class Check:
    """One entry of a project's ``checks:`` (docs/checks.md), as written; :mod:`.check_binding` validates
    it. ``kind`` is None when the entry names no kind or two (reported). ``on`` keeps what was written
    (an output's seq or name, or ``input``); ``args`` holds the kind's value as read (a list or mapping
    of :class:`~.yaml_source.YStr` and scalars) and ``where`` the location of each key's value."""

    name: str
    kind: Optional[str]
    args: Any
    on: Optional[str] = None
    severity: str = "fail"
    on_violation: Optional[str] = None
    quarantine: Optional[Destination] = None
    key: Optional[list[str]] = None
    location: Optional[Location] = None
    where: dict[str, Location] = field(default_factory=dict)


@dataclass
class Project:
    """A project: an input dataset plus ordered operations."""

    id: str
    name: str
    version: int
    status: str
    input: DatasetRef
    operations: list[Operation]
    selectors: dict[str, str] = field(default_factory=dict)
    resolver_overrides: dict[str, str] = field(default_factory=dict)
    description: str = ""
    file: str = ""
    raw: Any = None  # the parsed YAML, kept verbatim for the run's project snapshot
    location: Optional[Location] = None
    checks: list[Check] = field(default_factory=list)
    text_sha256: str = ""  # of the text its file held when it was parsed ("" when not read from a file)


@dataclass
class Workspace:
    """Everything declared in one workspace folder."""

    root: str
    config: WorkspaceConfig
    datasets: list[Dataset]
    projects: list[Project]
    # registered dataset name -> the project registering it, which has errors (compiler/registered_pass.py)
    unavailable: dict[str, str] = field(default_factory=dict)
    # project name -> its plan without errors (a compiler.plan.Plan: model may not import plan, plan imports
    # model), bound by the registered-datasets pass against this very workspace; compile reuses it
    producer_plans: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    # registered dataset names whose columns the pass could not type exactly from the plan (a computed number):
    # their types come from the run store's newest version (compiler/registered_pass.py)
    inexact_registered: set[str] = field(default_factory=set, repr=False, compare=False)

    # lookups by id or name, built on first use (a workspace of 1,000 projects looks names up thousands of times)
    _index: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def _lookup(self, kind: str, items: list, ref: str):
        """The first of ``items`` whose id or name is ``ref``, as a walk of the list finds it, from an index kept
        with the list it was built from: extended when the list only grew, rebuilt when anything else changed
        (comparing two lists of the same objects is a C loop over pointers, a walk of their names is not)."""
        kept = self._index.get(kind)
        if kept is None or len(items) < len(kept[0]) or items[:len(kept[0])] != kept[0]:
            kept = self._index[kind] = ([], {})
        seen, index = kept
        for i in range(len(seen), len(items)):
            index.setdefault(items[i].id, i)
            index.setdefault(items[i].name, i)
            seen.append(items[i])
        i = index.get(ref)
        return items[i] if i is not None else None

    def find_dataset(self, ref: str) -> Optional[Dataset]:
        """The dataset whose UUID or name is ``ref``."""
        return self._lookup("datasets", self.datasets, ref)

    def find_project(self, ref: str) -> Optional[Project]:
        """The project whose id or name is ``ref``."""
        return self._lookup("projects", self.projects, ref)

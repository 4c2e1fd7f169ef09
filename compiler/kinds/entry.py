"""What a registry entry of an operation kind or a check kind holds (docs/architecture.md, "Adding an
operation kind / a check kind"). An entry is complete or it is refused when it is made: every part is
set, every function part callable; nothing stands in for a missing part."""
from __future__ import annotations

from dataclasses import dataclass, fields
from enum import Enum
from typing import Any, Callable, Optional

from ..errors import LedgerflowError
from ..model import OperationKind


class IncompleteKind(LedgerflowError):
    """A kind's entry lacks a part, or two entries claim one kind: a programming error, found at import."""


class Deferred:
    """A function part of an entry, imported when first called: binding, lowering and check SQL load the SQL
    parser and the templates, which loading a workspace (and every command that only reads it, such as
    ``promote`` or ``status``) never needs. ``module`` is relative to the compiler package (``.bind.update``)."""

    def __init__(self, module: str, name: str):
        self.module, self.name = module, name
        self._function: Optional[Callable] = None

    def __call__(self, *args, **kwargs):
        if self._function is None:
            import importlib
            self._function = getattr(importlib.import_module(self.module, __package__.rsplit(".", 1)[0]), self.name)
        return self._function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Deferred({self.module}:{self.name})"


class BridgeEffect(str, Enum):
    """What an operation does to the measures of the run's bridge (docs/checks.md, "The bridge")."""

    ASSIGNS = "assigns"  # changes a measure only where it assigns a measured column (an update)
    MARKS_DELETED = "marks_deleted"  # removes the rows it marks _deleted from the live rows (a delete)
    CREATES_ROWS = "creates_rows"  # adds rows (an aggregate, an append)
    NONE = "none"  # changes no working row (an output)


class YamlShape(str, Enum):
    """How a check kind's value is written in YAML."""

    COLUMNS = "columns"  # a list of column names
    CONDITION = "condition"  # a condition written as a string
    MAPPING = "mapping"  # a mapping of its own keys (``keys``: allowed and required)


def _refuse_missing(entry: Any, optional: tuple[str, ...] = ()) -> None:
    name = entry.name
    for f in fields(entry):
        value = getattr(entry, f.name)
        if value is None and f.name not in optional:
            raise IncompleteKind(f"the kind {name} has no {f.name}")
        if f.name in entry.FUNCTIONS and value is not None and not callable(value):
            raise IncompleteKind(f"the {f.name} of the kind {name} is not a function")


@dataclass(frozen=True)
class OperationKindEntry:
    """Everything about one operation kind (the YAML ``type``).

    - ``arguments``: the keys of its ``arguments:`` (allowed, required); ``load(op, reader, where, errors)``
      fills the model object (an instance of ``model``) from them;
    - ``binder(ctx, op)``: the typed plan of the operation (None when it has errors, all reported);
    - ``template`` and ``lowering(plan, prev, bridge, before)``: the step the plan renders into;
    - ``fused(plan, step, context)``: its rewrite for a fused range, or ``not_fused``: the sentence saying why
      it cannot be fused (exactly one of the two);
    - ``bridge``: what it does to the bridge's measures;
    - ``fingerprint(plan, shape)``: the parts of its own arguments ``diff`` prints (``shape(node)``: the
      shape of an expression as the operation writes it)."""

    kind: OperationKind
    model: type
    arguments: tuple[tuple[str, ...], tuple[str, ...]]
    load: Callable
    binder: Callable
    template: str
    lowering: Callable
    fused: Optional[Callable]
    not_fused: Optional[str]
    bridge: BridgeEffect
    fingerprint: Callable

    FUNCTIONS = ("load", "binder", "lowering", "fused", "fingerprint")

    def __post_init__(self):
        _refuse_missing(self, optional=("fused", "not_fused"))
        if (self.fused is None) == (self.not_fused is None):
            raise IncompleteKind(f"the kind {self.kind} needs exactly one of a fused rewrite and the reason it "
                                 "cannot be fused")
        if getattr(self.model, "kind", None) != self.kind:
            raise IncompleteKind(f"the model class of the kind {self.kind} is {self.model.__name__}, of another kind")
        if not isinstance(self.bridge, BridgeEffect):
            raise IncompleteKind(f"the bridge effect of the kind {self.kind} is not a BridgeEffect")

    @property
    def name(self) -> str:
        """The kind's name as YAML writes it."""
        return getattr(self.kind, "value", str(self.kind))


@dataclass(frozen=True)
class CheckKindEntry:
    """Everything about one check kind (docs/checks.md).

    - ``yaml`` and ``keys``: how its value is written (``keys``: allowed and required keys of a mapping);
    - ``binder(ctx, plan)``: binds its arguments onto the check's plan (True when they are right; a reconcile's
      also takes the columns and seq of its ``from`` end); how it is judged, its family (row, set or reconcile),
      is written with its name in :class:`~ledgerflow.compiler.checks.plan.CheckKind`;
    - ``sql(check, view)``: the statements ``compile`` prints for it (``view(seq)`` names the view read);
    - ``judge``: the name of the function that judges it in the run (``adapters/run/check_eval.py``
      registers one per name: judging reads Spark values, the compiler never imports Spark)."""

    kind: Any  # a checks.plan.CheckKind
    yaml: YamlShape
    keys: tuple[tuple[str, ...], tuple[str, ...]]
    binder: Callable
    sql: Callable
    judge: str

    FUNCTIONS = ("binder", "sql")

    def __post_init__(self):
        _refuse_missing(self)
        if not self.judge:
            raise IncompleteKind(f"the kind {self.name} names no judge")
        if getattr(self.kind, "family", None) is None:
            raise IncompleteKind(f"the kind {self.name} has no family (row, set or reconcile)")
        if (self.yaml == YamlShape.MAPPING) != bool(self.keys[0]):
            raise IncompleteKind(f"the kind {self.name}: keys are for a value written as a mapping, and only them")

    @property
    def name(self) -> str:
        """The kind's name as YAML writes it."""
        return getattr(self.kind, "value", str(self.kind))

"""Bind a project's checks (docs/checks.md) into :class:`~ledgerflow.compiler.checks.plan.CheckPlan`s.

Runs after the operations are bound, in the same pass, into the same diagnostics: a check's name
(CHK-006), its kind (CHK-012, read with the YAML), what it is ``on`` (CHK-003), its action and
quarantine destination (CHK-004, CHK-007), then its kind's arguments (:mod:`.check_kinds`,
:mod:`.check_reconcile`). A check on an output that has errors of its own is skipped (reported there).
"""
from __future__ import annotations

from typing import Optional

from .checks.plan import INPUT, Action, CheckKind, CheckPlan, Quarantine
from .errors import Location
from .kinds.registry import check_kind
from .model import Check, OutputOperation
from .plan import InputPlan, OperationPlan, OutputPlan
from .bind.check_kinds import all_columns
from .bind.check_places import HINT as PLACE_HINT, quarantine_problem
from .bind.check_reconcile import stable_groups
from .bind.context import IDENTIFIER, BindContext, loc_of


class Targets:
    """The rows a check may be ``on``: the input (after the period filter) and each bound output."""

    def __init__(self, ctx: BindContext, input_plan: InputPlan, operations: list[OperationPlan]):
        self.input = {n: c.type for n, c in input_plan.columns.items()}
        self.bound = {op.seq: {n: c.type for n, c in op.columns.items()} for op in operations
                      if isinstance(op, OutputPlan)}
        self.outputs = [op for op in ctx.project.operations if isinstance(op, OutputOperation)]
        self.kinds = {op.seq: op.kind for op in ctx.project.operations if op.kind is not None}

    def hint(self, allow_input: bool = True) -> str:
        """The outputs a check can name (and ``input``)."""
        named = [f"{op.seq} ('{op.name}')" for op in self.outputs]
        return "outputs: " + (", ".join(named) or "none") + ("; or input" if allow_input else "")

    def _by_name(self, text: str) -> list[int]:
        found = []
        for op in self.outputs:
            d = op.destination
            written = [op.register_as_dataset] + ([d.table, d.catalog_table, d.path] if d else [])
            if text == op.name or text in [str(w) for w in written if w]:
                found.append(op.seq)
        return found

    def resolve(self, ctx: BindContext, check: Check, text: Optional[str], loc: Location, what: str,
                allow_input: bool = True) -> tuple[bool, Optional[int], Optional[dict]]:
        """(found, output seq or None for the input, the rows' columns: None when that output has errors
        of its own). Not found: a CHK-003 diagnostic was added."""
        where = loc_of(text, loc) if text is not None else loc
        if text is None:
            ctx.errors.add("CHK-003", f"check '{check.name}' has no '{what}'", where, str(check.name),
                           f"add {what}: with an output's seq or name; {self.hint(allow_input)}")
            return False, None, None
        if text == INPUT and allow_input:
            return True, None, self.input
        seqs = [int(text)] if text.strip().isdigit() else self._by_name(text)
        seq = seqs[0] if len(seqs) == 1 else None
        if seq is not None and seq in self.kinds and self.kinds[seq].value == "output":
            return True, seq, self.bound.get(seq)
        why = ("is input, which reconcile's 'to' cannot be" if text == INPUT
               else f"names operation {seq}, a {self.kinds[seq].value}, not an output" if seq in self.kinds
               else "names two outputs: use the seq" if len(seqs) > 1 else "names no output of the project")
        ctx.errors.add("CHK-003", f"'{what}' of check '{check.name}' {why}", where, str(text), self.hint(allow_input))
        return False, None, None


def _action(ctx: BindContext, check: Check, kind: CheckKind) -> tuple[Action, Optional[Quarantine]]:
    """The effective action (quarantine > warn > fail) and the checked quarantine destination."""
    action = (Action.QUARANTINE if check.on_violation == "quarantine" else
              Action.WARN if "warn" in (check.on_violation, check.severity) else Action.FAIL)
    at = check.where.get("@on_violation")
    if action == Action.QUARANTINE and not kind.row_check:
        ctx.errors.add("CHK-004", f"check '{check.name}' is a {kind.value} check, which cannot quarantine: only a "
                       "row check (expect, not_null, accepted_values) judges single rows", at, "quarantine",
                       "use on_violation: fail or warn")
    if action == Action.QUARANTINE and check.on == INPUT:
        ctx.errors.add("CHK-004", f"check '{check.name}' quarantines rows of the input: a quarantine moves rows out "
                       "of an output", at, "quarantine", "put the check on an output (on: SEQ)")
    q, dest = check.quarantine, None
    if q is not None and action != Action.QUARANTINE:
        ctx.errors.add("CHK-007", f"check '{check.name}' has a quarantine destination but does not quarantine",
                       check.where.get("@quarantine"), "quarantine", "add on_violation: quarantine, or remove it")
    elif action == Action.QUARANTINE and q is None:
        ctx.errors.add("CHK-007", f"check '{check.name}' quarantines but names no quarantine destination",
                       check.where.get("@on_violation"), "quarantine", "add quarantine: {path: out/quarantine/"
                       f"{check.name}, format: parquet}}")
    elif q is not None and q.path is not None:
        problem = quarantine_problem(ctx.ws, str(q.path), ctx.project.name, str(check.name))
        if problem is not None:
            ctx.errors.add("CHK-007", f"the quarantine path '{q.path}' of check '{check.name}' {problem}",
                           loc_of(q.path, q.location), str(q.path), PLACE_HINT)
        else:
            dest = Quarantine(str(q.path), q.format)
    return action, dest


def _names(ctx: BindContext, checks: list[Check]) -> None:
    """CHK-006: each check has a name of letters, digits and '_', used once in the project."""
    seen: set[str] = set()
    for check in checks:
        at = loc_of(check.name, check.where.get("@name", check.location))
        if not IDENTIFIER.match(str(check.name)):
            ctx.errors.add("CHK-006", f"check name '{check.name}' is not a name", at, str(check.name),
                           "use letters, digits and '_', e.g. journals_balance")
        elif check.name in seen:
            ctx.errors.add("CHK-006", f"two checks are named '{check.name}'", at, str(check.name),
                           "check names are unique in a project: they name the results in the run record")
        seen.add(str(check.name))


def bind_check(ctx: BindContext, targets: Targets, check: Check) -> Optional[CheckPlan]:
    """The plan of one check (None when it has errors, all recorded in ``ctx``)."""
    kind = CheckKind(check.kind)
    action, quarantine = _action(ctx, check, kind)
    severity = "fail" if action == Action.FAIL else "warn"
    if kind == CheckKind.RECONCILE:
        if check.on is not None:
            ctx.errors.add("CHK-003", f"check '{check.name}' is a reconcile, which compares 'from' and 'to' and "
                           "takes no 'on'", loc_of(check.on, check.where.get("@on")), str(check.on), "remove on:")
        args, where = check.args, check.where
        found_to, to, to_cols = targets.resolve(ctx, check, _text(args.get("to")), where.get("to"), "to", False)
        found_from, src, src_cols = targets.resolve(ctx, check, _text(args.get("from")), where.get("from"), "from")
        if found_to and found_from and src is not None and src >= to:
            ctx.errors.add("CHK-003", f"check '{check.name}' reconciles output {src} to output {to}: 'from' must come "
                           "first", where.get("from"), str(src), "from: input, or an output before 'to'")
            return None
        if to_cols is None or src_cols is None or check.on is not None:
            return None
        plan = CheckPlan(check, kind, to, action, severity, to_cols)
        plan.live_input = src is None and not any(op.seq == to and op.include_deleted for op in targets.outputs)
        return plan if check_kind(kind).binder(ctx, plan, src_cols, src) else None
    found, seq, columns = targets.resolve(ctx, check, check.on, check.where.get("@on", check.location), "on")
    if not found or columns is None:
        return None
    plan = CheckPlan(check, kind, seq, action, severity, columns, quarantine=quarantine)
    ok = check_kind(kind).binder(ctx, plan)
    if check.key is not None and not all_columns(ctx, plan, check.key, check.where.get("@key")):
        ok = False
    if (action == Action.QUARANTINE and quarantine is None) or (check.quarantine is not None and quarantine is None):
        ok = False
    plan.amount_columns = tuple(n for n, t in columns.items() if t.is_decimal)
    return plan if ok else None


def _text(value: object) -> Optional[str]:
    return None if value is None else value if isinstance(value, str) else str(value)


def _sample_keys(plans: list[CheckPlan]) -> None:
    """Each check's sample columns: its ``key``, else a unique check's on the same rows, else its own
    grouping (unique, balanced, reconcile), else ``_row_id`` when the rows have it, else every column."""
    unique = {}
    for p in plans:
        if p.kind == CheckKind.UNIQUE:
            unique.setdefault(p.on, p.group_by)
    for p in plans:
        if p.check.key:
            p.key = tuple(dict.fromkeys(str(k) for k in p.check.key))
        elif p.kind in (CheckKind.UNIQUE, CheckKind.BALANCED, CheckKind.RECONCILE):
            p.key = p.group_by
        elif p.on in unique and not p.on_input:
            p.key = unique[p.on]
        else:
            p.key = ("_row_id",) if "_row_id" in p.row_columns else tuple(p.row_columns)


def bind_checks(ctx: BindContext, input_plan: Optional[InputPlan], operations: list[OperationPlan]) -> list[CheckPlan]:
    """Every valid check of the project, in the order written (input_plan None: the input has errors,
    only the names are checked)."""
    checks = ctx.project.checks
    _names(ctx, checks)
    if input_plan is None:
        return []
    targets = Targets(ctx, input_plan, operations)
    plans = [p for p in (bind_check(ctx, targets, c) for c in checks if c.kind is not None) if p is not None]
    plans = [p for p in plans if p.kind != CheckKind.RECONCILE or stable_groups(ctx, p, operations)]
    _sample_keys(plans)
    return plans

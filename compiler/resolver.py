"""The resolver engine: which resolver a dataset uses, and which locations a rule gives for a period.

Pure, but for :func:`destination_path`, which reads symbolic links. Precedence for every dataset a
run touches: the project's ``resolver_overrides`` -> the dataset's ``resolver_id`` -> the workspace's
``default_resolver`` -> ``ResolverNotFound``.
Rules are tried in order; the first whose ``when`` is true wins; a rule's ``data_level`` finer
than the run's period expands it into several locations.
"""
from __future__ import annotations

import datetime
import os
import re
from dataclasses import asdict, dataclass
from typing import Optional

from .dsl.ast import Binary, Call, ColumnRef, Literal, Node, Paren, Unary
from .dsl.parser import DslSyntaxError, parse_expression
from .errors import ResolutionError
from .model import Dataset, Project, Resolver, ResolverRule, Workspace
from .periods import LEVEL_ORDER, Period, parse_period
from .realpaths import LOOP, inside, outside
from .table_names import HINT as TABLE_HINT, table_name_problem

_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_PERIOD_TOKENS = ("identifier", "YYYY", "MM", "QQ", "DD")
# One run period of each level: what validate substitutes into a rule's table template (the run checks
# the name it substitutes again, for its own period).
_SAMPLE_PERIODS = tuple(parse_period(p) for p in ("2026", "2026-Q1", "2026-01", "2026-01-01"))


@dataclass(frozen=True)
class ResolvedLocation:
    """One place to read: a path/URI with its format, or a catalog table; ``period`` if period-specific."""

    kind: str  # path | table
    target: str
    format: str = "parquet"
    period: Optional[str] = None
    options: tuple = ()


@dataclass
class Resolution:
    """How one dataset of a run was resolved."""

    dataset_id: str
    dataset_name: str
    version: int
    resolver_id: str
    resolver_source: str  # project_override | dataset_resolver | system_default | registered
    rule: str
    locations: list[ResolvedLocation]

    def to_json(self) -> dict:
        """A JSON-ready dict (locations as dicts)."""
        d = asdict(self)
        d["locations"] = [{k: v for k, v in asdict(loc).items() if k != "options" or v} for loc in self.locations]
        return d

    @classmethod
    def from_json(cls, data: dict) -> "Resolution":
        """Inverse of :meth:`to_json`."""
        locs = [ResolvedLocation(l["kind"], l["target"], l.get("format", "parquet"), l.get("period"),
                                 tuple(tuple(o) for o in l.get("options", ()))) for l in data["locations"]]
        return cls(data["dataset_id"], data["dataset_name"], data["version"], data["resolver_id"],
                   data["resolver_source"], data["rule"], locs)


def resolver_precedence(workspace: Workspace, project: Optional[Project], dataset: Dataset) -> tuple[Optional[str], str]:
    """(resolver id or None, precedence level that chose it): the one home of the precedence
    project ``resolver_overrides`` (by dataset id, then name) -> the dataset's ``resolver_id`` -> the
    workspace's ``default_resolver``. Does not check that the resolver exists."""
    overrides = project.resolver_overrides if project else {}
    for key in (dataset.id, dataset.name):
        if key in overrides:
            return overrides[key], "project_override"
    if dataset.resolver_id:
        return dataset.resolver_id, "dataset_resolver"
    if workspace.config.default_resolver:
        return workspace.config.default_resolver, "system_default"
    return None, "none"


def choose_resolver(workspace: Workspace, project: Optional[Project], dataset: Dataset) -> tuple[str, str]:
    """(resolver id, precedence level that chose it); raises ResolutionError (ResolverNotFound)."""
    chosen, source = resolver_precedence(workspace, project, dataset)
    if source == "none":
        raise ResolutionError(f"ResolverNotFound: dataset '{dataset.name}' has no resolver: no project override, "
                              "no resolver_id on the dataset and no default_resolver in ledgerflow.yml.")
    return _known(workspace, chosen, dataset), source


def _known(workspace: Workspace, name: str, dataset: Dataset) -> str:
    if name not in workspace.config.resolvers:
        raise ResolutionError(f"ResolverNotFound: resolver '{name}' (for dataset '{dataset.name}') is not defined in "
                              f"ledgerflow.yml; defined: {', '.join(sorted(workspace.config.resolvers)) or 'none'}.")
    return name


def resolve(workspace: Workspace, project: Optional[Project], dataset: Dataset, version: int,
            period: Period) -> Resolution:
    """Resolve ``dataset`` at ``version`` for ``period`` into locations."""
    resolver_id, source = choose_resolver(workspace, project, dataset)
    resolver = workspace.config.resolvers[resolver_id]
    rule = match_rule(resolver, dataset, period)
    locations = rule_locations(workspace.root, rule, dataset, version, period)
    return Resolution(dataset.id, dataset.name, version, resolver_id, source, rule.name, locations)


def match_rule(resolver: Resolver, dataset: Dataset, period: Period) -> ResolverRule:
    """The first rule whose ``when`` holds; the error lists every rule and why it did not match."""
    reasons = []
    for rule in resolver.rules:
        if rule.when is None:
            return rule
        try:
            ok = evaluate_when(rule.when, period, dataset)
        except ValueError as err:  # a broken rule must not silently hand the dataset to a later rule
            raise ResolutionError(f"resolver '{resolver.name}', rule '{rule.name}': invalid when '{rule.when}': "
                                  f"{err}.") from None
        if ok:
            return rule
        reasons.append(f"rule '{rule.name}': when '{rule.when}' is false for period {period.identifier} "
                       f"(level {period.level}), table {dataset.table_name}")
    listing = "; ".join(reasons) if reasons else "the resolver has no rules"
    raise ResolutionError(f"resolver '{resolver.name}' has no rule matching dataset '{dataset.name}' for period "
                          f"{period.identifier}: {listing}.")


def evaluate_when(text: str, period: Period, dataset: Dataset) -> bool:
    """Evaluate a rule's ``when`` (DSL over period.* and table.name) in Python."""
    try:
        node = parse_expression(text)
    except DslSyntaxError as err:
        raise ValueError(err.message) from None
    values = {("period", "identifier"): period.identifier, ("period", "level"): period.level,
              ("period", "start_date"): period.start, ("period", "end_date"): period.end,
              ("table", "name"): dataset.table_name}
    result = _eval(node, values)
    return result is True


def _eval(node: Node, values: dict):
    if isinstance(node, Literal):
        if node.kind == "number":
            return float(node.value) if "." in str(node.value) else int(node.value)
        return node.value
    if isinstance(node, ColumnRef):
        key = (node.table, node.name)
        if key not in values:
            raise ValueError(f"unknown name '{node.text}'; use period.identifier, period.level, period.start_date, "
                             "period.end_date or table.name")
        return values[key]
    if isinstance(node, Paren):
        return _eval(node.expr, values)
    if isinstance(node, Unary):
        v = _eval(node.operand, values)
        if node.op == "NOT":
            return None if v is None else not v
        return None if v is None else -v
    if isinstance(node, Call):
        if node.name == "DATE" and len(node.args) == 1:
            return datetime.date.fromisoformat(str(_eval(node.args[0], values)))
        args = [_eval(a, values) for a in node.args]
        simple = {"UPPER": lambda s: s.upper(), "LOWER": lambda s: s.lower(), "YEAR": lambda d: d.year,
                  "MONTH": lambda d: d.month, "DAY": lambda d: d.day, "CONTAINS": lambda s, t: t in s, "LEN": len,
                  "LEFT": lambda s, n: s[:n], "RIGHT": lambda s, n: s[-n:] if n > 0 else ""}
        if node.name in simple:
            if any(a is None for a in args):
                return None
            try:
                return simple[node.name](*args)
            except (TypeError, AttributeError):
                raise ValueError(f"{node.name} cannot take {', '.join(repr(a) for a in args)}") from None
        raise ValueError(f"function {node.name} is not available in a resolver's when")
    if isinstance(node, Binary):
        left, right = _eval(node.left, values), _eval(node.right, values)
        if node.op == "AND":
            return left and right
        if node.op == "OR":
            return left or right
        if left is None or right is None:
            return None
        ops = {"=": lambda a, b: a == b, "<>": lambda a, b: a != b, "<": lambda a, b: a < b,
               "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
               "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}
        if node.op in ops:
            try:
                return ops[node.op](left, right)
            except TypeError:
                raise ValueError(f"cannot apply '{node.op}' to {left!r} and {right!r}") from None
    raise ValueError("unsupported expression")


def rule_locations(root: str, rule: ResolverRule, dataset: Dataset, version: int, period: Period) -> list[ResolvedLocation]:
    """Locations of ``rule`` for the run: one per sub-period when ``data_level`` is finer than the run."""
    st = rule.strategy
    template = st.path if st.type == "path" else st.table
    uses_period = any("{{" + t + "}}" in (template or "") for t in _PERIOD_TOKENS)
    if rule.data_level != "any" and LEVEL_ORDER[rule.data_level] > LEVEL_ORDER[period.level]:
        raise ResolutionError(f"rule '{rule.name}' holds {rule.data_level} data, coarser than the run's period "
                              f"{period.identifier} ({period.level}); a coarser location cannot be split.")
    subs = period.sub_periods(rule.data_level) if rule.data_level != "any" else [period]
    out = []
    for sub in subs:
        text = substitute(template or "", dataset, version, sub, rule.name)
        specific = sub.identifier if (uses_period or rule.data_level != "any") else None
        if st.type == "path":
            out.append(ResolvedLocation("path", absolute_path(root, template or "", text, rule_where(rule)), st.format,
                                        specific, st.options))
        else:
            out.append(ResolvedLocation("table", table_name(text, rule_where(rule)), "table", specific,
                                        st.options))
    return out


def rule_where(rule: ResolverRule) -> str:
    """``rule 'name' (ledgerflow.yml:line:column)``: a rule as errors name it (without a place when the
    rule has none, e.g. one built in a test)."""
    return f"rule '{rule.name}'" + (f" ({rule.location})" if rule.location else "")


def token_values(dataset: Dataset, version: int, period: Period) -> dict[str, str]:
    """The value of each token of a rule's template for ``dataset`` at ``version`` and ``period``."""
    start = period.start
    return {"dataset": dataset.name, "dataset_id": dataset.id, "version": str(version),
            "table_name": dataset.table_name, "identifier": period.identifier, "YYYY": f"{start.year:04d}",
            "MM": f"{start.month:02d}", "QQ": f"Q{(start.month - 1) // 3 + 1}", "DD": f"{start.day:02d}"}


def climbs(value: str) -> bool:
    """Whether a token's value could climb folders once in a path: ``..`` or a path separator (either
    one, whatever the system: a rule's path is one text for every machine)."""
    return ".." in value or "/" in value or "\\" in value


def substitute(template: str, dataset: Dataset, version: int, period: Period, rule: str) -> str:
    """Replace path tokens; a token value that could climb directories is an error."""
    values = token_values(dataset, version, period)
    for name, value in values.items():
        if climbs(value):
            raise ResolutionError(f"rule '{rule}': the value '{value}' of token {{{{{name}}}}} could leave the "
                                  "workspace ('..' or a path separator); rename the dataset or table.")
    out = template
    for name, value in values.items():
        out = out.replace("{{" + name + "}}", value)
    leftover = re.search(r"\{\{\s*([^}]*)\}\}", out)
    if leftover:
        raise ResolutionError(f"rule '{rule}': unknown path token {{{{{leftover.group(1)}}}}}; tokens are "
                              + ", ".join("{{" + t + "}}" for t in values) + ".")
    return out


def is_absolute_or_uri(path: str) -> bool:
    """Whether ``path`` is an absolute path or a URI (``file:``, ``hdfs:``, ``s3a:`` ...)."""
    return bool(_URI.match(path)) or os.path.isabs(path)


def absolute_path(root: str, template: str, path: str, where: str) -> str:
    """Absolute form of a resolved path; relative paths must stay inside the workspace.

    ``where`` names what gave the path in an error, e.g. "rule 'files'" or "output 3".
    """
    if is_absolute_or_uri(template):
        return path
    full = os.path.normpath(os.path.join(root, path))
    if not inside(full, root, strict=False):
        raise ResolutionError(f"{where}: the path '{path}' leaves the workspace.")
    return full


def table_name(name: str, where: str) -> str:
    """``name`` when it is a valid table name (:mod:`.table_names`), else a ResolutionError naming
    ``where`` it came from (e.g. "rule 'tables'")."""
    problem = table_name_problem(name)
    if problem:
        raise ResolutionError(f"{where} gives the table name '{name}', which {problem} (TABLE-001); {TABLE_HINT}.")
    return name


def destination_path(root: str, template: str, path: str, where: str) -> str:
    """:func:`absolute_path` of an output's destination, which a relative ``template`` keeps strictly
    inside the workspace as a real path too (:func:`.realpaths.outside`): the workspace folder itself, a
    folder on the way that is a symbolic link out of it (or back to the workspace folder) or a link that
    loops is refused (OUT-VR-002) before anything is written. Checked whenever a run resolves its
    destinations; staging and the swap check again (``adapters/commit/writers.py``). ``where`` names what gave
    the path, with its place (``output 3 (projects/p.yml:9:5)``, :func:`rule_where`)."""
    full = absolute_path(root, template, path, where)
    if is_absolute_or_uri(template):
        return full
    problem = outside(root, full)
    if problem is not None:
        advice = ("Remove the loop, or write the output elsewhere." if LOOP in problem else
                  "A project writes only inside its workspace: a location elsewhere is written as an absolute "
                  "path in a resolver rule of ledgerflow.yml.")
        raise ResolutionError(f"{where} (OUT-VR-002): the path '{path}' {problem}; nothing was written. {advice}")
    return full


# ------------------------------------------------------------------------ checks before a run (validate)
def sample_periods(rule: ResolverRule, dataset: Dataset) -> list[Period]:
    """The periods whose token values ``rule`` can give ``dataset`` a location for, one per level: a run
    of each level whose ``when`` holds on a sample period of that level (a ``when`` that cannot be
    evaluated is left to the run, which reports it), split to the rule's ``data_level``."""
    out: list[Period] = []
    for run in _SAMPLE_PERIODS:
        if rule.data_level != "any" and LEVEL_ORDER[rule.data_level] > LEVEL_ORDER[run.level]:
            continue  # a coarser rule cannot serve this run (the run says so)
        if rule.when is not None:
            try:
                if evaluate_when(rule.when, run, dataset) is not True:
                    continue
            except ValueError:
                continue
        sub = run.sub_periods(rule.data_level)[0]
        if sub not in out:
            out.append(sub)
    return out


def rule_table_problem(rule: ResolverRule, dataset: Dataset, version: int = 1) -> Optional[str]:
    """For a table rule: what is wrong with a table name it gives ``dataset`` (a clause to follow "rule
    'r' ..."), tried with a period of each level the rule can serve; None when every name it gives is a
    table name, or the rule gives a path. A token the substitution does not know is left to the run,
    which names it."""
    st = rule.strategy
    if st.type != "table" or st.table is None:
        return None
    uses_period = any("{{" + t + "}}" in st.table for t in _PERIOD_TOKENS)
    for period in sample_periods(rule, dataset):
        text = st.table
        for token, value in token_values(dataset, version, period).items():
            text = text.replace("{{" + token + "}}", value)
        if "{{" in text:
            return None
        problem = table_name_problem(text)
        if problem:
            when = f" for a {period.level} period ({period.identifier})" if uses_period else ""
            return f"gives the table name '{text}'{when}, which {problem}"
    return None

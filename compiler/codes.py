"""The registry of error codes: every code a diagnostic of ledgerflow carries, its title and its source.

A code's source is the section of the user documentation (``docs/<file>.md (<heading>)``) that
describes the rule it reports. The code strings stay written where a diagnostic is raised, so a
reader sees the code beside its message; ``tests/test_codes.py`` checks that every code-shaped string
in ``compiler/`` and ``adapters/`` is registered here, that every registered code is used, that every
source names an existing heading, and that ``docs/error-codes.md``'s table is the one
:func:`table_section` generates::

    python -m ledgerflow.compiler.codes --table                       # print the table
    python -m ledgerflow.compiler.codes --table docs/error-codes.md   # rewrite it between the markers

Where one check reports different codes depending on what it checks (a dataset reference of a
project's input, of a join, of an append source), the codes are one :class:`ReferenceCodes` here,
never derived from one another.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Optional

WORKSPACE = "docs/workspace.md"
DSL = "docs/dsl.md"
GUARANTEES = "docs/guarantees.md"
COMMANDS = "docs/commands.md"
ENVIRONMENTS = "docs/environments.md"
SCENARIOS = "docs/tests.md (Error codes)"
CHECKS = "docs/checks.md"


@dataclass(frozen=True)
class Code:
    """One error code: the code, what it reports (a title), and where the rule comes from."""

    code: str
    title: str
    source: str


CODES: tuple[Code, ...] = (
    # YAML structure (every YAML file is read strictly)
    Code("YAML-001", "YAML syntax error", f"{WORKSPACE} (Strict YAML)"),
    Code("YAML-002", "duplicate key in a mapping", f"{WORKSPACE} (Strict YAML)"),
    Code("YAML-003", "unknown key (the hint names the closest valid key)", f"{WORKSPACE} (Strict YAML)"),
    Code("YAML-004", "required key missing", f"{WORKSPACE} (Strict YAML)"),
    Code("YAML-005", "value of the wrong type or not one of the allowed values", f"{WORKSPACE} (Strict YAML)"),
    Code("YAML-006", "a key and its synonym both given (arguments/parameters, resolver/datasource_id)",
         f"{WORKSPACE} (Strict YAML)"),
    Code("YAML-007", "YAML cannot be loaded: aliases expand past 250,000 values, an alias inside the value "
         "it names, or nesting too deep", f"{GUARANTEES} (Names are data, never SQL)"),
    Code("YAML-008", "YAML file larger than 10 MB", f"{GUARANTEES} (Names are data, never SQL)"),
    # workspace and datasets
    Code("WS-002", "an id or name used by two files of the workspace", f"{WORKSPACE} (Ids, names and references)"),
    Code("WS-004", "a resolver named but not defined in ledgerflow.yml", f"{WORKSPACE} (ledgerflow.yml)"),
    Code("DS-001", "unknown column type", f"{WORKSPACE} (Datasets)"),
    Code("DS-002", "invalid column name (user columns may not start with '_')", f"{WORKSPACE} (Datasets)"),
    Code("DS-003", "column declared twice", f"{WORKSPACE} (Datasets)"),
    Code("DS-004", "versions missing, duplicated or not positive integers", f"{WORKSPACE} (Datasets)"),
    # project references
    Code("PRJ-001", "input dataset not found", f"{WORKSPACE} (Projects)"),
    Code("PRJ-002", "input dataset disabled", f"{WORKSPACE} (Projects)"),
    Code("PRJ-003", "input dataset version missing or disabled, or no active version",
         f"{WORKSPACE} (Projects)"),
    Code("RES-001", "no resolver for a dataset (project override, dataset resolver_id, system default)",
         f"{WORKSPACE} (Resolvers)"),
    # operation entity
    Code("BR-001", "operation seq not unique or not a positive integer", f"{WORKSPACE} (Operations)"),
    Code("BR-006", "named selector not defined in the project", f"{DSL} (Named selectors)"),
    Code("BR-014", "aggregate function outside aggregate and append", f"{DSL} (Aggregation)"),
    Code("BR-015", "column reference that resolves to no working column or join alias", f"{DSL} (Column references)"),
    # update
    Code("UPD-VR-001", "update without assignments", f"{WORKSPACE} (update)"),
    Code("UPD-VR-002", "invalid, system or repeated assignment column", f"{WORKSPACE} (update)"),
    Code("UPD-VR-003", "named selector of an update not defined", f"{WORKSPACE} (update)"),
    Code("UPD-VR-004", "update selector does not parse", f"{WORKSPACE} (update)"),
    Code("UPD-VR-005", "update assignment expression does not parse", f"{WORKSPACE} (update)"),
    # runtime joins
    Code("JOIN-VR-001", "join dataset not found", f"{WORKSPACE} (Runtime joins)"),
    Code("JOIN-VR-002", "join dataset disabled", f"{WORKSPACE} (Runtime joins)"),
    Code("JOIN-VR-003", "join dataset version not found", f"{WORKSPACE} (Runtime joins)"),
    Code("JOIN-VR-004", "join alias invalid or already used in the operation", f"{WORKSPACE} (Runtime joins)"),
    Code("JOIN-VR-005", "join alias conflicts with the working dataset's table name", f"{WORKSPACE} (Runtime joins)"),
    Code("JOIN-VR-006", "join condition does not compile", f"{WORKSPACE} (Runtime joins)"),
    Code("JOIN-VR-007", "unknown column in a join condition", f"{WORKSPACE} (Runtime joins)"),
    Code("JOIN-VR-008", "unknown column of a join alias in an assignment or selector", f"{WORKSPACE} (Runtime joins)"),
    # append
    Code("APPEND_001", "append source dataset not found or disabled", f"{WORKSPACE} (append)"),
    Code("APPEND_002", "append source dataset version not found", f"{WORKSPACE} (append)"),
    Code("APPEND_003", "appended column is not a working column, or of another type",
         f"{WORKSPACE} (append)"),
    Code("APPEND_004", "append expression does not parse", f"{WORKSPACE} (append)"),
    Code("APPEND_005", "invalid aggregation in an append", f"{WORKSPACE} (append)"),
    Code("APPEND_006", "unknown column in an append expression or group_by", f"{WORKSPACE} (append)"),
    Code("APPEND_007", "no resolver for the append source dataset", f"{WORKSPACE} (append)"),
    # expressions
    Code("DSL-001", "expression syntax error", f"{DSL} (Syntax)"),
    Code("DSL-002", "expression type error", f"{DSL} (Types)"),
    Code("DSL-003", "unknown function", f"{DSL} (Functions)"),
    Code("DSL-004", "wrong number of function arguments", f"{DSL} (Functions)"),
    Code("DSL-005", "column neither grouped by nor aggregated", f"{DSL} (Aggregation)"),
    Code("DSL-006", "aggregation without an aggregate function", f"{DSL} (Aggregation)"),
    Code("SEL-001", "named selectors refer to each other in a cycle", f"{DSL} (Named selectors)"),
    Code("SEL-002", "named selectors nest too deeply", f"{DSL} (Named selectors)"),
    # outputs
    Code("OUT-VR-001", "a registered output's destination without {{version}} in its path, or a catalog table", f"{GUARANTEES} (A registered version never changes)"),
    Code("OUT-VR-002", "an output path outside the workspace (absolute, a URI, a '..' climb, the workspace folder "
         "itself, a symbolic link out of it or one that loops)", f"{GUARANTEES} (It deletes only what it wrote)"),
    Code("OUT-VR-003", "an output's destination that another output or a check's quarantine destination of the "
         "workspace may also write (the same folder as a real path, one inside the other, or the same table)",
         f"{WORKSPACE} (One writer per destination)"),
    Code("OUT-VR-004", "an output's destination in (or holding) ledgerflow's own folders: .ledgerflow/, target/runs "
         "and the other folders of target/ ledgerflow writes",
         f"{WORKSPACE} (One writer per destination)"),
    Code("OUT-CSV-001", "a CSV output of one column with a NULL in it (Spark writes the row as an empty line, which "
         "every CSV reader skips): refused before anything is written", f"{GUARANTEES} (Data is written exactly or not at all)"),
    Code("TABLE-001", "a table name Spark cannot take (a destination's catalog_table, or the name a resolver's table "
         "rule gives an output's table or a dataset read through it), or a destination table that cannot fill a "
         "path token", f"{GUARANTEES} (Table names are Spark's)"),
    # input files (read exactly or refused)
    Code("INPUT-001", "a data file of an input location lacks a declared column (the file is named)",
         f"{GUARANTEES} (Data is read exactly or not at all)"),
    Code("INPUT-002", "a CSV header names a column twice, or files of one location disagree on their system "
         "columns or a Parquet column's type", f"{GUARANTEES} (Data is read exactly or not at all)"),
    Code("INPUT-003", "a CSV or JSON file that is not whole records: empty, a quoted field never closed, text "
         "after a closing quote, a record with the wrong number of fields, a multi-line file whose records "
         "end with different line breaks (file and line named)",
         f"{GUARANTEES} (Data is read exactly or not at all)"),
    Code("INPUT-004", "an input file changed between the fingerprint a run records and the end of its read (for "
         "a period of a fused range: since the range read every period's files); nothing is published for the "
         "period", f"{GUARANTEES} (Replay checks its inputs)"),
    # runs (one writer per destination partition)
    Code("RUN-001", "a destination partition the run needs is being written by another live run (named with "
         "its process and host); `run --wait` waits for it", f"{GUARANTEES} (One writer per partition)"),
    # closed periods (ledgerflow periods close | reopen)
    Code("PERIOD-001", "a run of a closed project-period (who closed it, when, the note; `restate` changes it), or "
         "a run of another project that would replace a partition a closed project-period published",
         f"{COMMANDS} (Closed periods)"),
    Code("PERIOD-002", "closing a project-period that is already closed (who closed it and when)",
         f"{COMMANDS} (Closed periods)"),
    Code("PERIOD-003", "reopening a project-period that is not closed", f"{COMMANDS} (Closed periods)"),
    Code("PERIOD-004", "closing a project-period while a run of it is under way (named with its process and "
         "host); close it when that run has finished", f"{COMMANDS} (Closed periods)"),
    # environments and promotion (--env, ledgerflow envs, ledgerflow promote)
    Code("ENV-001", "an environment name that is not one (--env, $LEDGERFLOW_ENV, promote --from/--to, envs): "
         "lower-case letters, digits, '_' and '-'", f"{ENVIRONMENTS} (Names)"),
    Code("ENV-002", "a run in an environment other than prod with an output to a catalog table or URI it registers, "
         "or to a CSV or JSON URI (written in place, where prod's readers read it)", f"{ENVIRONMENTS} (What an "
         "environment publishes)"),
    Code("ENV-003", "a promotion into a closed period of the target (`restate` changes a closed period)",
         f"{ENVIRONMENTS} (Promotion)"),
    Code("ENV-004", "a promotion of a project-period the source environment has not published",
         f"{ENVIRONMENTS} (Promotion)"),
    Code("ENV-005", "a promotion that would leave the target reading another upstream version than the promoted "
         "rows were computed from (promote the upstream project too)", f"{ENVIRONMENTS} (Promotion)"),
    Code("ENV-006", "an environment command that cannot apply: promoting an environment onto itself, dropping "
         "prod, `envs path` of a catalog-table output or of an output never published", f"{ENVIRONMENTS} (Commands)"),
    Code("ENV-007", "a promotion of a record that is not what the source shows in this workspace: a partition or "
         "version outside the workspace (a copied or moved workspace), a version changed since it was published, "
         "or a journal folder (target/promotions) that is a link", f"{ENVIRONMENTS} (Promotion)"),
    Code("ENV-008", "a promotion whose copy of an environment's rows into a catalog table or URI failed on "
         "Spark (exit 3): rolled back, every partition it changed shows what it showed before",
         f"{ENVIRONMENTS} (Catalog tables and URIs)"),
    # machine-readable results (run --results)
    Code("RESULTS-001", "`run --results` naming a folder, a link, a file that is not results ledgerflow wrote, or a "
         "file in a folder that does not exist",
         f"{COMMANDS} (Machine-readable results)"),
    # OpenLineage events (ledgerflow events send)
    Code("EVENTS-001", "`events send` left events pending: the receiver still fails, or events are off",
         "docs/openlineage.md (When the receiver is down)"),
    # the manifest (ledgerflow manifest)
    Code("MANIFEST-001", "`manifest --out` naming a folder, a link, a file that is not a manifest ledgerflow wrote, "
         "or a file in a folder that does not exist",
         "docs/manifest.md (Writing it)"),
    # restating a closed period (ledgerflow restate)
    Code("RESTATE-001", "a restatement without a reason (a blank --reason)", f"{COMMANDS} (Restating a closed period)"),
    Code("RESTATE-002", "restating an open project-period (use `run`)", f"{COMMANDS} (Restating a closed period)"),
    Code("RESTATE-003", "restating a project whose output (or the superseded run's) is a catalog table or remote "
         "URI: its published rows could not stay readable", f"{COMMANDS} (Restating a closed period)"),
    Code("RESTATE-004", "the rows the superseded run published are gone from the version folder its record names",
         f"{COMMANDS} (Restating a closed period)"),
    Code("RESTATE-005", "another run published the project-period while the restatement ran (nothing published)",
         f"{COMMANDS} (Restating a closed period)"),
    Code("RESTATE-006", "restating a project that writes no output any more",
         f"{COMMANDS} (Restating a closed period)"),
    Code("RESTATE-007", "restate --from-env where the environment did not publish an output the superseded run "
         "published (re-pointing would leave it showing the superseded rows)", f"{ENVIRONMENTS} (Restating from an environment)"),
    # the workspace graph (projects feeding projects)
    Code("GRAPH-001", "projects depend on each other in a cycle (spelled out)", f"{COMMANDS} (Projects feeding projects)"),
    Code("GRAPH-002", "a dataset registered by more than one output", f"{COMMANDS} (Projects feeding projects)"),
    Code("GRAPH-003", "a project reads a registered dataset whose producing project has errors", f"{COMMANDS} (Projects feeding projects)"),
    # checks before publish (a project's checks:)
    Code("CHK-001", "a check reads a column its rows do not have (an output's written columns, or the input's)",
         f"{CHECKS} (Codes)"),
    Code("CHK-002", "an expect that is not a row condition (does not parse, not true/false, or aggregates)",
         f"{CHECKS} (Codes)"),
    Code("CHK-003", "a check's on (or reconcile's from/to) is missing or names no output of the project",
         f"{CHECKS} (Codes)"),
    Code("CHK-004", "on_violation: quarantine on a check that does not judge single rows of an output",
         f"{CHECKS} (Codes)"),
    Code("CHK-005", "a tolerance that is not a non-negative decimal of at most 38 digits", f"{CHECKS} (Codes)"),
    Code("CHK-006", "a check name that is not a name, or used by two checks", f"{CHECKS} (Codes)"),
    Code("CHK-007", "a quarantine destination missing, unused, outside the workspace, in ledgerflow's own folders, or "
         "overlapping (as a real path) a dataset's location, an output's destination or another check's quarantine "
         "destination", f"{CHECKS} (Codes)"),
    Code("CHK-008", "row_count bounds that are not non-negative integers, absent, or min above max",
         f"{CHECKS} (Codes)"),
    Code("CHK-009", "an accepted value not of its column's type, or no values", f"{CHECKS} (Codes)"),
    Code("CHK-010", "a reconcile measure that is not count or SUM of a decimal column at both ends, or a balanced "
         "amount that is not a decimal column", f"{CHECKS} (Codes)"),
    Code("CHK-011", "explained_by names something other than an operation between reconcile's from and to",
         f"{CHECKS} (Codes)"),
    Code("CHK-012", "a check with no kind or two kinds", f"{CHECKS} (Codes)"),
    Code("CHK-013", "a reconcile grouped by a column that an update before its output assigns", f"{CHECKS} (Codes)"),
    Code("CHK-014", "a reconcile in a workspace whose ledgerflow.yml says bridge: off (no run records the bridge it judges)",
         f"{CHECKS} (Codes)"),
    # scenario test files (ledgerflow test)
    Code("TEST-001", "a test file's structure: rows, given data or expect/error not as docs/tests.md describes", SCENARIOS),
    Code("TEST-002", "the tested project is not in the workspace or does not compile", SCENARIOS),
    Code("TEST-003", "the test's period or run_started_at is not valid", SCENARIOS),
    Code("TEST-004", "a dataset the project reads is not given by the test", SCENARIOS),
    Code("TEST-005", "a given dataset is unknown, given twice or not read by the project", SCENARIOS),
    Code("TEST-006", "a given row names a column its dataset does not have", SCENARIOS),
    Code("TEST-007", "a given value cannot be read exactly as its column's type", SCENARIOS),
    Code("TEST-008", "a given CSV or Parquet file beside the test is missing or unreadable", SCENARIOS),
    Code("TEST-009", "an expected output is not an output of the project, or expected twice", SCENARIOS),
    Code("TEST-010", "an expected row names a column the output does not write", SCENARIOS),
    Code("TEST-011", "an expected value cannot be read exactly as its output column's type", SCENARIOS),
    Code("TEST-012", "two tests of the workspace have the same name", SCENARIOS),
    Code("TEST-013", "a given CSV or Parquet file's path leads outside the workspace", SCENARIOS),
    # starting out (ledgerflow init, ledgerflow datasets infer)
    Code("INIT-001", "init into a folder that is not empty (without --force), is a file, cannot be written, "
         "or holds a symbolic link out of it where a file would be written",
         f"{COMMANDS} (Starting a workspace: init)"),
    Code("INFER-001", "datasets infer: no file or folder at the location, no data files in it, a file that "
         "cannot be read as its format, or a CSV record with more or fewer fields than the header", f"{COMMANDS} (A dataset from its files: datasets infer)"),
    Code("INFER-002", "datasets infer: the files' format cannot be told from their names or first bytes, or a "
         "folder mixes formats (give --format)", f"{COMMANDS} (A dataset from its files: datasets infer)"),
    Code("INFER-003", "datasets infer: names that cannot be column names (each named with the rename to make), "
         "names that differ only in case, a --table that is not a name, or no column to declare",
         f"{COMMANDS} (A dataset from its files: datasets infer)"),
    Code("INFER-004", "datasets infer: the data's system columns do not fit the temporal mode (bitemporal without "
         "_period_from and _period_to, or both kinds without --temporal-mode)",
         f"{COMMANDS} (A dataset from its files: datasets infer)"),
    Code("INFER-005", "datasets infer: the files of the location disagree on a column's type or on their system "
         "columns", f"{COMMANDS} (A dataset from its files: datasets infer)"),
)

BY_CODE: dict[str, Code] = {c.code: c for c in CODES}

# What a code looks like in the source: a family of capitals (``JOIN-VR``, ``APPEND``) and three digits.
PATTERN = re.compile(r"\b[A-Z]{2,}(?:-[A-Z]{2,})*[-_][0-9]{3}\b")


def code(name: str) -> Code:
    """The registered :class:`Code` ``name``; KeyError for an unregistered one."""
    return BY_CODE[name]


@dataclass(frozen=True)
class ReferenceCodes:
    """The codes of one kind of dataset reference: not found, disabled, no such version, no resolver."""

    not_found: str
    disabled: str
    no_version: str
    no_resolver: str


INPUT_REFERENCE = ReferenceCodes("PRJ-001", "PRJ-002", "PRJ-003", "RES-001")
JOIN_REFERENCE = ReferenceCodes("JOIN-VR-001", "JOIN-VR-002", "JOIN-VR-003", "RES-001")
# The append spec has no code of its own for a disabled source: it is not found (APPEND_001).
APPEND_REFERENCE = ReferenceCodes("APPEND_001", "APPEND_001", "APPEND_002", "APPEND_007")

# The codes an expression error of each kind gets (``dsl/translate.py``); callers override per context.
EXPRESSION_DEFAULTS: dict[str, str] = {
    "syntax": "DSL-001", "type": "DSL-002", "function": "DSL-003", "arity": "DSL-004",
    "not_grouped": "DSL-005", "no_aggregate": "DSL-006", "unknown_column": "BR-015",
    "unknown_alias": "BR-015", "aggregate": "BR-014", "selector_undefined": "BR-006",
    "selector_cycle": "SEL-001", "selector_depth": "SEL-002",
}

TABLE_FILE = "docs/error-codes.md"
BEGIN = "<!-- error codes: generated by `python -m ledgerflow.compiler.codes --table docs/error-codes.md` -->"
END = "<!-- end of error codes -->"


def source_parts(source: str) -> tuple[str, str]:
    """``("docs/workspace.md", "Datasets")`` of the source ``docs/workspace.md (Datasets)``."""
    path, _, rest = source.partition(" (")
    return path, rest[:-1] if rest.endswith(")") else rest


def anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _source_link(source: str) -> str:
    # The table lives in docs/, so a docs/ source links relative to it.
    path, section = source_parts(source)
    target = path[len("docs/"):] if path.startswith("docs/") else "../" + path
    name = target.rsplit("/", 1)[-1]
    return f"[{name} ({section})]({target}#{anchor(section)})" if section else f"[{name}]({target})"


def table_section() -> str:
    """The table of error codes in docs/error-codes.md, markers included (a Markdown table)."""
    lines = [BEGIN, "| code | what it reports | described in |", "|---|---|---|"]
    for c in CODES:
        lines.append(f"| `{c.code}` | {c.title.replace('|', '/')} | {_source_link(c.source)} |")
    lines.append(END)
    return "\n".join(lines)


def replace_section(text: str) -> Optional[str]:
    """``text`` (docs/error-codes.md) with its table regenerated; None when it has no markers."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        return None
    return text[:start] + table_section() + text[end + len(END):]


def main(argv: list[str]) -> int:
    """``--table``: print the table; ``--table PATH``: rewrite it in PATH between the markers."""
    if not argv or argv[0] != "--table" or len(argv) > 2:
        print(f"usage: python -m ledgerflow.compiler.codes --table [{TABLE_FILE}]", file=sys.stderr)
        return 2
    if len(argv) == 1:
        print(table_section())
        return 0
    with open(argv[1], encoding="utf-8") as fh:
        text = fh.read()
    new = replace_section(text)
    if new is None:
        print(f"{argv[1]} has no error-code markers ({BEGIN} ... {END})", file=sys.stderr)
        return 1
    if new != text:
        with open(argv[1], "w", encoding="utf-8") as fh:
            fh.write(new)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))

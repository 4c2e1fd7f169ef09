"""Helpers for the end-to-end tests: drive the ``ledgerflow`` CLI in-process and read outputs back on Spark.

Every test that runs a project requests the session-scoped ``spark`` fixture first, so the CLI's
``getOrCreate()`` reuses that one local SparkSession. Outputs are read back from the CSV folders the
runner wrote (partitioned by ``_period``), every column cast to the type it was declared with.
"""
from __future__ import annotations

import datetime
import json
import os
import re
import textwrap
from decimal import Decimal
from pathlib import Path
from typing import Iterable, Optional

from click.testing import CliRunner, Result

from ledgerflow.adapters.cli import main

GL_ID = "0a000000-0000-4000-8000-000000000001"
ACCOUNTS_ID = "0a000000-0000-4000-8000-000000000002"
COST_CENTERS_ID = "0a000000-0000-4000-8000-000000000003"
RATES_ID = "0a000000-0000-4000-8000-000000000004"
BUDGETS_ID = "0a000000-0000-4000-8000-000000000005"

D = Decimal

GL_COLUMNS = ["journal_id", "line_number", "posting_date", "account_code", "cost_center_code", "currency",
              "amount_local", "amount_reporting", "description", "source_system"]
# System columns of a working dataset read from a `period` input, in the order outputs write them
# (`_period` is the partition column, not a data column).
SYSTEM_COLUMNS = ["_row_id", "_deleted", "_updated_at", "_labels", "_source_dataset", "_operation_seq"]

# Declared types (datasets/*.yml) and the types of the system and computed columns.
TYPES = {
    "journal_id": "string", "line_number": "int", "posting_date": "date", "account_code": "string",
    "cost_center_code": "string", "currency": "string", "amount_local": "decimal(18,2)",
    "amount_reporting": "decimal(18,2)", "description": "string", "source_system": "string",
    "from_currency": "string", "to_currency": "string", "rate": "decimal(18,6)", "rate_type": "string",
    "code": "string", "name": "string", "type": "string", "category": "string", "is_active": "boolean",
    "account_active": "boolean", "account_type": "string", "total_amount": "decimal(28,2)", "line_count": "bigint",
    "applied_rate": "decimal(18,6)", "region": "string",
    "_row_id": "string", "_deleted": "boolean", "_updated_at": "timestamp", "_labels": "string",
    "_source_dataset": "string", "_operation_seq": "int", "_period": "string", "_period_from": "date",
    "_period_to": "date",
}

# The sample GL (projects/finance), in row order (every row _period = "2026-01").
GL_ROWS = [
    ("JE-001", 1, "2026-01-05", "4100", "CC-100", "USD", "15000.00", "15000.00", "Product revenue", "ERP"),
    ("JE-001", 2, "2026-01-05", "1200", "CC-100", "USD", "15000.00", "15000.00", "AR - product revenue", "ERP"),
    ("JE-002", 1, "2026-01-10", "5100", "CC-200", "EUR", "8500.00", None, "Office supplies", "EXPENSE"),
    ("JE-002", 2, "2026-01-10", "2100", "CC-200", "EUR", "-8500.00", None, "AP - office supplies", "EXPENSE"),
    ("JE-003", 1, "2026-01-15", "4200", "CC-300", "GBP", "22000.00", None, "Consulting revenue", "ERP"),
    ("JE-003", 2, "2026-01-15", "1200", "CC-300", "GBP", "22000.00", None, "AR - consulting", "ERP"),
    ("JE-004", 1, "2026-01-20", "5200", "CC-100", "USD", "3200.00", "3200.00", "Travel expense", "EXPENSE"),
    ("JE-004", 2, "2026-01-20", "2100", "CC-100", "USD", "-3200.00", "-3200.00", "AP - travel", "EXPENSE"),
    ("JE-005", 1, "2026-01-25", "4100", "CC-200", "JPY", "2500000.00", None, "Product revenue JP", "ERP"),
    ("JE-005", 2, "2026-01-25", "1200", "CC-200", "JPY", "2500000.00", None, "AR - product JP", "ERP"),
]
# data/gl/monthly/2026-02.csv and 2026-03.csv
GL_FEB_MAR_ROWS = [
    ("JE-101", 1, "2026-02-12", "4100", "CC-100", "USD", "1000.00", "1000.00", "Product revenue Feb", "ERP"),
    ("JE-101", 2, "2026-02-12", "1200", "CC-100", "USD", "1000.00", "1000.00", "AR - product Feb", "ERP"),
    ("JE-102", 1, "2026-03-16", "5100", "CC-400", "USD", "250.00", "250.00", "Office supplies Mar", "EXPENSE"),
    ("JE-102", 2, "2026-03-16", "2100", "CC-400", "USD", "-250.00", "-250.00", "AP - office supplies Mar", "EXPENSE"),
]

UUID7 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def gl_row(raw: tuple) -> dict:
    """A GL row of the table above as typed values (the declared types)."""
    j, ln, pd, acct, cc, cur, local, rep, desc, src = raw
    return {"journal_id": j, "line_number": ln, "posting_date": datetime.date.fromisoformat(pd), "account_code": acct,
            "cost_center_code": cc, "currency": cur, "amount_local": D(local),
            "amount_reporting": D(rep) if rep is not None else None, "description": desc, "source_system": src}


def gl_expected(rec: dict, updated_at=None, raw_rows=GL_ROWS, change=None, **extra) -> list[dict]:
    """The GL rows as a `period` input yields them in run ``rec`` (system columns filled, ``_period`` the
    run's partition), plus ``extra`` columns; ``change(row)`` may return per-row overrides. GL order."""
    out = []
    for raw in raw_rows:
        row = gl_row(raw)
        row.update(_deleted=False, _updated_at=updated_at, _labels="", _source_dataset=GL_ID, _operation_seq=0)
        row.update(extra)
        row["_period"] = rec["period"]["identifier"]
        if change is not None:
            row.update(change(row) or {})
        out.append(row)
    return by_key(out, "journal_id", "line_number")


def in_gl_order(rows: Iterable[dict], *drop: str) -> list[dict]:
    """Rows sorted like the GL (journal_id, line_number), without the ``drop`` columns."""
    return by_key(without(list(rows), *drop), "journal_id", "line_number")


# ------------------------------------------------------------------------------------------------- CLI
def cli(ws, *args: str) -> Result:
    """``ledgerflow --workspace WS ARGS...`` in-process (stdout and stderr kept apart)."""
    return CliRunner().invoke(main, ["--workspace", str(ws), *[str(a) for a in args]])


def describe(result: Result) -> str:
    """Exit code, stdout and stderr of a CLI result, for assertion messages."""
    exc = "" if result.exception is None or isinstance(result.exception, SystemExit) else repr(result.exception)
    return f"exit {result.exit_code} {exc}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"


def run_id_of(result: Result) -> str:
    """The run id the runner printed first (``Run <id>: ...``)."""
    m = re.search(r"^Run ([0-9a-f-]{36}):", result.stdout, re.M)
    assert m, describe(result)
    return m.group(1)


def run(ws, project: str, period: str = "2026-01", *extra: str, expect: int = 0) -> Result:
    """``ledgerflow run PROJECT --period P``; asserts the exit code."""
    result = cli(ws, "run", project, "--period", period, *extra)
    assert result.exit_code == expect, describe(result)
    return result


def run_ok(ws, project: str, period: str = "2026-01", *extra: str) -> dict:
    """Run ``project`` successfully and return its run record (``target/runs/<id>/run.json``)."""
    result = run(ws, project, period, *extra)
    rec = record(ws, run_id_of(result))
    assert rec["status"] == "completed", rec
    return rec


def record(ws, run_id: str) -> dict:
    """The run record written to ``target/runs/<run_id>/run.json``."""
    path = Path(ws) / "target" / "runs" / run_id / "run.json"
    assert path.is_file(), f"no run record at {path}"
    return json.loads(path.read_text(encoding="utf-8"))


def output_entry(rec: dict, seq: int) -> dict:
    """The record's ``outputs`` entry of operation ``seq``."""
    found = [o for o in rec["outputs"] if o["operation_seq"] == seq]
    assert len(found) == 1, rec["outputs"]
    return found[0]


# ----------------------------------------------------------------------------------------- reading back
def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def read_csv(spark, path: str):
    """A CSV folder as strings: unquoted empty fields are NULL, a quoted empty field is ''."""
    return (spark.read.option("header", "true").option("inferSchema", "false")
            .option("nullValue", "\u0000<null>\u0000").csv(path))


def typed(df, types: Optional[dict] = None):
    """Cast every column to its declared type (``TYPES``, overridden by ``types``); keeps the column order."""
    all_types = {**TYPES, **(types or {})}
    exprs = []
    for c in df.columns:
        t = all_types.get(c)
        if t is None:
            exprs.append(_quoted(c))
        elif t == "timestamp":  # the UTC wall clock as a naive datetime, whatever the local time zone
            exprs.append(f"CAST(CAST({_quoted(c)} AS timestamp) AS timestamp_ntz) AS {_quoted(c)}")
        else:
            exprs.append(f"CAST({_quoted(c)} AS {t}) AS {_quoted(c)}")
    return df.selectExpr(*exprs)


def read_partition(spark, location: str, types: Optional[dict] = None) -> tuple[list[str], list[dict]]:
    """One written partition (the run record's output location): (its data columns, typed rows)."""
    df = typed(read_csv(spark, location), types)
    return list(df.columns), [r.asDict() for r in df.collect()]


def read_table(spark, location: str, period: str, types: Optional[dict] = None) -> tuple[list[str], list[dict]]:
    """The destination folder holding ``location`` read as a ``_period``-partitioned dataset, rows of ``period``."""
    table = os.path.dirname(location.rstrip("/"))
    assert os.path.basename(location.rstrip("/")) == f"_period={period}", location
    df = read_csv(spark, table)
    assert "_period" in df.columns, df.columns
    df = typed(df.where(f"_period = '{period}'"), types)
    return list(df.columns), [r.asDict() for r in df.collect()]


def read_output(spark, rec: dict, seq: int, types: Optional[dict] = None) -> tuple[list[str], list[dict]]:
    """Output ``seq`` of a run, read through its partitioned destination (``_period`` included)."""
    out = output_entry(rec, seq)
    cols, rows = read_table(spark, out["location"], rec["period"]["identifier"], types)
    assert len(rows) == out["rows"], (len(rows), out)
    return cols, rows


def by_key(rows: Iterable[dict], *keys: str) -> list[dict]:
    """Rows sorted by ``keys`` (NULLs first)."""
    return sorted(rows, key=lambda r: tuple((r[k] is not None, r[k] if r[k] is not None else "") for k in keys))


def started(rec: dict) -> datetime.datetime:
    """The run's start time as the naive UTC timestamp the SQL binds."""
    return datetime.datetime.fromisoformat(rec["started_at"])


def check_row_ids(rows: list[dict], rec: dict) -> None:
    """Every ``_row_id`` is a distinct UUIDv7 whose timestamp is the run's start (millisecond precision)."""
    ids = [r["_row_id"] for r in rows]
    assert len(set(ids)) == len(ids), ids
    ms = int(started(rec).replace(tzinfo=datetime.timezone.utc).timestamp() * 1000)
    for rid in ids:
        assert UUID7.match(rid), rid
        assert rid.replace("-", "")[:12] == f"{ms:012x}", (rid, rec["started_at"])


def without(rows: list[dict], *cols: str) -> list[dict]:
    """Rows without the given columns (after they were checked separately)."""
    return [{k: v for k, v in r.items() if k not in cols} for r in rows]


# ------------------------------------------------------------------------------------------ workspaces
def write(root, rel: str, text: str) -> str:
    """Write dedented ``text`` to ``root/rel`` (parents created); returns what was written."""
    text = textwrap.dedent(text).lstrip("\n")
    path = Path(root) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return text


def edit(root, rel: str, old: str, new: str, count: int = 1) -> str:
    """Replace ``old`` by ``new`` in ``root/rel`` (which must contain it ``count`` times); returns the new text."""
    path = Path(root) / rel
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == count, (rel, old, text)
    text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    return text


_project_counter = [0]


def project_yaml(name: str, operations: str, input_dataset: str = "gl", extra: str = "") -> str:
    """A project YAML with a fresh UUID, the given top-level ``extra`` keys and ``operations`` (YAML list)."""
    _project_counter[0] += 1
    pid = f"0d000000-0000-4000-8000-{_project_counter[0]:012d}"
    ops = textwrap.indent(textwrap.dedent(operations).strip("\n"), "  ")
    head = f"id: {pid}\nname: {name}\nversion: 1\nstatus: active\ninput_dataset_id: {input_dataset}\n"
    return head + textwrap.dedent(extra).lstrip("\n") + "operations:\n" + ops + "\n"


# a delete written with its deleted rows and registered as ``marked``: its rows arrive deleted downstream
MARKED_UPSTREAM = """
- {seq: 1, name: Drop receivables, type: delete, selector: 'transactions.account_code = "1200"', arguments: {}}
- seq: 2
  name: Register with the deleted rows
  type: output
  arguments:
    include_deleted: true
    destination: {path: "out/marked/v{{version}}", format: parquet}
    register_as_dataset: marked"""


def add_project(root, name: str, operations: str, input_dataset: str = "gl", extra: str = "") -> str:
    """Write ``projects/<name>.yml``; returns the text. A project file written again (the project changed) keeps
    its id: it is the same project (closes, for one, are kept by project id)."""
    text = project_yaml(name, operations, input_dataset, extra)
    path = Path(root) / "projects" / f"{name}.yml"
    if path.exists():
        kept = re.search(r"^id: (.*)$", path.read_text(encoding="utf-8"), re.M)
        if kept:
            text = re.sub(r"^id: .*$", lambda _: f"id: {kept.group(1)}", text, count=1, flags=re.M)
    return write(root, f"projects/{name}.yml", text)


def versions_dir(location: str) -> Path:
    """The hidden folder holding a destination partition's written versions."""
    loc = Path(location)
    return loc.parent / ".lf_versions" / loc.name


def add_checked_copy(ws) -> None:
    """journal_controls gains a second output (seq 4, registering ``journal_lines_copy``) and two checks of it, one
    naming what it registers, one its name: where a check's ``on`` resolves to is the compiler's to say."""
    project = ws / "projects" / "journal_controls.yml"
    project.write_text(project.read_text().replace(
        "checks:\n", "  - seq: 4\n    name: Write the copy\n    type: output\n    arguments:\n"
        "      destination: {path: \"out/journal_lines_copy/v{{version}}\", format: parquet}\n"
        "      register_as_dataset: journal_lines_copy\n"
        "checks:\n  - {name: copy_has_lines, on: journal_lines_copy, row_count: {min: 1}}\n"
        "  - {name: copy_by_name, on: Write the copy, row_count: {min: 1}}\n", 1))

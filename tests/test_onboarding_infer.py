"""``ledgerflow datasets infer LOCATION --name NAME`` (issue 32 point 5, docs/commands.md "A dataset from its
files: datasets infer"): the sample's datasets inferred from their own files, compiled on; exact Parquet and
ORC types, CSV and JSON typed from a sample; system columns; invalid names; every bad input. No Spark."""
from __future__ import annotations

import filecmp
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import yaml
from click.testing import CliRunner

from cli_support import cli, describe
from conftest import copy_workspace
from ledgerflow.adapters.cli import main

REPO = Path(__file__).resolve().parents[1]
FINANCE = REPO / "projects" / "finance"
DATASETS = ("accounts", "budgets", "cost_centers", "exchange_rates", "gl")
# What a sample of CSV text cannot tell: codes written as digits read as integers, and the rates' sixth
# decimal place, which no rate in the sample uses.
CSV_CANNOT_TELL = {("accounts", "code"): "integer", ("budgets", "account_code"): "integer",
                   ("gl", "account_code"): "integer", ("exchange_rates", "rate"): "decimal(18,5)"}
ARROW = {"string": pa.string(), "integer": pa.int32(), "bigint": pa.int64(), "boolean": pa.bool_(),
         "date": pa.date32(), "double": pa.float64(), "timestamp": pa.timestamp("us")}
SYSTEM = {"_period": pa.string(), "_period_from": pa.date32(), "_period_to": pa.date32()}


def infer(*args) -> "Result":  # noqa: F821
    return CliRunner().invoke(main, ["datasets", "infer", *[str(a) for a in args]])


def declared(name: str) -> dict:
    return yaml.safe_load((FINANCE / "datasets" / f"{name}.yml").read_text())


def inferred_ok(*args) -> dict:
    result = infer(*args)
    assert result.exit_code == 0, describe(result)
    assert result.stderr == ""
    return yaml.safe_load(result.stdout)


def columns(doc: dict, nullable: bool = False) -> list[tuple]:
    return [(c["name"], c["type"]) + ((c.get("nullable", True),) if nullable else ())
            for c in doc["main_table"]["columns"]]


def test_the_sample_csv_files_give_their_declared_columns():
    for name in DATASETS:
        want = declared(name)
        got = inferred_ok(FINANCE / "data" / name / "v1", "--name", name, "--table", want["main_table"]["name"])
        assert got["name"] == name and got["main_table"]["name"] == want["main_table"]["name"]
        assert got["main_table"]["temporal_mode"] == want["main_table"]["temporal_mode"], name
        expected = [(c, CSV_CANNOT_TELL.get((name, c), t)) for c, t in columns(want)]
        assert columns(got) == expected, name
        assert got["versions"] == [{"version": 1}] and got["status"] == "active"


def _to_parquet(src: Path, dst: Path, doc: dict, nullable: bool = True) -> None:
    """The CSV ``src`` as a Parquet file typed as ``doc`` declares (system columns too)."""
    fields = []
    for c in doc["main_table"]["columns"]:
        t = c["type"]
        typ = pa.decimal128(*map(int, t[8:-1].split(","))) if t.startswith("decimal(") else ARROW[t]
        fields.append(pa.field(c["name"], typ, nullable and c.get("nullable", True)))
    header = src.read_text().splitlines()[0].split(",")
    fields += [pa.field(n, SYSTEM[n]) for n in header if n in SYSTEM]
    table = pacsv.read_csv(src, convert_options=pacsv.ConvertOptions(
        column_types={f.name: f.type for f in fields}, strings_can_be_null=True))
    table = table.select([f.name for f in fields]).cast(pa.schema(fields))
    dst.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, dst)


def test_inferred_from_parquet_compiles_to_the_same_sql(tmp_path):
    """The sample's data as Parquet typed as declared (gl in _period= folders): the inferred YAML declares
    exactly the declared columns, types and nullability, and a workspace of the inferred files compiles every
    project to the same SQL as the sample."""
    original = copy_workspace("finance", tmp_path / "original")
    copy = copy_workspace("finance", tmp_path / "inferred")
    for name in DATASETS:
        want = declared(name)
        table = want["main_table"]["name"]
        src = FINANCE / "data" / name / "v1" / f"{table}.csv"
        if name == "gl":  # a partitioned folder: _period comes from the folder names
            where = tmp_path / "parquet" / name
            for period in ("2026-01",):
                _to_parquet(src, where / "staging.parquet", want)
                whole = pq.read_table(where / "staging.parquet")
                (where / f"_period={period}").mkdir()
                pq.write_table(whole.drop_columns(["_period"]), where / f"_period={period}" / "part-0.parquet")
                (where / "staging.parquet").unlink()
            (where / "_SUCCESS").write_text("")  # skipped, as Spark skips it
        else:
            where = tmp_path / "parquet" / f"{name}.parquet"
            _to_parquet(src, where, want)
        result = infer(where, "--name", name, "--table", table)
        assert result.exit_code == 0, describe(result)
        got = yaml.safe_load(result.stdout)
        assert columns(got, nullable=True) == columns(want, nullable=True), name
        assert got["main_table"]["temporal_mode"] == want["main_table"]["temporal_mode"], name
        # the dataset's identity and version history are the workspace's, not something its files say
        text = result.stdout.replace(f"id: {got['id']}\n", f"id: {want['id']}\n").replace(
            "  - {version: 1}\n", "".join(f"  - {{version: {v['version']}}}\n" for v in want["versions"]))
        (copy / "datasets" / f"{name}.yml").write_text(text)
    assert "_period (string)" in (copy / "datasets" / "gl.yml").read_text()  # recognised, not declared
    assert "_period_from (date), _period_to (date)" in " ".join((copy / "datasets" / "exchange_rates.yml").read_text()
                                                                .replace("#", "").split())
    for ws in (original, copy):
        checked = cli(ws, "validate")
        assert checked.exit_code == 0, describe(checked)
        compiled = cli(ws, "compile", "--all", "--out", ws / "target" / "compiled")
        assert compiled.exit_code == 0, describe(compiled)
    a, b = original / "target" / "compiled", copy / "target" / "compiled"
    names = sorted(p.relative_to(a).as_posix() for p in a.rglob("*.sql"))
    assert len(names) >= 12 and names == sorted(p.relative_to(b).as_posix() for p in b.rglob("*.sql"))
    assert all(filecmp.cmp(a / n, b / n, shallow=False) for n in names)


def test_inferred_from_the_sample_csv_validates_and_compiles(tmp_path):
    """The YAML inferred from the sample's own CSV files, in place of the declared ones: every project
    validates and compiles, to the same SQL except where a code of digits was typed integer (the one
    difference a sample of text cannot tell that reaches the SQL)."""
    original = copy_workspace("finance", tmp_path / "original")
    copy = copy_workspace("finance", tmp_path / "inferred")
    for name in DATASETS:
        want = declared(name)
        result = infer(copy / "data" / name / "v1", "--name", name, "--table", want["main_table"]["name"])
        assert result.exit_code == 0, describe(result)
        got = yaml.safe_load(result.stdout)
        text = result.stdout.replace(f"id: {got['id']}\n", f"id: {want['id']}\n").replace(
            "  - {version: 1}\n", "".join(f"  - {{version: {v['version']}}}\n" for v in want["versions"]))
        (copy / "datasets" / f"{name}.yml").write_text(text)
    checked = cli(copy, "validate")
    assert checked.exit_code == 0, describe(checked)
    assert "ok: 12 projects valid" in checked.stdout
    for ws in (original, copy):
        compiled = cli(ws, "compile", "--all", "--out", ws / "target" / "compiled")
        assert compiled.exit_code == 0, describe(compiled)
    a, b = original / "target" / "compiled", copy / "target" / "compiled"
    differ = {}
    for path in sorted(a.rglob("*.sql")):
        rel = path.relative_to(a).as_posix()
        old, new = path.read_text().splitlines(), (b / rel).read_text().splitlines()
        changed = [(x.strip(), y.strip()) for x, y in zip(old, new) if x != y]
        assert len(old) == len(new), rel
        if changed:
            differ[rel.split("/")[0]] = changed
    assert differ == {
        "close_consolidation": [("CAST(NULL AS STRING) AS `account_code`,", "CAST(NULL AS INT) AS `account_code`,")],
        "ts05_aggregate_by_type": [("CAST(NULL AS STRING) AS `account_code`,", "CAST(NULL AS INT) AS `account_code`,")],
        "ts06_append_budgets": [("CAST(`account_code` AS STRING) AS `account_code`,",
                                 "CAST(`account_code` AS INT) AS `account_code`,")],
    }

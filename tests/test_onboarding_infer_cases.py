"""``ledgerflow datasets infer``: exact Parquet and ORC types, CSV and JSON typed from their text, system
columns recognised, invalid names reported (nothing printed), every bad input one paragraph and exit 1,
and no Spark started."""
from __future__ import annotations

import datetime
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
import yaml
from click.testing import CliRunner

from cli_support import describe
from ledgerflow.adapters.cli import main

REPO = Path(__file__).resolve().parents[1]


def infer(*args):
    return CliRunner().invoke(main, ["datasets", "infer", *[str(a) for a in args]])


def ok(*args) -> tuple[dict, str]:
    result = infer(*args)
    assert result.exit_code == 0, describe(result)
    return yaml.safe_load(result.stdout), result.stdout


def cols(doc: dict) -> list[tuple]:
    return [(c["name"], c["type"], c.get("nullable", True)) for c in doc["main_table"]["columns"]]


def refused(code: str, *args) -> str:
    result = infer(*args)
    assert result.exit_code == 1, describe(result)
    assert result.stdout == ""  # nothing half-valid printed
    assert result.stderr.startswith(f"Error: {code} ") and result.stderr.count("\n") == 1, result.stderr
    return result.stderr


def test_csv_types_from_the_sample(tmp_path):
    (tmp_path / "lines.csv").write_text(
        "amount,rate,small,qty,big,code,day,at,flag,mixed,empty\n"
        "1.5,0.125,3.10,1,3000000000,007,2026-01-05,2026-01-05 10:00:00,true,1,\n"
        "-123.456,12.5,-0.5,-20,1,010,2026-02-28,2026-01-05T10:00:00.5Z,FALSE,x,\n"
        "12345678901234567.1,7,,300,-5,123,2026-03-01,2026-01-06 23:59,false,2.5,\n")
    doc, text = ok(tmp_path / "lines.csv", "--name", "lines")
    assert cols(doc) == [("amount", "decimal(20,3)", True), ("rate", "decimal(18,3)", True),
                         ("small", "decimal(18,2)", True), ("qty", "integer", True), ("big", "bigint", True),
                         ("code", "string", True), ("day", "date", True), ("at", "timestamp", True),
                         ("flag", "boolean", True), ("mixed", "string", True), ("empty", "string", True)]
    assert "# sample: up to 17 digits before the point, 3 after" in text
    assert "# no value in the sample: typed string, check it" in text
    assert doc["main_table"]["temporal_mode"] == "snapshot" and "# Inferred by" in text
    assert "types from a sample of 3 rows" in " ".join(text.replace("#", "").split())


def test_parquet_types_stay_exact(tmp_path):
    schema = pa.schema([
        pa.field("amount", pa.decimal128(18, 2), nullable=False), pa.field("rate", pa.decimal128(38, 10)),
        pa.field("n16", pa.int16()), pa.field("n64", pa.int64()), pa.field("x", pa.float32()),
        pa.field("day", pa.date32()), pa.field("at", pa.timestamp("ms", tz="UTC")), pa.field("ok", pa.bool_()),
        pa.field("label", pa.dictionary(pa.int8(), pa.string())),
        pa.field("payload", pa.struct([("a", pa.int32())])), pa.field("_row_id", pa.string()),
        pa.field("_period", pa.string())])
    table = pa.table([[Decimal("1.25")], [Decimal("0.1")], [1], [2], [0.5], [datetime.date(2026, 1, 1)],
                      [datetime.datetime(2026, 1, 1)], [True], pa.array(["x"]).dictionary_encode().cast(
                          pa.dictionary(pa.int8(), pa.string())), [{"a": 1}], ["r1"], ["2026-01"]], schema=schema)
    pq.write_table(table, tmp_path / "part-0.snappy.parquet")
    doc, text = ok(tmp_path / "part-0.snappy.parquet", "--name", "ledger")
    assert cols(doc) == [("amount", "decimal(18,2)", False), ("rate", "decimal(38,10)", True),
                         ("n16", "integer", True), ("n64", "bigint", True), ("x", "double", True),
                         ("day", "date", True), ("at", "timestamp", True), ("ok", "boolean", True),
                         ("label", "string", True)]
    assert doc["main_table"]["temporal_mode"] == "period"
    flat = " ".join(text.replace("#", "").split())
    assert "System columns in the data, implied by temporal_mode and not declared: _row_id (string), _period " \
           "(string)." in flat
    assert "Left out: payload (struct<a: int32>): no ledgerflow column type holds it." in flat
    assert 'type: "decimal(18,2)", nullable: false}' in text
    orc.write_table(pa.table({"amount": pa.array([Decimal("1.25")], pa.decimal128(18, 2)), "n": [1]}),
                    str(tmp_path / "t.orc"))
    doc, _ = ok(tmp_path / "t.orc", "--name", "t")
    assert cols(doc) == [("amount", "decimal(18,2)", True), ("n", "bigint", True)]


def test_json_lines_and_partition_folders(tmp_path):
    for period, rows in (("2026-01", ['{"id": "4100", "amount": 12.50, "n": 3, "day": "2026-01-02", "tags": [1]}',
                                      '{"id": "4200", "amount": -7.125, "n": 4, "day": null, "tags": []}']),
                         ("2026-02", ['{"id": "4300", "amount": 1, "n": 5, "day": "2026-02-01", "tags": null}'])):
        (tmp_path / "j" / f"_period={period}").mkdir(parents=True)
        (tmp_path / "j" / f"_period={period}" / "part-0.json").write_text("\n".join(rows) + "\n")
    doc, text = ok(tmp_path / "j", "--name", "j")
    assert cols(doc) == [("id", "string", True), ("amount", "decimal(18,3)", True), ("n", "integer", True),
                         ("day", "date", True)]
    assert doc["main_table"]["temporal_mode"] == "period"
    assert "_period (string)" in text and "Left out: tags (a JSON object or array)" in " ".join(
        text.replace("#", "").split())


def test_names_that_cannot_be_columns_are_each_reported(tmp_path):
    (tmp_path / "x.csv").write_text("Net Amount,2026 Budget,_secret,amount,Amount,ok\n1,2,3,4,5,6\n")
    err = refused("INFER-003", tmp_path / "x.csv", "--name", "x")
    assert "4 column names of" in err
    for part in ("'Net Amount' (rename it net_amount)", "'2026 Budget' (rename it c_2026_budget)",
                 "'_secret' (rename it secret)", "'amount' and 'Amount' (Spark reads names ignoring case"):
        assert part in err, part
    assert "[A-Za-z][A-Za-z0-9_]*" in err and "header line" in err
    refused("INFER-003", tmp_path / "x.csv", "--name", "my data")  # the table name, by default the dataset's
    (tmp_path / "twice.csv").write_text("a,b,a\n1,2,3\n")
    assert "'a' twice (rename one)" in refused("INFER-003", tmp_path / "twice.csv", "--name", "x")


def test_bad_locations(tmp_path):
    assert "no file or folder at" in refused("INFER-001", tmp_path / "missing", "--name", "x")
    assert "not a local path" in refused("INFER-001", "s3a://bucket/ledger", "--name", "x")
    (tmp_path / "empty").mkdir()
    assert "no data files in" in refused("INFER-001", tmp_path / "empty", "--name", "x")
    (tmp_path / "hidden").mkdir()
    (tmp_path / "hidden" / "_SUCCESS").write_text("")
    (tmp_path / "hidden" / ".x.csv.crc").write_text("")
    refused("INFER-001", tmp_path / "hidden", "--name", "x")
    (tmp_path / "bad.parquet").write_bytes(b"not parquet at all")
    assert "cannot read" in refused("INFER-001", tmp_path / "bad.parquet", "--name", "x")
    (tmp_path / "blank.csv").write_text("")
    assert "the file is empty" in refused("INFER-001", tmp_path / "blank.csv", "--name", "x")
    (tmp_path / "notes.txt").write_text("a,b\n1,2\n")
    assert "--format" in refused("INFER-002", tmp_path / "notes.txt", "--name", "x")
    assert ok(tmp_path / "notes.txt", "--name", "x", "--format", "csv")[0]["main_table"]["columns"][0]["name"] == "a"
    (tmp_path / "mixed").mkdir()
    (tmp_path / "mixed" / "a.csv").write_text("a\n1\n")
    (tmp_path / "mixed" / "b.json").write_text('{"a": 1}\n')
    assert "several formats (csv, json)" in refused("INFER-002", tmp_path / "mixed", "--name", "x")
    (tmp_path / "mixed" / "b.json").unlink()
    (tmp_path / "mixed" / "c.csv").write_text("a,_period_from\n1,2026-01-01\n")
    assert "_period_from" in refused("INFER-005", tmp_path / "mixed", "--name", "x")
    assert "lacks _period_from and _period_to" in refused(
        "INFER-004", tmp_path / "mixed" / "a.csv", "--name", "x", "--temporal-mode", "bitemporal")
    (tmp_path / "types").mkdir()
    for name, typ in (("a", pa.decimal128(18, 2)), ("b", pa.decimal128(10, 2))):
        pq.write_table(pa.table({"amount": pa.array([Decimal("1.00")], typ)}), tmp_path / "types" / f"{name}.parquet")
    assert "disagree on the type of column 'amount'" in refused("INFER-005", tmp_path / "types", "--name", "x")
    (tmp_path / "both.csv").write_text("a,_period,_period_from,_period_to\n1,2026-01,2026-01-01,\n")
    assert "--temporal-mode" in refused("INFER-004", tmp_path / "both.csv", "--name", "x")
    assert infer(tmp_path / "both.csv", "--name", "x", "--format", "xlsx").exit_code == 2  # a usage error


def test_infer_starts_no_spark_and_lists_still_work(tmp_path):
    (tmp_path / "a.csv").write_text("a,b\n1,x\n")
    script = ("import sys; from ledgerflow.adapters.cli import main\n"
              "try:\n    main(['datasets', 'infer', sys.argv[1], '--name', 'a'])\n"
              "except SystemExit as e:\n    assert not e.code, e.code\n"
              "print('pyspark loaded' if any(m.startswith('pyspark') for m in sys.modules) else 'no pyspark')")
    proc = subprocess.run([sys.executable, "-c", script, str(tmp_path / "a.csv")], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, env={**os.environ, "LEDGERFLOW_WORKSPACE": ""})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip().endswith("no pyspark") and "{name: a, type: integer}" in proc.stdout
    shown = CliRunner().invoke(main, ["--workspace", str(REPO / "projects" / "finance"), "datasets", "--help"])
    assert shown.exit_code == 0 and "datasets infer LOCATION --name NAME" in " ".join(shown.stdout.split())
    listed = CliRunner().invoke(main, ["--workspace", str(REPO / "projects" / "orders"), "datasets", "list"])
    assert listed.exit_code == 0 and "customers" in listed.stdout, describe(listed)


def test_a_bare_file_name_is_read_from_the_current_folder(tmp_path, monkeypatch):
    (tmp_path / "ledger.csv").write_text("account,amount\n1000,12.50\n")
    monkeypatch.chdir(tmp_path)
    doc, text = ok("ledger.csv", "--name", "ledger")
    assert cols(doc) == [("account", "integer", True), ("amount", "decimal(18,2)", True)]
    assert "from ledger.csv (csv, 1 file;" in text


def test_only_ascii_digits_are_numbers(tmp_path):
    # Arabic-Indic and full-width digits: Spark reads neither as a number nor a date, so they are text
    (tmp_path / "digits.csv").write_text("n,d,day,ok\n\u0661\u0662\u0663,\u0661.\u0665,\u0662\u0660\u0662\u0666-01-05,7\n"
                                         "\uff14\uff15,2.5,2026-01-05,8\n", encoding="utf-8")
    doc, _ = ok(tmp_path / "digits.csv", "--name", "digits")
    assert cols(doc) == [("n", "string", True), ("d", "string", True), ("day", "string", True), ("ok", "integer", True)]
    (tmp_path / "parts" / "_period=\u0662\u0660\u0662\u0666").mkdir(parents=True)
    (tmp_path / "parts" / "_period=\u0662\u0660\u0662\u0666" / "a.json").write_text('{"k": "\u0667"}\n', encoding="utf-8")
    doc, _ = ok(tmp_path / "parts", "--name", "parts")
    assert cols(doc) == [("k", "string", True)]


def test_a_csv_with_ragged_records_is_refused(tmp_path):
    (tmp_path / "ragged.csv").write_text('account,amount\n1000,12.50\n"multi\nline",3\n2000,1,250.00\n')
    message = refused("INFER-001", tmp_path / "ragged.csv", "--name", "x")
    assert "ragged.csv line 5: a record of 3 fields where the header has 2" in message
    (tmp_path / "short.csv").write_text("account,amount\n1000\n")
    assert "line 2: a record of 1 field where the header has 2" in refused("INFER-001", tmp_path / "short.csv",
                                                                            "--name", "x")

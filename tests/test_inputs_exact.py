"""Input locations are read exactly or refused: every row lands in its own column, or the run stops naming
dataset, file and line.

- CSV files of one location whose headers order the columns differently are mapped by name, per file;
- RFC 4180 records are read whole (a quoted line break, a doubled quote), and a malformed or truncated
  record fails the read instead of being dropped or padded;
- a declared column missing from any file of a location is refused naming that file, whatever the order
  Spark would read the files in (Parquet, ORC, CSV);
- a location's path reaches Spark literally: glob characters in a folder name read that folder, not a
  sibling they match;
- a property test writes hostile files (quoting, line breaks in quotes, BOM, header orders differing per
  file, truncation, empty files, wide rows; Parquet/ORC/JSON with missing and extra columns) and checks
  each read gives exactly the rows written or a clear refusal.

Everything reads through ``loaders.load_input`` (what the runner calls) on the session's Spark; a few
end-to-end runs go through the CLI in-process (``cli_support.cli``) for the headline cases.
"""
from __future__ import annotations

import csv
import datetime
import io
import json
import os
import string
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from cli_support import GL_COLUMNS, cli, describe, run_ok, typed

from ledgerflow.adapters.spark import error_text as errors_text
from ledgerflow.adapters.inputs import files as input_files
from ledgerflow.adapters.inputs import loaders
from ledgerflow.compiler import parameters
from ledgerflow.compiler.errors import LedgerflowError, ResolutionError
from ledgerflow.compiler.model import ColumnDef, Dataset, DatasetVersion
from ledgerflow.compiler.periods import parse_period
from ledgerflow.compiler.resolver import ResolvedLocation

PERIOD = parse_period("2026-01")
ARGS = parameters.values(PERIOD, datetime.datetime(2026, 2, 1, 8, 0, 0))
COLS = ["acct", "amount_local", "amount_reporting", "description", "source_system"]


def dataset(columns=COLS, types=None, temporal_mode="period") -> Dataset:
    """A small period dataset, every column a string unless ``types`` says otherwise."""
    types = types or {}
    return Dataset("0f000000-0000-4000-8000-000000000001", "ledger", "active", "ledger", temporal_mode,
                   [ColumnDef(c, types.get(c, "string")) for c in columns], [DatasetVersion(1)])


_views = [0]


def load(spark, target, fmt="csv", ds=None, period="2026-01", options=()) -> list[dict]:
    """The rows ``load_input`` gives for one location (declared columns only), sorted."""
    ds = ds or dataset()
    _views[0] += 1
    view = f"ds_exact_{_views[0]}"
    loc = ResolvedLocation("path", str(target), fmt, period, tuple(options))
    loaders.load_input(spark, loaders.InputLoad(view, ds, 1, [loc], row_ids=False), ARGS)
    names = [c.name for c in ds.columns]
    rows = [tuple(r) for r in spark.table(view).select(*[f"`{n}`" for n in names]).collect()]
    return sorted((dict(zip(names, r)) for r in rows), key=repr)


def failure(spark, target, fmt="csv", ds=None, period="2026-01") -> str:
    """The one paragraph a failed read gives: a ledgerflow error's text, or Spark's as the runner shows it."""
    try:
        load(spark, target, fmt, ds, period)
    except LedgerflowError as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - a Spark failure, shown as the runner shows it
        return errors_text.spark_error_text(exc, {str(target): (ds or dataset()).name})
    raise AssertionError("the read did not fail")


def write(path: Path, text: str, encoding="utf-8") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode(encoding))
    return path


def csv_text(header, rows, eol="\n") -> str:
    """RFC 4180 text (Python's csv writer leaves a lone CR unquoted when the line ends are LF)."""
    def field(v: str) -> str:
        return '"' + v.replace('"', '""') + '"' if any(c in v for c in ',"\r\n') else v
    return "".join(",".join(field(v) for v in r) + eol for r in [header, *rows])


def row(acct, local, rep, desc, src) -> dict:
    return dict(zip(COLS, (acct, local, rep, desc, src)))


# ------------------------------------------------------------------------------ 1. header order per file
def test_csv_files_with_different_header_orders_are_mapped_by_name(spark, tmp_path):
    loc = tmp_path / "orders"
    write(loc / "a.csv", csv_text(COLS, [["4100", "10.00", "11.00", "Revenue", "ERP"]]))
    order = ["description", "source_system", "amount_reporting", "acct", "amount_local"]
    write(loc / "b.csv", csv_text(order, [["Travel", "EXPENSE", "22.00", "5200", "20.00"]]))
    assert load(spark, loc) == sorted([row("4100", "10.00", "11.00", "Revenue", "ERP"),
                                       row("5200", "20.00", "22.00", "Travel", "EXPENSE")], key=repr)


def test_header_orders_differ_under_partition_folders_and_extra_columns_differ(spark, tmp_path):
    loc = tmp_path / "parts"
    write(loc / "_period=2026-01" / "a.csv", csv_text(COLS + ["x"], [["1", "1.00", "", "one", "ERP", "junk"]]))
    write(loc / "_period=2026-01" / "b.csv", csv_text(["y"] + COLS[::-1], [["z", "ERP", "two", "", "2.00", "2"]]))
    write(loc / "_period=2026-02" / "c.csv", csv_text(COLS, [["3", "3.00", "", "other month", "ERP"]]))
    assert load(spark, loc) == sorted([row("1", "1.00", None, "one", "ERP"),
                                       row("2", "2.00", None, "two", "ERP")], key=repr)


# ------------------------------------------------------------------------------ 2. RFC 4180 records whole
def test_a_quoted_line_break_and_doubled_quotes_are_read_whole(spark, tmp_path):
    loc = tmp_path / "quoted"
    rows = [["1", "1.00", "", 'Product "A"\nsecond line', "ERP"], ["2", "2.00", "", "plain", "ERP"],
            ["3", "3.00", "", "crlf\r\ninside", "ERP"]]
    write(loc / "a.csv", csv_text(COLS, rows, eol="\r\n"))
    assert load(spark, loc) == sorted([row(*r[:2], None, *r[3:]) for r in rows], key=repr)


def test_a_quoted_line_break_without_a_period_column_is_no_misleading_cast_error(spark, tmp_path):
    # the issue: without multiLine the record was cut and 'ERP' landed in an integer column
    ds = dataset(["line_number", "description", "source_system"], {"line_number": "int"})
    loc = tmp_path / "gl.csv"
    write(loc, 'line_number,description,source_system\n1,"two\nlines",ERP\n2,one line,ERP\n')
    assert load(spark, loc, ds=ds) == [{"line_number": 1, "description": "two\nlines", "source_system": "ERP"},
                                       {"line_number": 2, "description": "one line", "source_system": "ERP"}]


def test_a_truncated_last_line_fails_naming_file_and_line(spark, tmp_path):
    loc = tmp_path / "cut"
    write(loc / "a.csv", csv_text(COLS, [["1", "1.00", "", "one", "ERP"], ["2", "2.00", "", "two", "ERP"]])
          + "3,3.0")
    message = failure(spark, loc)
    assert message.startswith(f"INPUT-003 dataset 'ledger': {loc / 'a.csv'} line 4: a malformed CSV record "
                              "(2 fields where the header has 5): '3,3.0'"), message


def test_a_record_cut_short_after_the_declared_columns_fails(spark, tmp_path):
    # a read that prunes the undeclared column checked only the fields it used: the cut record passed
    loc = tmp_path / "pruned"
    write(loc / "a.csv", csv_text(COLS + ["note"], [["1", "1.00", "", "one", "ERP", "n"]]) + "2,2.00,,two,ERP\n")
    assert failure(spark, loc).startswith(f"INPUT-003 dataset 'ledger': {loc / 'a.csv'} line 3: a malformed CSV "
                                          "record (5 fields where the header has 6)")


def test_a_quoted_field_cut_by_the_end_of_the_file_is_refused(spark, tmp_path):
    loc = tmp_path / "open"
    write(loc / "a.csv", csv_text(COLS, [["1", "1.00", "", "one", "ERP"]]) + '2,2.00,,"still being writ')
    with pytest.raises(input_files.InputFileError) as err:
        load(spark, loc)
    assert str(err.value).startswith(f"INPUT-003 dataset 'ledger': {loc / 'a.csv'} line 3: the record starting "
                                     "there opens a quoted field that is never closed"), err.value


def test_a_row_with_too_many_fields_fails(spark, tmp_path):
    loc = tmp_path / "wide"
    write(loc / "a.csv", csv_text(COLS, [["1", "1.00", "", "one", "ERP"], ["2", "2.00", "", "two", "ERP", "extra"]]))
    assert failure(spark, loc).startswith(f"INPUT-003 dataset 'ledger': {loc / 'a.csv'} line 3: a malformed CSV "
                                          "record (6 fields where the header has 5)")


def test_text_after_a_closing_quote_is_refused(spark, tmp_path):
    # Spark's own writer escapes a quote with a backslash: "a\"b" is not RFC 4180 and would be misread
    loc = tmp_path / "bs"
    write(loc / "a.csv", csv_text(COLS, [["1", "1.00", "", "one", "ERP"]]) + '2,2.00,,"a\\"b",ERP\n')
    with pytest.raises(input_files.InputFileError, match=r"^INPUT-003 .*a\.csv line 3: text follows the closing "):
        load(spark, loc)


def test_an_empty_file_is_refused(spark, tmp_path):
    loc = tmp_path / "empty"
    write(loc / "a.csv", csv_text(COLS, [["1", "1.00", "", "one", "ERP"]]))
    write(loc / "b.csv", "")
    with pytest.raises(input_files.InputFileError, match=r"^INPUT-003 .*b\.csv: the file is empty"):
        load(spark, loc)


def test_a_bom_and_a_header_only_file(spark, tmp_path):
    loc = tmp_path / "bom"
    write(loc / "a.csv", "\ufeff" + csv_text(COLS[::-1], [["ERP", "one", "", "1.00", "1"]]))
    write(loc / "b.csv", csv_text(COLS, []))
    assert load(spark, loc) == [row("1", "1.00", None, "one", "ERP")]


def test_a_json_file_cut_short_fails_naming_file_and_line(spark, tmp_path):
    # Spark's default mode read the cut line as a row of NULLs, which the period filter then dropped
    loc = tmp_path / "json"
    lines = [json.dumps(dict(zip(COLS, [str(i), "1.00", "1.00", "d", "ERP"])) | {"_period": "2026-01"}) for i in (1, 2)]
    write(loc / "a.json", "\n".join(lines) + "\n" + lines[1][:30])
    assert failure(spark, loc, "json").startswith(f"INPUT-003 dataset 'ledger': {loc / 'a.json'} line 3: a malformed "
                                                  "JSON record (not a JSON object on one line)")


# ------------------------------------------------------------------------------ 3. missing columns per file
@pytest.mark.parametrize("fmt", ["parquet", "orc"])
@pytest.mark.parametrize("lacking_first", [True, False])
def test_a_file_lacking_a_declared_column_is_refused_whatever_the_order(spark, tmp_path, fmt, lacking_first):
    loc = tmp_path / f"{fmt}_{lacking_first}"
    loc.mkdir()
    full = spark.createDataFrame([("1", "1.00", "1.00", "one", "ERP")], ", ".join(f"{c} string" for c in COLS))
    lacking = full.drop("amount_reporting")
    names = ("a", "b") if lacking_first else ("b", "a")
    for name, df in zip(names, (lacking, full)):
        df.coalesce(1).write.format(fmt).save(str(tmp_path / "tmp" / name))
        [part] = [p for p in os.listdir(tmp_path / "tmp" / name) if p.startswith("part-")]
        os.rename(tmp_path / "tmp" / name / part, loc / f"{name}.{fmt}")
    message = failure(spark, loc, fmt)
    lacking_file = loc / f"{names[0]}.{fmt}"
    assert message == (f"INPUT-001 dataset 'ledger': {lacking_file} lacks the declared column(s) amount_reporting "
                       "(it has: acct, amount_local, description, source_system); every file of a location "
                       "must have every declared column.")


def test_a_csv_file_lacking_a_declared_column_is_refused(spark, tmp_path):
    loc = tmp_path / "csvmiss"
    write(loc / "a.csv", csv_text(COLS, [["1", "1.00", "", "one", "ERP"]]))
    write(loc / "b.csv", csv_text(COLS[:3], [["2", "2.00", ""]]))
    assert failure(spark, loc).startswith(f"INPUT-001 dataset 'ledger': {loc / 'b.csv'} lacks the declared "
                                          "column(s) description, source_system")


def test_files_disagreeing_on_system_columns_are_refused(spark, tmp_path):
    loc = tmp_path / "sys"
    write(loc / "a.csv", csv_text(COLS + ["_period"], [["1", "1.00", "", "one", "ERP", "2026-01"]]))
    write(loc / "b.csv", csv_text(COLS, [["2", "2.00", "", "two", "ERP"]]))
    message = failure(spark, loc, period=None)
    assert message.startswith(f"INPUT-002 dataset 'ledger': the files {loc / 'a.csv'} and {loc / 'b.csv'} "
                              "disagree on the system column(s) _period"), message


# ------------------------------------------------------------------------------ 4. literal paths
@pytest.mark.parametrize("name", ["[eu] ledger", "st*r", "q?", "{a,b}", "back\\slash"])
def test_glob_characters_in_a_folder_name_read_that_folder(spark, tmp_path, name):
    for fmt in ("csv", "parquet", "json"):
        base = tmp_path / fmt
        loc = base / name
        decoys = [base / "e ledger", base / "stor", base / "qx", base / "a", base / "backslash"]
        for folder, value in [(loc, "right")] + [(d, "decoy") for d in decoys if d != loc]:
            folder.mkdir(parents=True, exist_ok=True)
            values = [value, "1.00", "1.00", value, "ERP"]
            if fmt == "csv":
                write(folder / "t.csv", csv_text(COLS, [values]))
            else:
                write_columnar(folder / f"t.{fmt}", fmt, COLS, [dict(zip(COLS, values))])
        assert [r["acct"] for r in load(spark, loc, fmt)] == ["right"], (fmt, name)
        single = next(p for p in loc.iterdir())
        assert [r["acct"] for r in load(spark, single, fmt)] == ["right"], (fmt, name, "file")


# ------------------------------------------------------------------------------ 5. a corpus of hostile files
# Every generated file is compared with a reference reading of it as RFC 4180 (Python's csv module,
# strict): the rows ledgerflow loads must be exactly the reference's records (blank lines are no
# records; Spark reads an empty field, quoted or not, as NULL), and where the reference finds the file
# malformed (an unclosed quote, a record with another number of fields) or it lacks a declared column,
# the load must refuse with the matching code naming the file.
VALUES = st.lists(st.sampled_from(list(string.ascii_letters[:6] + string.digits[:4]) +
                                  [",", '"', "\n", "\r\n", "\r", " ", "é", "€", "\t", "'"]), max_size=8).map("".join)
FIRST = st.text(alphabet=string.ascii_uppercase + string.digits + "-", min_size=1, max_size=6)


@st.composite
def csv_files(draw):
    """1-3 CSV files of the small ledger: each with its own column order, extra columns, line ending,
    BOM, and perhaps one hostility (cut short, emptied, a column dropped, a row with a field too many)."""
    files = []
    for _ in range(draw(st.integers(1, 3))):
        header = draw(st.permutations(COLS))
        extra = draw(st.lists(st.sampled_from(["note", "x_ref", "Z"]), max_size=2, unique=True))
        header = list(header) + extra
        rows = [[draw(FIRST) if h == "acct" else draw(VALUES) for h in header]
                for _ in range(draw(st.integers(0, 4)))]
        hostility = draw(st.sampled_from(["none"] * 5 + ["truncate", "empty", "drop", "wide"]))
        if hostility == "drop":
            gone = draw(st.sampled_from([i for i, h in enumerate(header) if h in COLS]))
            header = [h for i, h in enumerate(header) if i != gone]
            rows = [[v for i, v in enumerate(r) if i != gone] for r in rows]
        if hostility == "wide" and rows:
            rows[draw(st.integers(0, len(rows) - 1))].append(draw(FIRST))
        eol = draw(st.sampled_from(["\n", "\r\n"]))
        text = csv_text(header, rows, eol)
        if hostility == "truncate":
            head = len(csv_text(header, [], eol))
            text = text[:draw(st.integers(head, len(text)))]
        if hostility == "empty":
            text = ""
        if draw(st.booleans()) and text:
            text = "\ufeff" + text
        files.append(text)
    return files


def reference(path: Path):
    """('rows', [dict]) of one file read as RFC 4180, or ('refused', code)."""
    text = path.read_bytes().decode("utf-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        return "refused", "INPUT-003"
    try:
        records = [r for r in csv.reader(io.StringIO(text, newline=""), strict=True) if r]
    except csv.Error:
        return "refused", "INPUT-003"
    if _mixed_record_ends(text):
        return "refused", "INPUT-003"
    header, body = records[0], records[1:]
    if any(c not in header for c in COLS):
        return "refused", "INPUT-001"
    if any(len(r) != len(header) for r in body):
        return "refused", "INPUT-003"
    return "rows", [{c: (r[header.index(c)] or None) for c in COLS} for r in body]


def _mixed_record_ends(text: str) -> bool:
    """A file that must be read as multi-line records (a quoted field holds a line break) whose records
    end with more than one kind of line break (e.g. CRLF records cut short after a lone CR): ledgerflow
    refuses it (INPUT-003), as Spark splits multi-line records on one kind only."""
    quoted, broken, ends, i = False, False, set(), 0
    while i < len(text):
        c = text[i]
        if c == '"':
            quoted = not quoted
        elif c in "\r\n":
            end = "\r\n" if text.startswith("\r\n", i) else c
            if quoted:
                broken = True
            else:
                ends.add(end)
            i += len(end)
            continue
        i += 1
    return broken and len(ends) > 1


def outcome(spark, loc: Path, fmt: str = "csv", ds=None):
    """('rows', sorted rows) of a load, or ('refused', its message)."""
    try:
        return "rows", load(spark, loc, fmt, ds)
    except LedgerflowError as exc:
        return "refused", str(exc)
    except Exception as exc:  # noqa: BLE001 - a Spark failure, as the runner shows it
        return "refused", errors_text.spark_error_text(exc, {str(loc): "ledger"})


_examples = [0]


def fresh(tmp_path_factory) -> Path:
    _examples[0] += 1
    return tmp_path_factory.getbasetemp() / "corpus" / f"ex{_examples[0]}"


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(files=csv_files())
def test_hostile_csv_files_are_read_exactly_or_refused(spark, tmp_path_factory, files):
    loc = fresh(tmp_path_factory)
    paths = [write(loc / f"f{i}.csv", text) for i, text in enumerate(files)]
    expected = [(p, reference(p)) for p in paths]
    kind, got = outcome(spark, loc)
    refused = [(p, r[1]) for p, r in expected if r[0] == "refused"]
    if not refused:
        assert kind == "rows", got
        assert got == sorted((r for _, (_, rows) in expected for r in rows), key=repr)
    else:
        assert kind == "refused", (refused, got)
        codes = {code for _, code in refused}
        assert got.split(" ")[0] in codes, (refused, got)
        assert any(str(p) in got for p, _ in refused), (refused, got)


@st.composite
def columnar_files(draw):
    """1-3 files of one format, each with some of the declared columns (perhaps all), extra ones, rows."""
    fmt = draw(st.sampled_from(["parquet", "orc", "json"]))
    files = []
    for _ in range(draw(st.integers(1, 3))):
        cols = [c for c in COLS if draw(st.integers(0, 5))]  # each declared column kept 5 times in 6
        cols += draw(st.lists(st.sampled_from(["note", "x_ref"]), max_size=2, unique=True))
        cols = draw(st.permutations(cols))
        rows = [{c: draw(st.none() | VALUES) for c in cols} for _ in range(draw(st.integers(1, 3)))]
        files.append((cols, rows))
    return fmt, files


def write_columnar(path: Path, fmt: str, cols, rows) -> None:
    import pyarrow as pa
    table = pa.table({c: pa.array([r[c] for r in rows], pa.string()) for c in cols})
    if fmt == "parquet":
        import pyarrow.parquet as pq
        pq.write_table(table, path)
    elif fmt == "orc":
        import pyarrow.orc as po
        po.write_table(table, path)
    else:  # JSON lines as Spark writes them: a NULL value is left out
        path.write_text("".join(json.dumps({c: r[c] for c in cols if r[c] is not None}) + "\n" for r in rows))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(case=columnar_files())
def test_parquet_orc_json_with_missing_and_extra_columns_are_read_exactly_or_refused(spark, tmp_path_factory, case):
    fmt, files = case
    loc = fresh(tmp_path_factory)
    loc.mkdir(parents=True)
    paths = []
    for i, (cols, rows) in enumerate(files):
        paths.append(loc / f"f{i}.{fmt}")
        write_columnar(paths[-1], fmt, cols, rows)
    kind, got = outcome(spark, loc, fmt)
    lacking = [(p, cols) for p, (cols, _) in zip(paths, files) if any(c not in cols for c in COLS)]
    every = [{c: r.get(c) for c in COLS} for _, rows in files for r in rows]
    if fmt == "json":
        # JSON leaves a NULL out (Spark writes it so): a key absent from a file is NULL there, unless the
        # file's first record carries a key no declared column names (a renamed key: refused); a column
        # no file has at all is the dataset's missing column
        def keys(rows):
            return {c for r in rows for c in r if r[c] is not None}
        renamed = [p for p, (cols, rows) in zip(paths, files)
                   if set(COLS) - keys(rows) and {c for c in rows[0] if rows[0][c] is not None} - set(COLS)]
        if renamed:
            assert kind == "refused" and got.startswith("INPUT-001 dataset 'ledger': ") and \
                any(f"{p} never holds the declared column(s)" in got for p in renamed), (renamed, got)
            return
        if any(all(c not in cols for cols, _ in files) for c in COLS) or \
                any(all(r.get(c) is None for _, rows in files for r in rows) for c in COLS):
            if kind == "rows":  # a key seen nowhere with a value: JSON cannot tell it from all NULL
                assert got == sorted(every, key=repr)
            else:
                assert "lacks the declared column(s)" in got, got
            return
        assert kind == "rows", got
        assert got == sorted(every, key=repr)
    elif lacking:
        assert kind == "refused", (lacking, got)
        assert got.startswith("INPUT-001 dataset 'ledger': ") and any(str(p) in got for p, _ in lacking), got
    else:
        assert kind == "rows", got
        assert got == sorted(every, key=repr)


# ------------------------------------------------------------------------------ 6. end to end (the CLI)
def _gl_csv(columns, raw_rows) -> str:
    rows = [dict(zip(GL_COLUMNS + ["_period"], [*(str(v) if v is not None else "" for v in r), "2026-01"])) for r in raw_rows]
    return csv_text(columns, [[r[c] for c in columns] for r in rows])


def _eu_ledger(finance, swapped: bool = True):
    """ts01 reads the GL from 'data/gl/[eu] ledger' (beside a decoy 'e ledger' the glob would match): two
    files, the second's columns reversed (unless not ``swapped``), one description with a quoted line
    break. Returns (folder, the GL rows as written)."""
    from cli_support import GL_ROWS, edit
    edit(finance, "ledgerflow.yml", "  monthly:", '  eu:\n    rules:\n      - name: eu\n        strategy: '
         '{type: path, path: "data/gl/[eu] ledger", format: csv}\n  monthly:')
    edit(finance, "projects/ts01_output_only.yml", "input_dataset_id: gl\n",
         "input_dataset_id: gl\nresolver_overrides: {gl: eu}\n")
    rows = [list(r) for r in GL_ROWS]
    rows[8][8] = 'Product revenue\nJP, "line two"'
    folder = finance / "data" / "gl" / "[eu] ledger"
    columns = GL_COLUMNS + ["_period"]
    write(folder / "a.csv", _gl_csv(columns, rows[:5]))
    write(folder / "b.csv", _gl_csv(columns[::-1] if swapped else columns, rows[5:]))
    decoy = [["JE-999", 1, "2026-01-31", "4100", "CC-100", "USD", "1.00", "1.00", "foreign", "ERP"]]
    write(finance / "data" / "gl" / "e ledger" / "transactions.csv", _gl_csv(columns, decoy))
    return folder, rows


def test_cli_header_orders_quoted_line_break_and_a_glob_folder_then_a_cut_line(spark, finance):
    from cli_support import gl_expected, in_gl_order, without
    folder, rows = _eu_ledger(finance)
    rec = run_ok(finance, "ts01_output_only", "2026-01")
    assert rec["resolver_snapshot"]["input_locations"] == [str(folder)]
    [fp] = rec["resolver_snapshot"]["input_fingerprints"]
    assert [f["path"] for f in fp["files"]] == ["a.csv", "b.csv"]
    # the output as written (RFC 4180: a quote inside a value doubled)
    [out] = rec["outputs"]
    written = typed(spark.read.options(header="true", multiLine="true", escape='"').csv(out["location"]))
    expected = gl_expected(rec, raw_rows=[tuple(r) for r in rows])
    # (an empty _labels reads back as NULL from CSV)
    assert in_gl_order([r.asDict() for r in written.collect()], "_row_id", "_labels") == \
        without(expected, "_row_id", "_period", "_labels")

    # the export of b.csv is cut short: the run fails naming file and line, nothing is written
    with open(folder / "b.csv", "a", encoding="utf-8") as fh:
        fh.write("2026-01,ERP,Product revenue,,2500")
    result = cli(finance, "run", "ts01_output_only", "--period", "2026-01")
    assert result.exit_code == 3, describe(result)
    assert (f"INPUT-003 dataset 'gl': {folder / 'b.csv'} line 8: a malformed CSV record (5 fields where the "
            "header has 11): '2026-01,ERP,Product revenue,,2500'") in result.stderr, describe(result)


def test_compile_resolved_reads_the_glob_folder_literally_and_quoted_line_breaks_whole(spark, finance):
    folder, rows = _eu_ledger(finance, swapped=False)
    result = cli(finance, "compile", "ts01_output_only", "--resolved", "--period", "2026-01")
    assert result.exit_code == 0, describe(result)
    # b.csv needs multiLine, a.csv not: each file is a view of its own, its path escaped
    assert "OPTIONS (path '" + str(folder).replace("[", "\\\\[").replace("]", "\\\\]") + "/b.csv'" in result.stdout
    views = [s for s in result.stdout.split(";\n\n") if "TEMPORARY VIEW `raw_" in s or "TEMPORARY VIEW `ds_" in s]
    for statement in views:
        spark.sql(statement.rstrip().rstrip(";"))
    got = sorted((r.journal_id, r.line_number, r.description) for r in spark.table("ds_gl").collect())
    assert got == sorted((r[0], r[1], r[8]) for r in rows)


# ------------------------------------------------------------------------------ 7. review fixes (H1)
def test_a_malformed_row_the_period_filter_would_skip_fails_the_read(spark, tmp_path):
    # an unquoted comma shifts '_period' to 'ERP': Spark's pushed-down period filter skipped the record
    # before FAILFAST saw it was malformed, so the row was lost with exit 0 (the session is set back
    # on here as a caller's own session may be: the loader turns pushdown off itself)
    spark.conf.set("spark.sql.csv.filterPushdown.enabled", "true")
    loc = tmp_path / "shifted"
    cols = COLS + ["_period"]
    write(loc / "a.csv", csv_text(cols, [["1", "1.00", "", "one", "ERP", "2026-01"]])
          + "2,2.00,,Smith, John consulting,ERP,2026-01\n")
    message = failure(spark, loc)
    assert message.startswith(f"INPUT-003 dataset 'ledger': {loc / 'a.csv'} line 3: a malformed CSV record "
                              "(7 fields where the header has 6)"), message
    assert spark.conf.get("spark.sql.csv.filterPushdown.enabled") == "false"


def test_ledgerflow_sessions_parse_csv_records_whole(spark):
    from ledgerflow.adapters.spark import session as spark_settings
    for conf in (None, {"spark.sql.csv.filterPushdown.enabled": "true"}):
        assert spark_settings.session_settings(conf)["spark.sql.csv.filterPushdown.enabled"] == "false"
    assert spark.conf.get("spark.sql.csv.filterPushdown.enabled") == "false"


@pytest.mark.parametrize("header_end, record_end", [("\n", "\r\n"), ("\r\n", "\n")])
def test_records_of_a_multiline_file_ending_with_different_line_breaks_are_refused(spark, tmp_path,
                                                                                   header_end, record_end):
    # the line ending was taken from the header line: LF header + CRLF records read '2026-01\r' as the
    # period of every row and all of them were filtered out (0 rows, exit 0)
    loc = tmp_path / "mixed"
    cols = COLS + ["_period"]
    body = csv_text(cols, [["1", "1.00", "", "two\nlines", "ERP", "2026-01"], ["2", "2.00", "", "x", "ERP", "2026-01"]],
                    eol=record_end)
    head, rest = body.split(record_end, 1)
    write(loc / "a.csv", head + header_end + rest)
    message = failure(spark, loc)
    assert message.startswith(f"INPUT-003 dataset 'ledger': {loc / 'a.csv'}: its records end with different line "
                              "breaks ("), message


def test_a_line_break_inside_quotes_differing_from_the_records_is_read_as_written(spark, tmp_path):
    # Excel: CRLF between records, LF inside a cell (and a CR alone): one record ending, read exactly
    loc = tmp_path / "excel"
    cols = COLS + ["_period"]
    rows = [["1", "1.00", "", "two\nlines", "ERP", "2026-01"], ["2", "2.00", "", "cr\ralone", "ERP", "2026-01"]]
    write(loc / "a.csv", csv_text(cols, rows, eol="\r\n"))
    assert load(spark, loc) == [row("1", "1.00", None, "two\nlines", "ERP"), row("2", "2.00", None, "cr\ralone", "ERP")]


def test_ledgerflow_csv_output_is_read_back_exactly_and_counted_as_written(spark, tmp_path):
    # Spark's CSV writer escaped a quote with a backslash (the exact read refused its own output) and
    # trimmed the spaces around values; its rows were counted without multiLine (a line break: 2 rows),
    # and a destination folder with glob characters was not found when counted
    from ledgerflow.adapters.commit import staging, swaps
    values = [("1", "1.00", "2.00", '  say "hi", to\nall  ', " ERP"), ("2", "3.00", "4.00", "plain", "ERP ")]
    df = spark.createDataFrame(values, ", ".join(f"{c} string" for c in COLS))
    dest = tmp_path / "[eu] out"
    staged = staging.stage_partition(df, str(dest), "csv", "2026-01", "run1")
    assert staging.count_rows(df, staged.staged, "csv") == 2
    swaps.commit([staged])
    assert load(spark, dest) == sorted((row(*v) for v in values), key=repr)


def test_gzip_files_and_value_only_reader_options_are_mapped_by_their_own_header(spark, tmp_path):
    # any reader option besides header/sep, or a .gz file, took Spark's own path: files read by position
    import gzip
    order = ["description", "source_system", "amount_reporting", "acct", "amount_local"]
    first = csv_text(COLS, [["4100", "10.00", "11.00", "Revenue", "ERP"]])
    second = csv_text(order, [['Travel "abroad"\nday 2', "EXPENSE", "22.00", "5200", "20.00"]])
    expected = sorted([row("4100", "10.00", "11.00", "Revenue", "ERP"),
                       row("5200", "20.00", "22.00", 'Travel "abroad"\nday 2', "EXPENSE")], key=repr)
    gz = tmp_path / "gz"
    gz.mkdir()
    for name, text in (("a.csv.gz", first), ("b.csv.gz", second)):
        with gzip.open(gz / name, "wb") as fh:
            fh.write(text.encode())
    assert load(spark, gz) == expected
    plain = tmp_path / "plain"
    write(plain / "a.csv", first)
    write(plain / "b.csv", second)
    assert load(spark, plain, options=(("encoding", "UTF-8"), ("nullValue", "n/a"))) == expected
    # an option that changes the records' structure leaves the read to Spark: a file whose order differs
    # is refused (it was read by position, the amount in the account)
    other = tmp_path / "other"
    write(other / "a.csv", first)
    write(other / "b.csv", csv_text(order, [["Travel", "EXPENSE", "22.00", "5200", "20.00"]]))
    try:
        load(spark, other, options=(("comment", "#"),))
    except Exception as exc:  # noqa: BLE001 - a Spark failure, as the runner shows it
        message = errors_text.spark_error_text(exc, {str(other): "ledger"})
    else:
        raise AssertionError("a file ordering its columns otherwise was read by position")
    assert message.startswith("INPUT-003 dataset 'ledger': the header of ") and "order" in message, message


def test_a_malformed_record_of_a_semicolon_file_is_located_on_its_line(spark, tmp_path):
    loc = tmp_path / "semi"
    write(loc / "a.csv", ";".join(COLS) + '\n1;1.00;;"a,b";ERP\n2;2.00;;two\n')
    target = ResolvedLocation("path", str(loc), "csv", "2026-01", (("sep", ";"),))
    with pytest.raises(Exception) as err:
        loaders.load_input(spark, loaders.InputLoad("ds_semicolon", dataset(), 1, [target], row_ids=False), ARGS)
        spark.table("ds_semicolon").collect()
    message = errors_text.spark_error_text(err.value, errors_text.describe_locations([("ledger", [target])]))
    assert message.startswith(f"INPUT-003 dataset 'ledger': {loc / 'a.csv'} line 3: a malformed CSV record (4 fields "
                              "where the header has 5): '2;2.00;;two'"), message


def test_json_files_must_agree_on_system_columns_and_a_renamed_key_is_refused(spark, tmp_path):
    # the schema came from the first MiB of lines: a later file's own '_period: 2025-12' was dropped and
    # its row joined the 2026-01 run; a file writing 'amt' for 'amount_local' was read as NULL amounts
    def line(i, **extra):
        return json.dumps({**dict(zip(COLS, [str(i), "1.00", "1.00", "d" * 60, "ERP"])), **extra}) + "\n"
    loc = tmp_path / "sys"
    write(loc / "a.json", "".join(line(i) for i in range(12000)))  # over the 1 MiB sample
    write(loc / "b.json", line(99999, _period="2025-12"))
    message = failure(spark, loc, "json")
    assert message.startswith(f"INPUT-002 dataset 'ledger': the files {loc / 'a.json'} and {loc / 'b.json'} "
                              "disagree on the system column(s) _period"), message

    renamed = tmp_path / "renamed"
    write(renamed / "a.json", line(1))
    write(renamed / "b.json", json.dumps({"acct": "2", "amt": "2.00", "amount_reporting": "2.00",
                                          "description": "two", "source_system": "ERP"}) + "\n")
    message = failure(spark, renamed, "json")
    assert message.startswith(f"INPUT-001 dataset 'ledger': {renamed / 'b.json'} never holds the declared "
                              "column(s) amount_local, and its records carry 'amt', which no declared column "
                              "names"), message
    # a nullable column absent from a whole file is NULL there, as Spark's own JSON writer leaves it out
    write(renamed / "b.json", json.dumps({"acct": "2", "amount_reporting": "2.00", "description": "two",
                                          "source_system": "ERP"}) + "\n")
    assert load(spark, renamed, "json") == sorted([row("1", "1.00", "1.00", "d" * 60, "ERP"),
                                                   row("2", None, "2.00", "two", "ERP")], key=repr)


def test_compile_resolved_reads_semicolon_files_and_files_needing_different_readings(spark, finance):
    # the script parsed a ';' header with ',' (every column "missing"), and merged multiLine and lineSep
    # of all files into one read (a CRLF multi-line file beside an LF file failed or was misread); it
    # also let the period filter skip malformed records (filter pushdown)
    from cli_support import edit
    folder, rows = _eu_ledger(finance, swapped=True)
    edit(finance, "ledgerflow.yml", 'path: "data/gl/[eu] ledger", format: csv}',
         'path: "data/gl/[eu] ledger", format: csv, options: {sep: ";"}}')
    for name, eol in (("a.csv", "\n"), ("b.csv", "\r\n")):
        records = list(csv.reader(io.StringIO((folder / name).read_text(), newline="")))
        write(folder / name, "".join(";".join('"' + v.replace('"', '""') + '"' if any(c in v for c in ';"\r\n') else v
                                              for v in r) + eol for r in records))
    result = cli(finance, "compile", "ts01_output_only", "--resolved", "--period", "2026-01")
    assert result.exit_code == 0, describe(result)
    statements = [s.rstrip().rstrip(";") for s in result.stdout.split(";\n\n")]
    assert "SET spark.sql.csv.filterPushdown.enabled=false" in [s.splitlines()[-1] for s in statements]
    for statement in statements:
        if "TEMPORARY VIEW `raw_" in statement or "TEMPORARY VIEW `ds_" in statement:
            spark.sql(statement)
    got = sorted((r.journal_id, r.line_number, r.description) for r in spark.table("ds_gl").collect())
    assert got == sorted((r[0], r[1], r[8]) for r in rows)


def test_a_blank_line_before_the_header_and_a_header_over_64_kib_are_read(spark, tmp_path):
    # both were refused as lacking every declared column: the first record read was the empty line
    # (Spark skips it), and a header was parsed from its first 64 KiB only
    loc = tmp_path / "blank"
    write(loc / "a.csv", "\r\n" + csv_text(COLS, [["1", "1.00", "", "one", "ERP"]], eol="\r\n"))
    wide = [f"{'x' * 250}{i}" for i in range(300)]
    write(loc / "b.csv", csv_text(wide + COLS[::-1], [["v"] * 300 + ["ERP", 'two "2"', "", "2.00", "2"]]))
    assert len((loc / "b.csv").read_text().splitlines()[0]) > 1 << 16
    assert load(spark, loc) == [row("1", "1.00", None, "one", "ERP"), row("2", "2.00", None, 'two "2"', "ERP")]


def test_what_was_read_is_what_the_fingerprint_lists(spark, tmp_path):
    # the fingerprint kept '_metadata*' files, which Spark lists but never reads as data
    from ledgerflow.adapters.inputs.fingerprint import fingerprint_path
    loc = tmp_path / "listed"
    write(loc / "a.csv", csv_text(COLS, [["1", "1.00", "", "one", "ERP"]]))
    write(loc / "_metadata_extra.csv", csv_text(COLS, [["9", "9.00", "", "never read", "ERP"]]))
    write(loc / "_SUCCESS", "")
    assert load(spark, loc) == [row("1", "1.00", None, "one", "ERP")]
    assert [f["path"] for f in fingerprint_path(str(loc))["files"]] == ["a.csv"]


def test_a_parquet_file_storing_a_column_with_another_type_is_named_as_such(spark, tmp_path):
    # the message said "unreadable or corrupt", sending the user after a damaged file
    import pyarrow as pa
    import pyarrow.parquet as pq
    loc = tmp_path / "drift"
    loc.mkdir()
    strings = {c: pa.array(["1"]) for c in COLS}
    pq.write_table(pa.table(strings), loc / "a.parquet")
    pq.write_table(pa.table({**strings, "acct": pa.array([2], pa.int64())}), loc / "b.parquet")
    message = failure(spark, loc, "parquet")
    assert message.startswith(f"INPUT-002 dataset 'ledger': {loc / 'b.parquet'} stores a column with another type "
                              "than the location's other files"), message


def test_a_header_name_with_a_trailing_space_is_shown_quoted(spark, tmp_path):
    loc = tmp_path / "space"
    write(loc / "a.csv", csv_text([c + " " if c == "amount_local" else c for c in COLS], [["1", "1.00", "", "x", "E"]]))
    message = failure(spark, loc)
    assert "lacks the declared column(s) amount_local (it has: acct, 'amount_local ', amount_reporting," in message, message

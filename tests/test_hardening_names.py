"""Names from YAML never break out of the SQL comments they appear in (issue 8, point 5).

A name holding a line break used to end the ``--`` comment it was printed in, so the text after the
break became a statement of the compiled script: ``compile --resolved`` of an operation named
``"out\\nCREATE TABLE pwned AS SELECT 1;\\n/* */ --"`` created ``pwned`` in ``spark-sql -f``. Every
comment is now made by ``render.comment``, which writes line breaks and other invisible characters as
visible escapes.
"""
from __future__ import annotations

import codecs
import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import sqlglot

from ledgerflow.compiler.render import comment

from cli_support import RATES_ID, cli, describe
from conftest import c1_env

# Everything some reader takes as a line end: Spark's lexer (\n, \r), spark-sql's statement splitter
# (\n), Python's str.splitlines (also \v \f \x1c-\x1e \x85 \u2028 \u2029), editors and browsers.
LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
TS03 = ["15000.00", "15000.00", "9282.00", "-9282.00", "27962.00", "27962.00", "3200.00", "-3200.00",
        "16800.00", "16800.00"]


def hostile(sep: str, table: str, tail: str = "/* */ --") -> str:
    """A name that, printed raw into a ``--`` comment, ends it and creates ``table``."""
    return f"out{sep}CREATE TABLE {table} AS SELECT 1;{sep}{tail}"


def _one_visible_line(line: str) -> bool:
    return (len(line.splitlines()) == 1 and line.startswith("-- ")
            and not any(unicodedata.category(c)[0] == "C" or unicodedata.category(c) in ("Zl", "Zp") for c in line))


def _decoded(line: str) -> str:
    """The text a comment line stands for (its escapes are Python's)."""
    return codecs.decode(line[3:].encode("ascii", "backslashreplace"), "unicode_escape")


def test_comment_keeps_every_line_break_and_control_character_on_one_visible_line():
    controls = [chr(c) for c in [*range(0x00, 0x20), *range(0x7F, 0xA0)]]
    invisible = ["\u200b", "\u202e", "\u2066", "\ufeff", "\ue000", "\U000e0001", "\udc80"]
    for ch in [*LINE_BREAKS, *controls, *invisible]:
        text = f"op{ch}CREATE TABLE pwned AS SELECT 1;{ch}--"
        line = comment(text)
        assert _one_visible_line(line), (repr(ch), line)
        assert _decoded(line) == text, repr(ch)
    # ';', quotes and block-comment marks mean nothing inside a -- comment: they stay readable
    assert comment("a; 'b' \"c\" /* d */ `e`") == "-- a; 'b' \"c\" /* d */ `e`"
    assert comment("Convert to USD") == "-- Convert to USD"


def test_comment_never_ends_in_a_backslash():
    """Spark's lexer and splitter continue a -- comment over backslash-newline (even after '\\\\')."""
    for text in ["a\\", "a\\\\", "\\", "a\\b", "\\n"]:
        line = comment(text)
        assert not line.endswith("\\"), line
        assert _one_visible_line(line) and _decoded(line) == text, line


def _hostile_workspace(finance: Path, dataset_sep: str = "\u2028") -> Path:
    """finance with hostile project, description, operation and dataset names (ts03 only; the dataset's
    name has no '/', which the resolver refuses in any path token, and by default no \\n or \\r, which
    spark-sql cannot read inside the quoted identifier of its input view)."""
    for other in (finance / "projects").glob("*.yml"):
        if other.name != "ts03_fx_conversion.yml":
            other.unlink()
    config = finance / "ledgerflow.yml"
    config.write_text(config.read_text().replace("resolvers:\n", (
        "resolvers:\n"
        "  fixed_rates:   # the rates' files, whatever the dataset is called\n"
        "    rules:\n"
        "      - name: rates\n"
        "        strategy: {type: path, path: \"data/exchange_rates/v{{version}}/exchange_rates.csv\", format: csv}\n"), 1))
    rates = finance / "datasets" / "exchange_rates.yml"
    rates.write_text(rates.read_text().replace("name: exchange_rates\nstatus: active\n",
                                               f"name: {json.dumps(hostile(dataset_sep, 'pwned_dataset', '--'))}\n"
                                               "status: active\nresolver_id: fixed_rates\n", 1))
    project = finance / "projects" / "ts03_fx_conversion.yml"
    text = project.read_text()
    for old, new in [("name: ts03_fx_conversion", f"name: {json.dumps(hostile(chr(10), 'pwned_project'))}"),
                     ("description: TS-03. Convert amount_local to USD at the closing rate.",
                      f"description: {json.dumps(hostile(chr(13), 'pwned_description'))}"),
                     ("name: Convert to USD", f"name: {json.dumps(hostile(chr(13), 'pwned_update'))}"),
                     ("name: Write converted lines", f"name: {json.dumps(hostile(chr(10), 'pwned_output'))}"),
                     ("dataset_id: exchange_rates", f"dataset_id: {RATES_ID}")]:
        assert old in text, old
        text = text.replace(old, new, 1)
    project.write_text(text)
    return project


def _written_statements(finance: Path, project: Path, period: str | None = None) -> int:
    """How many statements ledgerflow itself puts in the (resolved) script, counted before printing."""
    from ledgerflow.adapters.compile_out.resolved_script import resolved_statements
    from ledgerflow.adapters.store.runstore import RunStore
    from ledgerflow.compiler.compile import compile_project, find_project
    from ledgerflow.compiler.periods import parse_period
    from ledgerflow.compiler.workspace import load_workspace
    ws = load_workspace(str(finance))
    proj = find_project(ws, str(project))
    compiled = compile_project(ws, proj)
    if period is None:
        return len(compiled.statements)
    return len(resolved_statements(ws, proj, compiled, parse_period(period), RunStore(str(finance))))


def _parsed_statements(script: str) -> list:
    """The statements of ``script`` as sqlglot reads it (names may sit inside quoted identifiers)."""
    return [s for s in sqlglot.parse(script, read="spark") if s is not None]


def test_hostile_names_stay_in_comments_of_the_compiled_script(finance):
    project = _hostile_workspace(finance)
    result = cli(finance, "compile", str(project))
    assert result.exit_code == 0, describe(result)
    script = result.stdout
    comments = [line for line in script.split("\n") if line.startswith("--")]
    assert all(_one_visible_line(line) for line in comments), comments
    statements = _parsed_statements(script)
    assert len(statements) == _written_statements(finance, project) == 2
    assert all(isinstance(s, sqlglot.exp.Select) for s in statements), [s.key for s in statements]


@pytest.mark.spark  # starts a Spark JVM in a process of its own
def test_resolved_scripts_run_as_is_in_spark_sql_and_hostile_names_stay_comments(finance, tmp_path):
    """`compile --resolved` output, fed unchanged to Spark's own spark-sql CLI, computes TS-03: the sample's
    own script, and the script of a project whose names hold \\n, \\r or \\u2028 followed by a statement,
    in which every statement is one ledgerflow wrote and no `pwned*` table appears. One spark-sql process
    runs both scripts (each such JVM costs the test run half a minute)."""
    plain = cli(finance, "compile", "ts03_fx_conversion", "--resolved", "--period", "2026-01")
    assert plain.exit_code == 0, describe(plain)
    assert ":period_" not in plain.stdout and ":run_started_at" not in plain.stdout
    project = _hostile_workspace(finance)
    result = cli(finance, "compile", str(project), "--resolved", "--period", "2026-01")
    assert result.exit_code == 0, describe(result)
    script = result.stdout
    assert all(_one_visible_line(line) for line in script.split("\n") if line.startswith("--"))
    expected = _written_statements(finance, project, "2026-01")
    # sqlglot cannot parse INSERT OVERWRITE DIRECTORY ... USING: count the ';' its lexer sees
    semicolons = [t for t in sqlglot.tokenize(script, read="spark") if t.token_type == sqlglot.TokenType.SEMICOLON]
    assert expected >= 5 and len(semicolons) == expected
    path = tmp_path / "hostile.sql"
    path.write_text(plain.stdout + "\n" + script + "\nSHOW TABLES LIKE 'pwned*';\n")  # not the temporary views,
    # whose names hold 'pwned'
    import pyspark
    home = os.path.dirname(pyspark.__file__)
    warehouse = tmp_path / "warehouse"
    proc = subprocess.run([os.path.join(home, "bin", "spark-sql"), "--master", "local[1]",
                           "--conf", f"spark.sql.warehouse.dir={warehouse}", "-f", str(path)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env=c1_env(SPARK_HOME=home, SPARK_LOCAL_IP="127.0.0.1"))
    assert "pwned" not in proc.stdout, proc.stdout
    pwned = list(warehouse.rglob("*pwned*")) if warehouse.exists() else []
    assert not pwned, pwned  # the old comments let spark-sql create three pwned_* tables here
    assert proc.returncode == 0, proc.stderr[-3000:]
    # spark-sql reports "Time taken" once per statement it ran: ledgerflow's statements + SHOW TABLES
    plain_statements = _written_statements(finance, finance / "projects" / "ts03_fx_conversion.yml", "2026-01")
    assert proc.stderr.count("Time taken:") == plain_statements + expected + 1, proc.stderr[-3000:]
    sample = pq.read_table(finance / "target" / "resolved" / "ts03_fx_conversion" / "2026-01" / "output_002")
    rows = sorted(sample.to_pylist(), key=lambda r: (r["journal_id"], r["line_number"]))  # GL order
    assert [str(r["amount_reporting"]) for r in rows] == TS03
    from ledgerflow.adapters.compile_out.folders import segment
    out = finance / "target" / "resolved" / segment(hostile("\n", "pwned_project")) / "2026-01" / "output_002"
    table = pq.read_table(out)
    rows = sorted(table.to_pylist(), key=lambda r: (r["journal_id"], r["line_number"]))  # GL order
    assert [str(r["amount_reporting"]) for r in rows] == TS03


def test_a_dataset_name_with_a_line_break_is_refused_by_compile_resolved_only(finance):
    """spark-sql reads its file line by line and drops lines starting with '--': a line break inside the
    quoted identifier of an input view would cut it. `compile --resolved` says so (exit 1, the name's
    place); the plain script, which the runner executes statement by statement, still compiles."""
    project = _hostile_workspace(finance, dataset_sep="\n")
    resolved = cli(finance, "compile", str(project), "--resolved", "--period", "2026-01")
    assert resolved.exit_code == 1, describe(resolved)
    assert "datasets/exchange_rates.yml:2" in resolved.stderr and "line break" in resolved.stderr, resolved.stderr
    assert "Traceback" not in resolved.output
    plain = cli(finance, "compile", str(project))
    assert plain.exit_code == 0, describe(plain)


def test_project_name_never_climbs_out_of_the_folders_ledgerflow_writes(finance, tmp_path):
    """A project named ``../../escape`` gets folders of its own inside ``--out DIR`` and
    ``target/``: nothing is written (or, by the resolved script's INSERT OVERWRITE DIRECTORY,
    cleared) outside them."""
    from cli_support import edit
    from ledgerflow.adapters.compile_out.folders import segment

    hostile_name = "../../escape"
    edit(finance, "projects/ts01_output_only.yml", "name: ts01_output_only", f'name: "{hostile_name}"')
    out = tmp_path / "compiled"
    result = cli(finance, "compile", hostile_name, "--out", out)
    assert result.exit_code == 0, result.output
    written = Path(result.output.strip())
    assert written.resolve().is_relative_to(out.resolve()), written
    assert not (tmp_path / "escape").exists() and not (out.parent.parent / "escape").exists()
    script = cli(finance, "compile", hostile_name, "--resolved", "--period", "2026-01")
    assert script.exit_code == 0, script.output
    folder = segment(hostile_name)
    assert "/" not in folder and ".." not in folder
    assert f"target/scratch/{folder}/2026-01" in script.output or f"target/resolved/{folder}/2026-01" in script.output
    assert "escape/2026-01" not in script.output.replace(f"{folder}/", "")


def test_folder_segment_keeps_plain_names_and_separates_different_ones():
    from ledgerflow.adapters.compile_out.folders import segment

    assert segment("ts03_fx_conversion") == "ts03_fx_conversion"
    for name in ("..", ".", "../x", "a/b", "a\\b", "x\n", ".hidden", ""):
        s = segment(name)
        assert s not in (".", "..") and "/" not in s and "\\" not in s and s.isprintable() and s, (name, s)
    assert segment("a/b") != segment("a_b") != segment("a b")

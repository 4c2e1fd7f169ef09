"""What a user sees when a run fails or succeeds: one paragraph, no stack traces, no Spark start-up noise.

The end-to-end tests run ``ledgerflow run`` in a subprocess, so a fresh driver JVM starts with the
settings the CLI gives it (log4j2 configuration, JVM stderr), exactly as a user's shell would see it.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from cli_support import edit
from conftest import cli_env

from ledgerflow.adapters.spark import error_text as errors_text
from ledgerflow.adapters.inputs import loaders
from ledgerflow.adapters.spark import session as spark_settings
from ledgerflow.compiler.model import Dataset
from ledgerflow.compiler.resolver import ResolvedLocation

STACK_MARKERS = ("\tat ", "Traceback", "py4j", "An error occurred while calling", "SQLSTATE", "Caused by")
SPARK_NOISE = ("log4j", "WARN", "NativeCodeLoader", "loopback", "incubator", "setLogLevel")


def ledgerflow(ws: Path, *args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    """``python -m ledgerflow.adapters.cli --workspace WS ARGS`` in a subprocess (a fresh JVM when it runs)."""
    return subprocess.run([sys.executable, "-m", "ledgerflow.adapters.cli", "--workspace", str(ws), *args],
                          capture_output=True, text=True, timeout=timeout, env=cli_env())


def assert_one_paragraph(proc: subprocess.CompletedProcess) -> str:
    """stderr is one ``Error: ...`` line; neither stream holds a stack trace or Spark's log lines."""
    err = proc.stderr.strip()
    assert err.startswith("Error: ") and len(err.splitlines()) == 1, proc.stderr
    for text in (proc.stdout, proc.stderr):
        for marker in STACK_MARKERS + ("WARN", "ERROR Executor", "incubator"):
            assert marker not in text, (marker, text)
    return err


def parquet_gl(ws: Path) -> Path:
    """Make ``gl`` read a Parquet folder (resolver ``pq``): data/gl/pq/part-0.parquet holds the sample GL."""
    edit(ws, "ledgerflow.yml", "  monthly:", "  pq:\n    rules:\n      - name: pq\n        data_level: any\n"
         "        strategy: {type: path, path: \"data/{{dataset}}/pq\", format: parquet}\n  monthly:")
    edit(ws, "datasets/gl.yml", "status: active\n", "status: active\nresolver_id: pq\n")
    folder = ws / "data" / "gl" / "pq"
    folder.mkdir(parents=True)
    table = pacsv.read_csv(ws / "data" / "gl" / "v1" / "transactions.csv",
                           convert_options=pacsv.ConvertOptions(column_types={
                               n: pa.string() for n in ("journal_id", "line_number", "posting_date", "account_code",
                                                        "cost_center_code", "currency", "amount_local",
                                                        "amount_reporting", "description", "source_system",
                                                        "_period")}))
    pq.write_table(table, folder / "part-0.parquet")
    return folder


# ------------------------------------------------------------------------------------ subprocess runs
@pytest.mark.spark  # starts a Spark JVM in a process of its own
def test_successful_run_prints_nothing_on_stderr(finance):
    """TS-03 on a fresh JVM: stderr is empty (no start-up WARN lines, no log4j profile lines, no JVM
    notices); Spark's own log is kept in target/logs/spark.log."""
    proc = ledgerflow(finance, "run", "ts03_fx_conversion", "--period", "2026-01")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert "10 rows" in proc.stdout and "timings: load inputs" in proc.stdout
    for noise in SPARK_NOISE:
        assert noise not in proc.stdout, noise
    assert (finance / "target" / "logs" / "spark.log").is_file()


@pytest.mark.spark  # starts a Spark JVM in a process of its own
def test_bad_cast_is_one_paragraph_naming_dataset_column_location_value(finance):
    """`abc` in a decimal column of the GL CSV: exit 3 and ledgerflow's own message only (Spark logs the
    failed task with a ~100-line stack trace at ERROR: that goes to the log file, not the terminal)."""
    edit(finance, "data/gl/v1/transactions.csv", "JE-001,1,2026-01-05,4100,CC-100,USD,15000.00",
         "JE-001,1,2026-01-05,4100,CC-100,USD,abc")
    proc = ledgerflow(finance, "run", "ts03_fx_conversion", "--period", "2026-01")
    assert proc.returncode == 3, proc.stderr
    err = assert_one_paragraph(proc)
    path = finance / "data" / "gl" / "v1" / "transactions.csv"
    assert err.endswith(f"failed on Spark: ledgerflow: dataset 'gl', column 'amount_local' at {path}: "
                        "value 'abc' cannot be read as decimal(18,2)"), err
    assert "USER_RAISED_EXCEPTION" in (finance / "target" / "logs" / "spark.log").read_text()


@pytest.mark.spark  # starts a Spark JVM in a process of its own
def test_truncated_parquet_names_the_file(finance):
    """A truncated Parquet file: the message names the dataset and the file and says it is unreadable or
    corrupt (from the Java exception chain), not Py4J's "An error occurred while calling o42.load"."""
    folder = parquet_gl(finance)
    data = (folder / "part-0.parquet").read_bytes()
    (folder / "part-0.parquet").write_bytes(data[: len(data) // 2])
    proc = ledgerflow(finance, "run", "ts03_fx_conversion", "--period", "2026-01")
    assert proc.returncode == 3, proc.stderr
    err = assert_one_paragraph(proc)
    assert f"dataset 'gl': cannot read data file {folder / 'part-0.parquet'}: the file is unreadable or corrupt" \
        in err, err
    assert "is not a Parquet file" in err


def test_empty_input_folder_is_a_data_reference_error(finance):
    """An input folder holding no data files (only _SUCCESS): exit 1 before Spark starts."""
    folder = parquet_gl(finance)
    (folder / "part-0.parquet").unlink()
    (folder / "_SUCCESS").write_text("")
    proc = ledgerflow(finance, "run", "ts03_fx_conversion", "--period", "2026-01")
    assert proc.returncode == 1, proc.stderr
    err = assert_one_paragraph(proc)
    assert f"Error: dataset 'gl': no data files at {folder} " in err, err


@pytest.mark.spark  # starts a Spark JVM in a process of its own
def test_debug_keeps_spark_output_and_the_traceback(finance):
    """--debug: Spark's default console logging and the Python traceback are shown."""
    edit(finance, "data/gl/v1/transactions.csv", "JE-001,1,2026-01-05,4100,CC-100,USD,15000.00",
         "JE-001,1,2026-01-05,4100,CC-100,USD,abc")
    proc = ledgerflow(finance, "--debug", "run", "ts03_fx_conversion", "--period", "2026-01")
    assert proc.returncode == 3
    assert "Traceback" in proc.stderr
    assert "Using Spark's default log4j profile" in proc.stderr  # Spark's own default configuration
    # the error paragraph follows the traceback; Spark's console log runs on its own threads and may
    # still print (cancelled tasks of the failed job) after it
    lines = proc.stderr.splitlines()
    error = [i for i, line in enumerate(lines) if line.startswith("Error: run ")]
    assert error and error[-1] > max(i for i, line in enumerate(lines) if line.startswith("Traceback"))


# ------------------------------------------------------------------------------------ pieces, no Spark
class FakeJava:
    """Stands in for a py4j Java exception: class name, message, cause."""

    def __init__(self, cls: str, message, cause=None):
        self.cls, self.message, self.cause = cls, message, cause

    def getClass(self):
        return self

    def getName(self):
        return self.cls

    def getMessage(self):
        return self.message

    def getCause(self):
        return self.cause


class FakePy4JError(Exception):
    def __init__(self, java):
        super().__init__("An error occurred while calling o42.load.\n: " + java.getMessage())
        self.java_exception = java


def test_job_abort_chain_becomes_its_first_real_message_and_root_cause():
    root = FakeJava("java.io.IOException", "No space left on device")
    task = FakeJava("org.apache.spark.SparkException", "[TASK_WRITE_FAILED] Task failed while writing rows to "
                    "/x. SQLSTATE: 58030\n\tat org.apache.spark.Foo.bar(Foo.scala:1)", root)
    job = FakeJava("org.apache.spark.SparkException", "Job aborted due to stage failure: Task 0 in stage 1.0 "
                   "failed 1 times, most recent failure: Lost task ...\n\tat org.apache.spark.X.y(X.scala:2)", task)
    text = errors_text.spark_error_text(FakePy4JError(job))
    assert text == "No space left on device", text
    analysis = FakeJava("org.apache.spark.sql.AnalysisException", "[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column "
                        "`nocol` cannot be resolved. SQLSTATE: 42703; line 1 pos 7;\n'Project ['nocol]\n+- Range")
    assert errors_text.spark_error_text(FakePy4JError(analysis)) == \
        "[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column `nocol` cannot be resolved."


def test_read_failure_names_the_file_and_its_dataset():
    cause = FakeJava("java.lang.RuntimeException", "file:/data/gl/pq/part-0.parquet is not a Parquet file. "
                     "Expected magic number at tail, but found [1, 2, 3, 4]")
    top = FakeJava("org.apache.spark.SparkException", "[FAILED_READ_FILE.CANNOT_READ_FILE_FOOTER] Encountered "
                   "error while reading file file:/data/gl/pq/part-0.parquet. Could not read footer.\nIf not, "
                   "please convert it. SQLSTATE: KD001", cause)
    text = errors_text.spark_error_text(FakePy4JError(top), {"/data/gl/pq": "gl", "/data/rates": "rates"})
    assert text.startswith("dataset 'gl': cannot read data file /data/gl/pq/part-0.parquet: the file is "
                           "unreadable or corrupt (file:/data/gl/pq/part-0.parquet is not a Parquet file."), text
    assert "\n" not in text


def test_own_raise_error_message_wins():
    inner = FakeJava("org.apache.spark.SparkRuntimeException",
                     "[USER_RAISED_EXCEPTION] ledgerflow: runtime join 'fx' matched 2 rows SQLSTATE: P0001")
    job = FakeJava("org.apache.spark.SparkException", "Job aborted due to stage failure: ...", inner)
    assert errors_text.spark_error_text(FakePy4JError(job)) == "ledgerflow: runtime join 'fx' matched 2 rows"
    # a Spark Connect error carries no Java object: its message is cleaned the same way
    assert errors_text.spark_error_text(RuntimeError("[DIVIDE_BY_ZERO] Division by zero. SQLSTATE: 22012\n"
                                                     "== SQL (line 1) ==\nselect 1/0")) == \
        "[DIVIDE_BY_ZERO] Division by zero."


def test_data_files_check(tmp_path):
    ds = Dataset(id="x", name="gl", status="active", table_name="t", temporal_mode="period", columns=[], versions=[])
    folder = tmp_path / "gl"
    (folder / "_period=2026-01").mkdir(parents=True)
    (folder / "_SUCCESS").write_text("")
    (folder / ".part-0.crc").write_text("")
    (folder / "_temporary" / "0").mkdir(parents=True)
    (folder / "_temporary" / "0" / "part-9.parquet").write_text("x")
    loc = ResolvedLocation("path", str(folder), "parquet", "2026-01")
    with pytest.raises(loaders.ResolutionError, match=r"dataset 'gl': no data files at .*gl \(period 2026-01\)"):
        loaders.check_exists(loc, ds)
    (folder / "_period=2026-01" / "part-0.parquet").write_text("x")  # a partition folder is not hidden
    loaders.check_exists(loc, ds)
    # a written destination: its partition is a symbolic link into the hidden .lf_versions folder
    dest = tmp_path / "dest"
    (dest / ".lf_versions" / "_period=2026-01" / "run1").mkdir(parents=True)
    (dest / ".lf_versions" / "_period=2026-01" / "run1" / "part-0.csv").write_text("a\n")
    (dest / "_period=2026-01").symlink_to(dest / ".lf_versions" / "_period=2026-01" / "run1")
    loaders.check_exists(ResolvedLocation("path", str(dest), "csv", None), ds)
    (dest / "_period=2026-01").unlink()
    with pytest.raises(loaders.ResolutionError, match="no data files"):
        loaders.check_exists(ResolvedLocation("path", str(dest), "csv", None), ds)


def test_quiet_settings_keep_the_stack_size_and_add_the_log4j_configuration():
    settings = spark_settings.session_settings({"spark.sql.shuffle.partitions": "2"}, quiet=True,
                                               log_file="/tmp/with space/spark.log")
    opts = settings["spark.driver.extraJavaOptions"]
    assert opts.startswith("-Xss16m ")
    assert f"-Dlog4j2.configurationFile={spark_settings.QUIET_LOG4J2}" in opts
    assert '"-Dledgerflow.spark.log=/tmp/with space/spark.log"' in opts
    assert Path(spark_settings.QUIET_LOG4J2).is_file()
    # --debug: Spark's defaults; a user's own log4j2 configuration is kept
    assert spark_settings.session_settings(None, quiet=False)["spark.driver.extraJavaOptions"] == "-Xss16m"
    own = "-Xss32m -Dlog4j2.configurationFile=/etc/mine.properties"
    assert spark_settings.session_settings({"spark.driver.extraJavaOptions": own}, quiet=True)[
        "spark.driver.extraJavaOptions"] == own

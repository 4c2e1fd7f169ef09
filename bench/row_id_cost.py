"""What a generated ``_row_id`` costs per input row, warm and in process (issue 9, a second table).

Reads the GL rows of one period of the source-shaped benchmark data (``bench/datagen.py --source
flat``, Parquet without ``_row_id``) through the loading query ledgerflow builds
(:func:`ledgerflow.compiler.loading.normalised_select`) and writes them to Spark's ``noop`` sink, once
without an id and once with each derivation a run or a replay can use, alternating, several rounds:

- ``no id`` — the same query over data given a ``_row_id`` column (kept as it is);
- ``row_identity 3`` — a SHA-256 of the position (file relative to the location, row index) as
  delimited text, the UUID's digits placed with substrings;
- ``row_identity 4`` — two xxhash64 of the position's fields (the file as bytes), the digits looked
  up in a table of lower-case hex.

The figure that matters is the extra time over ``no id``; the headline of issue 9 stays the whole
cold process (``bench/cold_process.py``). ``--sink parquet`` writes Parquet files instead (into a
temporary folder, removed), and ``no id`` then writes no ``_row_id`` column at all, as the
hand-written script of the cold-process benchmark does: computing the id plus writing it.

    python -m bench.row_id_cost [--rows 1000000] [--rounds 5] [--sink noop|parquet]
"""
from __future__ import annotations

import argparse
import datetime
import os
import shutil
import statistics
import tempfile
import time

from ledgerflow.adapters.inputs.loaders import file_root, with_file_metadata
from ledgerflow.compiler import parameters
from ledgerflow.compiler.loading import RowRules, normalised_select
from ledgerflow.compiler.model import ColumnDef, Dataset, DatasetVersion
from ledgerflow.compiler.periods import parse_period
from ledgerflow.compiler.resolver import ResolvedLocation

from .cold_process import PERIOD, ensure_data, loadavg, source_root
from .common import dated_result

HERE = os.path.dirname(os.path.abspath(__file__))


def queries(spark, data: str) -> dict[str, tuple[str, dict]]:
    """Name -> (loading query, its parameter values) over the raw views this registers."""
    raw = spark.read.parquet(data)
    with_file_metadata(raw).createOrReplaceTempView("gl_raw")
    raw.selectExpr("*", "'kept' AS _row_id").createOrReplaceTempView("gl_with_ids")
    present = {f.name: f.dataType.simpleString() for f in raw.schema.fields}
    columns = [ColumnDef(name, typ) for name, typ in present.items() if not name.startswith("_")]
    gl = Dataset("0c000000-0000-4000-8000-000000000001", "gl", "active", "gl", "period", columns, [DatasetVersion(1)])
    root = file_root(ResolvedLocation("path", data, "parquet"))
    args = parameters.values(parse_period(PERIOD), datetime.datetime(2026, 3, 1, 12))
    out = {"no id": normalised_select(gl, 1, "gl_with_ids", {**present, "_row_id": "string"}, data, None,
                                      rows=RowRules(period_rows=True))}
    for identity in (3, 4):
        rows = RowRules(period_rows=True, file_root=root, row_identity=identity)
        out[f"row_identity {identity}"] = normalised_select(gl, 1, "gl_raw", present, data, None, rows=rows)
    return {name: (sql, parameters.arguments(sql, args)) for name, sql in out.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sink", choices=["noop", "parquet"], default="noop")
    parser.add_argument("--out", help="default: bench/results/row_id_cost_<date>.txt (row_id_cost_parquet_<date>.txt with --sink parquet)")
    args = parser.parse_args(argv)
    out = args.out or dated_result("row_id_cost" if args.sink == "noop" else "row_id_cost_parquet")
    lines: list[str] = []

    def log(text: str) -> None:
        print(text, flush=True)
        lines.append(text)
    ensure_data(args.rows, ["flat"], lambda *_: None)
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[2]").appName("row_id_cost").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").config("spark.sql.ansi.enabled", "true")
             .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    data = os.path.join(source_root(args.rows, "flat"), "data", "gl", "v1")
    variants = queries(spark, data)
    rows = spark.sql(*variants["no id"]).count()
    ids = {name: spark.sql(*q).select("_row_id").limit(1).first()[0] for name, q in variants.items()}
    log(f"# _row_id cost per input row, warm, in process; {args.rows:,} GL rows, {rows:,} in period {PERIOD}; "
        f"local[2]; sink {args.sink}; {args.rounds} rounds after 1 untimed; load average {loadavg()}")
    times: dict[str, list[float]] = {name: [] for name in variants}
    folder = tempfile.mkdtemp(prefix="lf-row-id-cost-")
    try:
        for round_ in range(args.rounds + 1):
            for name, (sql, values) in variants.items():
                start = time.perf_counter()
                df = spark.sql(sql, args=values)
                if args.sink == "noop":
                    df.write.format("noop").mode("overwrite").save()
                else:
                    df = df.drop("_row_id") if name == "no id" else df
                    df.write.mode("overwrite").parquet(os.path.join(folder, "out"))
                if round_:
                    times[name].append(time.perf_counter() - start)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    base = statistics.median(times["no id"])
    log("| derivation | median s | extra over no id | extra per million period rows | an id |")
    log("|---|---|---|---|---|")
    for name, got in times.items():
        med = statistics.median(got)
        extra = med - base
        shown = "none written" if name == "no id" and args.sink == "parquet" else ids[name]
        log(f"| {name} | {med:.2f} | {extra:+.2f} s | {extra / rows * 1e6:+.2f} s | {shown} |")
    log(f"# load average at the end {loadavg()}")
    spark.stop()
    with open(out, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

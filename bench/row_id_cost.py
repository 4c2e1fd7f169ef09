"""What a generated ``_row_id`` costs per input row, warm and in process (issue 9, a second table).

Reads the GL rows of one period of the source-shaped benchmark data (``bench/datagen.py --source
flat``, Parquet without ``_row_id``) with Spark's ``_metadata`` column and writes them to Spark's
``noop`` sink, once without an id and once with each way of deriving it, alternating, several rounds:

- ``json + regexp`` — :func:`ledgerflow.compiler.system_columns.uuidv7` over the row's position
  (``to_json`` of a struct, SHA-256, a regular expression inserting the dashes): the derivation of
  ``row_identity`` 2, still used for the few rows aggregate and append create;
- ``delimited + substr`` — :func:`~ledgerflow.compiler.system_columns.input_row_uuidv7`: the same
  position hashed as delimited text, dashes placed with substrings (``row_identity`` 3).

The figure that matters is the extra time over ``no id``; the headline of issue 9 stays the whole
cold process (``bench/cold_process.py``).

    python -m bench.row_id_cost [--rows 1000000] [--rounds 5]
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

from sqlglot import exp

from ledgerflow.compiler import system_columns as sysc

from .cold_process import PERIOD, ensure_data, loadavg, source_root

HERE = os.path.dirname(os.path.abspath(__file__))
COLUMNS = ("journal_id, line_number, posting_date, account_code, cost_center_code, customer_id, currency, "
           "amount_local, amount_reporting, description, source_system, _period")


def _position(root: str) -> list[exp.Expression]:
    path = exp.Dot(this=exp.column("_metadata"), expression=exp.to_identifier("file_path"))
    relative = exp.Case(ifs=[exp.If(this=exp.Anonymous(this="startswith", expressions=[path.copy(), exp.Literal.string(root)]),
                                    true=exp.Substring(this=path.copy(), start=exp.Literal.number(len(root) + 1)))],
                        default=path.copy())
    index = exp.Dot(this=exp.column("_metadata"), expression=exp.to_identifier("row_index"))
    return [relative, index]


def variants(root: str) -> dict[str, str]:
    """Name -> the extra SELECT item (empty: no id), as Spark SQL with the run start bound."""
    started = exp.Literal.string("2026-03-01 12:00:00")

    def bind(node: exp.Expression) -> str:
        node = node.transform(lambda n: exp.Cast(this=started.copy(), to=exp.DataType.build("timestamp"))
                              if isinstance(n, exp.Placeholder) else n)
        return ", " + node.sql("spark") + " AS `_row_id`"
    ds = "0c000000-0000-4000-8000-000000000001"
    old = sysc.uuidv7([exp.Literal.string(ds), exp.Literal.number(1), exp.Literal.number(0), *_position(root)])
    new = sysc.input_row_uuidv7(f"{len(ds)}:{ds}|1|0|", _position(root))
    return {"no id": "", "json + regexp": bind(old), "delimited + substr": bind(new)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default=os.path.join(HERE, "results", "row_id_cost.txt"))
    args = parser.parse_args(argv)
    lines: list[str] = []

    def log(text: str) -> None:
        print(text, flush=True)
        lines.append(text)
    ensure_data(args.rows, ["flat"], lambda *_: None)
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[2]").appName("row_id_cost").config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.ansi.enabled", "true").config("spark.sql.session.timeZone", "UTC").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    data = os.path.join(source_root(args.rows, "flat"), "data", "gl", "v1")
    spark.read.parquet(data).select("*", "_metadata").createOrReplaceTempView("gl")
    root = "file:" + os.path.abspath(data) + "/"
    queries = {name: f"SELECT {COLUMNS}{extra} FROM gl WHERE _period = '{PERIOD}'"
               for name, extra in variants(root).items()}
    rows = spark.sql(queries["no id"]).count()
    log(f"# _row_id cost per input row, warm, in process; {args.rows:,} GL rows, {rows:,} in period {PERIOD}; "
        f"local[2]; {args.rounds} rounds after 1 untimed; load average {loadavg()}")
    times: dict[str, list[float]] = {name: [] for name in queries}
    for round_ in range(args.rounds + 1):
        for name, query in queries.items():
            start = time.perf_counter()
            spark.sql(query).write.format("noop").mode("overwrite").save()
            if round_:
                times[name].append(time.perf_counter() - start)
    base = statistics.median(times["no id"])
    log("| derivation | median s | extra over no id | extra per million period rows |")
    log("|---|---|---|---|")
    for name, got in times.items():
        med = statistics.median(got)
        extra = med - base
        log(f"| {name} | {med:.2f} | {extra:+.2f} s | {extra / rows * 1e6:+.2f} s |")
    log(f"# load average at the end {loadavg()}")
    spark.stop()
    with open(args.out, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Deterministic benchmark data, written by Spark itself (``spark.range`` + hashes, no Python loops).

Every value is a function of the row number and a fixed seed (``xxhash64(id, SEED, salt)``), so the
same sizes give the same rows on any machine, whatever the partitioning. Data is written once into a
cache folder outside the repository, ``$LEDGERFLOW_BENCH_DATA`` (default ``/tmp/ledgerflow-bench``):

    <cache>/p-<N>/             workspace of pipeline P (a copy of bench/workspace) + data/
        data/gl/v1/_period=2026-MM/         N journal lines, 12 months, 30 currencies
        data/exchange_rates/v1/             daily closing and average rates to USD, 2024-2026
        data/customers/v1/_period=2026-01/  100,000 customers (one snapshot)
        data/budgets/v1/_period=2026-MM/    10,000 budget lines a month
    <cache>/chain-<N>/         workspace of the growth benchmark (bench/projectgen.py); its gl
                               data is a link to p-<N>'s
    <cache>/marginal-<N>/      workspace of the marginal-cost benchmark: gl and budgets of N rows,
                               one period (2026-01)
    <cache>/src-<layout>-<N>/  workspace of the cold-process benchmark (bench/cold_process.py) on
                               source-shaped data (below), layout flat | folders | csv

Like data written by ledgerflow, every table carries ``_row_id`` (a UUID string), ``_deleted``
(false) and its temporal columns, so loading needs no window to invent row ids.
Source-shaped data (``--source LAYOUT``) is what an ERP export writes: the same values without any
system column (no ``_row_id``, ``_deleted``, ``_updated_at``), GL lines and budgets over three months
(2026-01 .. 2026-03) with a ``_period`` column, customers as a snapshot without ``_period``, FX rates
with their validity (``_period_from`` .. ``_period_to``). Layouts: ``flat`` (Parquet, the three months
in one folder, each file sorted by ``_period``), ``folders`` (Parquet in ``_period=`` folders) and
``csv`` (like ``flat``, CSV with a header row). Two files per 500,000 GL rows (at least two). With
``--months 12`` the GL and budgets cover the twelve months of 2026 instead (the same number of GL rows,
spread over the year), in ``<cache>/src12-<layout>-<N>/`` (the range benchmark, ``bench/range_cost.py``).

Run: ``python -m bench.datagen --rows 1000000`` (the benchmarks call it themselves when data is missing);
``python -m bench.datagen --rows 1000000 --source flat --source folders --source csv``.
"""
from __future__ import annotations

import argparse
import os
import shutil

SEED = 20260101
HERE = os.path.dirname(os.path.abspath(__file__))
WORKSPACE_TEMPLATE = os.path.join(HERE, "workspace")
CURRENCIES = ["USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "NZD", "SEK", "NOK", "DKK", "PLN", "CZK", "HUF",
              "RON", "TRY", "ZAR", "BRL", "MXN", "CLP", "COP", "PEN", "INR", "CNY", "HKD", "SGD", "KRW", "TWD",
              "THB", "MYR"]
SOURCES = ["SAP", "SAP", "SAP", "ORACLE", "ORACLE", "SALESFORCE", "SALESFORCE", "WORKDAY", "NETSUITE", "MANUAL"]
SEGMENTS = ["ENTERPRISE", "SMB", "SMB", "RETAIL", "RETAIL", "PUBLIC"]
REGIONS = ["EMEA", "AMER", "APAC"]
N_CUSTOMERS = 100_000
N_ACCOUNTS = 200
N_COST_CENTERS = 50
BUDGET_LINES_PER_MONTH = 10_000


def cache_root() -> str:
    """The data cache folder (outside the repository)."""
    return os.environ.get("LEDGERFLOW_BENCH_DATA", "/tmp/ledgerflow-bench")


def _h(F, salt: int, col: str = "id"):
    """A non-negative deterministic hash of column ``col``."""
    return F.abs(F.xxhash64(F.col(col), F.lit(SEED), F.lit(salt)))


def _pick(F, values: list[str], salt: int):
    arr = F.array(*[F.lit(v) for v in values])
    return F.element_at(arr, (_h(F, salt) % len(values) + 1).cast("int"))


def _uuid(F, salt: int):
    """A UUID-shaped (version 7) string from an md5 of the row number: ledgerflow's ``_row_id`` shape."""
    m = F.md5(F.concat(F.lit(f"{SEED}:{salt}:"), F.col("id").cast("string")))
    raw = F.concat(F.substring(m, 1, 12), F.lit("7"), F.substring(m, 14, 3), F.lit("8"), F.substring(m, 18, 15))
    return F.regexp_replace(raw, r"^(.{8})(.{4})(.{4})(.{4})(.{12})$", "$1-$2-$3-$4-$5")


def gl_frame(spark, rows: int, months: int = 12, partitions=None):
    """``rows`` journal lines over ``months`` months of 2026 (four lines per journal), in ``partitions``
    consecutive ranges of row numbers (default: Spark's)."""
    from pyspark.sql import functions as F
    df = spark.range(0, rows, 1, partitions) if partitions else spark.range(rows)
    month = ((F.col("id") / 4).cast("bigint") % months + 1).cast("int")
    return df.select(
        F.concat(F.lit("J"), F.lpad((F.col("id") / 4).cast("bigint").cast("string"), 10, "0")).alias("journal_id"),
        (F.col("id") % 4 + 1).cast("int").alias("line_number"),
        F.make_date(F.lit(2026), month, (_h(F, 1) % 28 + 1).cast("int")).alias("posting_date"),
        (F.lit(4000) + _h(F, 2) % N_ACCOUNTS).cast("string").alias("account_code"),
        F.concat(F.lit("CC"), F.lpad((_h(F, 3) % N_COST_CENTERS).cast("string"), 3, "0")).alias("cost_center_code"),
        # 2% of the ids point past the customer master: those lines find no customer.
        F.concat(F.lit("C"), F.lpad((_h(F, 4) % (N_CUSTOMERS * 102 // 100)).cast("string"), 6, "0")).alias("customer_id"),
        _pick(F, CURRENCIES, 5).alias("currency"),
        ((_h(F, 6) % 2_000_000 - 500_000) / 100).cast("decimal(18,2)").alias("amount_local"),
        F.lit(None).cast("decimal(18,2)").alias("amount_reporting"),
        F.concat(F.lit("Journal line "), F.col("id").cast("string")).alias("description"),
        _pick(F, SOURCES, 7).alias("source_system"),
        _uuid(F, 8).alias("_row_id"),
        F.lit(False).alias("_deleted"),
        F.format_string("2026-%02d", month).alias("_period"),
    )


def fx_frame(spark):
    """Daily closing and average rates to USD for 30 currencies, 2024-01-01 .. 2026-12-31; each row is
    valid for one day (``_period_to`` exclusive)."""
    from pyspark.sql import functions as F
    days = (spark.range(1096).select(F.date_add(F.lit("2024-01-01").cast("date"), F.col("id").cast("int")).alias("d"),
                                     F.col("id").alias("day")))
    cur = spark.createDataFrame([(i, c) for i, c in enumerate(CURRENCIES)], "ci int, from_currency string")
    kinds = spark.createDataFrame([(0, "closing"), (1, "average")], "ki int, rate_type string")
    base = (F.lit(0.2) + (F.abs(F.xxhash64(F.col("ci"), F.lit(SEED))) % 1000) / 500.0)
    wiggle = (F.abs(F.xxhash64(F.col("ci"), F.col("day"), F.col("ki"), F.lit(SEED))) % 2001 - 1000) / 50000.0
    rate = F.when(F.col("from_currency") == "USD", F.lit(1.0)).otherwise(base * (1 + wiggle))
    df = days.crossJoin(cur).crossJoin(kinds).withColumn("id", F.col("day") * 100 + F.col("ci") * 2 + F.col("ki"))
    return df.select(
        "from_currency", F.lit("USD").alias("to_currency"), rate.cast("decimal(18,6)").alias("rate"), "rate_type",
        _uuid(F, 9).alias("_row_id"), F.lit(False).alias("_deleted"),
        F.col("d").alias("_period_from"), F.date_add(F.col("d"), 1).alias("_period_to"),
    ).orderBy("_period_from", "from_currency", "rate_type")


def customers_frame(spark, period: str = "2026-01"):
    """100,000 customers C000000..C099999 (5% inactive), one snapshot for ``period``."""
    from pyspark.sql import functions as F
    return spark.range(N_CUSTOMERS).select(
        F.concat(F.lit("C"), F.lpad(F.col("id").cast("string"), 6, "0")).alias("customer_id"),
        F.concat(F.lit("Customer "), F.col("id").cast("string")).alias("customer_name"),
        _pick(F, SEGMENTS, 10).alias("segment"),
        _pick(F, REGIONS, 11).alias("region"),
        (_h(F, 12) % 20 != 0).alias("is_active"),
        _uuid(F, 13).alias("_row_id"), F.lit(False).alias("_deleted"), F.lit(period).alias("_period"),
    )


def budgets_frame(spark, per_month: int = BUDGET_LINES_PER_MONTH, months: int = 12):
    """``per_month`` budget lines for each of ``months`` months of 2026."""
    from pyspark.sql import functions as F
    month = (F.col("id") % months + 1).cast("int")
    return spark.range(per_month * months).select(
        F.concat(F.lit("B"), F.lpad((F.col("id") / 10).cast("bigint").cast("string"), 8, "0")).alias("budget_id"),
        (F.col("id") % 10 + 1).cast("int").alias("line_number"),
        (F.lit(4000) + _h(F, 20) % N_ACCOUNTS).cast("string").alias("account_code"),
        F.concat(F.lit("CC"), F.lpad((_h(F, 21) % N_COST_CENTERS).cast("string"), 3, "0")).alias("cost_center_code"),
        _pick(F, CURRENCIES, 22).alias("currency"),
        ((_h(F, 23) % 5_000_000) / 100).cast("decimal(18,2)").alias("amount"),
        _pick(F, ["OPEX", "OPEX", "CAPEX"], 24).alias("budget_type"),
        _uuid(F, 25).alias("_row_id"), F.lit(False).alias("_deleted"),
        F.format_string("2026-%02d", month).alias("_period"),
    )


def _write(df, path: str, partitioned: bool = True, files: int = 1) -> None:
    tmp = path + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    if partitioned:
        df.repartition(files, "_period").write.partitionBy("_period").parquet(tmp)
    else:
        df.coalesce(files).write.parquet(tmp)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.replace(tmp, path)


def _copy_workspace(target: str) -> None:
    for sub in ("datasets", "projects"):
        shutil.rmtree(os.path.join(target, sub), ignore_errors=True)
        shutil.copytree(os.path.join(WORKSPACE_TEMPLATE, sub), os.path.join(target, sub))
    shutil.copy(os.path.join(WORKSPACE_TEMPLATE, "ledgerflow.yml"), os.path.join(target, "ledgerflow.yml"))


def pipeline_workspace(spark, rows: int, log=print) -> str:
    """The workspace of pipeline P with ``rows`` GL lines; generated on first use."""
    root = os.path.join(cache_root(), f"p-{rows}")
    done = os.path.join(root, "data", ".complete")
    os.makedirs(root, exist_ok=True)
    _copy_workspace(root)  # always current YAML; data only when missing
    if os.path.exists(done):
        return root
    data = os.path.join(root, "data")
    log(f"generating pipeline P data ({rows:,} GL rows) in {data} ...")
    _write(gl_frame(spark, rows), os.path.join(data, "gl", "v1"), files=max(1, rows // 1_000_000))
    _write(fx_frame(spark), os.path.join(data, "exchange_rates", "v1"), partitioned=False)
    _write(customers_frame(spark), os.path.join(data, "customers", "v1"))
    _write(budgets_frame(spark), os.path.join(data, "budgets", "v1"))
    open(done, "w").close()
    return root


def chain_workspace(spark, rows: int, sizes: list[int], log=print) -> str:
    """The growth benchmark's workspace: chain projects of ``sizes`` updates over pipeline P's GL."""
    from bench.projectgen import write_chain_workspace
    source = pipeline_workspace(spark, rows, log)
    root = os.path.join(cache_root(), f"chain-{rows}")
    write_chain_workspace(root, sizes)
    link = os.path.join(root, "data", "gl", "v1")
    if not os.path.lexists(link):
        os.makedirs(os.path.dirname(link), exist_ok=True)
        os.symlink(os.path.join(source, "data", "gl", "v1"), link)
    return root


def marginal_data(spark, rows: int, log=print) -> str:
    """GL and budgets of ``rows`` rows each, one period (2026-01), for the marginal-cost benchmark."""
    root = os.path.join(cache_root(), f"marginal-{rows}")
    done = os.path.join(root, "data", ".complete")
    if not os.path.exists(done):
        log(f"generating marginal-cost data ({rows:,} rows each) in {root} ...")
        _write(gl_frame(spark, rows, months=1), os.path.join(root, "data", "gl", "v1"))
        _write(budgets_frame(spark, per_month=rows, months=1), os.path.join(root, "data", "budgets", "v1"))
        open(done, "w").close()
    return root


# ------------------------------------------------------------------ source-shaped data (cold-process benchmark)
SOURCE_LAYOUTS = ("flat", "folders", "csv")
SOURCE_MONTHS = 3
SYSTEM = ("_row_id", "_deleted", "_updated_at")
SOURCE_LEDGERFLOW_YML = """\
# Cold-process benchmark (bench/cold_process.py) on source-shaped data, layout {layout}: written by
# bench/datagen.py from bench/workspace (customers as a snapshot, every file {fmt}).
name: bench-source
default_resolver: local
resolvers:
  local:
    rules:
      - name: files
        data_level: any
        strategy: {{type: path, path: "data/{{{{dataset}}}}/v{{{{version}}}}", format: {fmt}}}
spark:
  master: "local[2]"
  conf: {{spark.sql.shuffle.partitions: "4"}}
"""


def source_frames(spark, rows: int, gl_files: int, months: int = SOURCE_MONTHS) -> dict:
    """The four tables of pipeline P as an ERP would export them: ``name -> (frame, has _period)``, GL and
    budgets over the first ``months`` months of 2026."""
    def drop(df):
        return df.drop(*[c for c in SYSTEM if c in df.columns])
    return {"gl": (drop(gl_frame(spark, rows, months=months, partitions=gl_files)), True),
            "exchange_rates": (drop(fx_frame(spark)), False),
            "customers": (drop(customers_frame(spark)).drop("_period"), False),
            "budgets": (drop(budgets_frame(spark, months=months)), True)}


def _write_source(df, path: str, layout: str, periods: bool, files: int) -> None:
    tmp = path + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    df = df.coalesce(files)
    if layout == "folders" and periods:
        df.write.partitionBy("_period").parquet(tmp)  # each task writes one file into each _period= folder
    else:
        if periods:
            df = df.sortWithinPartitions("_period")  # an export is ordered by period
        if layout == "csv":
            df.write.option("header", "true").csv(tmp)
        else:
            df.write.parquet(tmp)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.replace(tmp, path)


def source_root(rows: int, layout: str, months: int = SOURCE_MONTHS) -> str:
    """The cold-process benchmark's workspace folder of ``rows`` GL lines in ``layout`` (over ``months`` months:
    the range benchmark's twelve are ``src12-<layout>-<rows>``)."""
    prefix = "src" if months == SOURCE_MONTHS else f"src{months}"
    return os.path.join(cache_root(), f"{prefix}-{layout}-{rows}")


def write_source_yaml(root: str, layout: str) -> None:
    """ledgerflow.yml (the layout's format), the datasets (customers a snapshot) and pipeline P."""
    import yaml
    _copy_workspace(root)
    with open(os.path.join(root, "ledgerflow.yml"), "w") as fh:
        fh.write(SOURCE_LEDGERFLOW_YML.format(layout=layout, fmt="csv" if layout == "csv" else "parquet"))
    path = os.path.join(root, "datasets", "customers.yml")
    with open(path) as fh:
        customers = yaml.safe_load(fh)
    customers["description"] = "Customer master as exported: a snapshot of 100,000 customers, no _period."
    customers["main_table"]["temporal_mode"] = "snapshot"
    with open(path, "w") as fh:
        yaml.safe_dump(customers, fh, sort_keys=False)


def source_workspace(spark, rows: int, layout: str, log=print, months: int = SOURCE_MONTHS) -> str:
    """Source-shaped pipeline P workspace (no system columns) in ``layout``, over ``months`` months; data
    generated on first use."""
    if layout not in SOURCE_LAYOUTS:
        raise ValueError(f"layout must be one of {SOURCE_LAYOUTS}")
    root = source_root(rows, layout, months)
    done = os.path.join(root, "data", ".complete")
    os.makedirs(root, exist_ok=True)
    write_source_yaml(root, layout)
    if os.path.exists(done):
        return root
    data = os.path.join(root, "data")
    log(f"generating source-shaped data ({rows:,} GL rows over {months} months, {layout}) in {data} ...")
    gl_files = max(2, rows // 500_000)
    for name, (df, periods) in source_frames(spark, rows, gl_files, months).items():
        _write_source(df, os.path.join(data, name, "v1"), layout, periods, gl_files if name == "gl" else 1)
    open(done, "w").close()
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, action="append", help="GL rows (repeatable); default 1,000,000")
    parser.add_argument("--source", choices=SOURCE_LAYOUTS, action="append",
                        help="write source-shaped data in this layout (repeatable) instead of pipeline P's")
    parser.add_argument("--months", type=int, default=SOURCE_MONTHS,
                        help="source-shaped data: months of 2026 it covers (bench/range_cost.py: 12)")
    args = parser.parse_args()
    from bench.session import bench_session
    spark = bench_session()
    for rows in args.rows or [1_000_000]:
        if args.source:
            for layout in args.source:
                print(source_workspace(spark, rows, layout, months=args.months))
        else:
            print(pipeline_workspace(spark, rows))


if __name__ == "__main__":
    main()

"""The one SparkSession every benchmark uses: ledgerflow's local defaults (adapters/spark/session.py) on
``local[2]``, with a driver heap large enough to keep 10M-row stages in memory."""
from __future__ import annotations

import os

BENCH_CONF = {"spark.driver.memory": os.environ.get("LEDGERFLOW_BENCH_DRIVER_MEMORY", "8g")}


def bench_session():
    """The shared local session (created once per process)."""
    from ledgerflow.adapters.spark.session import local_session
    return local_session(master="local[2]", conf=BENCH_CONF)

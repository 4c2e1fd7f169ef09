"""SparkSession creation: local by default, a standalone master, or Spark Connect."""
from __future__ import annotations

import os
from typing import Optional

LOCAL_DEFAULTS = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.ansi.enabled": "true",
    "spark.driver.extraJavaOptions": "-Xss16m",
    "spark.sql.adaptive.enabled": "true",
}


def _quiet() -> None:
    os.environ.setdefault("PYSPARK_PYTHON", "python3")


def local_session(master: str = "local[2]", conf: Optional[dict] = None):
    """A local (or standalone-cluster) SparkSession with ledgerflow's settings."""
    _quiet()
    from pyspark.sql import SparkSession
    builder = SparkSession.builder.master(master).appName("ledgerflow")
    for k, v in {**LOCAL_DEFAULTS, **(conf or {})}.items():
        builder = builder.config(k, v)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def connect_session(remote: str, conf: Optional[dict] = None):
    """A Spark Connect session to ``remote`` (sc://host:port)."""
    from pyspark.sql import SparkSession
    builder = SparkSession.builder.remote(remote)
    for k, v in (conf or {}).items():
        builder = builder.config(k, v)
    return builder.getOrCreate()

"""TS-03 on a real Spark standalone cluster (--master) and through Spark Connect (--remote).

The cluster is started by ``scripts/cluster-start.sh`` (``.ci/run`` starts it before the tests; this
module starts it itself when it is not running, and stops only what it started). The CLI runs in a
subprocess: the test process already holds a local SparkSession, and a driver can have only one.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
from decimal import Decimal
from pathlib import Path

import pytest

from conftest import REPO, cli_env

TS03 = [Decimal(v) for v in ("15000", "15000", "9282", "-9282", "27962", "27962", "3200", "-3200", "16800", "16800")]


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="module")
def cluster():
    started = not (_listening(7077) and _listening(15002))
    if started:
        subprocess.run(["bash", str(REPO / "scripts" / "cluster-start.sh")], check=True, cwd=REPO, timeout=300)
    yield
    if started:
        subprocess.run(["bash", str(REPO / "scripts" / "cluster-stop.sh")], cwd=REPO, timeout=120)


def _run(ws: Path, *extra: str) -> dict:
    env = cli_env(SPARK_LOCAL_IP="127.0.0.1")
    proc = subprocess.run(["ledgerflow", "--workspace", str(ws), "run", "ts03_fx_conversion", "--period", "2026-01",
                           *extra], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run_id = proc.stdout.split()[1].rstrip(":")
    return json.loads((ws / "target" / "runs" / run_id / "run.json").read_text())


def _bridge_or_why(record: dict) -> None:
    """The run's bridge (every run records it): TS-03's figures when measured; else every row says why not."""
    rows = {b["measure"]: b for b in record["bridge"] if b["output"] == 2}
    assert set(rows) == {"count", "SUM(amount_local)", "SUM(amount_reporting)"}, record["bridge"]
    if any(b.get("not_measured") for b in rows.values()):
        assert all(b.get("not_measured") and b["input"] is None for b in rows.values()), rows
        return
    assert (rows["count"]["input"], rows["count"]["output_value"]) == (10, 10)
    assert Decimal(rows["SUM(amount_reporting)"]["output_value"]) == sum(TS03)
    assert (Decimal(rows["SUM(amount_reporting)"]["input"]) + Decimal(rows["SUM(amount_reporting)"]["changes"][0]["change"])
            == sum(TS03))


def _amounts(spark, record: dict) -> list[Decimal]:
    location = record["outputs"][0]["location"]
    rows = (spark.read.option("header", "true").csv(location)
            .selectExpr("journal_id", "CAST(line_number AS INT) AS line", "CAST(amount_reporting AS DECIMAL(18,2)) AS a")
            .orderBy("journal_id", "line").collect())
    return [r.a for r in rows]


@pytest.mark.cluster
def test_ts03_on_standalone_cluster(spark, cluster, finance):
    # The executor runs a few tasks of ten rows: C1 only, as the driver (cli_env), keeps C2's compiler threads
    # from taking the CPU the other test worker needs.
    record = _run(finance, "--master", "spark://127.0.0.1:7077",
                  "--conf", "spark.executor.extraJavaOptions=-XX:TieredStopAtLevel=1")
    assert record["status"] == "completed"
    assert record["spark"]["master_or_remote"] == "spark://127.0.0.1:7077"
    assert record["outputs"][0]["rows"] == 10
    assert _amounts(spark, record) == TS03
    _bridge_or_why(record)
    assert not any(b.get("not_measured") for b in record["bridge"])  # a cluster delivers observations as local does


@pytest.mark.cluster
def test_ts03_through_spark_connect(spark, cluster, finance):
    record = _run(finance, "--remote", "sc://127.0.0.1:15002")
    assert record["status"] == "completed"
    assert record["spark"]["master_or_remote"] == "sc://127.0.0.1:15002"
    assert record["outputs"][0]["rows"] == 10
    assert _amounts(spark, record) == TS03
    _bridge_or_why(record)  # over Spark Connect: recorded, or the record says why not

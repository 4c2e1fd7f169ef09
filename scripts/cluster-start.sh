#!/usr/bin/env bash
# Start a Spark standalone master, one worker and a Spark Connect server on 127.0.0.1 from the
# pip-installed pyspark (no separate Spark install). Idempotent: services already listening are kept.
# State (pids, logs) goes to $LEDGERFLOW_CLUSTER_DIR (default .ci/state). Stop with cluster-stop.sh.
set -euo pipefail
STATE="${LEDGERFLOW_CLUSTER_DIR:-$(pwd)/.ci/state}"
PY="${PYTHON:-python3}"
SPARK_HOME="$("$PY" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')"
export SPARK_HOME SPARK_LOCAL_IP=127.0.0.1 SPARK_LOG_DIR="$STATE/logs" SPARK_PID_DIR="$STATE/pids"
export SPARK_CONF_DIR="$STATE/conf" PYSPARK_PYTHON="$PY"
mkdir -p "$SPARK_LOG_DIR" "$SPARK_PID_DIR" "$SPARK_CONF_DIR"

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wait_port() {  # port, name, seconds
  for _ in $(seq 1 "$3"); do listening "$1" && return 0; sleep 1; done
  echo "cluster-start: $2 did not open port $1 in $3 s; see $SPARK_LOG_DIR" >&2; exit 1
}

if ! listening 7077; then
  nohup "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.master.Master \
    --host 127.0.0.1 --port 7077 --webui-port 8089 >"$SPARK_LOG_DIR/master.out" 2>&1 &
  echo $! >"$SPARK_PID_DIR/master.pid"
  wait_port 7077 master 60
fi
if ! listening 8091; then
  nohup "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.worker.Worker spark://127.0.0.1:7077 \
    --host 127.0.0.1 --cores 2 --memory 4g --webui-port 8091 >"$SPARK_LOG_DIR/worker.out" 2>&1 &
  echo $! >"$SPARK_PID_DIR/worker.pid"
  wait_port 8091 worker 60
  for _ in $(seq 1 60); do grep -q "Successfully registered with master" "$SPARK_LOG_DIR/worker.out" && break; sleep 1; done
fi
# The server and its executor run the tests' few small queries: C1 only (-XX:TieredStopAtLevel=1), whose
# code is ready sooner and whose compiler does not compete with the tests for the machine's two cores.
if ! listening 15002; then
  "$SPARK_HOME/sbin/start-connect-server.sh" --master spark://127.0.0.1:7077 \
    --conf spark.connect.grpc.binding.address=127.0.0.1 --conf spark.sql.session.timeZone=UTC \
    --conf spark.cores.max=1 --conf spark.executor.cores=1 --conf spark.executor.memory=1g \
    --conf spark.ui.enabled=false \
    --conf spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=1 \
    --conf spark.executor.extraJavaOptions=-XX:TieredStopAtLevel=1 >"$SPARK_LOG_DIR/connect-start.out" 2>&1
  wait_port 15002 "Spark Connect server" 120
fi
echo "cluster: master spark://127.0.0.1:7077, Spark Connect sc://127.0.0.1:15002 (logs in $SPARK_LOG_DIR)"

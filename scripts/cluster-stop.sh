#!/usr/bin/env bash
# Stop what cluster-start.sh started (by pid), leaving nothing listening.
set -uo pipefail
STATE="${LEDGERFLOW_CLUSTER_DIR:-$(pwd)/.ci/state}"
PY="${PYTHON:-python3}"
SPARK_HOME="$("$PY" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))' 2>/dev/null || true)"
export SPARK_HOME SPARK_LOG_DIR="$STATE/logs" SPARK_PID_DIR="$STATE/pids"
if [ -n "$SPARK_HOME" ] && [ -x "$SPARK_HOME/sbin/stop-connect-server.sh" ]; then
  "$SPARK_HOME/sbin/stop-connect-server.sh" >/dev/null 2>&1
fi
stop_pid() {  # TERM, up to 10 s to end, then KILL
  kill "$1" 2>/dev/null && for _ in $(seq 1 20); do kill -0 "$1" 2>/dev/null || break; sleep 0.5; done
  kill -9 "$1" 2>/dev/null
}
# Without a Python that has pyspark (PYTHON unset, python3 another one), Spark's stop script cannot be found:
# the Connect server is stopped by the pid file Spark's daemon script wrote in this state folder, as below.
for pidfile in "$SPARK_PID_DIR"/spark-*SparkConnectServer*.pid; do
  [ -f "$pidfile" ] || continue
  pid="$(cat "$pidfile")"
  # only that server: a pid the system has given to another process since is left alone
  if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q SparkConnectServer; then
    stop_pid "$pid"
  fi
  rm -f "$pidfile"
done
for name in worker master; do
  pidfile="$SPARK_PID_DIR/$name.pid"
  if [ -f "$pidfile" ]; then
    stop_pid "$(cat "$pidfile")"
    rm -f "$pidfile"
  fi
done
echo "cluster stopped"

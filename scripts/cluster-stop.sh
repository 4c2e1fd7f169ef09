#!/usr/bin/env bash
# Stop what cluster-start.sh started (by pid), leaving nothing listening.
set -uo pipefail
STATE="${LEDGERFLOW_CLUSTER_DIR:-$(pwd)/.ci/state}"
PY="${PYTHON:-python3}"
SPARK_HOME="$("$PY" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')"
export SPARK_HOME SPARK_LOG_DIR="$STATE/logs" SPARK_PID_DIR="$STATE/pids"
[ -x "$SPARK_HOME/sbin/stop-connect-server.sh" ] && "$SPARK_HOME/sbin/stop-connect-server.sh" >/dev/null 2>&1
for name in worker master; do
  pidfile="$SPARK_PID_DIR/$name.pid"
  if [ -f "$pidfile" ]; then
    pid="$(cat "$pidfile")"
    kill "$pid" 2>/dev/null && for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$pid" 2>/dev/null
    rm -f "$pidfile"
  fi
done
echo "cluster stopped"

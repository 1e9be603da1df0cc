#!/bin/sh
# Stop the Docker engine that scripts/start-dockerd.sh started (and only that one). Scripts that
# must not stop an engine another script started use scripts/own-dockerd.sh instead.
set -eu
DOCKERD_PIDFILE=${DOCKERD_PIDFILE:-/tmp/automemo-dockerd.pid}
if [ ! -f "$DOCKERD_PIDFILE" ]; then
    echo "no $DOCKERD_PIDFILE: this script did not start an engine; leaving Docker alone"
    exit 0
fi
pid=$(cat "$DOCKERD_PIDFILE")
if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    i=0
    while kill -0 "$pid" 2>/dev/null && [ "$i" -lt 30 ]; do i=$((i + 1)); sleep 1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
fi
rm -f "$DOCKERD_PIDFILE"
echo "dockerd (pid $pid) stopped"

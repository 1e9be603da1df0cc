#!/bin/sh
# Start a Docker engine for the sandbox if none answers (CI machines have docker.io installed but
# not running). Sandboxes need no network, so the engine runs without a bridge or iptables rules.
# Output goes to $DOCKERD_LOG; the pid to $DOCKERD_PIDFILE (used by scripts/stop-dockerd.sh).
# If $DOCKERD_STARTED_FILE is set, the pid is also written there, and only when THIS call started
# the engine: a caller stops only what it started (scripts/own-dockerd.sh).
# $DOCKER and $DOCKERD name the client and engine commands (tests pass fakes).
set -eu
DOCKERD_LOG=${DOCKERD_LOG:-/tmp/automemo-dockerd.log}
DOCKERD_PIDFILE=${DOCKERD_PIDFILE:-/tmp/automemo-dockerd.pid}
WAIT_S=${DOCKERD_WAIT_S:-60}
DOCKER=${DOCKER:-docker}
DOCKERD=${DOCKERD:-dockerd}

if "$DOCKER" info >/dev/null 2>&1; then
    echo "a Docker engine already answers; nothing to start"
    exit 0
fi
if ! command -v "$DOCKERD" >/dev/null 2>&1; then
    echo "dockerd is not installed: apt-get install docker.io" >&2
    exit 1
fi
nohup "$DOCKERD" --bridge=none --iptables=false --pidfile="$DOCKERD_PIDFILE.engine" \
    </dev/null >"$DOCKERD_LOG" 2>&1 &
echo $! >"$DOCKERD_PIDFILE"
if [ -n "${DOCKERD_STARTED_FILE:-}" ]; then echo $! >"$DOCKERD_STARTED_FILE"; fi
i=0
while ! "$DOCKER" info >/dev/null 2>&1; do
    i=$((i + 1))
    if [ "$i" -gt "$WAIT_S" ] || ! kill -0 "$(cat "$DOCKERD_PIDFILE")" 2>/dev/null; then
        echo "dockerd did not come up within ${WAIT_S}s; the end of $DOCKERD_LOG:" >&2
        tail -n 20 "$DOCKERD_LOG" >&2
        exit 1
    fi
    sleep 1
done
echo "dockerd is up (pid $(cat "$DOCKERD_PIDFILE"), log $DOCKERD_LOG)"
